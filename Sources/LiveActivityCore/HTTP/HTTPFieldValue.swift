/// What the server puts in a response's header field: visible ASCII and spaces only (RFC 9110 §5.5: other bytes
/// are obsolete or forbidden there), at most 1,024 bytes.
extension String {
    /// This text as a header field value: control characters left out, every other character outside visible
    /// ASCII and the space written as a Swift escape (`heureDArrivée` → `heureDArriv\u{E9}e`, `名前` →
    /// `\u{540D}\u{524D}`), so that a field name in a `liveactivity-detail` stays identifiable (those characters
    /// were dropped, which left `at  (`); cut at 1,024 bytes, never inside an escape. Used by every writer of
    /// response headers (HTTP/1.1 through lws, HTTP/2 through nghttp2, and the server's own HTTP/1.1 answers).
    package var httpFieldValue: String {
        var value = ""
        for scalar in unicodeScalars {
            let piece: String
            switch scalar.value {
            case 0x20..<0x7f: piece = String(scalar)
            case 0..<0x20, 0x7f: continue  // controls (a CR LF would end the field)
            default: piece = "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
            guard value.utf8.count + piece.utf8.count <= 1024 else { break }
            value += piece
        }
        return value
    }
}

/// What one connection's permessage-deflate (RFC 7692) allows the server to send, read from the client's
/// offer once libwebsockets has negotiated the extension. Pure value; any thread.
///
/// libwebsockets 4.1 answers a permessage-deflate offer with the extension's name and the arg-less
/// parameters it was offered (`client_no_context_takeover`, `server_no_context_takeover`); it neither
/// applies nor answers `server_max_window_bits=N` (its handshake only handles parameters without a value).
/// So the server reads the offer itself and never uses a larger window than any permessage-deflate offer in
/// the header allows: the smallest `server_max_window_bits` of them all (RFC 7692 §7.1.2.1), 15 when none
/// says.
struct PermessageDeflate: Equatable, Sendable {
    /// The window, in bits, to compress this client's messages with (9...15, see
    /// ``Deflate/windowBits(allowing:)``); nil when an offer's `server_max_window_bits` is malformed
    /// (RFC 7692 §7.1.2.1 allows only 8 to 15): then every message goes uncompressed (RSV1 clear), which a
    /// permessage-deflate client always accepts.
    let windowBits: Int?
    /// The client's `Sec-WebSocket-Extensions` header as it came, for the session's debug log.
    let offer: String

    /// A negotiation as given.
    /// - Parameters:
    ///   - windowBits: the window to compress with, 9...15; nil: never compress.
    ///   - offer: the client's offer, for the log.
    init(windowBits: Int?, offer: String) {
        self.windowBits = windowBits
        self.offer = offer
    }

    /// Reads a `Sec-WebSocket-Extensions` request header (RFC 7692 §5: comma-separated offers, each the
    /// extension's name and `;`-separated parameters, a value optionally quoted).
    /// - Returns: nil when no offer in it is permessage-deflate.
    init?(offer: String) {
        var allowed: Int? = 15
        var found = false
        for element in offer.split(separator: ",") {
            let parts = element.split(separator: ";").map { $0.trimmed(" \t") }
            guard parts.first?.lowercased() == "permessage-deflate" else { continue }
            found = true
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmed(" \t") }
                guard pair.first?.lowercased() == "server_max_window_bits" else { continue }
                let text = pair.count == 2 ? Substring(pair[1]).trimmed("\"") : ""
                if let bits = Int(text), (8...15).contains(bits), text.first != "0" {
                    allowed = allowed.map { min($0, bits) }
                } else {
                    allowed = nil
                }
            }
        }
        guard found else { return nil }
        windowBits = allowed.map(Deflate.windowBits(allowing:))
        self.offer = offer
    }

    /// For the debug log: `window 15` (bits compressed with), or `uncompressed`.
    var summary: String { windowBits.map { "window \($0)" } ?? "uncompressed" }
}

private extension Substring {
    /// The text without leading and trailing characters of `set` (spaces and tabs, quotes).
    func trimmed(_ set: String) -> String {
        var text = self
        while let first = text.first, set.contains(first) { text.removeFirst() }
        while let last = text.last, set.contains(last) { text.removeLast() }
        return String(text)
    }
}

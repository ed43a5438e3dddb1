
/// The one serializer of whole HTTP/1.1 responses the server writes itself, past any HTTP library: a refused
/// WebSocket handshake (lws 4.1's own helper writes an HTTP/1.0 status line at that stage) and the APNs port's
/// `505` to an HTTP/1.x client. Responses to ordinary requests go through lws's header API instead
/// (`HTTPAdapter.writeHead`), which must track their `content-length` for keep-alive; their status line is the
/// same ``HTTPStatus/statusLine``.
extension HTTPResponse {
    /// The response as bytes on the wire (RFC 9112 §4, §5): the status line, `content-type`,
    /// `content-length`, `cache-control`, the further fields in order, `connection: close` when `closing`, an
    /// empty line, then the body. Field values are visible ASCII and spaces (``Swift/String/httpFieldValue``, as
    /// `writeHead` writes them).
    /// - Parameter closing: whether the connection closes after it (adds `connection: close`).
    package func http1Bytes(closing: Bool) -> [UInt8] {
        func clean(_ value: String) -> String { value.httpFieldValue }
        var head = "\(status.statusLine)\r\ncontent-type: \(clean(contentType))\r\ncontent-length: \(body.count)\r\n"
            + "cache-control: \(clean(cacheControl))\r\n"
        for (name, value) in headers { head += "\(name): \(clean(value))\r\n" }
        if closing { head += "connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    /// A plain-text response with no security fields of lws's, for the serializer above.
    /// - Parameters:
    ///   - status: the status.
    ///   - text: the body (UTF-8).
    package static func plainText(_ status: HTTPStatus, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", body: Array(text.utf8), securityHeaders: .own)
    }
}

/// An HTTP response status: its code and its one reason phrase.
///
/// Every status line the server writes takes its phrase from ``reasonPhrases`` — API responses, documents and
/// refused WebSocket upgrades alike — so the same code always reads the same. Thread-safe (a value).
package struct HTTPStatus: Hashable, Sendable, CustomStringConvertible {
    /// The three-digit status code (RFC 9110 §15), 100…599.
    package let code: Int

    /// A status with `code`; codes missing from ``reasonPhrases`` are written with an empty phrase, which
    /// RFC 9112 §4 allows (`status-line = HTTP-version SP status-code SP [ reason-phrase ]`).
    package init(_ code: Int) { self.code = code }

    /// The standard reason phrase of ``code``, or "" for a code the table lacks.
    package var reasonPhrase: String { Self.reasonPhrases[code] ?? "" }

    /// `HTTP/1.1 410 Gone`: the HTTP/1.1 status line, without its CRLF (RFC 9112 §4).
    package var statusLine: String { "HTTP/1.1 \(code) \(reasonPhrase)" }

    /// `410 Gone`.
    package var description: String { "\(code) \(reasonPhrase)" }

    /// The reason phrases of RFC 9110 §15 ("HTTP Semantics", the phrase given in each status's section
    /// title), plus 429 and 431 from RFC 6585 §4 and §5. The only table of phrases in the server: lws 4.1's own (used by
    /// `lws_add_http_header_status`) lacks 201 and still says "Request Entity Too Large" for 413, so the
    /// adapter writes the status line from here (see `HTTPAdapter.writeHead`).
    package static let reasonPhrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
        205: "Reset Content", 206: "Partial Content",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout",
        409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large",
        414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
        421: "Misdirected Request", 422: "Unprocessable Content", 426: "Upgrade Required", 429: "Too Many Requests",
        431: "Request Header Fields Too Large",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout", 505: "HTTP Version Not Supported",
    ]

    // MARK: The statuses the server sends

    /// 200 OK (RFC 9110 §15.3.1).
    package static let ok = HTTPStatus(200)
    /// 201 Created (RFC 9110 §15.3.2): a share link was made.
    package static let created = HTTPStatus(201)
    /// 204 No Content (RFC 9110 §15.3.5): done, nothing to send (a deleted channel).
    package static let noContent = HTTPStatus(204)
    /// 400 Bad Request (RFC 9110 §15.5.1).
    package static let badRequest = HTTPStatus(400)
    /// 401 Unauthorized (RFC 9110 §15.5.2): a token is needed, or the one given matches no role.
    package static let unauthorized = HTTPStatus(401)
    /// 403 Forbidden (RFC 9110 §15.5.4): the token's role may not do this, or the origin is not allowed.
    package static let forbidden = HTTPStatus(403)
    /// 404 Not Found (RFC 9110 §15.5.5).
    package static let notFound = HTTPStatus(404)
    /// 405 Method Not Allowed (RFC 9110 §15.5.6); sent with an `allow` header.
    package static let methodNotAllowed = HTTPStatus(405)
    /// 410 Gone (RFC 9110 §15.5.11): a share link that has ended.
    package static let gone = HTTPStatus(410)
    /// 411 Length Required (RFC 9110 §15.5.12): a request body sent chunked, which lws 4.1 never completes.
    package static let lengthRequired = HTTPStatus(411)
    /// 413 Content Too Large (RFC 9110 §15.5.14): a push over ``LiveActivityCore/APNsPush/maximumBytes``.
    package static let contentTooLarge = HTTPStatus(413)
    /// 414 URI Too Long (RFC 9110 §15.5.15): a request target over `HTTPAdapter.maximumFieldBytes` (LiveActivityLWS).
    package static let uriTooLong = HTTPStatus(414)
    /// 429 Too Many Requests (RFC 6585 §4).
    package static let tooManyRequests = HTTPStatus(429)
    /// 431 Request Header Fields Too Large (RFC 6585 §5): a header field over `HTTPAdapter.maximumFieldBytes` (LiveActivityLWS).
    package static let requestHeaderFieldsTooLarge = HTTPStatus(431)
    /// 500 Internal Server Error (RFC 9110 §15.6.1).
    package static let internalServerError = HTTPStatus(500)
    /// 503 Service Unavailable (RFC 9110 §15.6.4): the store is down, too many connections, shutting down.
    package static let serviceUnavailable = HTTPStatus(503)
}

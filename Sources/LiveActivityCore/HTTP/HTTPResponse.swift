
/// One HTTP response as handlers make it: status, header fields and body. `HTTPAdapter` writes it.
/// Thread-safe (a value).
package struct HTTPResponse: Sendable {
    /// Which security header fields go with the response.
    package enum SecurityHeaders: Sendable, Equatable {
        /// libwebsockets's best-practice set (`LWS_SERVER_OPTION_HTTP_HEADERS_SECURITY_BEST_PRACTICES_ENFORCE`:
        /// a strict `content-security-policy`, `x-frame-options: deny`, `x-content-type-options`,
        /// `x-xss-protection`, `referrer-policy`), as for the static files. For the JSON API.
        case bestPractice
        /// None from lws: the response carries its own in ``HTTPResponse/headers`` (documents whose policy
        /// allows inline styles, a nonce'd script or framing, which the best-practice set forbids).
        case own
    }

    /// The status.
    package var status: HTTPStatus
    /// The `content-type` value.
    package var contentType: String
    /// The `cache-control` value: `no-store` unless the body can never change.
    package var cacheControl: String
    /// Further header fields, written in this order after `content-type`, `content-length` and `cache-control`.
    /// Names without the colon, lower-case; values ASCII (other bytes are dropped), at most 1,024 bytes each.
    package var headers: [(name: String, value: String)]
    /// The body, in bytes (not written in answer to HEAD; `content-length` is its length either way).
    package var body: [UInt8]
    /// Whose security header fields it carries.
    package var securityHeaders: SecurityHeaders

    /// Creates a response.
    /// - Parameters:
    ///   - status: the status.
    ///   - contentType: the `content-type` value.
    ///   - cacheControl: the `cache-control` value.
    ///   - headers: further fields, in order.
    ///   - body: the body bytes.
    ///   - securityHeaders: lws's best-practice set, or the response's own (in `headers`).
    package init(status: HTTPStatus, contentType: String = "application/json", cacheControl: String = "no-store",
         headers: [(name: String, value: String)] = [], body: [UInt8] = [], securityHeaders: SecurityHeaders = .bestPractice) {
        self.status = status
        self.contentType = contentType
        self.cacheControl = cacheControl
        self.headers = headers
        self.body = body
        self.securityHeaders = securityHeaders
    }

    /// The value of the first further field called `name` (any case), or nil.
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    // MARK: Shapes the server uses

    /// A JSON response with lws's best-practice security headers.
    package static func json(_ status: HTTPStatus, _ body: [UInt8], headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: body)
    }

    /// A protocol message (docs/PROTOCOL.md) as a JSON response.
    package static func message(_ status: HTTPStatus, _ message: ServerMessage) -> HTTPResponse {
        .json(status, message.encoded())
    }

    /// The protocol's error object `{"type":"error","code","field","message"}` as a JSON response.
    package static func error(_ status: HTTPStatus, _ error: ProtocolError) -> HTTPResponse {
        .message(status, .error(requestId: nil, error))
    }

    /// 411 for a request whose body is sent chunked (`transfer-encoding`), which the HTTP/1.1 adapter cannot
    /// read; with `connection: close`, since the chunks that follow are no request.
    package static let chunkedBodyRefused: HTTPResponse = {
        var response = HTTPResponse.error(.lengthRequired, ProtocolError(.invalidField, field: "transfer-encoding",
            message: "transfer-encoding: request bodies are read by their length; send a Content-Length header, not a chunked body"))
        response.headers.append(("connection", "close"))
        return response
    }()

    /// 400 for a request whose `content-length` is no length a body can have (not a whole number of bytes from 0
    /// to 2^63 − 1: `-5`, `99999999999999999999`, `1e3`; RFC 9112 §6.3), naming it, with `connection: close`,
    /// since where its body would end cannot be known.
    /// - Parameter value: the header's value as sent (clipped to 40 characters in the message).
    package static func badContentLength(_ value: String) -> HTTPResponse {
        var response = HTTPResponse.error(.badRequest, ProtocolError(.invalidField, field: "content-length",
            message: "content-length: must be the body's length in bytes, a whole number from 0, got \"\(value.clipped(to: 40))\""))
        response.headers.append(("connection", "close"))
        return response
    }

    /// 414 or 431 for a request whose target or a header field is over the adapter's limit, naming it
    /// (`limit_exceeded`), with `connection: close`.
    /// - Parameters:
    ///   - status: ``HTTPStatus/uriTooLong`` or ``HTTPStatus/requestHeaderFieldsTooLarge``.
    ///   - field: `path`, or the header's name.
    ///   - message: what is too long, and the limit.
    package static func headTooLarge(_ status: HTTPStatus, field: String, _ message: String) -> HTTPResponse {
        var response = HTTPResponse.error(status, ProtocolError(.limitExceeded, field: field, message: message))
        response.headers.append(("connection", "close"))
        return response
    }

    /// A self-contained HTML document with its own security headers instead of lws's best-practice set (which
    /// forbids inline styles and framing): a policy allowing inline styles, `data:` images, the one script
    /// carrying `scriptNonce` and WebSocket connections to this origin, no `frame-ancestors`, so that any page
    /// may embed it; `x-content-type-options: nosniff`; `referrer-policy: no-referrer`.
    /// - Parameters:
    ///   - status: the status.
    ///   - html: the document.
    ///   - scriptNonce: the nonce of the document's one inline script, or nil for no script.
    ///   - contentSecurityPolicy: another policy than the renderings' (the inspector page's).
    package static func document(_ status: HTTPStatus, html: String, scriptNonce: String? = nil,
                         contentSecurityPolicy: String? = nil) -> HTTPResponse {
        let script = scriptNonce.map { "'nonce-\($0)'" } ?? "'none'"
        let policy = contentSecurityPolicy ?? ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
            + "script-src \(script); connect-src 'self' ws: wss:; base-uri 'none'; form-action 'none'")
        return HTTPResponse(status: status, contentType: "text/html; charset=utf-8",
                            headers: [("content-security-policy", policy), ("x-content-type-options", "nosniff"),
                                      ("referrer-policy", "no-referrer")],
                            body: Array(html.utf8), securityHeaders: .own)
    }
}

extension HTTPResponse {
    /// 405 as the protocol's error object, naming the methods allowed (HEAD, implied by GET, left out):
    /// `method: only GET is allowed here`. The router adds the `allow` header.
    package static func methodNotAllowed(_ allowed: Set<HTTPMethod>) -> HTTPResponse {
        .error(.methodNotAllowed, ProtocolError(.invalidField, field: "method",
               message: "method: only \(HTTPMethod.list(allowed.subtracting([.head]))) is allowed here"))
    }
}

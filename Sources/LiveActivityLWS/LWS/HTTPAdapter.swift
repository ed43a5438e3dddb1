import CLibWebSockets
import Foundation
import LiveActivityCore

/// The HTTP side of libwebsockets: reads each request for the route table's paths into an ``HTTPRequest``
/// once, collects its body, dispatches it through the ``Router``, and writes the ``HTTPResponse`` that comes
/// back — at once, or later through ``HTTPResponder``. Everything else (the static files) is lws's.
///
/// Per-connection state, an ``HTTPExchange``, is reached through the lws per-session data: its second word,
/// at ``exchangeOffset`` (the first holds the WebSocket session id), holds a retained pointer. It is set on
/// LWS_CALLBACK_HTTP and released on LWS_CALLBACK_HTTP_DROP_PROTOCOL — lws 4.1 binds the protocol for one
/// transaction only and frees the per-session data at its end (`lws_http_transaction_completed`) — or
/// LWS_CALLBACK_CLOSED_HTTP, whichever comes first.
///
/// Service thread only: every method is called from the lws callback.
final class HTTPAdapter {
    /// Byte offset of the exchange pointer in the per-session data, after the WebSocket session id.
    static let exchangeOffset = MemoryLayout<UInt64>.stride
    /// Size of the per-session data lws allocates per connection, in bytes: the WebSocket session id
    /// (`UInt64`) and the HTTP exchange pointer.
    static let sessionDataSize = exchangeOffset + MemoryLayout<UnsafeMutableRawPointer?>.stride

    /// The methods and the lws header token holding their request target. For HTTP/2 lws 4.1 files the
    /// `:path` under the token of the `:method`'s, so the same tokens serve both.
    static let methodTokens: [(HTTPMethod, lws_token_indexes)] = [
        (.get, WSI_TOKEN_GET_URI), (.post, WSI_TOKEN_POST_URI), (.put, WSI_TOKEN_PUT_URI), (.delete, WSI_TOKEN_DELETE_URI),
        (.patch, WSI_TOKEN_PATCH_URI), (.options, WSI_TOKEN_OPTIONS_URI), (.head, WSI_TOKEN_HEAD_URI),
    ]
    /// Header fields lws 4.1 parses under a token of its own, by the name handlers look them up with.
    static let knownHeaders: [(String, lws_token_indexes)] = [
        ("host", WSI_TOKEN_HOST), ("origin", WSI_TOKEN_ORIGIN), ("authorization", WSI_TOKEN_HTTP_AUTHORIZATION),
        ("content-type", WSI_TOKEN_HTTP_CONTENT_TYPE), ("content-length", WSI_TOKEN_HTTP_CONTENT_LENGTH),
        ("transfer-encoding", WSI_TOKEN_HTTP_TRANSFER_ENCODING), ("accept", WSI_TOKEN_HTTP_ACCEPT),
        ("user-agent", WSI_TOKEN_HTTP_USER_AGENT), ("x-forwarded-for", WSI_TOKEN_X_FORWARDED_FOR),
    ]
    /// Header fields lws 4.1 has no token for. It cannot list the fields a request sent, only look one up by
    /// name (`lws_hdr_custom_copy`), so handlers see these and no others: APNs's request headers.
    /// Source: https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns
    /// Sources: https://developer.apple.com/documentation/usernotifications/sending-channel-management-requests-to-apns
    /// and …/sending-broadcast-push-notification-requests-to-apns (`apns-channel-id`, `apns-request-id`).
    static let customHeaders = ["apns-id", "apns-push-type", "apns-priority", "apns-topic", "apns-expiration", "apns-collapse-id",
                                "apns-channel-id", "apns-request-id"]

    /// Longest request target (path and query) and longest header value, in bytes: lws cuts each header
    /// token one byte further (``LWSContextResources/tokenLimits``), and a request with a longer one is
    /// answered 414 or 431 (``refuseOversizedHead(_:)``).
    static let maximumFieldBytes = 8191
    /// lws's header buffer per connection being parsed (`max_http_header_data`), in bytes: room for a few
    /// fields at their limit. A header block larger than this still makes lws 4.1 close the connection
    /// without an answer (headers lws has no token for are not cut at a limit).
    static let headerBufferBytes = 32 * 1024

    /// Who answers what.
    let router: Router
    /// Largest request body handed to handlers, in bytes: one more byte is kept, so a handler can tell a
    /// larger body (and answer 413); the rest is read and dropped.
    let maximumBodyBytes: Int

    /// An adapter dispatching through `router`.
    /// - Parameters:
    ///   - router: the route table.
    ///   - maximumBodyBytes: largest body handlers need to see, in bytes (APNs payloads: 4,096).
    init(router: Router, maximumBodyBytes: Int) {
        self.router = router
        self.maximumBodyBytes = maximumBodyBytes
    }

    // MARK: Callbacks

    /// Whether the request on `wsi` is for the route table (its path's first segment is one of the table's),
    /// rather than for a static file.
    func claims(_ wsi: OpaquePointer) -> Bool {
        guard let (_, path) = Self.target(wsi) else { return false }
        return router.claims(path)
    }

    /// LWS_CALLBACK_FILTER_HTTP_CONNECTION (every HTTP request, before lws looks for a mount): answers a
    /// request whose target or a header reached its limit — 414 URI Too Long or 431 Request Header Fields Too
    /// Large, naming it, with `connection: close` — and has lws close the connection.
    /// - Returns: -1 (close) when it answered, nil to let the request go on.
    func refuseOversizedHead(_ wsi: OpaquePointer) -> Int32? {
        guard let tooLarge = Self.oversizedHead(wsi) else { return nil }
        let response = HTTPResponse.headTooLarge(tooLarge.status, field: tooLarge.field, tooLarge.message)
        guard Self.writeHead(response, on: wsi) else { return -1 }
        var buffer = [UInt8](repeating: 0, count: clws_pre()) + response.body
        _ = buffer.withUnsafeMutableBufferPointer { buffer in
            lws_write(wsi, buffer.baseAddress! + clws_pre(), response.body.count, LWS_WRITE_HTTP_FINAL)
        }
        return -1
    }

    /// What is too long in a request whose target (path and query) or a header field lws parses is
    /// ``maximumFieldBytes`` + 1 bytes or more (lws cut it there): 414 naming `path`, or 431 naming the header;
    /// nil when nothing is.
    static func oversizedHead(_ wsi: OpaquePointer) -> (status: HTTPStatus, field: String, message: String)? {
        let limit = maximumFieldBytes + 1
        var target = Int(lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS))
        var targetTokens: Set<UInt32> = [WSI_TOKEN_HTTP_URI_ARGS.rawValue]
        for (_, token) in methodTokens {
            target += Int(lws_hdr_total_length(wsi, token))
            targetTokens.insert(token.rawValue)
        }
        var fragment: Int32 = 0
        while true {
            let length = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, fragment))
            guard length > 0 else { break }
            if length >= limit { target = max(target, limit) }  // one query field cut at the limit
            fragment += 1
        }
        if target >= limit {
            return (.uriTooLong, "path", "path: the request target (path and query) is \(limit) bytes or more; "
                           + "this server reads at most \(maximumFieldBytes)")
        }
        for raw in 0..<WSI_TOKEN_COUNT.rawValue where !targetTokens.contains(raw) {
            let token = lws_token_indexes(rawValue: raw)
            guard Int(lws_hdr_total_length(wsi, token)) >= limit else { continue }
            let name = lws_token_to_string(token).map { String(cString: $0) }?.lowercased()
                .trimmingCharacters(in: CharacterSet(charactersIn: ": ")) ?? "header"
            return (.requestHeaderFieldsTooLarge, name,
                           "\(name): the header field is \(limit) bytes or more; this server reads at most \(maximumFieldBytes)")
        }
        return nil
    }

    /// LWS_CALLBACK_HTTP: reads the request and answers it, or waits for its body.
    /// - Returns: nonzero to close the connection.
    func request(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer) -> Int32 {
        guard let (method, path) = Self.target(wsi) else { return -1 }
        release(sessionData: sessionData)
        var request = HTTPRequest(method: method, path: path, query: HTTPRequest.queryFields(fromFragments: Self.queryFragments(wsi)),
                                  headers: Self.headers(wsi))
        request.repeatedFields = Self.repeatedSingleFields(wsi)
        let exchange = HTTPExchange(wsi: wsi, request: request)
        sessionData.storeBytes(of: Unmanaged.passRetained(exchange).toOpaque(), toByteOffset: Self.exchangeOffset,
                               as: UnsafeMutableRawPointer?.self)
        if request.method.mayHaveBody, request.headers["transfer-encoding"] != nil {
            // lws 4.1's HTTP/1.1 server never completes a chunked request body (no BODY_COMPLETION): the client
            // waited for an answer for ever. Answer at once; the connection closes, since what follows is the
            // body's chunks, not a request.
            exchange.closesAfterResponse = true
            return send(.chunkedBodyRefused, on: exchange)
        }
        if request.method.mayHaveBody, let length = request.headers["content-length"],
           (Int(length.trimmingCharacters(in: .whitespaces)) ?? -1) < 0 {
            // lws 4.1 reads such a length with atoll: a negative or overflowing one became a body it waited for,
            // or none (a push answered "PayloadEmpty"). The length is wrong; so is all that follows.
            exchange.closesAfterResponse = true
            return send(.badContentLength(length), on: exchange)
        }
        if Self.expectsBody(request) {
            exchange.state = .receivingBody
            return 0
        }
        return dispatch(exchange)
    }

    /// LWS_CALLBACK_HTTP_BODY: keeps at most `maximumBodyBytes + 1` bytes of the body, drops the rest.
    /// - Returns: false when the connection has no body being received here (not ours).
    func receivedBody(_ bytes: UnsafeRawBufferPointer, sessionData: UnsafeMutableRawPointer) -> Bool {
        guard let exchange = Self.exchange(sessionData), case .receivingBody = exchange.state else { return false }
        let room = maximumBodyBytes + 1 - exchange.request.body.count
        if room > 0 { exchange.request.body.append(contentsOf: bytes.prefix(room)) }
        return true
    }

    /// LWS_CALLBACK_HTTP_BODY_COMPLETION: answers the request now that its body is in.
    /// - Returns: nonzero to close the connection, or nil when the connection is not ours.
    func bodyComplete(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer) -> Int32? {
        guard let exchange = Self.exchange(sessionData) else { return nil }
        guard case .receivingBody = exchange.state else { return 0 }
        return dispatch(exchange)
    }

    /// LWS_CALLBACK_HTTP_WRITEABLE: writes a late answer's head, or a body, then completes the transaction.
    /// Spurious calls (nothing pending) do nothing.
    /// - Returns: nonzero to close the connection, or nil when the connection is not ours.
    func writable(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer) -> Int32? {
        guard let exchange = Self.exchange(sessionData) else { return nil }
        switch exchange.state {
        case .headPending(let response):
            return send(response, on: exchange)
        case .bodyPending(let buffer):
            exchange.state = .done
            let written = buffer.withUnsafeBufferPointer { buffer in
                let payload = UnsafeMutablePointer(mutating: buffer.baseAddress! + clws_pre())
                return Int(lws_write(wsi, payload, buffer.count - clws_pre(), LWS_WRITE_HTTP_FINAL))
            }
            if written < buffer.count - clws_pre() || exchange.closesAfterResponse { return -1 }
            return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
        case .receivingBody, .dispatching, .waiting, .done:
            return 0
        }
    }

    /// LWS_CALLBACK_HTTP_DROP_PROTOCOL and LWS_CALLBACK_CLOSED_HTTP: forgets the connection's exchange (a late
    /// answer to it is then dropped). Does nothing when there is none.
    func release(sessionData: UnsafeMutableRawPointer) {
        guard let pointer = sessionData.load(fromByteOffset: Self.exchangeOffset, as: UnsafeMutableRawPointer?.self) else { return }
        sessionData.storeBytes(of: nil, toByteOffset: Self.exchangeOffset, as: UnsafeMutableRawPointer?.self)
        let exchange = Unmanaged<HTTPExchange>.fromOpaque(pointer).takeRetainedValue()
        exchange.isAttached = false
    }

    // MARK: Answering

    /// Seconds an answer given later (``HTTPResponder``) may take before lws closes the connection.
    static let longestWaitForAnswer: Int32 = 60

    /// Hands the request to the route table; writes the answer at once if the handler gave it during the
    /// call, else waits for it.
    /// - Returns: nonzero to close the connection.
    private func dispatch(_ exchange: HTTPExchange) -> Int32 {
        exchange.state = .dispatching
        var immediate: HTTPResponse?
        let responder = HTTPResponder { [weak exchange] response in
            guard let exchange, exchange.isAttached else { return }
            if case .dispatching = exchange.state {
                immediate = response
            } else {
                // A late answer: written from HTTP_WRITEABLE, where lws wants writes.
                exchange.state = .headPending(response)
                lws_callback_on_writable(exchange.wsi)
            }
        }
        router.dispatch(exchange.request, responder)
        guard let response = immediate else {
            exchange.state = .waiting
            // lws gives a request 5 s to be answered; an answer that waits for a read of the store (a long
            // event log, a timeline) may take longer while other reads go first.
            lws_set_timeout(exchange.wsi, PENDING_TIMEOUT_HTTP_CONTENT, Self.longestWaitForAnswer)
            return 0
        }
        return send(response, on: exchange)
    }

    /// Writes the head of `response`; completes the transaction at once when there is no body to write
    /// (none, or a HEAD request), else queues the body for HTTP_WRITEABLE.
    /// - Returns: nonzero to close the connection.
    private func send(_ response: HTTPResponse, on exchange: HTTPExchange) -> Int32 {
        let wsi = exchange.wsi
        guard Self.writeHead(response, on: wsi) else { return 1 }
        // With no body (a push's 200) the response is whole once its head is written, and a keep-alive client
        // sends its next request at once: complete the transaction now. Waiting for WRITEABLE let that
        // request arrive mid-transaction, and lws 4.1 then spun in `lws_service_do_ripe_rxflow` (the service
        // thread at 100 %, every client stalled). Completing it frees the per-session data (see the type's
        // comment): nothing may read it afterwards.
        if response.body.isEmpty || exchange.request.method == .head {
            exchange.state = .done
            return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
        }
        exchange.state = .bodyPending([UInt8](repeating: 0, count: clws_pre()) + response.body)
        lws_callback_on_writable(wsi)
        return 0
    }

    /// Writes the status line and header fields of `response` — the one place that does, for every answer
    /// of the route table. The status line is written from ``HTTPStatus`` (over HTTP/2, the `:status`
    /// pseudo-header); then lws's best-practice security headers when the response wants them; then
    /// `content-type`, `content-length` (the body's, also for HEAD), `cache-control` and the response's own
    /// fields, in order.
    /// - Returns: false when lws could not write them (the caller closes the connection).
    static func writeHead(_ response: HTTPResponse, on wsi: OpaquePointer) -> Bool {
        let headroom = clws_pre()
        var buffer = [UInt8](repeating: 0, count: headroom + 8192)
        return buffer.withUnsafeMutableBufferPointer { buffer -> Bool in
            let start = buffer.baseAddress! + headroom
            let end = buffer.baseAddress! + buffer.count
            var position: UnsafeMutablePointer<UInt8>? = start
            func add(_ name: String, _ value: String) -> Bool {
                let nameBytes = Array((name + ":").utf8) + [0]
                let valueBytes = Array(value.httpFieldValue.utf8)
                return lws_add_http_header_by_name(wsi, nameBytes, valueBytes, Int32(valueBytes.count), &position, end) == 0
            }
            let code = UInt32(response.status.code)
            // HTTP/2 requests carry the :path pseudo-header; there the status is the :status pseudo-header.
            if lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_COLON_PATH) > 0 {
                if response.securityHeaders == .bestPractice {
                    if lws_add_http_header_status(wsi, code, &position, end) != 0 { return false }
                } else {
                    let digits = Array("\(code)".utf8)
                    if lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_COLON_STATUS, digits, Int32(digits.count), &position, end) != 0 { return false }
                }
            } else {
                let line = Array(response.status.statusLine.utf8)
                if lws_add_http_header_by_name(wsi, nil, line, Int32(line.count), &position, end) != 0 { return false }
                if response.securityHeaders == .bestPractice, !addSecurityHeaders(wsi, code: code, at: &position, end: end) { return false }
            }
            let type = Array(response.contentType.utf8)
            if lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, type, Int32(type.count), &position, end) != 0 { return false }
            if lws_add_http_header_content_length(wsi, lws_filepos_t(response.body.count), &position, end) != 0 { return false }
            guard add("cache-control", response.cacheControl) else { return false }
            for (name, value) in response.headers {
                guard add(name, value) else { return false }
            }
            return lws_finalize_write_http_header(wsi, start, &position, end) == 0
        }
    }

    /// Appends lws's best-practice security headers (HTTP/1.x). lws adds them only together with its own status
    /// line (`lws_add_http_header_status`), whose phrases come from a table of its own (no phrase for 201,
    /// "Request Entity Too Large" for 413); so that call writes into a scratch buffer, and everything after its
    /// status line — plain `name: value` lines on HTTP/1.x — is copied after ours. The call also records the
    /// status for lws.
    private static func addSecurityHeaders(_ wsi: OpaquePointer, code: UInt32, at position: inout UnsafeMutablePointer<UInt8>?,
                                           end: UnsafeMutablePointer<UInt8>) -> Bool {
        var scratch = [UInt8](repeating: 0, count: 2048)
        return scratch.withUnsafeMutableBufferPointer { scratch -> Bool in
            var cursor: UnsafeMutablePointer<UInt8>? = scratch.baseAddress!
            guard lws_add_http_header_status(wsi, code, &cursor, scratch.baseAddress! + scratch.count) == 0,
                  let written = cursor else { return false }
            let count = written - scratch.baseAddress!
            guard let lineEnd = (1..<max(1, count)).first(where: { scratch[$0 - 1] == 0x0d && scratch[$0] == 0x0a }) else { return false }
            let rest = count - (lineEnd + 1)
            guard let target = position, end - target >= rest else { return false }
            target.update(from: scratch.baseAddress! + lineEnd + 1, count: rest)
            position = target + rest
            return true
        }
    }

    // MARK: Reading the request

    /// The method and decoded path, or nil when lws has no request target (not an HTTP request).
    private static func target(_ wsi: OpaquePointer) -> (HTTPMethod, String)? {
        for (method, token) in methodTokens {
            if let path = header(wsi, token) { return (method, path) }
        }
        return nil
    }

    /// Whether lws will deliver a body (LWS_CALLBACK_HTTP_BODY…_COMPLETION) before the request can be answered:
    /// a `content-length` above 0; for POST also an explicit `content-length: 0` (lws 4.1 then calls BODY and
    /// BODY_COMPLETION with nothing, for POST only). (A `transfer-encoding` is refused before: 411.)
    /// A request with neither has no body (RFC 9112 §6.3) and is answered at once.
    private static func expectsBody(_ request: HTTPRequest) -> Bool {
        guard request.method.mayHaveBody else { return false }
        guard let text = request.headers["content-length"], let length = Int(text.trimmingCharacters(in: .whitespaces)) else {
            return false
        }
        return length > 0 || request.method == .post
    }

    /// The known and custom header fields present.
    private static func headers(_ wsi: OpaquePointer) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for (name, token) in knownHeaders {
            if let value = header(wsi, token) { headers[name] = value }
        }
        for name in customHeaders {
            if let value = customHeader(wsi, name) { headers[name] = value }
        }
        return headers
    }

    /// The fields of ``HTTPRequest/singleFields`` the request sent more than once, sorted; the APNs endpoints
    /// refuse them (400 `DuplicateHeaders`), as the HTTP/2 port does.
    ///
    /// lws 4.1 keeps each repeat of a field it has a token for as one more fragment of it (and `lws_hdr_copy`
    /// joins them with `,`): there are more when the total length is more than the first fragment's (the joining
    /// comma counts, so an empty repeat is seen too). Of a custom field (`apns-push-type`) lws 4.1 stores every
    /// repeat but looks up only the first (`lws_hdr_custom_length`; it has no `lws_hdr_custom_name_foreach`), so
    /// the repeats of those cannot be seen here.
    static func repeatedSingleFields(_ wsi: OpaquePointer) -> [String] {
        knownHeaders.filter { name, token in
            HTTPRequest.singleFields.contains(name)
                && lws_hdr_total_length(wsi, token) > lws_hdr_fragment_length(wsi, token, 0)
        }.map(\.0).sorted()
    }

    /// The value of one header lws parses under `token`, or nil (absent, or longer than ``maximumFieldBytes``).
    private static func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0, length <= maximumFieldBytes else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A header lws does not know by name (`apns-push-type`), trimmed: `""` when it is present and empty (as
    /// the HTTP/2 port sees it, so both ports judge `apns-id:` alike), nil when absent or 1,024 bytes or more.
    private static func customHeader(_ wsi: OpaquePointer, _ name: String) -> String? {
        let key = name + ":"
        let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.utf8.count)))
        if length == 0 { return "" }
        guard length > 0, length < 1024 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), key, Int32(key.utf8.count)) >= 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }

    /// The query's fragments as lws split and URL-decoded them (`name=value` each, in order).
    private static func queryFragments(_ wsi: OpaquePointer) -> [String] {
        var fragments: [String] = []
        var index: Int32 = 0
        while true {
            let length = Int(lws_hdr_fragment_length(wsi, WSI_TOKEN_HTTP_URI_ARGS, index))
            guard length > 0 else { break }
            if length <= maximumFieldBytes {
                var buffer = [CChar](repeating: 0, count: length + 1)
                if lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index) >= 0 {
                    fragments.append(String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self))
                }
            }
            index += 1
        }
        return fragments
    }

    /// The exchange whose pointer the per-session data holds, if any.
    private static func exchange(_ sessionData: UnsafeMutableRawPointer) -> HTTPExchange? {
        sessionData.load(fromByteOffset: exchangeOffset, as: UnsafeMutableRawPointer?.self)
            .map { Unmanaged<HTTPExchange>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// One request/response exchange on an lws connection, between callbacks. Service thread only.
final class HTTPExchange {
    /// Where the exchange stands.
    enum State {
        /// The body is being read; the request is answered on LWS_CALLBACK_HTTP_BODY_COMPLETION.
        case receivingBody
        /// The route's handler runs: an answer now is written on return.
        case dispatching
        /// The handler will answer later.
        case waiting
        /// A late answer waits for HTTP_WRITEABLE to write its head.
        case headPending(HTTPResponse)
        /// The head is written; the body, after `LWS_PRE` bytes of headroom, waits for HTTP_WRITEABLE.
        case bodyPending([UInt8])
        /// The response is written.
        case done
    }

    /// The connection; valid while ``isAttached``.
    let wsi: OpaquePointer
    /// The request, whose body grows while it is received.
    var request: HTTPRequest
    /// Where the exchange stands.
    var state: State = .dispatching
    /// False once lws dropped the transaction or closed the connection: a late answer is then dropped.
    var isAttached = true
    /// Close the connection once the response is written (the request's body cannot be read: 411).
    var closesAfterResponse = false

    /// An exchange for `request` on `wsi`.
    init(wsi: OpaquePointer, request: HTTPRequest) {
        self.wsi = wsi
        self.request = request
    }
}

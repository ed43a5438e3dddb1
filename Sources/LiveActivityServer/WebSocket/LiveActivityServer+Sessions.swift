import CLibWebSockets
import Foundation
import LiveActivityCore

/// Connections: admitting, reading whole messages, writing queued frames, closing. Service thread only.
extension LiveActivityServer {
    /// The WebSocket endpoint's path.
    static let webSocketPath = "/ws"
    /// Seconds over which rate-limit refusals are counted towards closing a flooding client.
    static let refusalWindow: TimeInterval = 10

    /// Close code 1013, "try again later" (RFC 6455 §7.4.1 registry), for clients too slow to keep up.
    static let tryAgainLater = lws_close_status(rawValue: 1013)

    /// Decides whether a WebSocket handshake may proceed; if not, answers it with an HTTP status.
    /// - Returns: 0 to accept, nonzero to refuse (after writing 403, 404, 401 or 503).
    func admitUpgrade(_ wsi: OpaquePointer) -> Int32 {
        guard !shuttingDown else { return refuse(wsi, 503, "server shutting down") }
        guard header(wsi, WSI_TOKEN_GET_URI) == Self.webSocketPath else {
            return refuse(wsi, 404, "the WebSocket endpoint is \(Self.webSocketPath)")
        }
        if let token = queryArgument(wsi, "share") {
            guard let share = share(forToken: token) else { return refuse(wsi, 404, "unknown share link") }
            guard share.isLive(at: clock()), center.activities[share.activityId] != nil else { return refuse(wsi, 410, "this share has ended") }
        }
        guard originAllowed(wsi) else {
            logger.warning("refused a cross-origin WebSocket", ["origin": header(wsi, WSI_TOKEN_ORIGIN) ?? ""])
            return refuse(wsi, 403, "origin not allowed; start the server with --allowed-origin to allow it")
        }
        guard sessions.count < configuration.maximumConnections else {
            return refuse(wsi, 503, "too many connections (the limit is \(configuration.maximumConnections))")
        }
        guard queryArgument(wsi, "share") != nil || configuration.access.role(presenting: presentedToken(wsi)) != nil else {
            return refuse(wsi, 401, "the token matches no role")
        }
        return 0
    }

    /// Answers a refused handshake with a complete HTTP/1.1 response, its status line from ``HTTPStatus``
    /// (`HTTP/1.1 410 Gone`; lws 4.1's own helper writes an HTTP/1.0 status line at this stage, which
    /// WebSocket clients reject as malformed). The body is `410 Gone: reason`.
    private func refuse(_ wsi: OpaquePointer, _ code: Int, _ reason: String) -> Int32 {
        let status = HTTPStatus(code)
        let body = "\(status): \(reason)\n"
        let response = "\(status.statusLine)\r\ncontent-type: text/plain; charset=utf-8\r\n"
            + "content-length: \(body.utf8.count)\r\nconnection: close\r\n\r\n" + body
        let frame = Frame(Array(response.utf8))
        _ = lws_write(wsi, frame.payload, frame.count, LWS_WRITE_HTTP_FINAL)
        return 1
    }

    /// Same-origin by default: a browser's `Origin` must be this server's own scheme and `Host`, or one of
    /// the allowed origins. Clients that send no `Origin` (scripts) are not browsers and pass.
    private func originAllowed(_ wsi: OpaquePointer) -> Bool {
        guard let origin = header(wsi, WSI_TOKEN_ORIGIN)?.lowercased() else { return true }
        let scheme = configuration.usesTLS ? "https" : "http"
        if let host = header(wsi, WSI_TOKEN_HOST)?.lowercased(), origin == "\(scheme)://\(host)" { return true }
        return configuration.allowedOrigins.contains { $0.lowercased() == origin }
    }

    /// The token a client presents: `Authorization: Bearer …` (scripts) or `?token=` (browsers).
    func presentedToken(_ wsi: OpaquePointer) -> String? {
        if let authorization = header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION) {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]).trimmingCharacters(in: .whitespaces) }
        }
        return queryArgument(wsi, "token")
    }

    /// Registers a new client and queues its first message: a `snapshot` (or the events after
    /// `?since=`), or, if it must present a token first, an `unauthorized` error.
    func sessionOpened(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer) {
        let id = nextSessionID
        nextSessionID += 1
        sessionData.storeBytes(of: id, as: UInt64.self)
        // zlib's smallest compression state: about 25 KB per connection instead of about 95 KB, with the
        // same wire format (measured in BENCHMARKS.md); nothing to do when deflate was not negotiated.
        _ = lws_set_extension_option(wsi, "permessage-deflate", "mem_level", "1")
        let share: Share? = queryArgument(wsi, "share").flatMap { token in self.share(forToken: token) }
        let role: AccessPolicy.Role = share != nil ? .viewer : (configuration.access.role(presenting: presentedToken(wsi)) ?? .unauthenticated)
        let session = Session(id: id, wsi: wsi, role: role,
                              bucket: TokenBucket(capacity: configuration.messageBurst, rate: configuration.messagesPerSecond))
        session.shareId = share?.id
        session.scope = share?.activityId
        session.resumeFrom = queryArgument(wsi, "since").flatMap(UInt64.init)
        session.resumeLog = queryArgument(wsi, "log")
        sessions[id] = session
        if session.scope != nil {
            greet(session, since: nil)
        } else if role == .unauthenticated {
            send(.error(requestId: nil, ProtocolError(.unauthorized, field: "token",
                 message: "token: this server needs a token to watch; send {\"type\":\"hello\",\"token\":…}")), to: session)
        } else {
            greet(session, since: session.resumeFrom)
        }
        logger.debug("client connected", ["session.id": "\(id)", "session.role": role.rawValue, "sessions.total": "\(sessions.count)"])
    }

    /// The first data a watching client gets: a snapshot, or the events after `since`.
    func greet(_ session: Session, since: UInt64?, requestId: JSONValue? = nil) {
        if let scope = session.scope {
            send(.snapshot(requestId: requestId, serverTime: clock(), sequence: center.sequence,
                           activities: center.activities[scope].map { [$0] } ?? [], role: .viewer), to: session)
        } else if let since {
            resume(session, since: since, log: session.resumeLog, requestId: requestId)
        } else {
            send(.snapshot(requestId: requestId, serverTime: clock(), sequence: center.sequence, activities: center.ordered,
                           role: session.role, logId: logID), to: session)
        }
    }

    /// Forgets a client whose connection has closed.
    func sessionClosed(_ id: UInt64) {
        sessions[id] = nil
        logger.debug("client disconnected", ["session.id": "\(id)", "sessions.total": "\(sessions.count)"])
    }

    /// Collects one fragment; once the message is whole, handles it.
    /// - Returns: -1 to close the connection, else 0.
    func received(_ bytes: UnsafeRawBufferPointer, session id: UInt64, wsi: OpaquePointer) -> Int32 {
        guard let session = sessions[id] else { return -1 }
        if session.refusedOversizedMessage || session.closing != nil { return 0 }
        if session.incoming.count + bytes.count > configuration.maximumMessageBytes {
            // Returning -1 here does not close a permessage-deflate connection in lws 4.1 (it goes on
            // delivering inflated chunks), so drop the rest of the message and close from WRITEABLE.
            session.refusedOversizedMessage = true
            session.incoming = []
            closeSoon(session, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, "message larger than \(configuration.maximumMessageBytes) bytes")
            return 0
        }
        session.incoming.append(contentsOf: bytes)
        guard lws_is_final_fragment(wsi) != 0 else { return 0 }
        let message = session.incoming
        session.incoming = []
        metrics.messagesReceived += 1
        metrics.bytesReceived += message.count
        guard admitMessage(session, message) else { return 0 }
        if lws_frame_is_binary(wsi) != 0 {
            send(.error(requestId: nil, ProtocolError(.unsupportedFrame, field: nil,
                 message: "binary frames are not part of the protocol; send JSON text frames")), to: session)
            return 0
        }
        handle(ClientMessage.parse(message), from: session)
        return 0
    }

    /// Applies the per-connection rate limit. Each refused message gets its own `rate_limited` error, with
    /// its `requestId`, so a client knows exactly what was not done. A client with
    /// ``ServerConfiguration/rateLimitedBeforeClose`` messages refused within ``refusalWindow`` seconds keeps
    /// flooding and is closed with 1008, after the replies already queued for it (the bucket lets one message
    /// through now and then, so refusals are counted over a window, not in a row).
    /// - Returns: whether the message may be handled.
    private func admitMessage(_ session: Session, _ message: [UInt8]) -> Bool {
        let now = clock()
        if session.bucket.take(at: now) { return true }
        if now.timeIntervalSince(session.refusalWindowStart) > Self.refusalWindow {
            session.refusalWindowStart = now
            session.refusals = 0
        }
        session.refusals += 1
        if session.refusals >= configuration.rateLimitedBeforeClose {
            logger.warning("closing a flooding client", ["session.id": "\(session.id)"])
            closeSoon(session, LWS_CLOSE_STATUS_POLICY_VIOLATION, "too many messages; rate limit is \(Int(configuration.messagesPerSecond))/s",
                      keepingQueued: true)
        } else {
            send(.error(requestId: ClientMessage.parse(message).requestId, ProtocolError(.rateLimited, field: nil,
                 message: "too many messages: at most \(Int(configuration.messagesPerSecond)) per second (bursts of \(Int(configuration.messageBurst))); this one was dropped")), to: session)
        }
        return false
    }

    /// Writes one queued frame (one `lws_write` per WRITEABLE, as lws requires) and re-arms if more wait.
    /// - Returns: -1 to close the connection, else 0.
    func writable(session id: UInt64, wsi: OpaquePointer) -> Int32 {
        guard let session = sessions[id] else { return -1 }
        if let frame = session.next() {
            session.lastWritten = frame
            if lws_write(wsi, frame.payload, frame.count, LWS_WRITE_TEXT) < frame.count { return -1 }
            metrics.messagesSent += 1
            metrics.bytesSent += frame.count
            if let accepted = frame.acceptedAt {
                frame.writesLeft -= 1
                if frame.writesLeft == 0 {
                    metrics.changeToWire.observe(Double(DispatchTime.now().uptimeNanoseconds - accepted) / 1e9)
                }
            }
        } else if let (code, reason) = session.closing {
            close(wsi, code, reason)
            return -1
        }
        if session.hasPending || session.closing != nil { lws_callback_on_writable(wsi) }
        return 0
    }

    /// Queues one message for one client.
    func send(_ message: ServerMessage, to session: Session) {
        if case .error(_, let error) = message { metrics.errors[error.code.rawValue, default: 0] += 1 }
        enqueue(Frame(message.encoded()), to: session)
        lws_callback_on_writable(session.wsi)
    }

    /// Queues a frame. A client whose queue would pass ``ServerConfiguration/maximumQueuedBytes`` has
    /// fallen behind: its queue is dropped and it is closed with 1013 (it may resume with `since`).
    /// - Returns: whether the frame was queued.
    @discardableResult
    func enqueue(_ frame: Frame, to session: Session) -> Bool {
        guard session.closing == nil else { return false }
        if session.queuedBytes + frame.count > configuration.maximumQueuedBytes {
            logger.warning("closing a client that does not keep up", ["session.id": "\(session.id)", "session.queued": "\(session.queuedBytes)"])
            closeSoon(session, Self.tryAgainLater, "client too slow; reconnect with ?since= to resume")
            return false
        }
        session.enqueue(frame)
        return true
    }

    /// Closes a client with `code` at its next WRITEABLE, or kills it after 5 seconds if it never becomes
    /// writable. Nothing more is queued for it from now on.
    /// - Parameter keepingQueued: write what is already queued first (replies to requests it made before);
    ///   otherwise that is dropped (a client too slow to take it, a protocol error).
    func closeSoon(_ session: Session, _ code: lws_close_status, _ reason: String, keepingQueued: Bool = false) {
        if !keepingQueued { session.discardOutbox() }
        session.closing = (code, reason)
        lws_set_timeout(session.wsi, PENDING_TIMEOUT_CLOSE_SEND, 5)
        lws_callback_on_writable(session.wsi)
    }

    /// Sets the close code and reason lws sends in the close frame.
    func close(_ wsi: OpaquePointer, _ code: lws_close_status, _ reason: String) {
        var bytes = Array(reason.utf8.prefix(123))
        lws_close_reason(wsi, code, &bytes, bytes.count)
    }

    /// The value of `name` in the request's query string (`?since=12`), URL-decoded, or nil.
    func queryArgument(_ wsi: OpaquePointer, _ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 1024)
        return buffer.withUnsafeMutableBufferPointer { buffer in
            // lws copies "name=value" into the buffer and returns a pointer just after "name=".
            guard let value = lws_get_urlarg_by_name(wsi, name + "=", buffer.baseAddress, Int32(buffer.count)) else { return nil }
            return String(cString: value)
        }
    }

    /// The value of one request header, or nil.
    func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0, length < 8192 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

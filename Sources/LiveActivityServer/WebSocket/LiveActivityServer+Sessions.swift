import Foundation
import LiveActivityCore
import LiveActivityLWS

/// Connections: admitting, reading whole messages, queuing replies, closing; the policies, with no lws
/// (the adapter, LiveActivityLWS's ``LWSServerAdapter``, calls these with values through
/// ``ServerLWSApplication`` and performs the hub's actions).
/// Service thread only.
extension LiveActivityServer {
    /// The WebSocket endpoint's path.
    static let webSocketPath = "/ws"

    /// Decides whether a WebSocket handshake may proceed.
    /// - Returns: nil to accept, else the refusal to answer with.
    func admit(_ upgrade: UpgradeRequest) -> UpgradeRefusal? {
        guard !adapter.isShuttingDown else { return UpgradeRefusal(status: 503, reason: "server shutting down") }
        guard upgrade.path == Self.webSocketPath else {
            return UpgradeRefusal(status: 404, reason: "the WebSocket endpoint is \(Self.webSocketPath)")
        }
        if let text = upgrade.sinceText, upgrade.since == nil {
            return UpgradeRefusal(status: 400, reason: "since: expected a whole number from 0 to 18446744073709551615 "
                                  + "(the last sequence seen), got \"\(text.prefix(40))\"")
        }
        if let token = upgrade.shareToken {
            guard let share = shares.share(forToken: token) else { return UpgradeRefusal(status: 404, reason: "unknown share link") }
            guard share.isLive(at: clock()), center.activities[share.activityId] != nil else {
                return UpgradeRefusal(status: 410, reason: "this share has ended")
            }
        }
        guard originAllowed(upgrade) else {
            logger.warning("refused a cross-origin WebSocket", ["origin": upgrade.origin ?? ""])
            return UpgradeRefusal(status: 403, reason: "origin not allowed; start the server with --allowed-origin to allow it")
        }
        guard hub.sessions.count < configuration.maximumConnections else {
            return UpgradeRefusal(status: 503, reason: "too many connections (the limit is \(configuration.maximumConnections))")
        }
        guard upgrade.shareToken != nil || configuration.access.role(presenting: upgrade.token) != nil else {
            return UpgradeRefusal(status: 401, reason: "the token matches no role")
        }
        return nil
    }

    /// Same-origin by default: a browser's `Origin` must be this server's own scheme and `Host`, or one of
    /// the allowed origins. Clients that send no `Origin` (scripts) are not browsers and pass.
    private func originAllowed(_ upgrade: UpgradeRequest) -> Bool {
        guard let origin = upgrade.origin?.lowercased() else { return true }
        let scheme = configuration.usesTLS ? "https" : "http"
        if let host = upgrade.host?.lowercased(), origin == "\(scheme)://\(host)" { return true }
        return configuration.allowedOrigins.contains { $0.lowercased() == origin }
    }

    /// Registers a new client and queues its first message: a `snapshot` (or the events after
    /// `?since=`), or, if it must present a token first, an `unauthorized` error.
    /// - Parameters:
    ///   - deflate: what permessage-deflate allows the client, when it negotiated it (nil: plain).
    ///   - offer: the client's `Sec-WebSocket-Extensions`, for the debug log.
    /// - Returns: the session, which the adapter keeps in the connection's per-session data.
    func sessionOpened(_ upgrade: UpgradeRequest, connection: ConnectionHandle?, deflate: PermessageDeflate? = nil,
                       offer: String? = nil) -> Session {
        let id = nextSessionID
        nextSessionID += 1
        let share: Share? = upgrade.shareToken.flatMap { token in shares.share(forToken: token) }
        let role: AccessPolicy.Role = share != nil ? .viewer : (configuration.access.role(presenting: upgrade.token) ?? .unauthenticated)
        let session = Session(id: id, connection: connection, role: role,
                              rateLimit: MessageRateLimit(bucket: TokenBucket(capacity: configuration.messageBurst, rate: configuration.messagesPerSecond),
                                                          closeAfter: configuration.rateLimitedBeforeClose))
        session.deflate = deflate
        session.shareId = share?.id
        session.scope = share?.activityId
        session.resumeFrom = upgrade.since
        session.resumeLog = upgrade.log
        hub.add(session)
        if session.scope != nil {
            hub.watch(session)
            greet(session, since: nil)
        } else if role == .unauthenticated {
            send(.error(requestId: nil, ProtocolError(.unauthorized, field: "token",
                 message: "token: this server needs a token to watch; send {\"type\":\"hello\",\"token\":…}")), to: session)
        } else {
            hub.watch(session)
            greet(session, since: session.resumeFrom)
        }
        logger.debug("client connected", ["session.id": "\(id)", "session.role": role.rawValue, "sessions.total": "\(hub.sessions.count)",
                                          "session.extensions": deflate.map { "permessage-deflate (\($0.summary)); offered: \(offer ?? "")" } ?? "none"])
        return session
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
    func sessionClosed(_ session: Session) {
        hub.remove(session)
        inspector.unsubscribe(session.id)
        logger.debug("client disconnected", ["session.id": "\(session.id)", "sessions.total": "\(hub.sessions.count)"])
    }

    /// Collects one fragment; once the message is whole, handles it.
    /// - Parameters:
    ///   - isFinal: whether this fragment ends the message.
    ///   - isBinary: whether the message is a binary one (refused: the protocol is JSON text).
    func received(_ bytes: UnsafeRawBufferPointer, isFinal: Bool, isBinary: Bool, session: Session) {
        if session.refusedOversizedMessage || session.flooding || session.closing != nil { return }
        if session.incoming.count + bytes.count > configuration.maximumMessageBytes {
            // Returning -1 here does not close a permessage-deflate connection in lws 4.1 (it goes on
            // delivering inflated chunks), so drop the rest of the message and close from WRITEABLE.
            session.refusedOversizedMessage = true
            session.incoming = []
            closeSoon(session, .messageTooBig, "message larger than \(configuration.maximumMessageBytes) bytes")
            return
        }
        session.incoming.append(contentsOf: bytes)
        guard isFinal else { return }
        let message = session.incoming
        session.incoming = []
        metrics.messagesReceived += 1
        metrics.bytesReceived += message.count
        guard admitMessage(session, message) else { return }
        if isBinary {
            sendInTurn(.error(requestId: nil, ProtocolError(.unsupportedFrame, field: nil,
                 message: "binary frames are not part of the protocol; send JSON text frames")), to: session)
            return
        }
        handle(ClientMessage.parse(message, kinds: kindCatalog.registry), from: session)
    }

    /// Applies the per-connection rate limit (``MessageRateLimit``). Each refused message gets its own
    /// `rate_limited` error, with its `requestId`, so a client knows exactly what was not done. A client with
    /// ``ServerConfiguration/rateLimitedBeforeClose`` messages refused within ``MessageRateLimit/window``
    /// seconds keeps flooding and is closed with 1008, after the replies already queued for it.
    /// - Returns: whether the message may be handled.
    private func admitMessage(_ session: Session, _ message: [UInt8]) -> Bool {
        switch session.rateLimit.admit(at: clock()) {
        case .admit:
            return true
        case .closeFlooding:
            logger.warning("closing a flooding client", ["session.id": "\(session.id)"])
            // Nothing more is read from it; it is closed once the replies to what it asked before are queued
            // (changes still waiting for the store get their acks first).
            session.flooding = true
            let reason = "too many messages; rate limit is \(Int(configuration.messagesPerSecond))/s"
            inTurn { [self] in closeSoon(session, .policyViolation, reason, keepingQueued: true) }
        case .refuse:
            sendInTurn(.error(requestId: ClientMessage.parse(message, kinds: kindCatalog.registry).requestId, ProtocolError(.rateLimited, field: nil,
                 message: "too many messages: at most \(Int(configuration.messagesPerSecond)) per second (bursts of \(Int(configuration.messageBurst))); this one was dropped")), to: session)
        }
        return false
    }

    /// Queues a reply that needs no store in its turn: after the replies to changes this client (or any)
    /// made before, which may still wait for the store.
    private func sendInTurn(_ message: ServerMessage, to session: Session) {
        inTurn { [self] in sendIfOpen(message, to: session) }
    }

    /// Queues one message for one client (a `snapshot`, `caughtUp` or `hello` with the heartbeat interval).
    func send(_ message: ServerMessage, to session: Session) {
        enqueue(frame(for: message), to: session)
    }

    /// One reply as the wire carries it, whether queued now (``send(_:to:)``) or put in a reserved place
    /// (``Hub/fill(_:with:)``): `heartbeatSeconds` in `snapshot`, `caughtUp` and `hello`, and an error counted
    /// for `/metrics`.
    func frame(for message: ServerMessage) -> Frame {
        if case .error(_, let error) = message { metrics.errors[error.code.rawValue, default: 0] += 1 }
        return Frame(message.encoded(heartbeatSeconds: configuration.heartbeatSeconds))
    }

    /// Queues a frame for one client, in order with the broadcast. A client that would then lag by more than
    /// ``ServerConfiguration/maximumQueuedBytes`` is closed with 1013 instead (it may resume with `since`).
    func enqueue(_ frame: Frame, to session: Session) {
        perform(hub.send(frame, to: session))
    }

    /// Closes a client with `code` at its next WRITEABLE, or kills it after 5 seconds if it never becomes
    /// writable. Nothing more is queued for it from now on.
    /// - Parameter keepingQueued: write what is already queued first (replies to requests it made before);
    ///   otherwise that is dropped (a client too slow to take it, a protocol error).
    func closeSoon(_ session: Session, _ code: CloseCode, _ reason: String, keepingQueued: Bool = false) {
        perform(hub.close(session, code, reason, keepingQueued: keepingQueued))
    }
}

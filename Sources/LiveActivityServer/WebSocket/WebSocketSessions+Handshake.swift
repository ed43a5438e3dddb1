import Foundation
import LiveActivityCore
import LiveActivityLWS

/// A WebSocket client's lifetime, the lws adapter's entry points: admitting its handshake (``admit(_:)``: the
/// path, `since`, the share link, the origin, the connection limit, the token), opening its session with its
/// role and first message (a snapshot or the events after `since`), and forgetting it once closed.
/// Service thread only.
extension WebSocketSessions {
    /// Decides whether a WebSocket handshake may proceed.
    /// - Returns: nil to accept, else the refusal to answer with.
    func admit(_ upgrade: UpgradeRequest) -> UpgradeRefusal? {
        guard !isShuttingDown() else { return UpgradeRefusal(status: 503, reason: "server shutting down") }
        guard upgrade.path == Self.webSocketPath else {
            return UpgradeRefusal(status: 404, reason: "the WebSocket endpoint is \(Self.webSocketPath)")
        }
        if let text = upgrade.sinceText, upgrade.since == nil {
            return UpgradeRefusal(status: 400, reason: "since: expected a whole number from 0 to 18446744073709551615 "
                                  + "(the last sequence seen), got \"\(text.clipped(to: 40))\"")
        }
        if let token = upgrade.shareToken {
            guard let share = context.share(token) else { return UpgradeRefusal(status: 404, reason: "unknown share link") }
            guard share.isLive(at: clock()), committer.center.activities[share.activityId] != nil else {
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

    /// The role an admitted handshake gets: a share link's viewer, else what its token grants (none:
    /// unauthenticated).
    func role(for upgrade: UpgradeRequest) -> AccessPolicy.Role {
        let share = upgrade.shareToken.flatMap { token in context.share(token) }
        return share != nil ? .viewer : (configuration.access.role(presenting: upgrade.token) ?? .unauthenticated)
    }

    /// Registers a new client and queues its first message: a `snapshot` (or the events after
    /// `?since=`), or, if it must present a token first, an `unauthorized` error.
    /// - Parameters:
    ///   - connection: the adapter's handle of the connection (nil in tests).
    ///   - deflate: what permessage-deflate allows the client, when it negotiated it (nil: plain).
    ///   - offer: the client's `Sec-WebSocket-Extensions`, for the debug log.
    /// - Returns: the session, which the adapter keeps in the connection's per-session data.
    func sessionOpened(_ upgrade: UpgradeRequest, connection: ConnectionHandle?, deflate: PermessageDeflate? = nil,
                       offer: String? = nil) -> Session {
        let id = nextSessionID
        nextSessionID += 1
        let share: Share? = upgrade.shareToken.flatMap { token in context.share(token) }
        let role = role(for: upgrade)
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
        let center = committer.center
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

    /// Greets every watching client again with a fresh snapshot (after a store reload, or when a kind reload
    /// changed an activity's ``Activity/kindProblem`` mark).
    func greetAgain() {
        for session in hub.sessions.values where session.cursor != nil { greet(session, since: nil) }
    }

    /// Forgets a client whose connection has closed.
    func sessionClosed(_ session: Session) {
        hub.remove(session)
        context.forget(session)
        logger.debug("client disconnected", ["session.id": "\(session.id)", "sessions.total": "\(hub.sessions.count)"])
    }
}

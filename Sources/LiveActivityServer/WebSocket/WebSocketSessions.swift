import Foundation
import LiveActivityCore
import LiveActivityLWS

/// The WebSocket connections: admitting handshakes, opening and closing sessions, reading whole messages
/// (with the per-connection rate limit), dispatching them through the ``CommandTable`` after the role and
/// scope checks, queuing replies in order (``inTurn(_:)`` behind the client's earlier changes), and the
/// broadcast of committed events, ticks and heartbeats through the ``Hub``, each encoded once.
///
/// The lws adapter calls the entry points ``admit(_:)``, ``sessionOpened(_:connection:deflate:offer:)``,
/// ``received(_:isFinal:isBinary:session:)`` and ``sessionClosed(_:)`` with values, and performs the hub's
/// actions (``performHubActions``). Owns the hub, the session ids and the messages waiting for their turn.
/// Answers `hello`, `list`, `catchUp` and `history` itself (``register(in:)``); every other command goes to
/// the feature that registered it.
///
/// Service thread only (the hub is checked in debug builds).
final class WebSocketSessions: ServerFeature, ChangeObserver {
    /// What the sessions need from other features, as closures called on the service thread.
    struct Context {
        /// The kinds messages are parsed against (they change on reload).
        var kinds: () -> KindRegistry = { KindRegistry([]) }
        /// The share link a `?share=` token opens, if known (live or ended).
        var share: (_ token: String) -> Share? = { _ in nil }
        /// A session closed: features holding it forget it (the inspector's subscribers).
        var forget: (Session) -> Void = { _ in }
    }

    /// The WebSocket endpoint's path.
    static let webSocketPath = "/ws"

    /// The sessions and the broadcast (see ``Hub``), checked to be touched on the service thread only.
    private let boundHub: ServiceBound<Hub>
    /// The hub. Service thread only (checked in debug builds).
    var hub: Hub { boundHub.value }
    /// The commands clients may send, by type; set by the composition root once every feature registered.
    var commands = CommandTable()
    /// Told of every message answered (the inspector).
    var requestObservers: [any RequestObserver] = []
    /// Performs the hub's actions on the connections (the lws adapter); set by the composition root.
    var performHubActions: ([Hub.Action]) -> Void = { _ in }
    /// Whether the server is shutting down (handshakes are then refused with 503): the lws adapter's flag.
    var isShuttingDown: () -> Bool = { false }
    /// What of each session (by id) waits behind changes still waiting for the store, oldest first.
    private var deferred: [UInt64: [Waiting]] = [:]
    /// The id the next session gets (``sessionOpened(_:connection:deflate:offer:)``), from 1.
    var nextSessionID: UInt64 = 1

    /// Limits, access, origins, the heartbeat interval.
    let configuration: ServerConfiguration
    /// What clients were told, turns, the store's reader.
    let committer: ChangeCommitter
    /// Counters for `/metrics`.
    let metrics: ServerMetrics
    /// Where connection and event lines go.
    let logger: Logger
    /// The server's clock.
    let clock: @Sendable () -> Date
    /// The event log's identity, sent with snapshots and `caughtUp`.
    let logID: String
    /// What the sessions need of other features; set by the composition root before the first connection.
    var context = Context()

    /// - Parameters:
    ///   - configuration: limits (connections, message size and rate, queued bytes), access, origins.
    ///   - hub: the sessions and the broadcast, shared with the lws adapter that writes what it queues.
    ///   - committer: what clients have been told (``ChangeCommitter/center``), turns, the store's reader.
    ///   - onServiceThread: whether the caller runs on the service thread (the hub's check, debug builds).
    ///   - logID: the event log's identity.
    init(configuration: ServerConfiguration, hub: Hub, committer: ChangeCommitter, onServiceThread: @escaping @Sendable () -> Bool,
         metrics: ServerMetrics, logger: Logger, clock: @escaping @Sendable () -> Date, logID: String) {
        self.configuration = configuration
        self.committer = committer
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
        self.logID = logID
        boundHub = ServiceBound(hub, owner: onServiceThread)
    }

    /// Registers `hello`, `list`, `catchUp` and `history` (replies: they wait for the client's earlier changes).
    func register(in tables: inout FeatureTables) {
        tables.commands.register("hello", .reply) { [unowned self] call in
            guard case .hello(let token) = call.command else { return }
            hello(call.session, token: token, requestId: call.message.requestId)
        }
        tables.commands.register("list", .reply) { [unowned self] call in
            let center = committer.center
            send(.snapshot(requestId: call.message.requestId, serverTime: clock(), sequence: center.sequence,
                           activities: center.ordered), to: call.session)
        }
        tables.commands.register("catchUp", .reply) { [unowned self] call in
            guard case .catchUp(let since, let log) = call.command else { return }
            resume(call.session, since: since, log: log, requestId: call.message.requestId)
        }
        tables.commands.register("history", .reply) { [unowned self] call in
            guard case .history(let query) = call.command else { return }
            answerHistory(query, requestId: call.message.requestId, to: call.session)
        }
    }

    // MARK: Messages

    /// Collects one fragment; once the message is whole, handles it.
    /// - Parameters:
    ///   - bytes: the fragment's payload (inflated, for a permessage-deflate client); valid during the call.
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
            inSessionTurn(session) { [self] in
                sendIfOpen(.error(requestId: nil, ProtocolError(.unsupportedFrame, field: nil,
                     message: "binary frames are not part of the protocol; send JSON text frames")), to: session)
            }
            return
        }
        handle(ClientMessage.parse(message, kinds: context.kinds()), from: session)
    }

    /// Applies the per-connection rate limit (``MessageRateLimit``). Each refused message gets its own
    /// `rate_limited` error, with its `requestId`, so a client knows exactly what was not done. A client with
    /// ``ServerConfiguration/rateLimitedBeforeClose`` messages refused within ``MessageRateLimit/window``
    /// seconds keeps flooding and is closed with 1008, after the replies already queued for it.
    /// - Returns: whether the message may be handled.
    private func admitMessage(_ session: Session, _ message: [UInt8]) -> Bool {
        let verdict = session.rateLimit.admit(at: clock())
        if verdict == .admit { return true }
        // The refusal that closes the client gets its error too, before the close.
        let refusal = ServerMessage.error(requestId: ClientMessage.parse(message, kinds: context.kinds()).requestId, ProtocolError(.rateLimited, field: nil,
             message: "too many messages: at most \(Int(configuration.messagesPerSecond)) per second (bursts of \(Int(configuration.messageBurst))); this one was dropped"))
        inSessionTurn(session) { [self] in sendIfOpen(refusal, to: session) }
        if verdict == .closeFlooding {
            logger.warning("closing a flooding client", ["session.id": "\(session.id)"])
            // Nothing more is read from it; it is closed once the replies to what it asked before are queued
            // (changes still waiting for the store get their acks first).
            session.flooding = true
            let reason = "too many messages; rate limit is \(Int(configuration.messagesPerSecond))/s"
            inSessionTurn(session) { [self] in closeSoon(session, .policyViolation, reason, keepingQueued: true) }
        }
        return false
    }

    /// Answers one parsed client message: refused here when the sender may not send it (a share viewer
    /// sends nothing, a client without a role only `hello`, a controller command needs the controller role),
    /// else handed to the feature that registered its type (``commands``). A change is acknowledged (and
    /// broadcast) once durable; other replies wait for the changes before them (``waitsForTurn(_:from:)``), so
    /// each client gets its replies in the order of its requests. The request observers are told once it is
    /// answered (by the handler itself for a change, see ``CommandTable/Entry/reportsItself``).
    /// - Parameter inTurn: the message waited for its turn already.
    func handle(_ message: ClientMessage, from session: Session, inTurn: Bool = false) {
        if !inTurn, waitsForTurn(message, from: session) { return }
        if let (command, entry) = admittedCommand(message, from: session) {
            let call = CommandCall(message: message, command: command, session: session)
            entry.handler(call)
            if entry.reportsItself { return }
        }
        for observer in requestObservers { observer.messageAnswered(message, answer: nil, from: session) }
    }

    /// Checks the sender's scope and role, and answers a message it may not send (or that did not parse, or
    /// that no feature handles) with an error.
    /// - Returns: the command and its table entry when it may be handled; nil when it was answered here.
    private func admittedCommand(_ message: ClientMessage, from session: Session) -> (ClientMessage.Command, CommandTable.Entry)? {
        let command: ClientMessage.Command
        switch message.command {
        case _ where session.scope != nil:
            send(.error(requestId: message.requestId, ProtocolError(.forbidden, field: nil, message: "a share link is read-only: it can only watch")), to: session)
            return nil
        case .failure(let error):
            send(.error(requestId: message.requestId, error), to: session)
            return nil
        case .success(let parsed):
            command = parsed
        }
        if case .hello = command {
            // The one message a client without a role may send.
        } else if session.role == .unauthenticated {
            send(.error(requestId: message.requestId, ProtocolError(.unauthorized, field: "token",
                 message: "token: present a token first with {\"type\":\"hello\",\"token\":…} (got \(command.name))")), to: session)
            return nil
        } else if command.isControl, session.role < .controller {
            send(.error(requestId: message.requestId, ProtocolError(.forbidden, field: "type",
                 message: "type: \(command.name) needs the controller role; this connection is a \(session.role.rawValue) (present the controller token)")), to: session)
            return nil
        }
        guard let entry = commands.entry(for: command) else {
            send(.error(requestId: message.requestId, ProtocolError(.unknownType, field: "type",
                 message: "type: \(command.name) is not served here")), to: session)
            return nil
        }
        return (command, entry)
    }

    /// Answers `hello`: takes the role the token grants; a client that could not watch before now gets its
    /// snapshot.
    private func hello(_ session: Session, token: String, requestId: JSONValue?) {
        guard let role = configuration.access.role(presenting: token) else {
            send(.error(requestId: requestId, ProtocolError(.unauthorized, field: "token", message: "token: matches no role")), to: session)
            return
        }
        let before = session.role
        session.role = role
        send(.hello(requestId: requestId, role: role), to: session)
        if before == .unauthenticated, role != .unauthenticated {
            hub.watch(session)
            greet(session, since: session.resumeFrom)
        }
    }

    // MARK: Turns

    /// What waits for a session's turn: a message to handle, or an answer decided as it arrived (a rate-limit
    /// refusal, a binary frame's error, the close of a flooding client).
    private enum Waiting {
        case message(ClientMessage)
        case answer(() -> Void)
    }

    /// Queues one client message behind the changes still waiting for the store, when it must wait: it is
    /// not a change itself (a change is judged at once, on the speculative state), or messages of the same
    /// client already wait. Its turn comes in ``handle(_:from:inTurn:)``.
    /// - Returns: whether the message was queued (the caller stops there).
    private func waitsForTurn(_ message: ClientMessage, from session: Session) -> Bool {
        if deferred[session.id] != nil {
            deferred[session.id]!.append(.message(message))
            return true
        }
        if committer.pipeline.isIdle || takesChangePath(message, from: session) { return false }
        deferred[session.id] = [.message(message)]
        committer.inTurn { [self] in takeTurn(session) }
        return true
    }

    /// Runs an answer decided as a message arrived in the session's turn: after its messages still waiting,
    /// if any, else after the changes still waiting for the store (``ChangeCommitter/inTurn(_:)``).
    private func inSessionTurn(_ session: Session, _ answer: @escaping () -> Void) {
        if deferred[session.id] != nil {
            deferred[session.id]!.append(.answer(answer))
        } else {
            committer.inTurn(answer)
        }
    }

    /// Handles a session's waiting messages and answers, in order, until one that must wait again: anything
    /// but a change after a change. What a change asks for, its ack or its refusal, is queued behind the turn
    /// in progress (the pipeline's steps run one after another) even when the store has nothing to do; a
    /// read answered at once would overtake it.
    private func takeTurn(_ session: Session) {
        guard hub.sessions[session.id] === session else {
            deferred[session.id] = nil
            return
        }
        while let waiting = deferred[session.id]?.first {
            deferred[session.id]!.removeFirst()
            var wasChange = false
            switch waiting {
            case .message(let message):
                wasChange = takesChangePath(message, from: session)
                handle(message, from: session, inTurn: true)
            case .answer(let answer):
                answer()
            }
            guard let next = deferred[session.id]?.first else { break }
            if wasChange, !isChange(next, from: session) {
                committer.inTurn { [self] in takeTurn(session) }
                return
            }
        }
        deferred[session.id] = nil
    }

    /// Whether a waiting entry is a message ``takesChangePath(_:from:)``.
    private func isChange(_ waiting: Waiting, from session: Session) -> Bool {
        if case .message(let message) = waiting { return takesChangePath(message, from: session) }
        return false
    }

    /// Whether ``handle(_:from:inTurn:)`` takes `message` to the change path (its command's
    /// ``CommandTable/Path/change``, the sender allowed to send it), rather than answering it without the
    /// store (a read, an error, `hello`).
    private func takesChangePath(_ message: ClientMessage, from session: Session) -> Bool {
        guard session.scope == nil, session.role != .unauthenticated, case .success(let command) = message.command else { return false }
        if command.isControl, session.role < .controller { return false }
        return commands.entry(for: command)?.path == .change
    }

    // MARK: Replies

    /// Queues a reply that needs no store in its turn: after the replies to changes this client (or any)
    /// made before, which may still wait for the store.
    func sendInTurn(_ message: ServerMessage, to session: Session) {
        committer.inTurn { [self] in sendIfOpen(message, to: session) }
    }

    /// Queues a message for a client, unless its connection has closed meanwhile (a completion that ran
    /// after the store).
    func sendIfOpen(_ message: ServerMessage, to session: Session) {
        guard hub.sessions[session.id] === session else { return }
        send(message, to: session)
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
        performHubActions(hub.send(frame, to: session))
    }

    /// Closes a client with `code` at its next WRITEABLE, or kills it after 5 seconds if it never becomes
    /// writable. Nothing more is queued for it from now on.
    /// - Parameter keepingQueued: write what is already queued first (replies to requests it made before);
    ///   otherwise that is dropped (a client too slow to take it, a protocol error).
    func closeSoon(_ session: Session, _ code: CloseCode, _ reason: String, keepingQueued: Bool = false) {
        performHubActions(hub.close(session, code, reason, keepingQueued: keepingQueued))
    }
}

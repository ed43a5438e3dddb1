import Foundation
import LiveActivityCore
import LiveActivityRendering

/// INTERIM (issue 28): what the parts of the server that are not types of their own yet still ask of the
/// server: the lws adapter (LWS/, moving to its own target) and the features still written as
/// `extension LiveActivityServer` (push and channels, shares, the inspector, thumbnails, replication, the
/// routes). Each member forwards to the kernel's types (``ChangeCommitter``, ``WebSocketSessions``); this file
/// goes once those become types with contexts of their own. Service thread only.
extension LiveActivityServer {
    // MARK: For the lws adapter

    /// The hub (``WebSocketSessions/hub``).
    var hub: Hub { sessions.hub }
    /// Whether the server is closing its connections (handshakes are refused with 503).
    var shuttingDown: Bool {
        get { sessions.shuttingDown }
        set { sessions.shuttingDown = newValue }
    }
    /// The store thread (``ChangeCommitter/writer``).
    var storeWriter: StoreWriter { committer.writer }
    /// The reader thread (``ChangeCommitter/reader``).
    var storeReader: StoreReader { committer.reader }

    /// See ``ChangeCommitter/releaseHeldSubmissions()``.
    func releaseHeldSubmissions() { committer.releaseHeldSubmissions() }

    /// See ``ChangeCommitter/releaseHeldSubmissionsIfDue()``.
    @inline(__always)
    func releaseHeldSubmissionsIfDue() { committer.releaseHeldSubmissionsIfDue() }

    // MARK: For the features not yet typed

    /// The store (``ChangeCommitter/store``).
    var store: any ActivityStore { committer.store }
    /// What clients have been told (``ChangeCommitter/center``).
    var center: ActivityCenter { committer.center }
    /// The change pipeline (``ChangeCommitter/pipeline``).
    var pipeline: ChangePipeline {
        get { committer.pipeline }
        _modify { yield &committer.pipeline }
    }

    /// See ``ChangeCommitter/carryOut(_:)``.
    func carryOut(_ effects: ChangePipeline.Effects) { committer.carryOut(effects) }

    /// A change whose completion broadcasts its events itself (push, broadcasts, thumbnails: their
    /// completions call ``broadcast(_:at:)``); not published to the observers (see
    /// ``ChangeCommitter/change(judgedAt:publishing:_:completion:)``).
    func change<Value>(_ body: @escaping (inout ActivityCenter) throws -> (Value, [ActivityEvent]),
                       completion: @escaping (Result<Value, any Error>) -> Void) {
        committer.change(judgedAt: clock(), publishing: false, body, completion: completion)
    }

    /// What a published change does, for the changes above: the timing's hold, the broadcast, share expiry.
    func broadcast(_ events: [ActivityEvent], at now: Date) {
        guard !events.isEmpty else { return }
        timing.committed(events, at: now)
        sessions.committed(events, at: now)
        expireShares(now: now, events: events)
    }

    /// See ``WebSocketSessions/send(_:to:)``.
    func send(_ message: ServerMessage, to session: Session) { sessions.send(message, to: session) }
    /// See ``WebSocketSessions/sendIfOpen(_:to:)``.
    func sendIfOpen(_ message: ServerMessage, to session: Session) { sessions.sendIfOpen(message, to: session) }
    /// See ``WebSocketSessions/enqueue(_:to:)``.
    func enqueue(_ frame: Frame, to session: Session) { sessions.enqueue(frame, to: session) }
    /// See ``WebSocketSessions/closeSoon(_:_:_:keepingQueued:)``.
    func closeSoon(_ session: Session, _ code: CloseCode, _ reason: String, keepingQueued: Bool = false) {
        sessions.closeSoon(session, code, reason, keepingQueued: keepingQueued)
    }
    /// See ``ChangeCommitter/storageUnavailable(_:)``.
    func storageUnavailable(_ error: any Error) -> ProtocolError { committer.storageUnavailable(error) }

    /// Swaps in newly loaded kinds: validation, listings and renderings use them from the next request on;
    /// activities that no longer validate are kept and marked with ``Activity/kindProblem``; when a mark
    /// changes, watching clients get a fresh snapshot (as after a store reload) (the Kinds feature's; here
    /// until it is a type).
    func replaceKinds(_ catalog: KindCatalog, templates: KindTemplates? = nil) {
        let marksBefore = committer.center.activities.mapValues(\.kindProblem)
        kindCatalog = catalog
        committer.store.useKinds(catalog.registry)
        kindTemplates = templates ?? Self.parseTemplates(catalog, logger: logger)
        committer.replaceKinds(catalog.registry)
        guard committer.center.activities.mapValues(\.kindProblem) != marksBefore else { return }
        sessions.greetAgain()
    }

    /// Answers one request of the APNs listener through its route table; `reply` hands the answer back to
    /// the HTTP/2 thread (the Push feature's; here until it is a type).
    func answerAPNsRequest(_ request: HTTPRequest, reply: @escaping @Sendable (HTTPResponse) -> Void) {
        if apnsRouter == nil { apnsRouter = makeAPNsRouter() }
        apnsRouter!.dispatch(request, HTTPResponder { response in reply(response) })
    }

    /// Applies one APNs-shaped push: parsed, checked as APNs and iOS would, recorded, broadcast (the Push
    /// feature's; here until it is a type).
    /// - Parameters:
    ///   - payload: the JSON payload (`{"aps":{…}}`).
    ///   - pushToken: the token it is addressed to.
    ///   - apnsId: the `apns-id` to answer with.
    ///   - priority: the `apns-priority` (1, 5, 10; `nil` = 10), for the inspector's budget emulation.
    ///   - transport: `http`, `http2` or `websocket`, and the WebSocket `requestId`, for the inspector.
    ///   - completion: what APNs would answer and what the device would do; called once, on the service
    ///     thread, when the push is durable or refused (at once for a store in memory).
    func applyPush(payload: JSONValue, pushToken: String, apnsId: String, priority: Int? = nil,
                   transport: String = "http", requestId: JSONValue? = nil, completion: @escaping (PushResult) -> Void) {
        let now = clock()
        let registry = channels
        committer.change(judgedAt: now, publishing: false, { [pushToStartToken] center in
            let push = try APNsPush.parse(payload)
            let outcome = try center.applyPush(push, pushToken: pushToken, pushToStartToken: pushToStartToken, now: now,
                                               isChannelRegistered: { registry.channels[$0] != nil }, newID: { UUID().uuidString })
            return (outcome, outcome.events)
        }) { [self] outcome in
            let result: PushResult
            var events: [ActivityEvent] = []
            switch outcome {
            case .success(let outcome):
                broadcast(outcome.events, at: now)
                requestThumbnails(for: outcome.events)
                events = outcome.events
                result = PushResult(outcome, apnsId: apnsId)
            case .failure(let rejection as PushRejection):
                result = PushResult(rejection, apnsId: apnsId)
            case .failure(let error):
                result = PushResult(PushRejection(status: 503, reason: "ServiceUnavailable", detail: storageUnavailable(error).message), apnsId: apnsId)
            }
            inspectPush(payload, pushToken: pushToken, result: result, events: events, priority: priority, transport: transport,
                        requestId: requestId, at: now)
            completion(result)
        }
    }
}

/// INTERIM (issue 28): the WebSocket commands and the effects of the features not yet typed, as a feature
/// and observers: `push` (Push), `share`, `unshare`, `shares` (Shares), `inspect` (Inspector); after each
/// committed change, share expiry and thumbnails; after other instances' changes, share expiry and the
/// inspector's contents; each answered message recorded by the inspector. Goes with the features branch.
/// Service thread only.
final class UntypedFeatures: ServerFeature, ChangeObserver, RequestObserver {
    private unowned let server: LiveActivityServer

    /// - Parameter server: the server whose extensions still hold these features.
    init(server: LiveActivityServer) {
        self.server = server
    }

    /// Registers `push` and `share` (changes), `unshare`, `shares` and `inspect` (replies).
    func register(in tables: inout FeatureTables) {
        tables.commands.register("push", .change) { [unowned self] call in
            guard case .push(let pushToken, let payload) = call.command else { return }
            let message = call.message, session = call.session
            server.applyPush(payload: payload, pushToken: pushToken, apnsId: UUID().uuidString, priority: message.pushPriority,
                             transport: "websocket", requestId: message.requestId) { [unowned self] result in
                server.sessions.sendIfOpen(.pushResult(requestId: message.requestId, result: result), to: session)
            }
        }
        tables.commands.register("share", .change) { [unowned self] call in
            guard case .share(let activityId, let expiresIn) = call.command else { return }
            let requestId = call.message.requestId, session = call.session
            server.createShare(activityId: activityId, expiresIn: expiresIn) { [unowned self] result in
                switch result {
                case .success(let summary): server.sessions.sendIfOpen(.shares(requestId: requestId, shares: [summary]), to: session)
                case .failure(let error): server.sessions.sendIfOpen(.error(requestId: requestId, error), to: session)
                }
            }
        }
        tables.commands.register("unshare", .reply) { [unowned self] call in
            guard case .unshare(let shareId) = call.command else { return }
            do throws(ProtocolError) {
                let share = try server.revokeShare(id: shareId)
                server.sessions.send(.ack(requestId: call.message.requestId, activityId: share.activityId, activityIds: nil), to: call.session)
            } catch {
                server.sessions.send(.error(requestId: call.message.requestId, error), to: call.session)
            }
        }
        tables.commands.register("shares", .reply) { [unowned self] call in
            guard case .shares(let activityId) = call.command else { return }
            server.sessions.send(.shares(requestId: call.message.requestId, shares: server.shareSummaries(activityId: activityId)), to: call.session)
        }
        tables.commands.register("inspect", .reply) { [unowned self] call in
            guard case .inspect(let since) = call.command else { return }
            server.subscribeInspector(call.session, since: since, requestId: call.message.requestId)
        }
    }

    /// A local change or a deadline: shares whose activity was dismissed end; new images are fetched.
    func committed(_ events: [ActivityEvent], at now: Date) {
        server.expireShares(now: now, events: events)
        server.requestThumbnails(for: events)
    }

    /// Another instance's change: shares end; the inspector keeps the contents for its diffs (the other
    /// instance fetched the images).
    func replicated(_ events: [ActivityEvent], at now: Date) {
        server.expireShares(now: now, events: events)
        server.noteContents(events)
    }

    /// Records the message in the inspector.
    func messageAnswered(_ message: ClientMessage, answer: Result<ActivityCenter.Outcome, ProtocolError>?, from session: Session) {
        server.inspectMessage(message, answer: answer, from: session)
    }

    /// Pushes are recorded by the push code itself for now (``LiveActivityServer/inspectPush``).
    func pushAnswered(_ push: AnsweredPush) {}
}

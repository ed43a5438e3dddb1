import Foundation
import LiveActivityCore

/// APNs's APIs as a feature: device pushes (`POST /3/device/{token}`, and the WebSocket `push` command),
/// broadcast channels (their registry, kept through the store) and broadcasts to them (`/1/apps/…`,
/// `/4/broadcasts/apps/…`), on the main port and on the APNs listener's (`--apns-port`).
///
/// Owns the channel registry. Pushes and broadcasts are changes (through ``Context/change``): once they are
/// committed, the sessions broadcast their events and thumbnails are fetched by observers of the change
/// pipeline, not from here. Every answered push is told to the request observers (the inspector) through
/// ``Context/pushAnswered``. Service thread only.
final class Push: ServerFeature {
    /// What push sees of the server. Closures are called on the service thread.
    struct Context {
        /// Who may send APNs-shaped requests (provider tokens, `--apns-key`; or the controller token).
        var authority: ProviderAuthority
        /// The current time (the server's clock, whole milliseconds).
        var now: () -> Date
        /// The token APNs-shaped `start` pushes are addressed to.
        var pushToStartToken: String
        /// Proposes changes to the activities (pushes, broadcasts).
        var change: ChangeProposer
        /// Records a channel change on the store thread, after the changes queued before it; the closure gets
        /// nil once durable, or the store's error, on the service thread.
        var recordChannel: (StoreWriter.ChannelChange, @escaping ((any Error)?) -> Void) -> Void
        /// The `storage_unavailable` error for a store failure (the cause goes to the log, not the client).
        var storageUnavailable: (any Error) -> ProtocolError
        /// Tells the request observers (the inspector) of an answered push, broadcast or channel request.
        var pushAnswered: (AnsweredPush) -> Void
        /// Queues a reply for a WebSocket client, unless its connection closed meanwhile.
        var sendIfOpen: (ServerMessage, Session) -> Void
        /// A new UUID (upper-case, as APNs makes): `apns-id`s, `apns-request-id`s, activity ids.
        var newID: () -> String = { UUID().uuidString }
    }

    /// The broadcast channels, as the store keeps them.
    private(set) var channels: ChannelRegistry
    /// What it sees of the server.
    private let context: Context

    /// Push with the channels the store kept.
    init(channels: ChannelRegistry, context: Context) {
        self.channels = channels
        self.context = context
    }

    /// Whether a broadcast channel with this id is registered (the `start` command's `channelId` check).
    func isChannelRegistered(_ id: String) -> Bool { channels.channels[id] != nil }

    // MARK: Registration

    /// Registers the push and channel endpoints on both route tables (main port and APNs port), the APNs
    /// port's `BadPath` for any other path, and the WebSocket `push` command (a change).
    func register(in tables: inout FeatureTables) {
        let pushContext = pushEndpointContext
        let channelContext = channelEndpointContext
        PushEndpoint().register(on: &tables.routes, context: pushContext)
        ChannelEndpoint().register(on: &tables.routes, context: channelContext)
        PushEndpoint().register(on: &tables.apnsRoutes, context: pushContext)
        ChannelEndpoint().register(on: &tables.apnsRoutes, context: channelContext)
        let newID = context.newID
        tables.apnsRoutes.onMiss(under: "/") { request, miss in
            PushEndpoint.miss(request, miss, idHeader: "apns-id", path: "/3/device/{pushToken}, /1/apps/{bundleId}/channels or /4/broadcasts/apps/{bundleId}",
                              newId: newID)
        }
        tables.commands.register("push", .change) { [unowned self] call in pushCommand(call) }
    }

    /// The WebSocket `push` command: applies the payload as if it came over HTTP/2 and answers `pushResult`
    /// once it is durable or refused.
    func pushCommand(_ call: CommandCall) {
        guard case .push(let pushToken, let payload) = call.command else { return }
        let message = call.message
        let session = call.session
        applyPush(payload: payload, pushToken: pushToken, apnsId: context.newID(), priority: message.pushPriority,
                  transport: "websocket", requestId: message.requestId) { [context] result in
            context.sendIfOpen(.pushResult(requestId: message.requestId, result: result), session)
        }
    }

    /// What the push endpoint (`POST /3/device/{token}`) sees.
    private var pushEndpointContext: PushEndpoint.Context {
        PushEndpoint.Context(
            authority: context.authority,
            now: context.now,
            applyPush: { [unowned self] push, completion in
                applyPush(payload: push.payload, pushToken: push.pushToken, apnsId: push.apnsId, priority: push.priority,
                          transport: push.transport, completion: completion)
            },
            inspectRefusal: { [context] text, push, result in
                context.pushAnswered(AnsweredPush(payload: .string(text), pushToken: push.pushToken, result: result, events: [],
                                                  priority: push.priority, transport: push.transport, requestId: nil, at: context.now()))
            },
            newApnsId: context.newID)
    }

    /// What the channel-management and broadcast endpoints see.
    private var channelEndpointContext: ChannelEndpoint.Context {
        ChannelEndpoint.Context(
            authority: context.authority,
            now: context.now,
            registry: { [unowned self] in channels },
            create: { [unowned self] channel, completion in
                keepChannel(.save(channel)) { [unowned self] rejection in
                    if rejection == nil { channels.add(channel) }
                    completion(rejection)
                }
            },
            delete: { [unowned self] channel, completion in
                keepChannel(.delete(channel.id)) { [unowned self] rejection in
                    if rejection == nil { channels.remove(id: channel.id) }
                    completion(rejection)
                }
            },
            applyBroadcast: { [unowned self] broadcast, completion in applyBroadcast(broadcast, completion: completion) },
            inspectRefusal: { [context] text, broadcast, result in
                context.pushAnswered(AnsweredPush(payload: .string(text), pushToken: nil, result: result, events: [],
                                                  priority: broadcast.priority, transport: broadcast.transport, requestId: nil,
                                                  at: context.now(), type: "broadcast", channelId: broadcast.channelId))
            },
            newRequestId: context.newID)
    }

    // MARK: Applying

    /// Records a channel change on the store thread (after the changes queued before it), then calls
    /// `completion` on the service thread: nil once durable, or 500 `InternalServerError` when the store
    /// failed (nothing changed).
    func keepChannel(_ change: StoreWriter.ChannelChange, completion: @escaping (PushRejection?) -> Void) {
        context.recordChannel(change) { error in
            completion(error.map { _ in
                PushRejection(status: 500, reason: "InternalServerError",
                              detail: "the store is unavailable right now (the server's log has the cause); nothing was changed, try again")
            })
        }
    }

    /// Applies one APNs-shaped push: parsed, checked as APNs and iOS would, recorded; its events are then
    /// broadcast by the sessions (an observer of committed changes).
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
        let now = context.now()
        let registry = channels
        let pushToStartToken = context.pushToStartToken
        let newID = context.newID
        context.change.change(at: now, { center in
            let push = try APNsPush.parse(payload)
            let outcome = try center.applyPush(push, pushToken: pushToken, pushToStartToken: pushToStartToken, now: now,
                                               isChannelRegistered: { registry.channels[$0] != nil }, newID: newID)
            return (outcome, outcome.events)
        }) { [context] outcome in
            let result: PushResult
            var events: [ActivityEvent] = []
            switch outcome {
            case .success(let outcome):
                events = outcome.events
                result = PushResult(outcome, apnsId: apnsId)
            case .failure(let rejection as PushRejection):
                result = PushResult(rejection, apnsId: apnsId)
            case .failure(let error):
                result = PushResult(PushRejection(status: 503, reason: "ServiceUnavailable", detail: context.storageUnavailable(error).message),
                                    apnsId: apnsId)
            }
            context.pushAnswered(AnsweredPush(payload: payload, pushToken: pushToken, result: result, events: events, priority: priority,
                                              transport: transport, requestId: requestId, at: now))
            completion(result)
        }
    }

    /// Applies one broadcast push to the activities subscribed to its channel, through the change pipeline:
    /// parsed (5 KB limit), applied to each subscriber as iOS would, recorded, told to the inspector with the
    /// activities it reached.
    /// - Parameter completion: what APNs would answer, once durable or refused; on the service thread.
    func applyBroadcast(_ request: ChannelEndpoint.Broadcast, completion: @escaping (PushResult) -> Void) {
        let now = context.now()
        let channelId = request.channelId
        context.change.change(at: now, { center in
            let push = try APNsPush.parse(request.payload, maximumBytes: APNsPush.maximumBroadcastBytes)
            let outcome = try center.applyBroadcast(push, channelId: channelId, now: now)
            return (outcome, outcome.events)
        }) { [context] outcome in
            var result: PushResult
            var events: [ActivityEvent] = []
            switch outcome {
            case .success(let outcome):
                events = outcome.events
                result = PushResult(outcome, requestId: request.requestId)
                if outcome.verdict == .applied {
                    let applied = zip(outcome.activityIds, outcome.outcomes).filter { $0.1.verdict == .applied }.count
                    result.detail = "applied to \(applied) of the \(outcome.activityIds.count) activities subscribed to channel \(channelId)"
                }
            case .failure(let rejection as PushRejection):
                result = PushResult(rejection, apnsId: request.requestId)
            case .failure(let error):
                result = PushResult(PushRejection(status: 503, reason: "ServiceUnavailable", detail: context.storageUnavailable(error).message),
                                    apnsId: request.requestId)
            }
            context.pushAnswered(AnsweredPush(payload: request.payload, pushToken: nil, result: result, events: events,
                                              priority: request.priority, transport: request.transport, requestId: nil, at: now,
                                              type: "broadcast", channelId: channelId))
            completion(result)
        }
    }
}

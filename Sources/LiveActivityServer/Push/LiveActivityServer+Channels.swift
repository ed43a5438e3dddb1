import Foundation
import LiveActivityCore

/// Carries a value the compiler cannot prove `Sendable` from the store thread back to the service thread,
/// where alone it is used (the inbox hands it over). Thread-safe only in that use.
struct ServiceThreadBox<Value>: @unchecked Sendable {
    /// The value; touched on the service thread only.
    let value: Value
}

/// The server's side of APNs's APIs: the push and channel endpoints' contexts, channels kept through the
/// store, broadcasts applied through the change pipeline. Service thread only.
extension LiveActivityServer {
    /// What the push endpoint (`POST /3/device/{token}`) sees of the server.
    var pushEndpointContext: PushEndpoint.Context {
        PushEndpoint.Context(
            authority: providerAuthority,
            now: { [unowned self] in clock() },
            applyPush: { [unowned self] push, completion in
                applyPush(payload: push.payload, pushToken: push.pushToken, apnsId: push.apnsId, priority: push.priority,
                          transport: push.transport, completion: completion)
            },
            inspectRefusal: { [unowned self] text, push, result in
                inspectPush(.string(text), pushToken: push.pushToken, result: result, events: [], priority: push.priority,
                            transport: push.transport, requestId: nil, at: clock())
            },
            newApnsId: { UUID().uuidString })
    }

    /// What the channel-management and broadcast endpoints see of the server.
    var channelEndpointContext: ChannelEndpoint.Context {
        ChannelEndpoint.Context(
            authority: providerAuthority,
            now: { [unowned self] in clock() },
            registry: { [unowned self] in channels },
            create: { [unowned self] channel, completion in
                keepChannel(.save(channel)) { [self] rejection in
                    if rejection == nil { channels.add(channel) }
                    completion(rejection)
                }
            },
            delete: { [unowned self] channel, completion in
                keepChannel(.delete(channel.id)) { [self] rejection in
                    if rejection == nil { channels.remove(id: channel.id) }
                    completion(rejection)
                }
            },
            applyBroadcast: { [unowned self] broadcast, completion in applyBroadcast(broadcast, completion: completion) },
            inspectRefusal: { [unowned self] text, broadcast, result in
                inspectPush(.string(text), pushToken: nil, result: result, events: [], priority: broadcast.priority,
                            transport: broadcast.transport, requestId: nil, at: clock(), type: "broadcast", channelId: broadcast.channelId)
            },
            newRequestId: { UUID().uuidString })
    }

    /// Records a channel change on the store thread (after the changes queued before it), then calls
    /// `completion` on the service thread: nil once durable, or 500 `InternalServerError` when the store
    /// failed (nothing changed).
    func keepChannel(_ change: StoreWriter.ChannelChange, completion: @escaping (PushRejection?) -> Void) {
        let box = ServiceThreadBox(value: completion)
        let synchronous = storeWriter.isSynchronous
        storeWriter.change(change) { [weak self] error in
            let rejection = error.map { _ in
                PushRejection(status: 500, reason: "InternalServerError",
                              detail: "the store is unavailable right now (the server's log has the cause); nothing was changed, try again")
            }
            if synchronous {
                box.value(rejection)
            } else {
                self?.perform { _ in box.value(rejection) }
            }
        }
    }

    /// Applies one broadcast push to the activities subscribed to its channel, through the change pipeline:
    /// parsed (5 KB limit), applied to each subscriber as iOS would, recorded, broadcast to WebSocket
    /// watchers, inspected with the activities it reached.
    /// - Parameter completion: what APNs would answer, once durable or refused; on the service thread.
    func applyBroadcast(_ request: ChannelEndpoint.Broadcast, completion: @escaping (PushResult) -> Void) {
        let now = clock()
        let channelId = request.channelId
        change({ center in
            let push = try APNsPush.parse(request.payload, maximumBytes: APNsPush.maximumBroadcastBytes)
            let outcome = try center.applyBroadcast(push, channelId: channelId, now: now)
            return (outcome, outcome.events)
        }) { [self] outcome in
            var result: PushResult
            var events: [ActivityEvent] = []
            switch outcome {
            case .success(let outcome):
                broadcast(outcome.events, at: now)
                requestThumbnails(for: outcome.events)
                events = outcome.events
                result = PushResult(outcome, requestId: request.requestId)
                if outcome.verdict == .applied {
                    let applied = zip(outcome.activityIds, outcome.outcomes).filter { $0.1.verdict == .applied }.count
                    result.detail = "applied to \(applied) of the \(outcome.activityIds.count) activities subscribed to channel \(channelId)"
                }
            case .failure(let rejection as PushRejection):
                result = PushResult(rejection, apnsId: request.requestId)
            case .failure(let error):
                result = PushResult(PushRejection(status: 503, reason: "ServiceUnavailable", detail: storageUnavailable(error).message),
                                    apnsId: request.requestId)
            }
            inspectPush(request.payload, pushToken: nil, result: result, events: events, priority: request.priority,
                        transport: request.transport, requestId: nil, at: now, type: "broadcast", channelId: channelId)
            completion(result)
        }
    }
}

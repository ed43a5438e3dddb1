import Foundation
import LiveActivityCore

/// Told of every committed change (durable: recorded by the store, or replicated from another instance), in
/// commit order, on the service thread, after the change's own answer went out (the sender's `ack` before the
/// event). The sessions broadcast them; thumbnails fetch new images; share links end with their activity; the
/// inspector keeps contents for its diffs.
protocol ChangeObserver: AnyObject {
    /// - Parameters:
    ///   - events: the committed events, in sequence order; never empty.
    ///   - now: the server time the change was judged at (what its broadcast carries as `serverTime`).
    func committed(_ events: [ActivityEvent], at now: Date)

    /// Told of events another instance committed (`--cluster`), applied here after this instance's own
    /// changes were judged again on top of them. The default treats them as ``committed(_:at:)``; a feature
    /// whose effect the other instance already had (thumbnails: it fetched the image) does nothing.
    /// - Parameters:
    ///   - events: the replicated events, in sequence order; never empty.
    ///   - now: the server time they were applied at here.
    func replicated(_ events: [ActivityEvent], at now: Date)
}

extension ChangeObserver {
    /// Replicated events are committed events, unless the observer says otherwise.
    func replicated(_ events: [ActivityEvent], at now: Date) { committed(events, at: now) }
}

/// Told of every request a feature answered, for the push inspector: client messages over WebSocket and
/// APNs-shaped pushes over any transport. Service thread only.
protocol RequestObserver: AnyObject {
    /// A client message was answered (`answer` is nil for a message answered without the change path: a read,
    /// an error, `hello`; else the change's outcome or refusal).
    func messageAnswered(_ message: ClientMessage, answer: Result<ActivityCenter.Outcome, ProtocolError>?, from session: Session)
    /// An APNs-shaped push (device, broadcast or channel request) was answered.
    func pushAnswered(_ push: AnsweredPush)
}

/// An APNs-shaped request and its answer, as the inspector records it.
struct AnsweredPush {
    /// The push's JSON payload (a string for a body that did not parse).
    var payload: JSONValue
    /// The device token it was addressed to; nil for a broadcast or a channel request.
    var pushToken: String?
    /// What APNs answered and what the device did.
    var result: PushResult
    /// The events it committed (empty when refused).
    var events: [ActivityEvent]
    /// `apns-priority` (1, 5, 10; nil = 10).
    var priority: Int?
    /// `http`, `http2` or `websocket`.
    var transport: String
    /// The WebSocket `requestId`, when it came as a client message.
    var requestId: JSONValue?
    /// When it was judged (server time).
    var at: Date
    /// `push`, `broadcast` or a channel request's type.
    var type: String = "push"
    /// The broadcast channel, for a broadcast or a channel request.
    var channelId: String?
}

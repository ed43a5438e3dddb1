import Foundation
import LiveActivityCore

/// The activity commands of the WebSocket protocol: `start`, `update`, `end`, `pause`, `resume` and `extend`,
/// each judged by ``ActivityCenter/apply(_:now:newID:)`` on the speculative state, recorded through the
/// ``ChangeCommitter``, and answered with `ack` (or `error`) once durable; the committer then publishes the
/// events (the sessions broadcast them after the `ack`). Holds no state of its own.
///
/// Service thread only.
final class ActivityCommands: ServerFeature {
    /// What the commands need from the rest of the server, as closures called on the service thread.
    struct Context {
        /// The server's clock (whole milliseconds).
        var now: () -> Date
        /// The registered-channel test as of the request (a snapshot: a change judged again later is judged
        /// against the channels its request saw), for `start.channelId`.
        var channels: () -> (String) -> Bool
        /// Queues a reply for a session, unless it has closed meanwhile (``WebSocketSessions/sendIfOpen(_:to:)``).
        var reply: (ServerMessage, Session) -> Void
        /// Told of each command once answered, with its outcome or refusal (the inspector).
        var requestObservers: () -> [any RequestObserver]
        /// New activity ids.
        var newID: () -> String = { UUID().uuidString }
    }

    /// The wire types this feature answers.
    static let names = ["start", "update", "end", "pause", "resume", "extend"]

    private let committer: ChangeCommitter
    private let context: Context

    /// - Parameters:
    ///   - committer: judges, records and publishes the changes.
    ///   - context: the clock, the channel test, the replies and the request observers.
    init(committer: ChangeCommitter, context: Context) {
        self.committer = committer
        self.context = context
    }

    /// Registers the six commands on the change path; each tells the request observers itself, with its outcome.
    func register(in tables: inout FeatureTables) {
        for name in Self.names {
            tables.commands.register(name, .change, reportsItself: true) { [unowned self] call in run(call) }
        }
    }

    /// Judges one command at the current time and answers it once durable or refused: `ack` with the
    /// activity ids, or `error` (a refusal as the center words it; a store failure as `storage_unavailable`).
    /// - Parameter call: the message, its command and its sender (role already checked).
    func run(_ call: CommandCall) {
        let now = context.now()
        let command = call.command
        let isRegistered = context.channels()
        let newID = context.newID
        committer.change(judgedAt: now, { center in
            if case .start(let start) = command, let channel = start.channelId, !isRegistered(channel) {
                throw ProtocolError(.invalidField, field: "channelId",
                                    message: "channelId: \(channel) is not a registered channel (create one with POST /1/apps/{bundleId}/channels)")
            }
            let outcome = try center.apply(command, now: now, newID: newID)
            return (outcome, outcome.events)
        }) { [self] result in
            let message = call.message
            let answer: Result<ActivityCenter.Outcome, ProtocolError>
            switch result {
            case .success(let outcome):
                answer = .success(outcome)
                context.reply(.ack(requestId: message.requestId, activityId: outcome.activityId, activityIds: outcome.activityIds), call.session)
            case .failure(let error as ProtocolError):
                answer = .failure(error)
                context.reply(.error(requestId: message.requestId, error), call.session)
            case .failure(let error):
                let refusal = committer.storageUnavailable(error)
                answer = .failure(refusal)
                context.reply(.error(requestId: message.requestId, refusal), call.session)
            }
            for observer in context.requestObservers() { observer.messageAnswered(message, answer: answer, from: call.session) }
        }
    }
}

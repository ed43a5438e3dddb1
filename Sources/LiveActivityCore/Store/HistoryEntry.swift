import Foundation

/// One finished activity, as `history` and `GET /api/history` report it.
public struct HistoryEntry: Sendable, Hashable, Encodable {
    /// How a workout ended, for people.
    public enum Outcome: String, Sendable, Codable {
        /// Its countdown reached zero before it was ended.
        case completed
        /// It was ended before its countdown reached zero.
        case stopped
        /// The server ended it at the 8-hour limit.
        case expired
    }

    /// The activity's id.
    public var id: String
    /// Its kind, e.g. `"workout"`.
    public var attributesType: String
    /// Its fixed attributes, e.g. `{"workout":"yoga"}`.
    public var attributes: JSONValue
    /// When it started (UTC).
    public var startDate: Date
    /// When it ended (UTC).
    public var endDate: Date
    /// Length of its countdown as last set, in seconds; `nil` when it had none.
    public var plannedDurationSeconds: Double?
    /// From start to end, in seconds.
    public var actualDurationSeconds: Double
    /// How it ended.
    public var outcome: Outcome
    /// Why it ended: `request` or `lifetimeLimit`.
    public var endReason: EndReason

    /// The history entry for an activity that has ended, or `nil` if it has not.
    public init?(_ activity: Activity) {
        guard let endDate = activity.endDate else { return nil }
        id = activity.id
        attributesType = activity.attributesType
        attributes = activity.attributes
        startDate = activity.startDate
        self.endDate = endDate
        plannedDurationSeconds = activity.timer.map { ($0.end.timeIntervalSince($0.start) * 1000).rounded() / 1000 }
        actualDurationSeconds = (endDate.timeIntervalSince(activity.startDate) * 1000).rounded() / 1000
        endReason = activity.endReason ?? .request
        if endReason == .lifetimeLimit {
            outcome = .expired
        } else if activity.timerFinished || (activity.timer.map { $0.end <= endDate } ?? false) {
            outcome = .completed
        } else {
            outcome = .stopped
        }
    }
}

/// One change to one activity, numbered server-wide.
public struct ActivityEvent: Sendable, Hashable {
    /// What happened, as the `event` string on the wire.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// A `start` with a future `startDate` created a `pending` activity.
        case scheduled
        /// The activity started (at once, or at its scheduled `startDate`).
        case started
        /// Its content changed (`update`).
        case updated
        /// Its countdown froze (`pause`).
        case paused
        /// Its countdown runs again, its end moved by the paused time (`resume`).
        case resumed
        /// Its countdown's end moved (`extend`).
        case extended
        /// Its `staleDate` passed.
        case stale
        /// Its countdown reached zero.
        case timerFinished
        /// It ended (`end`, or the 8-hour limit).
        case ended
        /// It was removed from every presentation.
        case dismissed
    }

    /// What happened.
    public var kind: Kind
    /// Server-wide number of this event: one more than the previous event's.
    public var sequence: UInt64
    /// The activity as it is after the change.
    public var activity: Activity
    /// The alert the update carried, for `updated` only.
    public var alert: AlertConfiguration?

    /// Creates an event.
    public init(kind: Kind, sequence: UInt64, activity: Activity, alert: AlertConfiguration? = nil) {
        self.kind = kind
        self.sequence = sequence
        self.activity = activity
        self.alert = alert
    }
}

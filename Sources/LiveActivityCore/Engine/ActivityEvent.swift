/// One change to one activity, numbered server-wide.
public struct ActivityEvent: Sendable, Hashable {
    /// What happened, as the `event` string on the wire.
    public enum Kind: String, Sendable, Codable, CaseIterable {
        case started, updated, stale, timerFinished, ended, dismissed
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

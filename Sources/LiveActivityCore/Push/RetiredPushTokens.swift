import Foundation

/// The push tokens of dismissed activities, each with the time it stopped being valid, so a push to one is
/// answered as APNs answers a token that is no longer valid (410 `Unregistered` with that time) rather than as
/// a token never issued (400 `BadDeviceToken`). Keeps the newest ``capacity`` tokens; older ones are
/// forgotten (a push to them is `BadDeviceToken` again). Held in memory; a restarted server reads them back from
/// the dismissals its store's event log still holds (``ActivityStore/dismissedActivities(limit:)``).
/// A value; not thread-safe (its ``ActivityCenter``'s owner uses it).
public struct RetiredPushTokens: Sendable, Equatable {
    /// Most tokens remembered.
    public static let capacity = 4096

    /// When each remembered token stopped being valid.
    private var dates: [String: Date] = [:]
    /// The remembered tokens in a ring, oldest at `next` once full.
    private var ring: [String] = []
    /// Where the next token goes once ``ring`` is full.
    private var next = 0

    /// No tokens.
    public init() {}

    /// How many tokens are remembered.
    public var count: Int { dates.count }

    /// When `token` stopped being valid, or nil when it is not remembered.
    public func retiredDate(of token: String) -> Date? { dates[token] }

    /// Remembers that `token` stopped being valid at `date` (forgetting the oldest token when full); a token
    /// already remembered keeps its first date.
    public mutating func retire(_ token: String, at date: Date) {
        guard dates[token] == nil else { return }
        dates[token] = date
        if ring.count < Self.capacity {
            ring.append(token)
        } else {
            dates[ring[next]] = nil
            ring[next] = token
            next = (next + 1) % Self.capacity
        }
    }
}

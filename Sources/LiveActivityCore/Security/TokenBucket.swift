import Foundation

/// A token bucket: allows bursts up to `capacity`, refilled at `rate` tokens per second.
///
/// Pure: the caller passes the current time. Used to limit messages per connection.
public struct TokenBucket: Sendable {
    /// Most tokens held (the largest burst).
    public let capacity: Double
    /// Tokens added per second.
    public let rate: Double
    private var tokens: Double
    private var updated: Date?

    /// A full bucket.
    public init(capacity: Double, rate: Double) {
        self.capacity = capacity
        self.rate = rate
        tokens = capacity
    }

    /// Takes one token at `now`.
    /// - Returns: whether one was available (the message may proceed).
    public mutating func take(at now: Date) -> Bool {
        if let updated {
            tokens = min(capacity, tokens + max(0, now.timeIntervalSince(updated)) * rate)
        }
        updated = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}

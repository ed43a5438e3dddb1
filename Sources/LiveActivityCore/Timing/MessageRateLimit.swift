import Foundation

/// The per-connection rate limit on client messages, as a state machine with no clock of its own: a
/// ``TokenBucket`` (bursts of `--message-burst`, refilled at `--messages-per-second`), and the count of
/// refusals that closes a client that keeps flooding. Each mutating call takes the current time and returns
/// the ``Verdict`` the server carries out. One per session; service thread only.
///
/// Refusals are counted over a window of ``window`` seconds, not in a row: the bucket lets one message
/// through now and then, which must not forgive a flood.
public struct MessageRateLimit: Sendable {
    /// What to do with one message.
    public enum Verdict: Equatable, Sendable {
        /// Handle it.
        case admit
        /// Drop it and answer it with a `rate_limited` error.
        case refuse
        /// Drop it, answer it with a `rate_limited` error and close the client with 1008 (policy violation),
        /// after the replies already queued: this is its `closeAfter`-th refusal within the window.
        case closeFlooding
    }

    /// Seconds over which refusals are counted towards closing a flooding client.
    public static let window: TimeInterval = 10

    /// The token bucket messages take from.
    public private(set) var bucket: TokenBucket
    /// Refusals within the current window (``closeAfter`` of them close the client).
    public let closeAfter: Int
    /// Messages refused in the current window.
    public private(set) var refusals = 0
    /// When the current window began (its first refusal); `distantPast` before any.
    public private(set) var windowStart = Date.distantPast

    /// A limit with a full bucket and no refusals.
    /// - Parameters:
    ///   - bucket: the token bucket (`--message-burst` capacity, `--messages-per-second` rate).
    ///   - closeAfter: refusals within ``window`` seconds that close the client (`--rate-limited-before-close`).
    public init(bucket: TokenBucket, closeAfter: Int) {
        self.bucket = bucket
        self.closeAfter = closeAfter
    }

    /// Judges one whole message received at `now`: admitted while the bucket has a token; else refused, and
    /// counted in the window (a new window starts with the first refusal more than ``window`` seconds after
    /// the last one began); the refusal that brings the count to ``closeAfter`` closes the client.
    public mutating func admit(at now: Date) -> Verdict {
        if bucket.take(at: now) { return .admit }
        if now.timeIntervalSince(windowStart) > Self.window {
            windowStart = now
            refusals = 0
        }
        refusals += 1
        return refusals >= closeAfter ? .closeFlooding : .refuse
    }
}

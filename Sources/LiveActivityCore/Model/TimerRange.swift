import Foundation

/// A countdown, as `Text(timerInterval:pauseTime:countsDown:)` takes it: a date range counted down from
/// `start` to `end`, frozen at `pausedAt` while paused.
///
/// Source: https://developer.apple.com/documentation/swiftui/text/init(timerinterval:pausetime:countsdown:showshours:)
public struct TimerRange: Sendable, Hashable {
    /// When the countdown began (UTC).
    public var start: Date
    /// When it reaches zero (UTC); never before `start`.
    public var end: Date
    /// The instant the countdown froze (UTC), `nil` while it runs.
    public var pausedAt: Date?

    /// Creates a range; `end` must not be before `start`.
    public init(start: Date, end: Date, pausedAt: Date? = nil) {
        precondition(end >= start, "TimerRange end before start")
        self.start = start
        self.end = end
        self.pausedAt = pausedAt
    }

    /// Whether the countdown is frozen.
    public var isPaused: Bool { pausedAt != nil }

    /// Seconds left at `now` (frozen at `pausedAt` while paused), rounded up to whole seconds and never
    /// negative, as a countdown shows them.
    public func remainingSeconds(at now: Date) -> Int {
        Self.remainingSeconds(until: end, pausedAt: pausedAt, at: now)
    }

    /// Seconds left at `now` on a countdown to `end` frozen at `pausedAt` (nil: running), rounded up to whole
    /// seconds and never negative: the one rule for what a countdown shows, for callers that know only its end
    /// (the script client's table).
    public static func remainingSeconds(until end: Date, pausedAt: Date?, at now: Date) -> Int {
        let reference = pausedAt.map { min($0, now) } ?? now
        let left = end.timeIntervalSince(reference)
        return left <= 0 ? 0 : Int(left.rounded(.up))
    }

    /// Whether the countdown has reached zero at `now` (a paused countdown never does).
    public func hasFinished(at now: Date) -> Bool {
        pausedAt == nil && now >= end
    }
}

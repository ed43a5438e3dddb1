import Foundation

/// A countdown's date range, as `Text(timerInterval:)` takes it: from `start` down to `end`.
public struct TimerRange: Sendable, Hashable {
    /// When the countdown began (UTC).
    public var start: Date
    /// When it reaches zero (UTC); never before `start`.
    public var end: Date

    /// Creates a range; `end` must not be before `start`.
    public init(start: Date, end: Date) {
        precondition(end >= start, "TimerRange end before start")
        self.start = start
        self.end = end
    }

    /// Seconds left at `now`, rounded up to whole seconds and never negative, as a countdown shows them.
    public func remainingSeconds(at now: Date) -> Int {
        let left = end.timeIntervalSince(now)
        return left <= 0 ? 0 : Int(left.rounded(.up))
    }
}

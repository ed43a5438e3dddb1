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

    /// Seconds left at `now` (frozen at `pausedAt` while paused; the whole length before `start`), rounded up to
    /// whole seconds and never negative, as a countdown shows them.
    public func remainingSeconds(at now: Date) -> Int {
        Self.remainingSeconds(from: start, until: end, pausedAt: pausedAt, at: now)
    }

    /// Seconds left at `now` on a countdown from `start` to `end` frozen at `pausedAt` (nil: running), rounded
    /// up to whole seconds and never negative: the one rule for what a countdown shows (the renderings', the
    /// protocol's `tick`, the script client's table). A range that has not begun shows its whole length, as
    /// `Text(timerInterval:)` does (the ticks counted down from now, the Lock Screen showed the whole range).
    /// - Parameter start: the range's start, nil when the caller knows only the end.
    public static func remainingSeconds(from start: Date? = nil, until end: Date, pausedAt: Date?, at now: Date) -> Int {
        var reference = pausedAt.map { min($0, now) } ?? now
        if let start { reference = max(reference, start) }
        let left = end.timeIntervalSince(reference)
        return left <= 0 ? 0 : Int(left.rounded(.up))
    }

    /// Whether the countdown has reached zero at `now` (a paused countdown never does).
    public func hasFinished(at now: Date) -> Bool {
        pausedAt == nil && now >= end
    }
}

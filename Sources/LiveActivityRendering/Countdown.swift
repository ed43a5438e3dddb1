import Foundation
import LiveActivityCore

/// Countdown maths and text, as the dashboard's time.js and store.js do them.
public enum Countdown {
    /// Formats whole seconds: `m:ss` below an hour, `h:mm:ss` from an hour on; `nil` gives `--:--`.
    ///
    /// ```swift
    /// Countdown.format(70)   // "1:10"
    /// Countdown.format(3723) // "1:02:03"
    /// ```
    public static func format(_ seconds: Int?) -> String {
        guard let seconds else { return "--:--" }
        let total = max(0, seconds)
        let (h, m, s) = (total / 3600, total % 3600 / 60, total % 60)
        let ss = s < 10 ? "0\(s)" : "\(s)"
        if h > 0 { return "\(h):\(m < 10 ? "0\(m)" : "\(m)"):\(ss)" }
        return "\(m):\(ss)"
    }

    /// Seconds left on an activity's countdown at `now`: rounded up, never negative; frozen at `pausedAt`
    /// while paused and at `endDate` once ended; a countdown that has not started shows its whole length.
    /// - Returns: whole seconds, or `nil` when the activity has no countdown.
    public static func remainingSeconds(_ activity: Activity, at now: Date) -> Int? {
        guard let timer = activity.timer else { return nil }
        var reference = now
        if let pausedAt = timer.pausedAt { reference = min(reference, pausedAt) }
        if activity.activityState == .ended || activity.activityState == .dismissed, let endDate = activity.endDate {
            reference = min(reference, endDate)
        }
        reference = max(reference, timer.start)
        let left = timer.end.timeIntervalSince(reference)
        return left <= 0 ? 0 : Int(left.rounded(.up))
    }
}

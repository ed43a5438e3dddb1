/// Where an activity is in its life, as ActivityKit's `ActivityState`.
///
/// Source: https://developer.apple.com/documentation/activitykit/activitystate
public enum ActivityState: String, Sendable, Codable, CaseIterable {
    /// Scheduled for a future `startDate` (iOS 26); becomes `active` then.
    case pending
    /// Visible and accepting updates.
    case active
    /// Its `staleDate` has passed; still visible and accepting updates.
    case stale
    /// Ended: still visible with its final content, no longer accepting updates.
    case ended
    /// Removed from every presentation; it leaves every list.
    case dismissed

    /// Whether the activity is running (`active` or `stale`), so that its countdown ticks and can pause.
    public var isRunning: Bool { self == .active || self == .stale }

    /// Whether the activity still takes updates: `pending`, `active` or `stale`.
    public var isLive: Bool { self == .pending || isRunning }
}

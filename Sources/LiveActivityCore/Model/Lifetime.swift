import Foundation

/// ActivityKit's lifetime limits, in seconds.
///
/// Source: ActivityKit docs ("Displaying live data with Live Activities"): an activity can be active for
/// up to 8 hours, after which the system ends it; an ended activity stays on the Lock Screen for up to
/// 4 more hours (`ActivityUIDismissalPolicy.default`).
public enum Lifetime {
    /// Longest an activity stays active or stale before the server ends it: 8 h.
    public static let maximumActive: TimeInterval = 8 * 3600
    /// Longest an ended activity stays visible: 4 h.
    public static let endedVisibility: TimeInterval = 4 * 3600
}

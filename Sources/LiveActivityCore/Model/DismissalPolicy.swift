import Foundation

/// How long an ended activity stays visible, as ActivityKit's `ActivityUIDismissalPolicy`.
///
/// Source: https://developer.apple.com/documentation/activitykit/activityuidismissalpolicy
public enum DismissalPolicy: Sendable, Hashable {
    /// Stays visible as ended for up to 4 hours (``Lifetime/endedVisibility``).
    case `default`
    /// Dismissed at once.
    case immediate
    /// Dismissed at the given date (UTC), at most 4 hours after it ended; a past date dismisses at once.
    case after(Date)

    /// When an activity that ended at `endDate` is dismissed under this policy, given the current time.
    public func dismissalDate(endDate: Date, now: Date) -> Date {
        let latest = endDate.addingTimeInterval(Lifetime.endedVisibility)
        switch self {
        case .default: return latest
        case .immediate: return now
        case .after(let date): return max(now, min(date, latest))
        }
    }
}

import Foundation

/// The span of time in which a date an activity carries is accepted, relative to the server's clock.
///
/// A date may be a valid ISO-8601 date-time and still make no sense for a Live Activity: year 0001 or 9999
/// gives a countdown of millennia, and is nearly always a mistake (a wrong year, milliseconds read as seconds,
/// a wrong epoch). The limits follow ActivityKit's lifetime (``Lifetime``):
///
/// - **Past: at most 12 hours** (8 hours active + 4 hours ended, the longest an activity is ever shown). A date
///   further back than that belongs to no activity that could still be on screen; a past stale or dismissal
///   date within it keeps its documented meaning (stale at once, dismissed at once).
/// - **Future: at most 366 days** (a year, leap years included). Nothing an activity shows reaches past its
///   8-hour cap, but clients do give "never" stale dates or schedule starts well ahead; beyond a year it is
///   a mistake.
///
/// Checked for `startDate`, `content.staleDate`, the countdown's `workoutTimer.start` / `end` and `pausedAt`,
/// `dismissalPolicy.after`, emoji `attributes.startTime` / `endTime`, and an APNs-shaped push's own
/// `aps.stale-date` and `aps.dismissal-date`. Not checked for dates inside a push's `content-state` or
/// `attributes` (the device decodes those as they are; the push inspector flags a wrong epoch), for dates that
/// only look things up (`history`'s `before`, a rendering's `?at=`), nor for activities restored from the store.
public enum DateWindow {
    /// Furthest a date may lie before the server's clock, in seconds: 12 h (8 h active + 4 h ended).
    public static let maximumPast: TimeInterval = Lifetime.maximumActive + Lifetime.endedVisibility
    /// Furthest a date may lie after the server's clock, in seconds: 366 days.
    public static let maximumFuture: TimeInterval = 366 * 86_400

    /// Why `date` lies outside the window around `now` (a sentence after the field's name), or `nil` when it is
    /// inside.
    public static func problem(with date: Date, now: Date) -> String? {
        let offset = date.timeIntervalSince(now)
        if offset < -maximumPast {
            return "the date is \(span(-offset)) in the past; dates more than 12 hours old (8 h active + 4 h ended, "
                + "the longest an activity is shown) are not accepted"
        }
        if offset > maximumFuture {
            return "the date is \(span(offset)) in the future; dates more than 366 days ahead are not accepted"
        }
        return nil
    }

    /// Checks that `date` lies in the window around `now`.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `field` when it does not.
    public static func check(_ date: Date?, field: String, now: Date) throws(ProtocolError) {
        guard let date, let problem = problem(with: date, now: now) else { return }
        throw .invalid(field, problem)
    }

    /// Checks a countdown's bounds and pause instant.
    /// - Parameters:
    ///   - timer: the countdown, if any (`nil` passes).
    ///   - field: the dotted path of the countdown (`content.state.workoutTimer`); its bounds are named
    ///     `field.start` / `field.end`, or `field[0]` / `field[1]` when `codable` (a `ClosedRange<Date>` array).
    ///   - pausedField: the dotted path of the pause instant.
    /// - Throws: ``ProtocolError`` `invalid_field` naming the first date out of the window.
    public static func check(_ timer: TimerRange?, field: String, codable: Bool = false, pausedField: String, now: Date) throws(ProtocolError) {
        guard let timer else { return }
        try check(timer.start, field: codable ? "\(field)[0]" : "\(field).start", now: now)
        try check(timer.end, field: codable ? "\(field)[1]" : "\(field).end", now: now)
        try check(timer.pausedAt, field: pausedField, now: now)
    }

    private static func span(_ seconds: TimeInterval) -> String {
        seconds >= 2 * 86_400 * 365.25 ? String(format: "%.0f years", seconds / (86_400 * 365.25))
            : seconds >= 2 * 86_400 ? String(format: "%.0f days", seconds / 86_400)
            : String(format: "%.1f hours", seconds / 3600)
    }
}

/// Times of day as SwiftUI's `Text(_: ClosedRange<Date>)` shows a range: `"10:02 – 10:22"` (24-hour,
/// an en dash between spaces). The page's `Public/js/render-context.js` formats the same way.
public enum TimeOfDay {
    /// `H:mm` of an instant.
    /// - Parameters:
    ///   - ms: epoch milliseconds.
    ///   - offsetMinutes: minutes east of UTC.
    public static func format(_ ms: Int64, offsetMinutes: Int) -> String {
        let minutesOfDay = ((ms + Int64(offsetMinutes) * 60_000) / 60_000 % 1440 + 1440) % 1440
        let (hours, minutes) = (minutesOfDay / 60, minutesOfDay % 60)
        return "\(hours < 10 ? "0" : "")\(hours):\(minutes < 10 ? "0" : "")\(minutes)"
    }

    /// `"10:02 – 10:22"`: both ends, epoch milliseconds.
    public static func range(_ start: Int64, _ end: Int64, offsetMinutes: Int) -> String {
        "\(format(start, offsetMinutes: offsetMinutes)) – \(format(end, offsetMinutes: offsetMinutes))"
    }
}

import Foundation

/// ISO-8601 dates as the protocol writes and reads them (RFC 3339 profile).
///
/// Written in UTC with milliseconds, `2026-11-29T17:00:00.000Z`; read with or without fractional seconds
/// and with `Z` or a numeric UTC offset. Dates are kept to the millisecond, so that formatting what was
/// parsed gives back the same text (a restart or a replay never moves a date by 1 ms).
public enum ISODate {
    private static let wholeSeconds = Date.ISO8601FormatStyle()
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// Formats a date as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC), rounded to the nearest millisecond.
    public static func format(_ date: Date) -> String {
        // Dates are validated to ISO-8601's four-digit years on input; clamp anyway so no value can trap.
        let raw = (date.timeIntervalSince1970 * 1000).rounded()
        let milliseconds = raw.isFinite ? Int64(max(-6.2e13, min(2.5e14, raw))) : 0
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let fraction = milliseconds - seconds * 1000
        var text = wholeSeconds.format(Date(timeIntervalSince1970: TimeInterval(seconds)))
        text.removeLast()  // "Z"
        return text + "." + String(format: "%03lld", fraction) + "Z"
    }

    /// Parses an ISO-8601 date-time string, rounded to the millisecond.
    ///
    /// - Returns: the date, or `nil` when the string is not an ISO-8601 date-time.
    public static func parse(_ text: String) -> Date? {
        guard let date = (try? withFraction.parse(text)) ?? (try? wholeSeconds.parse(text)) else { return nil }
        return Date(timeIntervalSince1970: (date.timeIntervalSince1970 * 1000).rounded() / 1000)
    }
}

import Foundation

/// ISO-8601 dates as the protocol writes and reads them (RFC 3339 profile).
///
/// Written in UTC with milliseconds, `2026-11-29T17:00:00.000Z`; read with or without fractional seconds
/// and with `Z` or a numeric UTC offset.
public enum ISODate {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFraction = Date.ISO8601FormatStyle()

    /// Formats a date as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC, milliseconds).
    public static func format(_ date: Date) -> String {
        withFraction.format(date)
    }

    /// Parses an ISO-8601 date-time string.
    ///
    /// - Returns: the date, or `nil` when the string is not an ISO-8601 date-time.
    public static func parse(_ text: String) -> Date? {
        if let date = try? withFraction.parse(text) { return date }
        if let date = try? withoutFraction.parse(text) { return date }
        return nil
    }
}

import Foundation

/// ISO-8601 dates as the protocol writes and reads them (RFC 3339 profile).
///
/// Written in UTC with milliseconds, `2026-11-29T17:00:00.000Z`; read as `YYYY-MM-DDTHH:MM:SS`, with or
/// without fractional seconds, then `Z` or a numeric UTC offset (`+01:00` or `+0100`). Dates are kept to the
/// millisecond, so that formatting what was parsed gives back the same text (a restart or a replay never
/// moves a date by 1 ms).
///
/// Reading is strict: every field must be in range for the calendar (month 01–12, a day that exists in that
/// month, hour 00–23, minute and second 00–59, leap seconds excluded, offset up to ±23:59), where a lenient
/// parser would roll `2026-02-30` over to March 2nd or `24:61` over to the next day. Whether a valid date is
/// also a sensible one for an activity is ``DateWindow``'s business.
public enum ISODate {
    /// Why a string is not accepted as a date-time.
    public enum Failure: Error, Sendable, Equatable {
        /// The text is not laid out as an ISO-8601 date-time.
        case notISO8601
        /// The layout is right but a field is out of range: the sentence says which (`"day 30 does not exist
        /// in February 2026"`).
        case impossible(String)
    }

    /// Formats a date as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC), rounded to the nearest millisecond: 24 ASCII
    /// bytes, years 0001–9999 (dates outside are clamped to the nearest one that fits).
    ///
    /// Pure arithmetic (``civilDate(daysSinceUnixEpoch:)``), with no calendar or time zone object: every
    /// message carries a `serverTime`, and Foundation's `ISO8601FormatStyle` looks up the UTC zone through
    /// ICU, whose code alone is a few megabytes of the server's memory.
    public static func format(_ date: Date) -> String {
        // Dates are validated to ISO-8601's four-digit years on input; clamp anyway so no value can trap.
        let raw = (date.timeIntervalSince1970 * 1000).rounded()
        let milliseconds = raw.isFinite ? Int64(max(-62_135_596_800_000, min(253_402_300_799_999, raw))) : 0
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let fraction = Int(milliseconds - seconds * 1000)
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let secondOfDay = Int(seconds) - days * 86_400
        let (year, month, day) = civilDate(daysSinceUnixEpoch: days)
        return String(unsafeUninitializedCapacity: 24) { buffer in
            func put(_ value: Int, _ width: Int, at offset: Int) {
                var value = value
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(year, 4, at: 0); buffer[4] = UInt8(ascii: "-")
            put(month, 2, at: 5); buffer[7] = UInt8(ascii: "-")
            put(day, 2, at: 8); buffer[10] = UInt8(ascii: "T")
            put(secondOfDay / 3600, 2, at: 11); buffer[13] = UInt8(ascii: ":")
            put(secondOfDay / 60 % 60, 2, at: 14); buffer[16] = UInt8(ascii: ":")
            put(secondOfDay % 60, 2, at: 17); buffer[19] = UInt8(ascii: ".")
            put(fraction, 3, at: 20); buffer[23] = UInt8(ascii: "Z")
            return 24
        }
    }

    /// Parses an ISO-8601 date-time string, rounded to the millisecond.
    ///
    /// - Returns: the date, or `nil` when the string is not an ISO-8601 date-time or names an impossible
    ///   date or time (see ``read(_:)`` for the reason).
    public static func parse(_ text: String) -> Date? {
        try? read(text).get()
    }

    /// Parses an ISO-8601 date-time string, rounded to the millisecond, saying why when it cannot.
    ///
    /// - Returns: the date, or ``Failure/notISO8601`` for text of another shape, or ``Failure/impossible(_:)``
    ///   naming the out-of-range field (`2026-02-30`, `24:00`, `17:61`, `:60`, an offset of `+24:00`).
    public static func read(_ text: String) -> Result<Date, Failure> {
        let bytes = Array(text.utf8)
        var index = 0
        func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += count
            return value
        }
        func literal(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue! else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), literal("-"), let month = digits(2), literal("-"), let day = digits(2), literal("T"),
              let hour = digits(2), literal(":"), let minute = digits(2), literal(":"), let second = digits(2) else {
            return .failure(.notISO8601)
        }
        var milliseconds = 0.0
        if literal(".") {
            let first = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            guard index > first else { return .failure(.notISO8601) }
            let fraction = Double("0." + String(decoding: bytes[first..<min(index, first + 15)], as: UTF8.self)) ?? 0
            milliseconds = (fraction * 1000).rounded()
        }
        var offsetMinutes = 0
        if literal("Z") {
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let offsetHours = digits(2) else { return .failure(.notISO8601) }
            _ = literal(":")
            guard let offsetMinute = digits(2) else { return .failure(.notISO8601) }
            guard offsetHours <= 23, offsetMinute <= 59 else {
                return .failure(.impossible("the UTC offset must be at most ±23:59"))
            }
            offsetMinutes = sign * (offsetHours * 60 + offsetMinute)
        } else {
            return .failure(.notISO8601)
        }
        guard index == bytes.count else { return .failure(.notISO8601) }

        guard year >= 1 else { return .failure(.impossible("there is no year 0000")) }
        guard (1...12).contains(month) else { return .failure(.impossible("month \(two(month)) does not exist (01–12)")) }
        let length = daysIn(month: month, year: year)
        guard (1...length).contains(day) else {
            let name = monthNames[month - 1]
            return .failure(.impossible("day \(two(day)) does not exist in \(name) \(year), which has \(length) days"))
        }
        guard hour <= 23 else { return .failure(.impossible("hour \(two(hour)) does not exist (00–23)")) }
        guard minute <= 59 else { return .failure(.impossible("minute \(two(minute)) does not exist (00–59)")) }
        guard second <= 59 else { return .failure(.impossible("second \(two(second)) does not exist (00–59; leap seconds are not accepted)")) }

        let days = daysSinceUnixEpoch(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60)
        return .success(Date(timeIntervalSince1970: (seconds * 1000 + milliseconds) / 1000))
    }

    private static let monthNames = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
                                     "October", "November", "December"]

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

    /// Days in `month` (1–12) of `year` in the proleptic Gregorian calendar.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (before it when negative): the inverse of
    /// ``daysSinceUnixEpoch(year:month:day:)`` (Howard Hinnant's `civil_from_days`).
    /// - Returns: year, month (1–12) and day (1–31).
    static func civilDate(daysSinceUnixEpoch days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days from 1970-01-01 to the given date (proleptic Gregorian; Howard Hinnant's `days_from_civil`).
    static func daysSinceUnixEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

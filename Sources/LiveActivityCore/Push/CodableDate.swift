import Foundation

/// `Date` as Swift's default `Codable` writes it (`deferredToDate`): seconds since 2001-01-01T00:00:00Z
/// (`timeIntervalSinceReferenceDate`), which is Unix seconds − 978,307,200.
public enum CodableDate {
    /// Seconds between the Unix epoch and Swift's reference date.
    public static let referenceOffset: TimeInterval = 978_307_200

    /// Decodes a reference-date number.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `field` when it is not a number; the message hints
    ///   at the usual mistakes (an ISO string, Unix seconds, milliseconds).
    public static func decode(_ value: JSONValue, field: String) throws(ProtocolError) -> Date {
        guard let seconds = value.numberValue, seconds.isFinite else {
            if case .string = value {
                throw .invalid(field, "Date decodes from a number of seconds since 2001-01-01, not a string")
            }
            throw .wrongType(field, expected: "a number of seconds since 2001-01-01", got: value)
        }
        guard abs(seconds) <= maximumMagnitude else {
            throw .invalid(field, "\(seconds) seconds since 2001-01-01 is \(outOfRange(seconds, epoch: 2001))\(seconds > 1e11 ? " (milliseconds? Date wants seconds)" : "")")
        }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    /// Which side of the accepted range `seconds` falls on, in words: about 1,000 years after or before `epoch`.
    private static func outOfRange(_ seconds: Double, epoch: Int) -> String {
        seconds > 0 ? "beyond the year \(epoch + 1014)" : "before the year \(epoch - 1014)"
    }

    /// Largest accepted magnitude, in seconds (about 1,000 years either side of the epoch): beyond it a
    /// value is a mistake (milliseconds, microseconds), and date arithmetic on it could overflow.
    public static let maximumMagnitude: TimeInterval = 3.2e10

    /// A Unix-seconds date (APNs `timestamp`, `stale-date`, `dismissal-date`), range-checked like
    /// ``decode(_:field:)``.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `field`.
    public static func unix(_ seconds: Double, field: String) throws(ProtocolError) -> Date {
        guard abs(seconds) <= maximumMagnitude else {
            throw .invalid(field, "\(seconds) Unix seconds is \(outOfRange(seconds, epoch: 1970))\(seconds > 1e11 ? " (milliseconds? APNs wants seconds)" : "")")
        }
        return Date(timeIntervalSince1970: seconds)
    }
}

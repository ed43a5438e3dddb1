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
        guard case .number(let seconds) = value, seconds.isFinite else {
            if case .string = value {
                throw .invalid(field, "Date decodes from a number of seconds since 2001-01-01, not a string")
            }
            throw .wrongType(field, expected: "a number of seconds since 2001-01-01", got: value)
        }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }
}

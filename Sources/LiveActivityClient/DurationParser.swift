/// Parses the command line's durations: `70`, `70s`, `2m`, `1m30s`, `1h`, `1h5m`.
///
/// Grammar: a whole number of seconds, or one or more `<whole number><unit>` parts with units `h`, `m`, `s`
/// in that order, each at most once. No spaces, signs or fractions.
public enum DurationParser {
    /// Why a duration was refused; `description` is a message for the person who typed it.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The explanation, quoting the input.
        public var description: String
    }

    /// Parses `text`.
    ///
    /// - Parameter text: e.g. `1m30s`.
    /// - Returns: the duration (whole seconds, at least 0).
    /// - Throws: ``Failure`` naming the problem (empty, unknown unit, units out of order, too large).
    public static func parse(_ text: String) throws(Failure) -> Duration {
        let expected = "expected seconds or a duration such as 70, 70s, 2m, 1m30s or 1h"
        guard !text.isEmpty else { throw Failure(description: "empty duration; \(expected)") }
        if text.allSatisfy(\.isASCIIDigit) {
            guard let seconds = Int64(text), seconds <= maximumSeconds else { throw tooLarge(text) }
            return .seconds(seconds)
        }
        let units: [(Character, Int64)] = [("h", 3600), ("m", 60), ("s", 1)]
        var nextUnit = 0
        var total: Int64 = 0
        var digits = ""
        for character in text {
            if character.isASCIIDigit {
                digits.append(character)
                continue
            }
            guard let index = units.firstIndex(where: { $0.0 == character }) else {
                throw Failure(description: "\"\(text)\": unknown unit \"\(character)\"; \(expected)")
            }
            guard !digits.isEmpty else {
                throw Failure(description: "\"\(text)\": \"\(character)\" needs a number before it; \(expected)")
            }
            guard index >= nextUnit else {
                throw Failure(description: "\"\(text)\": give h, m and s at most once each, in that order")
            }
            guard let value = Int64(digits), value <= maximumSeconds else { throw tooLarge(text) }
            total += value * units[index].1
            guard total <= maximumSeconds else { throw tooLarge(text) }
            nextUnit = index + 1
            digits = ""
        }
        guard digits.isEmpty else {
            throw Failure(description: "\"\(text)\": the number \(digits) at the end needs a unit (h, m or s)")
        }
        return .seconds(total)
    }

    /// Largest duration accepted, in seconds (ten years; the server's own limit is lower).
    static let maximumSeconds: Int64 = 315_360_000

    private static func tooLarge(_ text: String) -> Failure {
        Failure(description: "\"\(text)\" is too long a duration")
    }
}

extension Character {
    /// Whether this is one of `0`…`9`.
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

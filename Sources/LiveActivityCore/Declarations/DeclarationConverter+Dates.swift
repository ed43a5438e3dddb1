import Foundation

/// Dates and date ranges: the only values whose JSON differs between the two forms.
extension DeclarationConverter {
    /// Reads a date in the source form: a number of seconds since 2001-01-01 (Codable, `deferredToDate`)
    /// or an ISO-8601 string (protocol).
    ///
    /// In the Codable form any finite number is a date, as Foundation's `Date(from:)` reads any `Double`
    /// with no range check: iOS applies such a push. A date outside what this server's protocol form carries
    /// (1600 to early 3015: Unix milliseconds, most often) is applied too, with a loud warning saying where it
    /// lands and whether it looks like milliseconds; ``write(_:)`` clamps it into that range.
    mutating func date(_ value: JSONValue, _ path: Path) throws(DecodingFailure) -> Date {
        switch source {
        case .codable:
            guard let seconds = value.numberValue, seconds.isFinite else {
                throw mismatch("Double", expected: "a number of seconds since 2001-01-01", value, path)
            }
            let date = Date(timeIntervalSinceReferenceDate: seconds)
            if date < Self.earliestDate || date > Self.latestDate {
                warn(path, Self.farDate(seconds))
            } else if let now, let meant = DateLens.unixSecondsSentAsReference(seconds, now: now) {
                warn(path, Self.unixSecondsDate(seconds, meant: meant))
            }
            return date
        case .protocolForm:
            let expected = "expected an ISO-8601 date string such as \"2026-11-29T17:00:00Z\", got \(DecodingFailure.show(value))"
            guard case .string(let text) = value else {
                var failure = mismatch("String", expected: "", value, path)
                failure.reason = expected
                throw failure
            }
            switch ISODate.read(text) {
            case .success(let date): return try supported(date, value, path)
            case .failure(.notISO8601):
                throw corrupted("invalid ISO-8601 date \(DecodingFailure.show(value))", debug: "Expected date string to be ISO8601-formatted.",
                                protocolReason: expected, path)
            case .failure(.impossible(let reason)):
                throw corrupted("invalid ISO-8601 date \(DecodingFailure.show(value))", debug: "Expected date string to be ISO8601-formatted.",
                                protocolReason: "\(DecodingFailure.show(value)) is not a real date and time: \(reason)", path)
            }
        }
    }

    /// Earliest date accepted in either form, 1600-01-01T00:00:00Z: ISO-8601 text before the Gregorian reform
    /// (1582) is not written back as it was read (``ISODate/format(_:)`` switches to the Julian calendar there).
    static let earliestDate = Date(timeIntervalSince1970: -11_676_096_000)
    /// Latest date accepted in either form: ``CodableDate/maximumMagnitude`` after 2001-01-01 (early 3015), so
    /// that whatever one form accepts converts to the other.
    static let latestDate = Date(timeIntervalSinceReferenceDate: CodableDate.maximumMagnitude)

    private func supported(_ date: Date, _ value: JSONValue, _ path: Path) throws(DecodingFailure) -> Date {
        guard date < Self.earliestDate || date > Self.latestDate else { return date }
        let text = "date \(DecodingFailure.show(value)) is outside the dates this server accepts (1600-01-01T00:00:00.000Z to "
            + "\(ISODate.format(Self.latestDate)))"
        throw corrupted("date \(DecodingFailure.show(value)) is out of range", debug: text + ".", protocolReason: text, path, codableNote: text)
    }

    /// Writes a date in the target form; in the protocol form, clamped to ``earliestDate``…``latestDate``.
    func write(_ date: Date) -> JSONValue {
        switch target {
        case .codable: .number(date.timeIntervalSinceReferenceDate)
        case .protocolForm: .string(ISODate.format(min(max(date, Self.earliestDate), Self.latestDate)))
        }
    }

    /// `57918` as `57,918`.
    private static func grouped(_ number: Int64) -> String {
        var digits = String(number.magnitude)
        var index = digits.endIndex
        while digits.distance(from: digits.startIndex, to: index) > 3 {
            index = digits.index(index, offsetBy: -3)
            digits.insert(",", at: index)
        }
        return (number < 0 ? "-" : "") + digits
    }

    /// The warning for a Codable-form date outside 1600…3015: the year it lands in (iOS shows that date), what it
    /// would be if it were Unix milliseconds (the usual mistake: JavaScript's `Date.now()`), and what is stored.
    static func farDate(_ seconds: Double) -> String {
        let year = (2001 + seconds / 31_556_952).rounded(.down)
        let shownYear = abs(year) < 1e15 ? Self.grouped(Int64(year)) : String(format: "%.3g", year)
        var text = "date \(seconds.jsonText) seconds since 2001-01-01 lands in the year \(shownYear): the app applies it "
            + "and shows a date \(seconds > 0 ? "that far ahead" : "that far back")"
        let asUnixMilliseconds = Date(timeIntervalSince1970: seconds / 1000)
        if abs(seconds) >= 1e11, asUnixMilliseconds > Date(timeIntervalSince1970: 0), asUnixMilliseconds < Date(timeIntervalSince1970: 4_102_444_800) {
            text += "; it looks like Unix milliseconds (as such, \(ISODate.format(asUnixMilliseconds))): Date wants seconds since 2001-01-01"
        } else if abs(seconds) >= 1e11 {
            text += "; it looks like milliseconds: Date wants seconds since 2001-01-01"
        }
        let stored = seconds > 0 ? latestDate : earliestDate
        return text + "; stored here as \(ISODate.format(stored)), the \(seconds > 0 ? "latest" : "earliest") date this server carries"
    }

    /// The warning for a Codable-form date that looks like Unix seconds (``DateLens/unixSecondsSentAsReference(_:now:)``):
    /// the year it lands in as sent (iOS shows that date), the instant meant, and the number to send instead.
    static func unixSecondsDate(_ seconds: Double, meant: Date) -> String {
        let landed = Date(timeIntervalSinceReferenceDate: seconds)
        let year = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: landed).year ?? 0
        let corrected = seconds - Date.timeIntervalBetween1970AndReferenceDate
        return "date \(seconds.jsonText) seconds since 2001-01-01 lands in the year \(year) (\(ISODate.format(landed))): the app applies it "
            + "and shows that date, 31 years off; it looks like Unix seconds (as such, \(ISODate.format(meant))): Swift's Date(from:) "
            + "counts from 2001-01-01: send \(corrected.jsonText)"
    }

    /// Reads a `ClosedRange<Date>` or `Range<Date>` (`[lower, upper]`, or `{"start", "end"}`) and writes it in
    /// the target form. Like Swift's `init(from:)` of both, a lower bound after the upper one is `dataCorrupted`
    /// and elements after the second are ignored.
    mutating func range(_ value: JSONValue, closed: Bool, _ path: Path) throws(DecodingFailure) -> JSONValue {
        let name = closed ? "ClosedRange" : "Range"
        let lower: Date
        let upper: Date
        var upperPath: Path
        switch source {
        case .codable:
            guard case .array(let items) = value else { throw mismatch("Array<Any>", expected: "", value, path) }
            for index in items.count..<max(items.count, 2) {
                throw DecodingFailure(kind: .valueNotFound, codingPath: path + [.index(index)], type: "Date",
                                      debugDescription: "Unkeyed container is at end.",
                                      reason: "valueNotFound Date: \(name)<Date> decodes from [lower, upper], got \(items.count) "
                                          + "element\(items.count == 1 ? "" : "s")")
            }
            lower = try bound(items[0], path + [.index(0)])
            upperPath = path + [.index(1)]
            upper = try bound(items[1], upperPath)
            if items.count > 2 { warn(path, "\(items.count - 2) element(s) after the upper bound; the app ignores them") }
            upperPath = path
        case .protocolForm:
            guard case .object(let object) = value else {
                throw mismatch("Dictionary<String, Any>", expected: "an object {\"start\": ISO-8601, \"end\": ISO-8601}", value, path)
            }
            for key in ["start", "end"] where object[key] == nil || object[key] == .null {
                throw DecodingFailure(kind: .keyNotFound, codingPath: path, key: key,
                                      debugDescription: "No value associated with key \"\(key)\".", reason: "required field is missing")
            }
            lower = try date(object["start"]!, path + [.key("start")])
            upperPath = path + [.key("end")]
            upper = try date(object["end"]!, upperPath)
            for key in object.keys.sorted() where key != "start" && key != "end" {
                warn(path, "key \"\(key.clipped(to: 64))\" is not in \(name)<Date> ({\"start\", \"end\"}); it is dropped")
            }
        }
        guard lower <= upper else {
            let start = fullPath(path + [.key("start")])
            throw corrupted("\(name) lower bound is greater than upper bound",
                            debug: "Cannot initialize \(name)<Date> with a lowerBound (\(ISODate.format(lower))) greater than "
                                + "upperBound (\(ISODate.format(upper)))",
                            protocolReason: "must not be before \(start) (\(ISODate.format(lower)))", upperPath,
                            codableNote: "\(ISODate.format(lower)) is after \(ISODate.format(upper))")
        }
        switch target {
        case .codable:
            return .array([write(lower), write(upper)])
        case .protocolForm:
            return .object(["start": write(lower), "end": write(upper)])
        }
    }

    private mutating func bound(_ value: JSONValue, _ path: Path) throws(DecodingFailure) -> Date {
        if value == .null { throw valueNotFound(.date, path) }
        return try date(value, path)
    }
}

import Foundation

/// Every date in a payload shown three ways — seconds since 2001 (what Swift's default `Date` decoding reads),
/// Unix seconds and ISO-8601 — with a warning when a value looks like the wrong epoch (about 31 years off),
/// like milliseconds, like a string, or is null. Pure: the same payload and `now` give the same lens.
///
/// In an APNs payload `aps.timestamp`, `aps.stale-date` and `aps.dismissal-date` are Unix seconds, and dates
/// inside `content-state` (and `attributes`) use Swift's default coding: seconds since 2001-01-01
/// (``CodableDate``). In the native protocol every date is an ISO-8601 string.
public enum DateLens {
    /// How the receiver reads a date.
    public enum Epoch: String, Sendable, Codable, Equatable {
        /// Seconds since 1970-01-01T00:00:00Z (APNs's `timestamp`, `stale-date`, `dismissal-date`).
        case unix
        /// Seconds since 2001-01-01T00:00:00Z (Swift's default `Date` coding, inside `content-state`).
        case reference
        /// An ISO-8601 string (this server's native protocol).
        case iso
    }

    /// The value read another way.
    public struct Reading: Sendable, Equatable, Encodable {
        /// `unix`, `reference`, `milliseconds` or `iso`.
        public var reading: String
        /// The instant it gives, ISO-8601 (UTC).
        public var iso: String
    }

    /// One date in a payload.
    public struct Entry: Sendable, Equatable, Encodable {
        /// Where it is, as a key path (`aps.timestamp`, `aps.content-state.workoutTimer[0]`).
        public var path: String
        /// How the receiver reads it.
        public var expects: Epoch
        /// The value as sent.
        public var value: JSONValue
        /// The instant the receiver decodes, as seconds since 2001; `nil` when it cannot decode one.
        public var referenceSeconds: Double?
        /// The same instant as Unix seconds.
        public var unixSeconds: Double?
        /// The same instant, ISO-8601 (UTC).
        public var iso: String?
        /// The value read the other ways (Unix seconds, seconds since 2001, milliseconds, ISO text).
        public var readings: [Reading]
        /// What looks wrong.
        public var warnings: [String]

        /// The instant the receiver decodes, if any.
        public var date: Date? { referenceSeconds.map { Date(timeIntervalSinceReferenceDate: $0) } }
    }

    /// Seconds in a (Julian) year.
    static let year: TimeInterval = 365.25 * 86_400
    /// Numbers this large are milliseconds, whichever epoch: 1e11 s is the year 5138.
    static let millisecondThreshold: Double = 1e11
    /// Numbers this large are no date at all: as Unix milliseconds, past the end of the year 9999.
    static let beyondMilliseconds: Double = 253_402_300_800_000

    /// Looks at one value the receiver reads as a date.
    /// - Parameters:
    ///   - value: the JSON value as sent.
    ///   - path: where it is.
    ///   - expects: how the receiver reads it.
    ///   - now: the instant "about now" (to tell which epoch a number was meant in).
    public static func inspect(_ value: JSONValue, path: String, expects: Epoch, now: Date) -> Entry {
        var entry = Entry(path: path, expects: expects, value: value, readings: [], warnings: [])
        switch value {
        case .number(let number):
            numberEntry(number, &entry, now: now)
        case .bigInteger:
            numberEntry(value.numberValue ?? 0, &entry, now: now)
        case .string(let text):
            if let date = ISODate.parse(text) {
                entry.readings.append(Reading(reading: "iso", iso: ISODate.format(date)))
                if expects == .iso { set(date, &entry) }
            } else if let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite {
                for reading in readings(number) where reading.reading != "iso" { entry.readings.append(reading) }
            } else if expects == .iso {
                entry.warnings.append("\(path) is not an ISO-8601 date such as 2026-11-29T17:00:00Z")
            }
            switch expects {
            case .reference:
                entry.warnings.append("\(path) is a string: Swift's default Date decoding reads a number of seconds since 2001-01-01, so the content-state does not decode")
            case .unix:
                entry.warnings.append("\(path) is a string: APNs payload dates are numbers of Unix seconds")
            case .iso: break
            }
        case .null:
            entry.warnings.append("\(path) is null: a Date cannot decode from null; leave the key out to mean \"none\"")
        default:
            entry.warnings.append("\(path) is \(value.typeName), not a date")
        }
        return entry
    }

    private static func numberEntry(_ number: Double, _ entry: inout Entry, now: Date) {
        let path = entry.path
        entry.readings = readings(number)
        if entry.expects == .iso {
            entry.warnings.append("\(path) is a number: this protocol's dates are ISO-8601 strings (APNs payloads with numbers go in a push)")
            return
        }
        let expected = date(number, entry.expects)
        if abs(number) < millisecondThreshold { set(expected, &entry) }
        if abs(number) >= Self.beyondMilliseconds {
            // Not milliseconds either: beyond the year 9999 read as any of them (1e308 was "like milliseconds").
            entry.warnings.append("\(path) = \(show(number)) is no date: even as Unix milliseconds it is beyond the year 9999; send seconds"
                                  + (entry.expects == .reference ? " since 2001-01-01" : ""))
            return
        }
        if abs(number) >= millisecondThreshold {
            let asMilliseconds = Date(timeIntervalSince1970: number / 1000)
            entry.warnings.append("\(path) = \(show(number)) looks like milliseconds (as Unix milliseconds it is \(ISODate.format(asMilliseconds))); send seconds"
                                  + (entry.expects == .reference ? " since 2001-01-01" : ""))
            return
        }
        let other: Epoch = entry.expects == .unix ? .reference : .unix
        if let otherDate = wrongEpoch(number, expects: entry.expects, now: now) {
            let meant = other == .unix ? "Unix seconds" : "seconds since 2001-01-01"
            let read = entry.expects == .unix ? "Unix seconds" : "seconds since 2001-01-01 (Swift's default Date coding)"
            entry.warnings.append("\(path) = \(show(number)) looks like \(meant): read as \(read) it is \(ISODate.format(expected)), "
                                  + "\(Int((abs(expected.timeIntervalSince(otherDate)) / year).rounded())) years off; as \(meant) it would be \(ISODate.format(otherDate))")
        }
    }

    /// The instant `number` gives in the other epoch (Unix seconds for `.reference`, and back), when it looks
    /// meant that way: read as `expects` it lands more than 15 years from `now`, and read the other way at
    /// least four times nearer. `nil` otherwise (and for `.iso`). The one rule of "wrong epoch" (31 years off).
    static func wrongEpoch(_ number: Double, expects: Epoch, now: Date) -> Date? {
        guard expects != .iso, number.isFinite else { return nil }
        let other: Epoch = expects == .unix ? .reference : .unix
        let offBy = abs(date(number, expects).timeIntervalSince(now))
        let otherDate = date(number, other)
        return offBy > 15 * year && abs(otherDate.timeIntervalSince(now)) < offBy / 4 ? otherDate : nil
    }

    /// For a Codable `Date` (seconds since 2001-01-01): the instant it gives as Unix seconds when it is
    /// surely Unix seconds sent by mistake — ``wrongEpoch(_:expects:now:)``, and read as sent it lands more
    /// than 20 years from `now` while as Unix seconds it lands within a year of `now`. The push answer's
    /// warning (``ActivityDeclaration/decode(codable:as:field:now:)``) uses this stricter form: a real date
    /// decades away is never flagged.
    public static func unixSecondsSentAsReference(_ number: Double, now: Date) -> Date? {
        guard abs(number) < millisecondThreshold, let meant = wrongEpoch(number, expects: .reference, now: now),
              abs(meant.timeIntervalSince(now)) <= year,
              abs(date(number, .reference).timeIntervalSince(now)) > 20 * year else { return nil }
        return meant
    }

    /// The instant `number` gives in `epoch`.
    static func date(_ number: Double, _ epoch: Epoch) -> Date {
        epoch == .reference ? Date(timeIntervalSinceReferenceDate: number) : Date(timeIntervalSince1970: number)
    }

    private static func set(_ date: Date, _ entry: inout Entry) {
        entry.referenceSeconds = date.timeIntervalSinceReferenceDate
        entry.unixSeconds = date.timeIntervalSince1970
        entry.iso = representable(date) ? ISODate.format(date) : nil
    }

    /// A number read as Unix seconds, seconds since 2001 and Unix milliseconds (those that fall in years 1–9999).
    static func readings(_ number: Double) -> [Reading] {
        [("unix", Date(timeIntervalSince1970: number)), ("reference", Date(timeIntervalSinceReferenceDate: number)),
         ("milliseconds", Date(timeIntervalSince1970: number / 1000))]
            .filter { representable($0.1) }
            .map { Reading(reading: $0.0, iso: ISODate.format($0.1)) }
    }

    private static func representable(_ date: Date) -> Bool {
        let seconds = date.timeIntervalSince1970
        return seconds.isFinite && seconds > -62_135_596_800 && seconds < 253_402_300_799
    }

    private static func show(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    // MARK: Whole payloads

    /// Every date in an APNs Live Activity payload: `aps.timestamp`, `aps.stale-date`, `aps.dismissal-date`
    /// (Unix seconds), and date-like keys inside `aps.content-state` and `aps.attributes` (seconds since 2001).
    public static func push(_ payload: JSONValue, now: Date) -> [Entry] {
        guard case .object(let root) = payload, case .object(let aps)? = root["aps"] else { return [] }
        var entries: [Entry] = []
        for key in ["timestamp", "stale-date", "dismissal-date"] {
            if let value = aps[key] { entries.append(inspect(value, path: "aps.\(key)", expects: .unix, now: now)) }
        }
        for key in ["content-state", "attributes"] {
            if let value = aps[key] { collect(value, path: "aps.\(key)", expects: .reference, hinted: false, now: now, into: &entries) }
        }
        return entries
    }

    /// Every date in a native client message: `startDate`, `content.staleDate`, date-like keys inside
    /// `content.state` and `attributes`, `dismissalPolicy.after`, `before` (ISO-8601 strings).
    public static func message(_ message: JSONValue, now: Date) -> [Entry] {
        guard case .object(let object) = message else { return [] }
        var entries: [Entry] = []
        if let value = object["startDate"] { entries.append(inspect(value, path: "startDate", expects: .iso, now: now)) }
        if let value = object["before"] { entries.append(inspect(value, path: "before", expects: .iso, now: now)) }
        if case .object(let content)? = object["content"] {
            if let value = content["staleDate"] { entries.append(inspect(value, path: "content.staleDate", expects: .iso, now: now)) }
            if let state = content["state"] { collect(state, path: "content.state", expects: .iso, hinted: false, now: now, into: &entries) }
        }
        if let attributes = object["attributes"] { collect(attributes, path: "attributes", expects: .iso, hinted: false, now: now, into: &entries) }
        if case .object(let policy)? = object["dismissalPolicy"], let after = policy["after"] {
            entries.append(inspect(after, path: "dismissalPolicy.after", expects: .iso, now: now))
        }
        if case .object(let payload)? = object["payload"] { entries += push(.object(payload), now: now) }
        return entries
    }

    /// Whether a key names a date (or a range of dates): `…Date`, `…Time`, `…At`, `timestamp`, `start`, `end`,
    /// `…Timer`, `…Range`, `deadline`, `expires…`.
    public static func isDateLike(_ key: String) -> Bool {
        let lower = key.lowercased()
        if ["start", "end", "since", "until", "deadline", "eta", "lower", "upper"].contains(lower) { return true }
        return lower.contains("date") || lower.contains("time") || lower.contains("range") || lower.hasPrefix("expire")
            || (key.hasSuffix("At") && key.count > 2)
    }

    private static func collect(_ value: JSONValue, path: String, expects: Epoch, hinted: Bool, now: Date, into entries: inout [Entry]) {
        switch value {
        case .object(let object):
            for key in object.keys.sorted() {
                let child = object[key]!
                let keyPath = "\(path).\(key)"
                let hint = isDateLike(key)
                switch child {
                case .number, .bigInteger, .string, .null:
                    if hint { entries.append(inspect(child, path: keyPath, expects: expects, now: now)) }
                default:
                    collect(child, path: keyPath, expects: expects, hinted: hint, now: now, into: &entries)
                }
            }
        case .array(let items):
            for (index, item) in items.enumerated() {
                let itemPath = "\(path)[\(index)]"
                switch item {
                case .number, .bigInteger, .string, .null:
                    if hinted { entries.append(inspect(item, path: itemPath, expects: expects, now: now)) }
                default:
                    collect(item, path: itemPath, expects: expects, hinted: hinted, now: now, into: &entries)
                }
            }
        default:
            break
        }
    }
}

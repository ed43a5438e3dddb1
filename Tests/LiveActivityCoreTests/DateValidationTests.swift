import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// Dates on input: impossible calendar dates and times are refused, and so are valid dates outside the
/// ``DateWindow`` (12 h back, 366 days ahead), each with an error naming the field.
struct DateValidationTests {
    @Test(arguments: [
        ("2026-11-29T17:00:00Z", 1_795_971_600.0),
        ("2026-11-29T17:00:00.123Z", 1_795_971_600.123),
        ("2026-11-29T18:00:00+01:00", 1_795_971_600),
        ("2026-11-29T18:00:00+0100", 1_795_971_600),
        ("2026-11-29T16:30:00-00:30", 1_795_971_600),
        ("2024-02-29T00:00:00Z", 1_709_164_800),
        ("2000-02-29T00:00:00Z", 951_782_400),
        ("1970-01-01T00:00:00Z", 0),
        ("2026-11-29T17:00:00.0005Z", 1_795_971_600.001),
    ])
    func validDatesParse(text: String, unix: Double) throws {
        let date = try #require(ISODate.parse(text))
        #expect(abs(date.timeIntervalSince1970 - unix) < 0.0005, "\(text)")
        #expect(ISODate.parse(ISODate.format(date)) == date)
    }

    /// The formatter is plain arithmetic; Foundation's `ISO8601FormatStyle` (seconds) is the reference, over
    /// boundaries, leap days, dates before 1970 and random instants up to year 9999. Before the Gregorian
    /// reform (October 1582) Foundation switches to the Julian calendar, where ISO 8601 and our parser keep
    /// the proleptic Gregorian one: there, formatting and parsing are checked against each other only.
    @Test func formattingMatchesFoundationsISO8601ToTheMillisecond() throws {
        let reference = Date.ISO8601FormatStyle()
        var random = SplitMix64(seed: 8601)
        let boundaries: [Int64] = [0, -1, 1, 999, -999, -1000, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_999,
                                   1_795_971_600_123, -62_135_596_800_000, 253_402_300_799_999, 4_107_542_399_999]
        let randoms = (0..<2000).map { _ in Int64(random.next() % 315_537_897_600_000) - 62_135_596_800_000 }
        for milliseconds in boundaries + randoms {
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
            var expected = reference.format(Date(timeIntervalSince1970: Double(seconds)))
            expected.removeLast()
            expected += "." + String(format: "%03lld", milliseconds - seconds * 1000) + "Z"
            if milliseconds >= Self.gregorianReform { #expect(ISODate.format(date) == expected, "\(milliseconds) ms") }
            #expect(ISODate.parse(ISODate.format(date)) == date, "\(milliseconds) ms round trip")
        }
        #expect(ISODate.format(Date(timeIntervalSince1970: 1e15)) == "9999-12-31T23:59:59.999Z", "clamped")
        #expect(ISODate.format(Date(timeIntervalSince1970: -1e15)) == "0001-01-01T00:00:00.000Z", "clamped")
        #expect(ISODate.format(Date(timeIntervalSince1970: .nan)) == "1970-01-01T00:00:00.000Z")
        #expect(ISODate.format(try #require(ISODate.parse("1200-03-01T00:00:00Z"))) == "1200-03-01T00:00:00.000Z")
    }

    /// 1583-01-01T00:00:00Z, in milliseconds since 1970: from here on Foundation's calendar is Gregorian.
    private static let gregorianReform: Int64 = -12_212_553_600_000

    @Test(arguments: [
        ("2026-02-30T10:00:00Z", "day 30 does not exist in February 2026"),
        ("2025-02-29T10:00:00Z", "day 29 does not exist in February 2025"),
        ("1900-02-29T10:00:00Z", "day 29 does not exist in February 1900"),
        ("2026-04-31T10:00:00Z", "day 31 does not exist in April"),
        ("2026-11-00T10:00:00Z", "day 00"),
        ("2026-13-01T10:00:00Z", "month 13"),
        ("2026-00-01T10:00:00Z", "month 00"),
        ("2026-11-29T24:00:00Z", "hour 24"),
        ("2026-11-29T24:61:00Z", "hour 24"),
        ("2026-11-29T17:61:00Z", "minute 61"),
        ("2026-11-29T23:59:60Z", "second 60"),
        ("2026-11-29T17:00:00+24:00", "offset"),
        ("0000-01-01T00:00:00Z", "year 0000"),
    ])
    func impossibleDatesAreRefusedWithTheReason(text: String, reason: String) {
        guard case .failure(.impossible(let message)) = ISODate.read(text) else {
            Issue.record("\(text) was not refused as impossible: \(ISODate.read(text))")
            return
        }
        #expect(message.contains(reason), "\(message)")
        #expect(ISODate.parse(text) == nil)
    }

    @Test(arguments: ["tomorrow", "", "2026-11-29", "2026-11-29T17:00Z", "2026-11-29 17:00:00Z", "2026-11-29T17:00:00",
                      "12026-11-29T17:00:00Z", " 2026-11-29T17:00:00Z", "2026-11-29T17:00:00Z ", "2026-11-29T17:00:00.Z",
                      "2026-11-29t17:00:00z", "+2026-11-29T17:00:00Z", "2026-11-29T17:00:00+01"])
    func otherShapesAreNotISO8601(text: String) {
        #expect(ISODate.read(text) == .failure(.notISO8601), "\(text)")
    }

    @Test func fieldReaderNamesTheFieldAndThePart() throws {
        let startDate = try #require(parseError(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60,"startDate":"2026-11-29T24:61:00Z"}"#))
        #expect(startDate.code == .invalidField && startDate.field == "startDate")
        #expect(startDate.message.hasPrefix("startDate: \"2026-11-29T24:61:00Z\" is not a real date and time: hour 24"))
    }

    private func parseError(_ json: String) -> ProtocolError? {
        if case .failure(let error) = ClientMessage.parse(Array(json.utf8), kinds: .builtIn).command { return error }
        return nil
    }

    private func startError(_ json: String, at now: Date = t0) -> ProtocolError? {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        do {
            _ = try center.apply(json, at: now, ids: &ids)
            return nil
        } catch let error as ProtocolError {
            #expect(center.activities.isEmpty && center.sequence == 0, "a refused start changed nothing")
            return error
        } catch {
            Issue.record("\(error)")
            return nil
        }
    }

    private func timer(_ start: String, _ end: String, stale: String? = nil, paused: String? = nil) -> String {
        let pausedAt = paused.map { #","pausedAt":"\#($0)""# } ?? ""
        let staleDate = stale.map { #","staleDate":"\#($0)""# } ?? ""
        return #"{"state":{"workoutTimer":{"start":"\#(start)","end":"\#(end)"}\#(pausedAt)}\#(staleDate)}"#
    }

    @Test(arguments: [
        // (content, field) — t0 is 2026-11-29T17:00:00Z
        ("2026-11-29T17:00:00Z|9999-12-31T23:59:59Z||", "content.state.workoutTimer.end"),
        ("0001-01-01T00:00:00Z|2026-11-29T17:10:00Z||", "content.state.workoutTimer.start"),
        ("2026-11-29T04:59:59Z|2026-11-29T17:10:00Z||", "content.state.workoutTimer.start"),   // 12 h + 1 s back
        ("2026-11-29T17:00:00Z|2027-12-01T17:00:00Z||", "content.state.workoutTimer.end"),     // 367 days ahead
        ("2026-11-29T17:00:00Z|2026-11-29T17:10:00Z|0001-01-01T00:00:00Z|", "content.staleDate"),
        ("2026-11-29T17:00:00Z|2026-11-29T17:10:00Z|3000-01-01T00:00:00Z|", "content.staleDate"),
        ("2026-11-29T17:00:00Z|2026-11-29T17:10:00Z||1999-01-01T00:00:00Z", "content.state.pausedAt"),
    ])
    func contentDatesOutsideTheWindowAreRefused(spec: String, field: String) throws {
        let parts = spec.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        let content = timer(parts[0], parts[1], stale: parts[2].isEmpty ? nil : parts[2], paused: parts[3].isEmpty ? nil : parts[3])
        let error = try #require(startError(#"{"type":"start","attributes":{"workout":"yoga"},"content":\#(content)}"#))
        #expect(error.code == .invalidField)
        #expect(error.field == field)
        #expect(error.message.hasPrefix("\(field): "), "\(error.message)")
    }

    @Test func datesAtTheEdgesOfTheWindowAreAccepted() throws {
        // 12 h back (an activity started 8 h ago, ended 4 h ago) and 366 days ahead are still fine.
        let content = timer("2026-11-29T05:00:00Z", "2026-11-29T17:10:00Z", stale: "2027-11-30T17:00:00Z")
        #expect(startError(#"{"type":"start","attributes":{"workout":"yoga"},"content":\#(content)}"#) == nil)
        // A past stale date keeps its meaning: stale at once.
        let past = timer("2026-11-29T17:00:00Z", "2026-11-29T17:10:00Z", stale: "2026-11-29T16:00:00Z")
        #expect(startError(#"{"type":"start","attributes":{"workout":"yoga"},"content":\#(past)}"#) == nil)
    }

    @Test(arguments: [
        (#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60,"startDate":"9999-01-01T00:00:00Z"}"#, "startDate"),
        (#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60,"startDate":"0001-01-01T00:00:00Z"}"#, "startDate"),
        (#"{"type":"start","attributesType":"emoji","attributes":{"startTime":"2026-11-29T17:00:00Z","endTime":"2999-01-01T00:00:00Z","name":"x"},"content":{"state":{"emoji":"🏃"}}}"#, "attributes.endTime"),
        (#"{"type":"start","attributesType":"emoji","attributes":{"startTime":"1000-01-01T00:00:00Z","endTime":"2026-11-29T18:00:00Z","name":"x"},"content":{"state":{"emoji":"🏃"}}}"#, "attributes.startTime"),
    ])
    func startDatesOutsideTheWindowAreRefused(json: String, field: String) throws {
        let error = try #require(startError(json))
        #expect(error.code == .invalidField && error.field == field, "\(error)")
    }

    @Test func aScheduledStartAYearAheadIsAccepted() throws {
        #expect(startError(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60,"startDate":"2027-11-29T17:00:00Z"}"#) == nil)
    }

    @Test func dismissalDatesOutsideTheWindowAreRefusedAndChangeNothing() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, ids: &ids)
        let sequence = center.sequence
        for after in ["9999-12-31T00:00:00Z", "0001-01-01T00:00:00Z"] {
            #expect(throws: ProtocolError.invalid("dismissalPolicy.after", DateWindow.problem(with: ISODate.parse(after)!, now: t0)!)) {
                _ = try center.apply(#"{"type":"end","activityId":"a1","dismissalPolicy":{"after":"\#(after)"}}"#, at: t0, ids: &ids)
            }
        }
        #expect(center.sequence == sequence && center.activities["a1"]?.activityState == .active)
        // An update with a date out of the window leaves the activity as it was.
        let before = center.activities["a1"]
        #expect(throws: ProtocolError.self) {
            _ = try center.apply(#"{"type":"update","activityId":"a1","content":\#(timer("2026-11-29T17:00:00Z", "2126-11-29T17:00:00Z"))}"#, at: t0, ids: &ids)
        }
        #expect(center.activities["a1"]?.content == before?.content && center.activities["a1"]?.timer == before?.timer)
    }
}

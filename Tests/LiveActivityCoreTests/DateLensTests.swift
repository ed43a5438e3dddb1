import Foundation
import Testing
@testable import LiveActivityCore

/// The date lens: reference-date seconds, Unix seconds, milliseconds, ISO strings and null.
struct DateLensTests {
    let now = t0  // 2026-11-29T17:00:00Z

    @Test func referenceSecondsWhereSwiftExpectsThem() {
        let entry = DateLens.inspect(.number(t0.timeIntervalSinceReferenceDate), path: "aps.content-state.pausedAt", expects: .reference, now: now)
        #expect(entry.warnings.isEmpty)
        #expect(entry.referenceSeconds == t0.timeIntervalSinceReferenceDate)
        #expect(entry.unixSeconds == t0.timeIntervalSince1970)
        #expect(entry.iso == "2026-11-29T17:00:00.000Z")
        #expect(entry.readings.contains(DateLens.Reading(reading: "unix", iso: "1995-11-29T17:00:00.000Z")))
    }

    @Test func unixSecondsWhereSwiftExpectsReferenceSeconds() {
        let entry = DateLens.inspect(.number(t0.timeIntervalSince1970), path: "aps.content-state.workoutTimer[1]", expects: .reference, now: now)
        #expect(entry.iso == "2057-11-29T17:00:00.000Z")
        #expect(entry.warnings.count == 1)
        let warning = entry.warnings.first ?? ""
        #expect(warning.contains("looks like Unix seconds") && warning.contains("31 years off") && warning.contains("2026-11-29T17:00:00.000Z"))
    }

    @Test func referenceSecondsWhereAPNsExpectsUnixSeconds() {
        let entry = DateLens.inspect(.number(t0.timeIntervalSinceReferenceDate), path: "aps.stale-date", expects: .unix, now: now)
        #expect(entry.iso == "1995-11-29T17:00:00.000Z")
        #expect(entry.warnings.first?.contains("looks like seconds since 2001-01-01") == true)
        let fine = DateLens.inspect(.number(t0.timeIntervalSince1970), path: "aps.timestamp", expects: .unix, now: now)
        #expect(fine.warnings.isEmpty && fine.iso == "2026-11-29T17:00:00.000Z")
        #expect(fine.referenceSeconds == t0.timeIntervalSinceReferenceDate)
    }

    @Test func milliseconds() {
        let entry = DateLens.inspect(.number(t0.timeIntervalSince1970 * 1000), path: "aps.timestamp", expects: .unix, now: now)
        #expect(entry.iso == nil)
        #expect(entry.warnings.first?.contains("looks like milliseconds") == true)
        #expect(entry.warnings.first?.contains("2026-11-29T17:00:00.000Z") == true)
        #expect(entry.readings.contains(DateLens.Reading(reading: "milliseconds", iso: "2026-11-29T17:00:00.000Z")))
        // Beyond the year 9999 even as milliseconds: no date at all, not "like milliseconds" (the second trial sent 1e308).
        let huge = DateLens.inspect(.number(1e308), path: "aps.content-state.eta", expects: .reference, now: now)
        #expect(huge.warnings == ["aps.content-state.eta = 1e+308 is no date: even as Unix milliseconds it is beyond the year 9999; send seconds since 2001-01-01"])
    }

    @Test func isoStrings() {
        let inPush = DateLens.inspect(.string("2026-11-29T17:00:00Z"), path: "aps.content-state.pausedAt", expects: .reference, now: now)
        #expect(inPush.iso == nil)
        #expect(inPush.warnings.first?.contains("is a string") == true)
        #expect(inPush.readings == [DateLens.Reading(reading: "iso", iso: "2026-11-29T17:00:00.000Z")])
        let native = DateLens.inspect(.string("2026-11-29T18:00:00+01:00"), path: "content.staleDate", expects: .iso, now: now)
        #expect(native.warnings.isEmpty && native.iso == "2026-11-29T17:00:00.000Z")
        #expect(native.unixSeconds == t0.timeIntervalSince1970 && native.referenceSeconds == t0.timeIntervalSinceReferenceDate)
        let garbage = DateLens.inspect(.string("tomorrow"), path: "content.staleDate", expects: .iso, now: now)
        #expect(garbage.warnings.first?.contains("not an ISO-8601 date") == true)
    }

    @Test func null() {
        let entry = DateLens.inspect(.null, path: "aps.stale-date", expects: .unix, now: now)
        #expect(entry.iso == nil && entry.readings.isEmpty)
        #expect(entry.warnings.first?.contains("null") == true)
    }

    @Test func wholePayloads() throws {
        let payload = try JSONValue.parse(Array(#"{"aps":{"timestamp":\#(t0.timeIntervalSince1970),"event":"update","stale-date":null,"content-state":{"workoutTimer":[\#(t0.timeIntervalSinceReferenceDate),\#(t0.timeIntervalSince1970)],"heartRate":120}}}"#.utf8))
        let entries = DateLens.push(payload, now: now)
        #expect(entries.map(\.path) == ["aps.timestamp", "aps.stale-date", "aps.content-state.workoutTimer[0]", "aps.content-state.workoutTimer[1]"])
        #expect(entries.map(\.warnings.count) == [0, 1, 0, 1])
        let message = try JSONValue.parse(Array(#"{"type":"update","activityId":"a","content":{"state":{"workoutTimer":{"start":"2026-11-29T17:00:00Z","end":1795972200}},"staleDate":"2026-11-29T17:10:00Z"}}"#.utf8))
        let native = DateLens.message(message, now: now)
        #expect(native.map(\.path) == ["content.staleDate", "content.state.workoutTimer.end", "content.state.workoutTimer.start"])
        #expect(native.map(\.warnings.count) == [0, 1, 0])
    }
}

/// The date lens reads a declared kind's dates from its declaration, whatever their names (issue 29 item 5).
struct DeclaredDateLensTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func declaredDateFieldsAreListedAndCheckedWhateverTheirNames() throws {
        let declaration = try ActivityDeclaration(swiftSource: """
            import ActivityKit
            struct PickupAttributes: ActivityAttributes {
                public struct ContentState: Codable, Hashable {
                    var ready: Date
                    var window: ClosedRange<Date>
                    var stops: [Stop]
                    var label: String
                }
                var opened: Date
            }
            struct Stop: Codable, Hashable {
                var arrival: Date?
                var name: String
            }
            """)
        let reference = now.timeIntervalSinceReferenceDate
        let unix = now.timeIntervalSince1970
        let payload = try JSONValue.parse(Array("""
            {"aps":{"timestamp":\(unix),"event":"update","content-state":{"ready":\(unix),"window":[\(reference),\(unix * 1000)],
             "stops":[{"arrival":\(reference),"name":"A"},{"arrival":null,"name":"B"}],"label":"x"},"attributes":{"opened":\(reference)}}}
            """.utf8))
        let entries = DateLens.push(payload, declaration: declaration, now: now)
        #expect(entries.map(\.path) == ["aps.timestamp", "aps.content-state.ready", "aps.content-state.window[0]",
                                        "aps.content-state.window[1]", "aps.content-state.stops[0].arrival", "aps.attributes.opened"])
        let byPath = Dictionary(uniqueKeysWithValues: entries.map { ($0.path, $0) })
        #expect(byPath["aps.content-state.ready"]!.warnings.contains { $0.contains("looks like Unix seconds") })
        #expect(byPath["aps.content-state.window[1]"]!.warnings.contains { $0.contains("looks like milliseconds") })
        #expect(byPath["aps.content-state.window[0]"]!.warnings.isEmpty)
        #expect(DateLens.push(payload, declaration: nil, now: now) == DateLens.push(payload, now: now))
    }

    @Test func datesInDeclaredDictionariesAreListedAsJSONDecoderReadsThem() throws {
        let declaration = try ActivityDeclaration(swiftSource: """
            import ActivityKit
            struct LegsAttributes: ActivityAttributes {
                public struct ContentState: Codable, Hashable {
                    var byName: [String: Date]
                    var byID: [UUID: Date]
                    var id: UUID
                }
            }
            """)
        let unix = now.timeIntervalSince1970
        let reference = now.timeIntervalSinceReferenceDate
        let payload = try JSONValue.parse(Array("""
            {"aps":{"timestamp":\(unix),"event":"update","content-state":{"byName":{"b":\(unix),"a":\(reference)},
             "byID":["3F2504E0-4F89-11D3-9A0C-0305E82C3301",\(reference)],"id":"3F2504E0-4F89-11D3-9A0C-0305E82C3301"}}}
            """.utf8))
        let entries = DateLens.push(payload, declaration: declaration, now: now)
        #expect(entries.map(\.path) == ["aps.timestamp", "aps.content-state.byName.a", "aps.content-state.byName.b",
                                        "aps.content-state.byID[1]"])
        #expect(entries.first { $0.path == "aps.content-state.byName.b" }!.warnings.contains { $0.contains("looks like Unix seconds") })
    }
}

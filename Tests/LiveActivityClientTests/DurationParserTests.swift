import Testing
@testable import LiveActivityClient

/// `--duration` values: the forms the CLI accepts and the mistakes it names.
struct DurationParserTests {
    @Test(arguments: [
        ("70", 70), ("70s", 70), ("2m", 120), ("1m30s", 90), ("1h", 3600), ("1h5m", 3900),
        ("1h0m1s", 3601), ("90m", 5400), ("0", 0), ("007s", 7),
    ])
    func acceptsSecondsAndUnits(text: String, seconds: Int64) throws {
        #expect(try DurationParser.parse(text) == .seconds(seconds))
    }

    @Test(arguments: ["", "5x", "s", "m30", "30s1m", "1m1m", "1.5m", "-5", "+5", " 5", "5 s", "1h30", "5S", "１０"])
    func refusesOtherText(text: String) {
        #expect(throws: DurationParser.Failure.self) { try DurationParser.parse(text) }
    }

    @Test func namesTheUnknownUnit() {
        #expect(throws: DurationParser.Failure(description:
            #""5x": unknown unit "x"; expected seconds or a duration such as 70, 70s, 2m, 1m30s or 1h"#)) {
            try DurationParser.parse("5x")
        }
    }

    @Test func refusesAbsurdlyLongDurations() {
        #expect(throws: DurationParser.Failure.self) { try DurationParser.parse("99999999999999999999") }
        #expect(throws: DurationParser.Failure.self) { try DurationParser.parse("999999999h") }
    }
}

import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// Parsing client messages: every bad input gets an error naming its field.
struct MessageTests {
    private func parseError(_ json: String) -> ProtocolError? {
        if case .failure(let error) = ClientMessage.parse(Array(json.utf8), kinds: .builtIn).command { return error }
        return nil
    }

    @Test(arguments: [
        ("not json", ProtocolError.Code.invalidJSON, nil as String?),
        ("[1,2]", .invalidJSON, nil),
        (#"{"requestId":"x"}"#, .missingField, "type"),
        (#"{"type":"dance"}"#, .unknownType, "type"),
        (#"{"type":7}"#, .invalidField, "type"),
        (#"{"type":"start","attributes":{"workout":"swimming"},"durationSeconds":5}"#, .invalidField, "attributes.workout"),
        (#"{"type":"start","attributes":{"workout":7},"durationSeconds":5}"#, .invalidField, "attributes.workout"),
        (#"{"type":"start","attributes":{},"durationSeconds":5}"#, .missingField, "attributes.workout"),
        (#"{"type":"start","attributes":{"workout":"yoga"}}"#, .missingField, "content"),
        (#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":-5}"#, .invalidField, "durationSeconds"),
        (#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":"abc"}"#, .invalidField, "durationSeconds"),
        (#"{"type":"start","attributesType":"pizza","attributes":{"workout":"yoga"},"durationSeconds":5}"#, .invalidField, "attributesType"),
        (#"{"type":"update","durationSeconds":5}"#, .missingField, "activityId"),
        (#"{"type":"update","activityId":"a","durationSeconds":5,"alert":{"title":"x"}}"#, .missingField, "alert.body"),
        (#"{"type":"end","activityId":"a","dismissalPolicy":"later"}"#, .invalidField, "dismissalPolicy"),
        (#"{"type":"end","activityId":"a","dismissalPolicy":{"after":"tomorrow"}}"#, .invalidField, "dismissalPolicy.after"),
        (#"{"type":"end"}"#, .missingField, "activityId"),
        (#"{"type":"list","requestId":[1]}"#, .invalidField, "requestId"),
        // content and durationSeconds are alternatives: both is an error, never a silent choice.
        (#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60,"content":{"state":{}}}"#, .invalidField, "durationSeconds"),
        (#"{"type":"update","activityId":"a","durationSeconds":60,"content":{"state":{}}}"#, .invalidField, "durationSeconds"),
        (#"{"type":"end","activityId":"a","durationSeconds":60,"content":{"state":{}}}"#, .invalidField, "durationSeconds"),
        // activityId and "all": true are alternatives too: both must not end every activity.
        (#"{"type":"end","activityId":"a","all":true}"#, .invalidField, "all"),
        (#"{"type":"stop","all":true,"activityId":"a"}"#, .invalidField, "all"),
    ])
    func badMessagesNameTheirField(json: String, code: ProtocolError.Code, field: String?) throws {
        let error = try #require(parseError(json))
        #expect(error.code == code)
        #expect(error.field == field)
        if let field { #expect(error.message.hasPrefix(field)) }
        if json.contains("durationSeconds"), json.contains("content") {
            #expect(error.message == "durationSeconds: content and durationSeconds are mutually exclusive; give one of them")
        }
        if json.contains("activityId"), json.contains(#""all":true"#) {
            #expect(error.message == "all: activityId and all are mutually exclusive; give one of them")
        }
    }

    @Test(arguments: [
        (#"{"type":"list","a":01}"#, "a" as String?), (#"{"type":"list","a":1e400}"#, "a"), (#"{"type":"list","a":-}"#, "a"),
        (#"{"type":"list","a":"\x"}"#, "a"), (#"{"type":"list","a":{"b":[1,1.]}}"#, "a.b"), (#"{"type":"list","a":"\#u{01}"}"#, "a"),
        (#"{"type": 1e999}"#, "type"), (#"{not json"#, nil), ("", nil), (#"[01]"#, nil), (#"{"type":"list"} x"#, nil),
    ])
    func invalidJSONIsDescribedWithoutSwiftInternals(json: String, field: String?) throws {
        let error = try #require(parseError(json))
        #expect(error.code == .invalidJSON && error.field == field, "\(error)")
        for leak in ["Swift", "CodingKeys", "DecodingError", "Dictionary<", "Debug description", "Error Domain", "Path:"] {
            #expect(!error.message.contains(leak), "\(error.message)")
        }
        if let field { #expect(error.message.hasPrefix("\(field): the message is not valid JSON here")) }
    }

    /// `catchUp`'s `since` is refused past 2^53 − 1 with the range in the message (the new-user trial was told
    /// "expected a whole number from 0 up" for 2^64 − 1, which a JSON double cannot tell from 2^64).
    @Test func catchUpSinceStatesItsRange() throws {
        for (json, since) in [("0", UInt64(0)), ("42", 42), ("9007199254740991", 9_007_199_254_740_991)] {
            let parsed = ClientMessage.parse(Array(#"{"type":"catchUp","requestId":"c","since":\#(json)}"#.utf8), kinds: .builtIn)
            guard case .success(.catchUp(let got, nil)) = parsed.command else {
                Issue.record("since \(json): \(parsed.command)"); continue
            }
            #expect(got == since, "since \(json)")
        }
        for json in ["-1", "1.5", "9007199254740993", "18446744073709551615", "18446744073709551616"] {
            let error = try #require(parseError(#"{"type":"catchUp","requestId":"c","since":\#(json)}"#))
            #expect(error.code == .invalidField && error.field == "since", "\(error)")
            #expect(error.message.contains("from 0 to 9007199254740991 (2^53 − 1"), "\(error.message)")
        }
    }

    /// A lone surrogate names its field and says what is wrong with it (the new-user trial was told only about
    /// numbers and escapes).
    @Test func aLoneSurrogateIsNamedAsSuch() throws {
        let error = try #require(parseError(#"{"type":"list","requestId":"\ud800"}"#))
        #expect(error.code == .invalidJSON && error.field == "requestId", "\(error)")
        #expect(error.message.contains("lone surrogate") && error.message.contains("not UTF-8"), "\(error.message)")
    }

    /// In a key, Foundation names no place and says only "The given data was not valid JSON.": the message says
    /// what may be wrong instead, never the decoder's words (the new-user trial, session 19).
    @Test(arguments: [#"{"type":"list","requestId":"k","a":{"\udc00x":1}}"#, #"{"type":"list","\udc00":1}"#])
    func aLoneSurrogateInAKeyIsNamedAsSuch(json: String) throws {
        let error = try #require(parseError(json))
        #expect(error.code == .invalidJSON)
        #expect(!error.message.contains("The given data"), "\(error.message)")
        #expect(error.message.contains("lone surrogate"), "\(error.message)")
    }

    @Test(arguments: [
        (#"{"type":"start","#, #"expected a member name in double quotes at line 1, column 17 (byte 16), found end of message"#),
        (#"{"a": tru}"#, #"expected "true" at line 1, column 10 (byte 9), found "}""#),
        ("[1,,2]", #"expected a value (object, array, string, number, true, false or null) at line 1, column 4 (byte 3), found ",""#),
        ("{\n \"a\" 1}", #"expected ":" at line 2, column 6 (byte 7), found "1""#),
        (#"{"a":1} x"#, #"expected the end of the message at line 1, column 9 (byte 8), found "x""#),
        (#"["abc"#, #"expected a closing " at line 1, column 6 (byte 5), found end of message"#),
    ])
    func brokenDocumentsNameWhereAndWhat(json: String, description: String) throws {
        let error = try #require(parseError(json))
        #expect(error.code == .invalidJSON && error.field == nil)
        #expect(error.message == "message is not valid JSON: \(description)")
    }

    @Test(arguments: [(-1.0, "-1"), (28801, "28801"), (0.5, "0.5"), (1e300, "1e+300"), (-0.0, "0"),
                      (9_007_199_254_740_993, "9007199254740992"), (1e18, "1000000000000000000"), (1e19, "1e+19")])
    func numbersInMessagesReadAsJSON(number: Double, text: String) {
        #expect(number.jsonText == text)
    }

    @Test(arguments: [#"{"type":"list",}"#, #"{"type":"list","requestId":[1,2, ]}"#, "[1,\n]"])
    func trailingCommasAreNotJSON(json: String) throws {
        let error = try #require(parseError(json))
        #expect(error.code == .invalidJSON && error.message.contains("trailing commas"), "\(error)")
    }

    @Test func commasAndBracketsInsideStringsAreText() throws {
        let value = try JSONValue.parse(Array(#"{"type":"list","requestId":"a,]\",}"}"#.utf8))
        guard case .object(let members) = value else { Issue.record("not an object: \(value)"); return }
        #expect(members["requestId"] == .string(#"a,]",}"#))
    }

    @Test func contentIsValidatedAgainstTheKind() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        let cases: [(String, String)] = [
            (#"{"state":{"workoutTimer":{"start":"2026-11-29T17:00:00Z","end":"soon"}}}"#, "content.state.workoutTimer.end"),
            (#"{"state":{"workoutTimer":{"start":"2026-11-29T17:00:00Z","end":"2026-11-29T16:00:00Z"}}}"#, "content.state.workoutTimer.end"),
            (#"{"state":{}}"#, "content.state.workoutTimer"),
            (#"{"state":{"workoutTimer":{"start":"2026-11-29T17:00:00Z","end":"2026-11-29T17:01:00Z"}},"staleDate":5}"#, "content.staleDate"),
            (#"{"state":{"workoutTimer":{"start":"2026-11-29T17:00:00Z","end":"2026-11-29T17:01:00Z"}},"relevanceScore":"high"}"#, "content.relevanceScore"),
            (#"{"staleDate":null}"#, "content.state"),
            (#""content""#, "content"),
        ]
        for (content, field) in cases {
            do {
                _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"content":\#(content)}"#, at: t0, ids: &ids)
                Issue.record("accepted \(content)")
            } catch let error as ProtocolError {
                #expect(error.field == field, "\(content)")
            }
        }
        #expect(center.activities.isEmpty)
        #expect(center.sequence == 0)
    }

    @Test func oversizedContentStateIsRefused() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        let padding = String(repeating: "x", count: 5000)
        let json = #"{"type":"start","attributes":{"workout":"yoga"},"content":{"state":{"workoutTimer":{"start":"2026-11-29T17:00:00Z","end":"2026-11-29T17:01:00Z"},"note":"\#(padding)"}}}"#
        #expect(throws: ProtocolError.self) { _ = try center.apply(json, at: t0, ids: &ids) }
    }

    @Test func requestIdIsKeptEvenWhenTheMessageIsBad() {
        let message = ClientMessage.parse(Array(#"{"type":"dance","requestId":"r9"}"#.utf8), kinds: .builtIn)
        #expect(message.requestId == .string("r9"))
    }

    @Test func serverMessagesEncodeDatesAsISOWithMilliseconds() throws {
        let activity = Activity(id: "a1", attributesType: "workout", attributes: .object(["workout": .string("yoga")]),
                                content: ActivityContent(state: .object([:]), staleDate: nil), timer: nil, startDate: t0)
        let text = String(decoding: ServerMessage.snapshot(requestId: .number(3), serverTime: t0, sequence: 7, activities: [activity]).encoded(), as: UTF8.self)
        #expect(text.contains(#""serverTime":"2026-11-29T17:00:00.000Z""#))
        #expect(text.contains(#""requestId":3"#))
        #expect(text.contains(#""staleDate":null"#))
        #expect(text.contains(#""endDate":null"#))
    }

    @Test func heartbeatCarriesTheTimeAndTheInterval() throws {
        let bytes = ServerMessage.heartbeat(serverTime: t0, intervalSeconds: 15).encoded()
        let value = try JSONValue.parse(bytes)
        #expect(value == .object(["type": .string("heartbeat"), "serverTime": .string("2026-11-29T17:00:00.000Z"),
                                  "intervalSeconds": .number(15)]))
    }

    /// A length limit counts characters (grapheme clusters), and "a" followed by 15,000 combining accents is one
    /// character: without a bound on scalars it passed the alert title's 256 and a declared name's 64 (found by
    /// the new-user trial, 5 Dec 2026). Each character may bring ``FieldReader/scalarsPerCharacter`` scalars.
    @Test func aLengthLimitAlsoBoundsTheUnicodeScalars() throws {
        let pile = "a" + String(repeating: "\u{301}", count: 15_000)
        #expect(pile.count == 1)
        let titled = #"{"type":"update","activityId":"a","durationSeconds":5,"alert":{"title":"\#(pile)","body":"b"}}"#
        let title = try #require(parseError(titled))
        #expect(title.code == .invalidField && title.field == "alert.title")
        #expect(title.message == "alert.title: has 15001 Unicode scalars; at most 2048 are accepted")
        let bodied = #"{"type":"update","activityId":"a","durationSeconds":5,"alert":{"title":"t","body":"\#(pile)"}}"#
        #expect(parseError(bodied)?.field == "alert.body")
        let named = #"{"type":"start","attributesType":"emoji","attributes":{"startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z","name":"\#(pile)"},"content":{"state":{"emoji":"🏃"}}}"#
        let name = try #require(parseError(named))
        #expect(name.code == .invalidField && name.field == "attributes.name")
        #expect(name.message == "attributes.name: has 15001 Unicode scalars; at most 512 are accepted")
        // What people write still passes: 256 family emoji (7 scalars each) as a title.
        let families = String(repeating: "👨‍👩‍👧‍👦", count: 256)
        let fine = #"{"type":"update","activityId":"a","durationSeconds":5,"alert":{"title":"\#(families)","body":"b"}}"#
        #expect(parseError(fine) == nil)
    }
}

/// Dates survive formatting and parsing unchanged (a restart or replay must not move them by 1 ms).
struct ISODateTests {
    @Test func everyMillisecondRoundTrips() throws {
        for millisecond in 0..<1000 {
            let text = String(format: "2026-11-29T17:25:26.%03dZ", millisecond)
            let date = try #require(ISODate.parse(text))
            #expect(ISODate.format(date) == text)
        }
    }

    @Test func offsetsAndWholeSecondsAreRead() {
        #expect(ISODate.parse("2026-11-29T18:00:00+01:00") == t0)
        #expect(ISODate.parse("2026-11-29T17:00:00Z") == t0)
        #expect(ISODate.format(t0.addingTimeInterval(0.0004)) == "2026-11-29T17:00:00.000Z")
        #expect(ISODate.format(t0.addingTimeInterval(0.9996)) == "2026-11-29T17:00:01.000Z")
        #expect(ISODate.parse("yesterday") == nil)
    }
}

/// Hostile input found by the hostile-client suite and the fuzzer: each must be a clear error, fast.
struct HostileInputTests {
    @Test func hugeRawValuesAreAnErrorNotATrap() throws {
        for raw in ["1e300", "9223372036854775808", "1e19", "-1e300"] {
            let message = ClientMessage.parse(Array(#"{"type":"start","attributes":{"workout":\#(raw)},"durationSeconds":5}"#.utf8), kinds: .builtIn)
            guard case .failure(let error) = message.command else { Issue.record("\(raw) accepted"); continue }
            #expect(error.field == "attributes.workout")
        }
    }

    @Test func deepNestingIsRefusedAtOnce() {
        let deep = #"{"type":"list","x":"# + String(repeating: "[", count: 500) + String(repeating: "]", count: 500) + "}"
        let started = Date()
        guard case .failure(let error) = ClientMessage.parse(Array(deep.utf8), kinds: .builtIn).command else { Issue.record("accepted"); return }
        #expect(error.code == .invalidJSON)
        #expect(Date().timeIntervalSince(started) < 0.5)
        let brackets = #"{"type":"list","note":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}"#
        if case .failure = ClientMessage.parse(Array(brackets.utf8), kinds: .builtIn).command { Issue.record("brackets in a string counted") }
    }

    @Test func datesBeyondTheYear3000AreAnError() throws {
        #expect(throws: ProtocolError.self) { _ = try CodableDate.decode(.number(1e300), field: "d") }
        #expect(throws: ProtocolError.self) { _ = try CodableDate.unix(1.7e12, field: "d") }
        #expect(ISODate.format(Date(timeIntervalSince1970: 1e300)).hasSuffix("Z"))
    }
}

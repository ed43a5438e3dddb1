import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// The fast JSON parser gives Foundation's value whenever it answers, and leaves every doubtful case to
/// Foundation (nil), so `JSONValue.parse` keeps Foundation's values and error messages.
struct JSONParserTests {
    /// What Foundation's decoder makes of `text` (nil when it refuses it).
    func foundation(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    func check(_ bytes: [UInt8], answers: Bool? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        var fast: JSONValue?
        if case .value(let value) = JSONParser.parse(bytes) { fast = value }
        if let fast {
            #expect(fast == foundation(bytes), "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
        }
        if let answers {
            #expect((fast != nil) == answers, "\(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
        }
    }

    @Test func answersTheProtocolsMessagesAsFoundationDoes() {
        let messages = [
            #"{"type":"update","requestId":"r1","activityId":"6F1C","durationSeconds":600,"alert":{"title":"bench","body":"{\"seq\":1764000000000000,\"ts\":1234567890123}"}}"#,
            #"{"type":"start","attributes":{"workout":"yoga"},"content":{"state":{"workoutTimer":{"start":"2026-11-29T17:00:00.000Z","end":"2026-11-29T17:10:00.000Z"}},"staleDate":null,"relevanceScore":0.5}}"#,
            #" { "aps" : { "event" : "update", "timestamp" : 1795971600, "content-state" : { "emoji" : "🏃‍♀️", "n" : -12.25, "ok" : true, "none" : null } } } "#,
            #"[1, -0, 0.5, 12345678901234567, -99999999999999999, [], {}, [[]], "", "\u00e9\ud83c\udfc3\n\t\"\\\/\b\f\r"]"#,
            "{\"a\":\"caf\u{e9}\",\"b\":\"\u{202E}x\",\"c\":\"\\u0000\"}",
            #"[1e3, 1E+2, -2.5e-3, 0e0, 123456789012345678, 0.123456789012345678, 9007199254740993, 1.7976931348623157e308, 5e-324]"#,
        ]
        for message in messages { check(Array(message.utf8), answers: true) }
    }

    @Test func leavesDoubtfulTextToFoundation() {
        let doubtful = [
            "", " ", "true", "\"top-level string\"", "12", "null",               // not an object or array
            #"[1E-400]"#, #"[1e400]"#, #"[-1e999]"#,                            // out of Double's range
            #"[01]"#, #"[-]"#, #"[1.]"#, #"[.5]"#, #"[+1]"#, #"[0x10]"#, #"[1e]"#, #"[1e+]"#,  // not JSON numbers
            #"["\ud800"]"#, #"["\udc00"]"#, #"["\ud800\u0041"]"#, #"["\x"]"#, #"["\u12"]"#,  // bad escapes
            "[\"a\tb\"]", #"{"a" 1}"#, #"{"a":1,}"#, #"[1 2]"#, #"[1]x"#, #"{a:1}"#, #"[tru]"#, #"["open"#,
        ]
        for text in doubtful { check(Array(text.utf8), answers: false) }
        // Bytes that are not UTF-8, raw or after an escape.
        check([0x5B, 0x22, 0xFF, 0x22, 0x5D], answers: false)
        check([0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D], answers: false)
        check([0xEF, 0xBB, 0xBF] + Array("[1]".utf8), answers: false)  // a byte-order mark
    }

    @Test func aKeyTwiceInOneObjectIsRefusedWithItsPath() {
        let cases: [(String, String)] = [
            (#"{"type":"start","type":"bogus"}"#, "type"),
            (#"{"a":{"b":[{"c":1},{"d":1,"d":2}]}}"#, "a.b[1].d"),
            ("{\"e\u{301}\":1,\"\u{e9}\":2}", "\u{e9}"),                   // keys Swift calls equal
            (#"[{"alg":"ES256","alg":"none"}]"#, "[0].alg"),
        ]
        for (text, path) in cases {
            #expect(JSONParser.parse(Array(text.utf8)) == .duplicateKey(path: path), "\(text)")
            #expect(throws: ProtocolError.self) { try JSONValue.parse(Array(text.utf8)) }
        }
        do {
            _ = try JSONValue.parse(Array(#"{"durationSeconds":70,"durationSeconds":"x"}"#.utf8))
        } catch {
            #expect(error.code == .invalidJSON && error.field == "durationSeconds")
            #expect(error.message.contains("appears twice"))
        }
    }

    @Test func randomDocumentsParseAsFoundationParsesThem() throws {
        var generator = SplitMix64(seed: 20261201)
        let pieces = ["a", "é", "🏃", "\"", "\\", "/", "\n", "\u{1}", "\u{7F}", "\u{2028}", "日本", " ", "e\u{301}"]
        func string() -> String {
            (0..<Int(generator.next() % 6)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
        }
        func value(_ depth: Int) -> JSONValue {
            switch generator.next() % (depth > 3 ? 4 : 6) {
            case 0: return .null
            case 1: return .bool(generator.next() % 2 == 0)
            case 2:
                let magnitude = Double(generator.next() % 1_000_000_000) / [1, 10, 1000, 1e6, 1e-20, 1e30][Int(generator.next() % 6)]
                return .number(generator.next() % 2 == 0 ? magnitude : -magnitude)
            case 3: return .string(string())
            case 4: return .array((0..<Int(generator.next() % 4)).map { _ in value(depth + 1) })
            default:
                var object: [String: JSONValue] = [:]
                for _ in 0..<Int(generator.next() % 4) { object[string()] = value(depth + 1) }
                return .object(object)
            }
        }
        var answered = 0
        for _ in 0..<400 {
            let document: JSONValue = .object(["root": value(0)])
            let bytes = Array(try MessageEncoder.encoder.encode(document))
            check(bytes)
            if case .value(let fast) = JSONParser.parse(bytes) {
                answered += 1
                #expect(fast == document)
            }
        }
        #expect(answered > 300, "the fast path answers what the server itself writes")
    }
}

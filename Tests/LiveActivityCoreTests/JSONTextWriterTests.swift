import Foundation
import Testing
@testable import LiveActivityCore

/// ``JSONTextWriter`` against `JSONEncoder`: the messages written directly (`activity`, `ack`) and the stores'
/// form of an activity must be the same bytes as the Codable path, for generated activities whose strings, numbers, keys and optional fields cover
/// the escaping, number and ordering rules.
@Suite struct JSONTextWriterTests {
    /// A small deterministic generator (SplitMix64), so that a failure names a reproducible case.
    private struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    private static let tricky: [String] = [
        "", "plain", "with space", "quote\"inside", "back\\slash", "slash/url/path", "tab\tnew\nline\rret",
        "\u{8}\u{c}\u{0}\u{1}\u{1f}\u{7f}", "é café", "日本語", "emoji 🏃‍♀️🔥", "\u{2028}\u{2029}", "A", "a", "B", "_", "a1", "a10",
        "a2", "Z", "aa", "ab", "é", "e", "f", "\u{10FFFF}", "<script>&amp;</script>", "'single'",
    ]
    private static let numbers: [Double] = [
        0, -0.0, 1, -1, 0.1, 0.5, 1.5, -2.25, 1e-7, 5e-324, 1e21, 1e300, -1e300, 9e15, 9e15 - 1, -9e15 + 1,
        8_999_999_999_999_998, 123_456_789.125, 3.141592653589793, 100, 1e15, 2.5e-5, 12345678901234567890,
        Double.greatestFiniteMagnitude, Double.leastNormalMagnitude,
    ]

    private func string(_ g: inout Generator) -> String {
        if Bool.random(using: &g) { return Self.tricky.randomElement(using: &g)! }
        let scalars = (0..<Int.random(in: 0...12, using: &g)).map { _ -> Character in
            let pick = Int.random(in: 0..<10, using: &g)
            let value: UInt32 = pick < 2 ? UInt32.random(in: 0..<0x20, using: &g)
                : pick < 7 ? UInt32.random(in: 0x20..<0x7F, using: &g) : UInt32.random(in: 0xA0..<0xD7FF, using: &g)
            return Character(Unicode.Scalar(value)!)
        }
        return String(scalars)
    }

    private func number(_ g: inout Generator) -> Double {
        switch Int.random(in: 0..<4, using: &g) {
        case 0: Self.numbers.randomElement(using: &g)!
        case 1: Double(Int.random(in: -1_000_000...1_000_000, using: &g))
        case 2: Double.random(in: -1e6...1e6, using: &g)
        default: Double(bitPattern: g.next() & 0x7FEF_FFFF_FFFF_FFFF) * (Bool.random(using: &g) ? 1 : -1)
        }
    }

    private func value(_ g: inout Generator, depth: Int = 0) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &g) {
        case 0: .null
        case 1: .bool(Bool.random(using: &g))
        case 2: .number(number(&g))
        case 3: .string(string(&g))
        case 4: .array((0..<Int.random(in: 0...4, using: &g)).map { _ in value(&g, depth: depth + 1) })
        default:
            .object(Dictionary((0..<Int.random(in: 0...6, using: &g)).map { _ in (string(&g), value(&g, depth: depth + 1)) },
                               uniquingKeysWith: { a, _ in a }))
        }
    }

    private func date(_ g: inout Generator) -> Date {
        Date(timeIntervalSince1970: Double(Int.random(in: -2_000_000_000_000...4_000_000_000_000, using: &g)) / 1000)
    }

    private func activity(_ g: inout Generator) -> Activity {
        var activity = Activity(id: string(&g), attributesType: string(&g), attributes: value(&g),
                                content: ActivityContent(state: value(&g), staleDate: Bool.random(using: &g) ? date(&g) : nil,
                                                         relevanceScore: number(&g)),
                                timer: nil, activityState: ActivityState.allCases.randomElement(using: &g)!, startDate: date(&g),
                                endDate: Bool.random(using: &g) ? date(&g) : nil,
                                dismissalDate: Bool.random(using: &g) ? date(&g) : nil,
                                endReason: [nil, EndReason.request, .lifetimeLimit].randomElement(using: &g)!)
        if Bool.random(using: &g) { activity.pushToken = string(&g) }
        if Bool.random(using: &g) { activity.channelId = string(&g) }
        if Bool.random(using: &g) { activity.kindProblem = string(&g) }
        if Bool.random(using: &g) { activity.thumbnail = ActivityThumbnail(key: "k\(g.next() % 1000)") }
        return activity
    }

    private func messages(_ g: inout Generator) -> [ServerMessage] {
        let alert = Bool.random(using: &g)
            ? AlertConfiguration(title: string(&g), body: string(&g), sound: Bool.random(using: &g) ? string(&g) : nil) : nil
        let event = ActivityEvent(kind: ActivityEvent.Kind.allCases.randomElement(using: &g)!, sequence: g.next() >> UInt64.random(in: 0...63, using: &g),
                                  activity: activity(&g), alert: alert)
        let requestId: JSONValue? = Bool.random(using: &g) ? value(&g) : nil
        return [
            .activity(event, serverTime: date(&g)),
            .ack(requestId: requestId, activityId: Bool.random(using: &g) ? string(&g) : nil,
                 activityIds: Bool.random(using: &g) ? (0..<Int.random(in: 0...3, using: &g)).map { _ in string(&g) } : nil),
        ]
    }

    @Test func activityAndAckAreTheBytesJSONEncoderWrites() {
        var g = Generator(state: 0x5EED)
        var compared = 0
        for round in 0..<3_000 {
            for message in messages(&g) {
                let direct = message.writtenDirectly()
                let reference = message.codableEncoded()
                #expect(direct != nil, "round \(round): not written directly")
                guard let direct, direct != reference else { compared += 1; continue }
                Issue.record("round \(round):\n direct    \(String(decoding: direct, as: UTF8.self))\n reference \(String(decoding: reference, as: UTF8.self))")
                return
            }
        }
        #expect(compared == 6_000)
    }

    @Test func theStoredFormIsTheBytesTheStoreEncoderWrites() {
        var g = Generator(state: 0x570BE)
        for round in 0..<3_000 {
            var activity = activity(&g)
            activity.timerFinished = Bool.random(using: &g)
            if Bool.random(using: &g) { activity.lastPushTimestamp = number(&g) }
            let direct = StoredActivity.encode(activity), reference = StoredActivity.codableEncoded(activity)
            guard direct != reference else { continue }
            Issue.record("round \(round):\n direct    \(direct)\n reference \(reference)")
            return
        }
        var unholdable = activity(&g)
        unholdable.lastPushTimestamp = .infinity
        #expect(StoredActivity.encode(unholdable) == StoredActivity.codableEncoded(unholdable))
    }

    @Test func everyScalarBelow0x80AndEachNumberAloneMatch() throws {
        for scalar in 0..<0x80 {
            let text = String(Character(Unicode.Scalar(UInt8(scalar))))
            var writer = JSONTextWriter()
            writer.string(text)
            #expect(writer.bytes == Array(try MessageEncoder.encoder.encode(text)), "U+\(String(scalar, radix: 16))")
        }
        for number in Self.numbers {
            var writer = JSONTextWriter()
            try writer.value(.number(number))
            #expect(writer.bytes == Array(try MessageEncoder.encoder.encode(JSONValue.number(number))), "\(number)")
        }
    }

    @Test func aNumberJSONCannotHoldFallsBackToTheCodablePath() {
        let event = ActivityEvent(kind: .updated, sequence: 1, activity: Activity(
            id: "a", attributesType: "workout", attributes: .object(["x": .number(.nan)]),
            content: ActivityContent(state: .object([:]), staleDate: nil), timer: nil, startDate: Date(timeIntervalSince1970: 0)))
        let message = ServerMessage.activity(event, serverTime: Date(timeIntervalSince1970: 0))
        #expect(message.writtenDirectly() == nil)
        #expect(message.encoded() == message.codableEncoded())
    }

    @Test func theContentSizeCheckCountsTheEncodedBytes() throws {
        // `{"note":"…"}` is 11 bytes around the text; "é" is two bytes of UTF-8: 4,096 bytes pass, 4,097 do not.
        let state = JSONValue.object(["note": .string(String(repeating: "é", count: 2_042) + "x")])
        #expect(Array(try MessageEncoder.encoder.encode(state)).count == ContentLimits.maximumStateBytes)
        try ContentLimits.check(state: state, field: "content.state")
        let over = JSONValue.object(["note": .string(String(repeating: "é", count: 2_043))])
        #expect(Array(try MessageEncoder.encoder.encode(over)).count == ContentLimits.maximumStateBytes + 1)
        #expect(throws: ProtocolError.self) { try ContentLimits.check(state: over, field: "content.state") }
    }
}

import Foundation
import Testing
@testable import LiveActivityCore

/// A whole number beyond ±2^53 that an app's `Int64` or `UInt64` holds is kept as its digits
/// (``JSONValue/bigInteger(_:)``), as `JSONDecoder` reads it: `9007199254740993` was kept, stored and shown as
/// `9007199254740992`. Found by this session's own look at a declared kind with an `Int64` field.
struct BigIntegerTests {
    static let declaration = try! ActivityDeclaration(swiftSource: """
        import ActivityKit
        struct LedgerAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable {
                var orderId: Int64
                var checksum: UInt64
                var count: Int32
                var total: Double
                var amount: Decimal
            }
            var name: String
        }
        """)

    private func parse(_ text: String) throws -> JSONValue { try JSONValue.parse(Array(text.utf8)) }

    @Test func eachNumberHasOneFormAndTheDigitsSurvive() throws {
        let parsed = try parse("[9007199254740993, -9007199254740993, 9007199254740992, 18446744073709551615, 18446744073709551616, 9223372036854775807, 1e17, 100000000000000000]")
        #expect(parsed == .array([.bigInteger("9007199254740993"), .bigInteger("-9007199254740993"), .number(9_007_199_254_740_992),
                                  .bigInteger("18446744073709551615"), .number(18_446_744_073_709_551_616), .bigInteger("9223372036854775807"),
                                  .number(1e17), .number(1e17)]))
        // Foundation's path (a document the fast parser leaves to it: a string at the top... inside an array with a
        // lone surrogate refused), the same forms:
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data("[9007199254740993, 2.5]".utf8)) == .array([.bigInteger("9007199254740993"), .number(2.5)]))
        // Written back exactly, by both writers.
        var writer = JSONTextWriter()
        try writer.value(parsed)
        #expect(String(decoding: writer.bytes, as: UTF8.self)
                == "[9007199254740993,-9007199254740993,9007199254740992,18446744073709551615,1.8446744073709552e+19,9223372036854775807,1e+17,1e+17]")
        #expect(String(decoding: try JSONEncoder().encode(JSONValue.bigInteger("-9007199254740993")), as: UTF8.self) == "-9007199254740993")
        #expect(JSONValue.bigInteger("9007199254740993").numberValue == 9_007_199_254_740_992 && JSONValue.bigInteger("7").typeName == "number")
    }

    @Test func aDeclared64BitIntegerKeepsItAndNarrowerTypesRefuseIt() throws {
        let state = try parse(#"{"orderId": 9007199254740993, "checksum": 18446744073709551615, "count": 1, "total": 9007199254740993, "amount": 9007199254740993}"#)
        let normalised = try Self.declaration.normalise(state, as: .contentState, field: "content.state")
        #expect(normalised.value["orderId"] == .bigInteger("9007199254740993"))
        #expect(normalised.value["checksum"] == .bigInteger("18446744073709551615"))
        #expect(normalised.value["total"] == .number(9_007_199_254_740_992))     // a Double rounds it, as in the app
        #expect(normalised.value["amount"] == .bigInteger("9007199254740993"))   // a Decimal does not
        let decoded = try Self.declaration.decode(codable: state, as: .contentState)
        #expect(decoded.value["orderId"] == .bigInteger("9007199254740993"))

        for (field, text, reason) in [("count", "9007199254740993", "(Int32), got 9007199254740993"),
                                      ("orderId", "9223372036854775808", "(Int64), got 9223372036854775808"),
                                      ("checksum", "-9007199254740993", "(UInt64), got -9007199254740993")] {
            var object = state.objectValue ?? [:]
            object[field] = try parse("[\(text)]").arrayElements?.first
            do {
                _ = try Self.declaration.normalise(.object(object), as: .contentState, field: "content.state")
                Issue.record("\(field) = \(text) was accepted")
            } catch {
                #expect(error.field == "content.state.\(field)" && error.message.contains(reason), "\(error.message)")
            }
        }
    }
}

private extension JSONValue {
    var arrayElements: [JSONValue]? {
        guard case .array(let items) = self else { return nil }
        return items
    }
}

/// A `Float` refuses a number too large for it and one so small it would round to 0, each in its own words
/// (1e-50 was "too large for a Float"; found by the new-user trial).
struct FloatRangeTests {
    static let declaration = try! ActivityDeclaration(swiftSource: """
        import ActivityKit
        struct GaugeAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable { var progress: Float }
            var name: String
        }
        """)

    @Test func tooLargeAndTooSmallAreToldApart() {
        for (number, words) in [(1e39, "1e+39 is too large for a Float"), (1e-50, "1e-50 is too small for a Float (it would round to 0)")] {
            do {
                _ = try Self.declaration.normalise(.object(["progress": .number(number)]), as: .contentState, field: "content.state")
                Issue.record("\(number) was accepted")
            } catch {
                #expect(error.field == "content.state.progress" && error.message.hasSuffix(words), "\(error.message)")
            }
        }
    }
}

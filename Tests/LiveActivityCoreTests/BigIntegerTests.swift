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
        // From 2^53 on, a whole number a 64-bit type holds is its digits, however written (JSONDecoder reads
        // 9007199254740993e0 and 9007199254740993.0 into an Int64 exactly); below, and beyond 64 bits, a Double.
        let parsed = try parse("[9007199254740993, -9007199254740993, 9007199254740992, 18446744073709551615, 18446744073709551616, 9223372036854775807, 1e17, 100000000000000000, 9007199254740993e0, 9007199254740993.0, 9007199254740991, -9223372036854775809]")
        #expect(parsed == .array([.bigInteger("9007199254740993"), .bigInteger("-9007199254740993"), .bigInteger("9007199254740992"),
                                  .bigInteger("18446744073709551615"), .number(18_446_744_073_709_551_616), .bigInteger("9223372036854775807"),
                                  .bigInteger("100000000000000000"), .bigInteger("100000000000000000"), .bigInteger("9007199254740993"),
                                  .bigInteger("9007199254740993"), .number(9_007_199_254_740_991), .number(-9_223_372_036_854_775_808)]))
        // Foundation's path (a document the fast parser leaves to it: a string at the top... inside an array with a
        // lone surrogate refused), the same forms:
        #expect(try JSONDecoder().decode(JSONValue.self, from: Data("[9007199254740993, 2.5]".utf8)) == .array([.bigInteger("9007199254740993"), .number(2.5)]))
        // Written back exactly, by both writers.
        var writer = JSONTextWriter()
        try writer.value(parsed)
        #expect(String(decoding: writer.bytes, as: UTF8.self)
                == "[9007199254740993,-9007199254740993,9007199254740992,18446744073709551615,1.8446744073709552e+19,9223372036854775807,100000000000000000,100000000000000000,9007199254740993,9007199254740993,9007199254740991,-9.223372036854776e+18]")
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

        // Beyond 64 bits both ways: -2^63 - 1 reads as the Double -2^63, which an Int64 would hold (it was accepted).
        for (field, text, reason) in [("count", "9007199254740993", "(Int32), got 9007199254740993"),
                                      ("orderId", "9223372036854775808", "(Int64), got 9223372036854775808"),
                                      ("orderId", "-9223372036854775809", "(Int64), got -9.223372036854776e+18"),
                                      ("checksum", "18446744073709551616", "(UInt64), got 1.8446744073709552e+19"),
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

/// A `Decimal` takes what `JSONDecoder` reads into one (its digits times 10^-128 to 10^127; 1e200 was applied
/// where the app refuses it), and a flat-array dictionary's key sent twice holds its last value, as
/// `Dictionary(from:)` assigns each pair in turn (it was kept twice). Both found by the second new-user trial;
/// the limits were checked against Linux Foundation's JSONDecoder.
struct DecimalAndPairsTests {
    static let declaration = try! ActivityDeclaration(swiftSource: """
        import ActivityKit
        struct MatchAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable {
                var fee: Decimal
                var cards: [Team: Int]
                var zoneRates: [Int: Double]?
                var fouls: [Period: Int]?
            }
            enum Team: String, Codable, Hashable { case home, away }
            enum Period: Int, Codable, Hashable, CodingKeyRepresentable { case first = 1, second }
            var name: String
        }
        """)

    @Test func aDecimalHoldsWhatJSONDecoderReads() {
        for (number, fits) in [(1e127, true), (1e-128, true), (1.5e-127, true), (123.45, true), (0, true),
                               (1e128, false), (3.4e165, false), (1e200, false), (1.5e-128, false), (1e-300, false)] {
            #expect(DeclarationConverter.fitsDecimal(number) == fits, "\(number)")
        }
        do {
            _ = try Self.declaration.normalise(.object(["fee": .number(1e200), "cards": .array([])]), as: .contentState, field: "content.state")
            Issue.record("1e200 was accepted")
        } catch {
            #expect(error.field == "content.state.fee" && error.message.contains("beyond what a Decimal holds"), "\(error.message)")
        }
    }

    @Test func aKeySentTwiceHoldsItsLastValueInItsFirstPlace() throws {
        let state = try JSONValue.parse(Array(#"{"fee": 1.5, "cards": ["home", 1, "away", 0, "home", 2]}"#.utf8))
        let normalised = try Self.declaration.normalise(state, as: .contentState, field: "content.state")
        #expect(normalised.value["cards"] == .array([.string("home"), .number(2), .string("away"), .number(0)]))
    }

    /// An `Int` key is the integer `Int(_:)` reads: `"+1"` and `"01"` are the app's 1, one entry, not three
    /// shown as "+1 2, 01 3, 1 1" (from the third new-user trial); an `Int`-raw enum's keys the same.
    @Test func integerKeysThatReadAsOneIntegerAreOneEntry() throws {
        let state = try JSONValue.parse(Array(#"{"fee": 1, "cards": [], "zoneRates": {"+1": 2, "01": 3, "1": 1, "-02": 4}, "fouls": {"+2": 5}}"#.utf8))
        let normalised = try Self.declaration.normalise(state, as: .contentState, field: "content.state")
        guard case .object(let rates)? = normalised.value["zoneRates"] else { Issue.record("no zoneRates"); return }
        #expect(rates.keys.sorted() == ["-2", "1"] && rates["-2"] == .number(4))
        #expect([.number(1), .number(2), .number(3)].contains(rates["1"]), "one of the values sent for 1")
        #expect(normalised.value["fouls"] == .object(["2": .number(5)]))
    }
}

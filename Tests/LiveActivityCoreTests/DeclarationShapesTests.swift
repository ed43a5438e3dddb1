import Foundation
import Testing
@testable import LiveActivityCore

/// Every `Codable` shape real declarations use (issue 27, item 4): dictionaries, `UUID`, `Decimal`, integer
/// widths, `Float`, `Set`, typealiases, enums without a raw type (Swift 5.5's keyed form), types declared in
/// extensions, and `let` with a default value. Verdicts here are the ones Foundation's `JSONDecoder` gives
/// (checked against the real decoder by ``DecoderDifferentialTests``).
struct DeclarationShapesTests {
    static let source = """
        import ActivityKit
        import Foundation

        struct OrderAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable {
                var stage: Stage
                var courier: Courier?
                var tips: [String: Decimal]
                var seats: [Int: String]?
                var counts: [Size: Int]?
                var tags: Set<String>?
                var wait: TimeInterval?
                var small: Int8?
                var big: UInt64?
                var ratio: Float?
                var paid: Bool?
            }
            var orderID: UUID
            var link: URL?
            let version: Int = 2
        }

        extension OrderAttributes {
            enum Stage: Codable, Hashable {
                case placed
                case late(minutes: Int, reason: String?)
                case moved(String, Int)
            }
            enum Size: String, Codable { case small, large }
            struct Courier: Codable, Hashable { var name: String }
        }
        """

    static let declaration = try! ActivityDeclaration(swiftSource: source)

    private func verdict(_ text: String, as part: DeclaredPart = .contentState) -> String {
        do {
            let value = try Self.declaration.decode(codable: (try? JSONValue.parse(Array(text.utf8))) ?? .null, as: part)
            return value.warnings.isEmpty ? "applied" : "applied; " + value.warnings.map(\.description).joined(separator: "; ")
        } catch {
            return "\(error.kind.rawValue) \(error.fieldPath)"
        }
    }

    /// A `Set` holds equal elements once, as the app's does: `["wifi","meal","wifi"]` is kept as
    /// `["wifi","meal"]` (it was kept and shown as sent; found by the new-user trial).
    @Test func aSetKeepsEachElementOnce() throws {
        let state = try JSONValue.parse(Array(#"{"stage":{"placed":{}},"tips":{},"tags":["wifi","meal","wifi","meal","tv"]}"#.utf8))
        let normalised = try Self.declaration.normalise(state, as: .contentState, field: "content.state")
        #expect(normalised.value["tags"] == .array(["wifi", "meal", "tv"].map(JSONValue.string)))
        let decoded = try Self.declaration.decode(codable: state, as: .contentState)
        #expect(decoded.value["tags"] == .array(["wifi", "meal", "tv"].map(JSONValue.string)))
    }

    @Test func shapesResolve() throws {
        let state = Self.declaration.contentState
        #expect(state.fields.map(\.type.swiftName) == ["Stage", "Courier?", "[String: Decimal]", "[Int: String]?", "[Size: Int]?",
                                                       "Set<String>?", "TimeInterval?", "Int8?", "UInt64?", "Float?", "Bool?"])
        #expect(Self.declaration.attributes.fields.map(\.type) == [.uuid, .optional(.url)])
        #expect(Self.declaration.attributes.ignored == ["version"])
        let stage = try #require(Self.declaration.enums["OrderAttributes.Stage"])
        #expect(stage.isKeyed)
        #expect(stage.cases.map { $0.payload.map(\.key) } == [[], ["minutes", "reason"], ["_0", "_1"]])
        #expect(stage.cases[1].payload.map(\.type) == [.integer("Int"), .optional(.string)])
    }

    @Test(arguments: [
        (#"{"stage":{"placed":{}},"tips":{}}"#, "applied"),
        (#"{"stage":{"late":{"minutes":5}},"tips":{"ann":1.5}}"#, "applied"),
        (#"{"stage":{"moved":{"_0":"Main St","_1":2}},"tips":{}}"#, "applied"),
        (#"{"stage":{"placed":{},"x":1},"tips":{}}"#, "applied; stage: key \"x\" is not a case of Stage; the app ignores it"),
        (#"{"stage":"placed","tips":{}}"#, "typeMismatch stage"),
        (#"{"stage":{},"tips":{}}"#, "typeMismatch stage"),
        (#"{"stage":{"placed":{},"late":{"minutes":1}},"tips":{}}"#, "typeMismatch stage"),
        (#"{"stage":{"placed":null},"tips":{}}"#, "valueNotFound stage.placed"),
        (#"{"stage":{"placed":[]},"tips":{}}"#, "typeMismatch stage.placed"),
        (#"{"stage":{"late":{}},"tips":{}}"#, "keyNotFound stage.late.minutes"),
        (#"{"stage":{"moved":{"_0":"a","_1":"b"}},"tips":{}}"#, "typeMismatch stage.moved._1"),
    ])
    func enumsWithoutARawTypeDecodeInSwiftsKeyedForm(payload: String, expected: String) {
        #expect(verdict(payload) == expected)
    }

    @Test(arguments: [
        (#"{"stage":{"placed":{}},"tips":{"a":"1"}}"#, "typeMismatch tips.a"),
        (#"{"stage":{"placed":{}},"tips":[]}"#, "typeMismatch tips"),
        (#"{"stage":{"placed":{}},"tips":{"a":null}}"#, "valueNotFound tips.a"),
        (#"{"stage":{"placed":{}},"tips":{},"seats":{"1":"a","+2":"b","03":"c"}}"#, "applied"),
        (#"{"stage":{"placed":{}},"tips":{},"seats":{"1.0":"a"}}"#, "typeMismatch seats.1.0"),
        (#"{"stage":{"placed":{}},"tips":{},"counts":["small",1,"large",2]}"#, "applied"),
        (#"{"stage":{"placed":{}},"tips":{},"counts":["small",1,"large"]}"#, "dataCorrupted counts"),
        (#"{"stage":{"placed":{}},"tips":{},"counts":["medium",1]}"#, "dataCorrupted counts[0]"),
        (#"{"stage":{"placed":{}},"tips":{},"counts":{"small":1}}"#, "typeMismatch counts"),
        (#"{"stage":{"placed":{}},"tips":{},"tags":["a","a"]}"#, "applied"),
        (#"{"stage":{"placed":{}},"tips":{},"small":127,"big":18446744073709549568}"#, "applied"),
        (#"{"stage":{"placed":{}},"tips":{},"small":128}"#, "dataCorrupted small"),
        (#"{"stage":{"placed":{}},"tips":{},"small":1.5}"#, "dataCorrupted small"),
        (#"{"stage":{"placed":{}},"tips":{},"big":-1}"#, "dataCorrupted big"),
        (#"{"stage":{"placed":{}},"tips":{},"ratio":1e39}"#, "dataCorrupted ratio"),
        (#"{"stage":{"placed":{}},"tips":{},"ratio":1e-50}"#, "dataCorrupted ratio"),
        (#"{"stage":{"placed":{}},"tips":{},"paid":1}"#, "typeMismatch paid"),
        (#"{"stage":{"placed":{}},"tips":{},"wait":"5"}"#, "typeMismatch wait"),
    ])
    func dictionariesSetsAndNumbers(payload: String, expected: String) {
        #expect(verdict(payload) == expected)
    }

    @Test func uuidsAndLetsWithADefault() {
        #expect(verdict(#"{"orderID":"e621e1f8-c36c-495a-93fc-0c247a3e6e5f"}"#, as: .attributes) == "applied")
        #expect(verdict(#"{"orderID":"nope"}"#, as: .attributes) == "dataCorrupted orderID")
        #expect(verdict(#"{"orderID":7}"#, as: .attributes) == "typeMismatch orderID")
        #expect(verdict(#"{"orderID":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","version":3}"#, as: .attributes)
                == "applied; key \"version\" is not decoded by OrderAttributes (a let with an initial value, or left out of CodingKeys); the app ignores it")
    }

    @Test func whatNoDecoderCanTakeIsAFileLineError() {
        let color = """
            import SwiftUI
            struct TintAttributes: ActivityAttributes {
                struct ContentState: Codable, Hashable { var tint: Color }
            }
            """
        #expect(throws: DeclarationError.self) { try ActivityDeclaration(swiftSource: color) }
        do {
            _ = try ActivityDeclaration(swiftSource: color)
        } catch {
            #expect(error.description.hasPrefix(#"Attributes.swift:3: unsupported type "Color" for property "tint""#))
        }
        let undeclared = "struct A: ActivityAttributes {\n struct ContentState: Codable, Hashable {\n  var stage: Missing\n }\n}"
        #expect(throws: DeclarationError(file: "Attributes.swift", line: 3, message: #"unsupported type "Missing" for property "stage" (\#(DeclarationResolver.supported))"#)) {
            try ActivityDeclaration(swiftSource: undeclared)
        }
    }
}

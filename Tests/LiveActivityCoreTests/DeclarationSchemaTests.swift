import Foundation
import Testing
@testable import LiveActivityCore

/// What a declaration offers templates (countdown and image candidates) and its JSON Schema (issue 17).
struct DeclarationSchemaTests {
    static let interval = try! ActivityDeclaration(swiftSource: DeclarationFixtures.intervalWorkout)
    static let delivery = try! ActivityDeclaration(swiftSource: DeclarationFixtures.noisy)
    static let emoji = try! ActivityDeclaration(swiftSource: DeclarationFixtures.emoji)

    @Test func countdownAndImageCandidates() {
        #expect(Self.interval.countdownCandidates.map(\.field.key) == ["interval"])
        #expect(Self.interval.imageCandidates.isEmpty)
        #expect(Self.delivery.countdownCandidates.map(\.field.key) == ["eta", "window"])
        #expect(Self.delivery.imageCandidates.map(\.field.key) == ["logo"])
        #expect(Self.emoji.imageCandidates.map { "\($0.part.rawValue).\($0.field.key)" } == ["attributes.image"])
        #expect(Self.emoji.countdownCandidates.isEmpty)
    }

    @Test func protocolFormSchema() throws {
        let schema = Self.interval.jsonSchema(for: .contentState)
        guard case .object(let root) = schema, case .object(let properties)? = root["properties"], case .object(let definitions)? = root["$defs"] else {
            Issue.record("not a schema with properties and $defs: \(schema)")
            return
        }
        #expect(root["$schema"] == .string("https://json-schema.org/draft/2020-12/schema"))
        #expect(root["required"] == .array(["heartRate", "distance", "phase", "interval"].map { .string($0) }))
        #expect(properties["heartRate"] == .object(["type": .string("integer"), "description": .string("Swift: heartRate: Int")]))
        #expect(properties["phase"] == .object(["$ref": .string("#/$defs/Phase"), "description": .string("Swift: phase: Phase")]))
        #expect(definitions["Phase"] == .object(["title": .string("Phase"), "enum": .array(["warm-up", "work", "rest", "cool-down"].map { .string($0) })]))
        guard case .object(let interval)? = properties["interval"], case .object(let bounds)? = interval["properties"] else {
            Issue.record("interval is not an object schema")
            return
        }
        #expect(bounds["start"] == .object(["type": .string("string"), "format": .string("date-time")]))
        #expect(properties["note"] == .object(["anyOf": .array([.object(["type": .string("string")]), .object(["type": .string("null")])]),
                                               "description": .string("Swift: note: String?")]))
    }

    @Test func codableFormSchemaAndNestedDefinitions() throws {
        guard case .object(let root) = Self.delivery.jsonSchema(for: .contentState, form: .codable),
              case .object(let properties)? = root["properties"], case .object(let definitions)? = root["$defs"] else {
            Issue.record("not a schema")
            return
        }
        #expect(Set(definitions.keys) == ["Stage", "DeliveryAttributes.Courier", "DeliveryAttributes.Stop"])
        #expect(properties["status"] != nil && properties["stage"] == nil)
        guard case .object(let eta)? = properties["eta"] else { Issue.record("no eta"); return }
        #expect(eta["type"] == .string("number"))
        guard case .object(let attributes) = Self.delivery.jsonSchema(for: .attributes), case .object(let defs)? = attributes["$defs"],
              case .object(let item)? = defs["Item"], case .object(let itemProperties)? = item["properties"],
              case .object(let count)? = itemProperties["count"] else {
            Issue.record("no Item definition")
            return
        }
        #expect(count["minimum"] == .number(0) && count["maximum"] == .number(255))
        guard case .object(let description) = Self.delivery.jsonDescription() else { Issue.record("no description"); return }
        #expect(description["attributesType"] == .string("DeliveryAttributes"))
    }
}

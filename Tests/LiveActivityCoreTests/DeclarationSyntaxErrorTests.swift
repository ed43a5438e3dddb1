import Testing
@testable import LiveActivityCore

/// Swift that does not compile is refused with `file:line` (issue 29, item 4): a dangling initializer,
/// unbalanced brackets or parentheses, a stored property with neither a type nor a literal; a property whose
/// type Swift infers from a literal is read with that type.
struct DeclarationSyntaxErrorTests {
    private func error(_ source: String) -> String? {
        do {
            _ = try ActivityDeclaration(swiftSource: source)
            return nil
        } catch {
            return error.description
        }
    }

    private func state(_ body: String) -> String {
        "struct A: ActivityAttributes {\n  struct ContentState: Codable, Hashable {\n\(body)\n  }\n}\n"
    }

    @Test(arguments: [
        ("    var x: Int =", #"Attributes.swift:3: property "x" has "=" but no initial value"#),
        ("    var x: Int =\n    var y: Int", #"Attributes.swift:3: property "x" has "=" but no initial value"#),
        ("    var x: Int = , y: Int", #"Attributes.swift:3: property "x" has "=" but no initial value"#),
        ("    var x: [Int", #"Attributes.swift:3: unbalanced brackets: the [ opened here is never closed by ]"#),
        ("    var x: Int = (1 + 2", #"Attributes.swift:3: unbalanced parentheses: the ( opened here is never closed by )"#),
        ("    var x: Int = f(1]", #"Attributes.swift:3: unbalanced parentheses: found ] where ) closes the ( of line 3"#),
        ("    var x: Int\n    )", #"Attributes.swift:4: unbalanced parentheses: ) without a matching ("#),
        ("    var x: Int\n    ]", #"Attributes.swift:4: unbalanced brackets: ] without a matching ["#),
        ("    var x", #"Attributes.swift:3: property "x" has no type annotation; write "var x: Type""#),
        ("    var x = makeX()", #"Attributes.swift:3: property "x" has no type annotation; write "var x: Type""#),
    ])
    func swiftThatDoesNotCompileIsRefused(body: String, expected: String) {
        #expect(error(state(body)) == expected)
    }

    @Test func aTypeInferredFromALiteralIsRead() throws {
        let declaration = try ActivityDeclaration(swiftSource: state("    var count = 0\n    var ratio = -1.5\n    var name = \"x\"\n    var on = true"))
        #expect(declaration.contentState.fields.map(\.type) == [.integer("Int"), .double("Double"), .string, .bool])
        #expect(declaration.contentState.fields.allSatisfy { $0.hasDefault })
    }

    @Test func initialValuesSpanningLinesStillRead() throws {
        let declaration = try ActivityDeclaration(swiftSource: state("    var x: Int =\n        3\n    var y: [Int] = [\n        1,\n        2,\n    ]\n    var z: Int = .zero"))
        #expect(declaration.contentState.fields.map(\.name) == ["x", "y", "z"])
    }
}

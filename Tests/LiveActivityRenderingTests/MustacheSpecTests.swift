import Foundation
import KindFixtures
import LiveActivityCore
import Testing
@testable import LiveActivityRendering

/// One rendering case from the vendored spec files or our extra file.
struct MustacheCase: Sendable, CustomTestStringConvertible {
    let file: String
    let name: String
    let template: String
    let data: JSONValue
    let partials: [String: String]
    let expected: String
    var testDescription: String { "\(file): \(name)" }
}

/// One template that must not parse, with its exact message.
struct MustacheErrorCase: Sendable, CustomTestStringConvertible {
    let name: String
    let templateName: String
    let template: String
    let error: String
    var testDescription: String { name }
}

/// Reads the fixtures in Tests/fixtures (found from this file's path).
enum MustacheFixtures {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures")
    static let specFiles = ["interpolation", "sections", "inverted", "comments", "delimiters", "partials"]

    static func json(_ path: String) -> JSONValue {
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(path).path),
              let value = try? JSONValue.parse(data) else { return .null }
        return value
    }

    static func cases(in value: JSONValue, file: String) -> [MustacheCase] {
        guard case .object(let root) = value, case .array(let tests)? = root["tests"] else { return [] }
        return tests.compactMap { test in
            guard case .object(let t) = test, case .string(let name)? = t["name"], case .string(let template)? = t["template"],
                  case .string(let expected)? = t["expected"] else { return nil }
            var partials: [String: String] = [:]
            if case .object(let p)? = t["partials"] {
                for (key, value) in p { if case .string(let text) = value { partials[key] = text } }
            }
            return MustacheCase(file: file, name: name, template: template, data: t["data"] ?? .null, partials: partials,
                                expected: expected)
        }
    }

    static let spec: [MustacheCase] = specFiles.flatMap { cases(in: json("mustache-spec/\($0).json"), file: $0) }
    static let extra: [MustacheCase] = cases(in: json("mustache-extra.json"), file: "extra")
    static let errors: [MustacheErrorCase] = {
        guard case .object(let root) = json("mustache-extra.json"), case .array(let list)? = root["errors"] else { return [] }
        return list.compactMap { item in
            guard case .object(let e) = item, case .string(let name)? = e["name"], case .string(let templateName)? = e["templateName"],
                  case .string(let template)? = e["template"], case .string(let error)? = e["error"] else { return nil }
            return MustacheErrorCase(name: name, templateName: templateName, template: template, error: error)
        }
    }()
}

func renderCase(_ c: MustacheCase) throws -> String {
    var partials: [String: MustacheTemplate] = [:]
    for (name, source) in c.partials { partials[name] = try MustacheTemplate(parsing: source, name: name) }
    return try MustacheTemplate(parsing: c.template, name: c.name).render(c.data, partials: partials)
}

struct MustacheSpecTests {
    @Test func fixturesAreFound() {
        #expect(MustacheFixtures.spec.count > 100, "spec cases under \(MustacheFixtures.directory.path)")
        #expect(MustacheFixtures.extra.count > 20)
        #expect(MustacheFixtures.errors.count > 10)
    }

    @Test(arguments: MustacheFixtures.spec)
    func spec(_ c: MustacheCase) throws {
        #expect(try renderCase(c) == c.expected)
    }

    @Test(arguments: MustacheFixtures.extra)
    func extra(_ c: MustacheCase) throws {
        #expect(try renderCase(c) == c.expected)
    }

    @Test(arguments: MustacheFixtures.errors)
    func parseErrors(_ c: MustacheErrorCase) {
        #expect(throws: TemplateError.self) { try MustacheTemplate(parsing: c.template, name: c.templateName) }
        do {
            _ = try MustacheTemplate(parsing: c.template, name: c.templateName)
        } catch {
            #expect(error.description == c.error)
        }
    }

    @Test func errorCarriesNameLineAndColumn() throws {
        do {
            _ = try MustacheTemplate(parsing: "<div>\n  <p>{{#items}}\n</div>", name: "lock-screen.html")
            Issue.record("parsed")
        } catch {
            #expect(error == TemplateError(templateName: "lock-screen.html", line: 2, column: 6, reason: "unclosed section \"items\""))
            #expect(error.description == "lock-screen.html:2:6: unclosed section \"items\"")
        }
    }

    @Test(arguments: [(3.0, "3"), (3.5, "3.5"), (-0.0, "0"), (1e21, "1e+21"), (1e-7, "1e-7"), (0.1, "0.1"),
                      (-123.25, "-123.25"), (1e20, "100000000000000000000"), (2.5e-6, "0.0000025"),
                      (Double.greatestFiniteMagnitude, "1.7976931348623157e+308"), (Double.nan, "NaN"),
                      (-Double.infinity, "-Infinity")])
    func numbersAsJavaScriptWritesThem(number: Double, text: String) {
        #expect(JSONValue.javaScriptText(number) == text)
    }

    @Test func templateCompilesOnceAndRendersMany() throws {
        let template = try MustacheTemplate(parsing: "{{#rows}}<li>{{name}}</li>{{/rows}}", name: "list")
        for count in [0, 1, 3] {
            let rows = JSONValue.array((0..<count).map { .object(["name": .string("r\($0)")]) })
            #expect(template.render(.object(["rows": rows])) == (0..<count).map { "<li>r\($0)</li>" }.joined())
        }
    }
}

/// Random and garbage templates: parsing either succeeds or throws a TemplateError, and rendering never traps.
struct MustacheRobustnessTests {
    static let pieces = ["{{", "}}", "{", "}", "{{{", "}}}", "#", "^", "/", "!", ">", "=", "&", ".", "a", "b", "a.b",
                         " ", "\t", "\n", "\r\n", "\r", "é", "😀", "{{#a}}", "{{/a}}", "{{^b}}", "{{/b}}", "{{>p}}",
                         "{{>q}}", "{{=<% %>=}}", "<%", "%>", "{{.}}", "{{a.b}}", "{{{a}}}", "{{& b}}", "{{! x }}",
                         "  {{#a}}\n", "  {{/a}}\n", "  {{>p}}\n", "=}}", "{{=", "\u{0}"]

    static let context: JSONValue = .object([
        "a": .array([.object(["b": .string("<&>")]), .number(1.5), .bool(true), .array([.null])]),
        "b": .object(["b": .number(-0.0)]),
    ])

    @Test func randomTemplatesNeverTrap() {
        var random = SplitMix64(seed: 17)
        var parsed = 0
        for _ in 0..<400 {
            let length = Int.random(in: 0...24, using: &random)
            let source = (0..<length).map { _ in Self.pieces.randomElement(using: &random)! }.joined()
            guard let template = try? MustacheTemplate(parsing: source, name: "fuzz") else { continue }
            parsed += 1
            // Partials that include themselves and each other.
            let partials = ["p": template, "q": (try? MustacheTemplate(parsing: "{{#a}}{{>p}}{{>q}}{{/a}}", name: "q")) ?? template]
            _ = template.render(Self.context, partials: partials)
        }
        #expect(parsed > 20)
    }

    @Test func garbageBytesNeverTrap() {
        var random = SplitMix64(seed: 42)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...64, using: &random)).map { _ in
                [UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "#"), UInt8(ascii: "/"), UInt8(ascii: "\n"),
                 UInt8.random(in: 0...255, using: &random)].randomElement(using: &random)!
            }
            let source = String(decoding: bytes, as: UTF8.self)
            do {
                let template = try MustacheTemplate(parsing: source, name: "garbage")
                _ = template.render(Self.context, partials: ["p": template])
            } catch {
                #expect(error.line >= 1 && error.column >= 1)
            }
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let source = String(repeating: "{{#a}}", count: 100_000)
        #expect(throws: TemplateError.self) { try MustacheTemplate(parsing: source, name: "deep") }
    }

    @Test func selfRecursivePartialStops() throws {
        let template = try MustacheTemplate(parsing: "{{#a}}<{{>self}}>{{/a}}", name: "self")
        let out = template.render(.object(["a": .bool(true)]), partials: ["self": template])
        let half = MustacheTemplate.maximumDepth / 2
        #expect(out == String(repeating: "<", count: half) + String(repeating: ">", count: half))
    }
}

import Foundation
import Testing
@testable import LiveActivityCore

/// Reading an app's `ActivityAttributes` from its Swift source (issue 17): what is read, what is skipped, and
/// every reader error with its `file:line`.
struct DeclarationTests {
    private func read(_ source: String) throws(DeclarationError) -> ActivityDeclaration {
        try ActivityDeclaration(swiftSource: source)
    }

    private func error(_ source: String) -> String? {
        do {
            _ = try read(source)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func readsTheIssueExample() throws {
        let declaration = try read(DeclarationFixtures.intervalWorkout)
        #expect(declaration.attributesType == "IntervalWorkoutAttributes")
        #expect(declaration.attributes.fields.map(\.key) == ["athlete", "plan"])
        #expect(declaration.attributes.fields.map(\.type) == [.string, .enumeration("IntervalWorkoutAttributes.Plan")])
        #expect(declaration.contentState.name == "IntervalWorkoutAttributes.ContentState")
        #expect(declaration.contentState.fields.map(\.type) == [
            .integer("Int"), .double("Double"), .enumeration("Phase"), .closedDateRange, .optional(.string),
        ])
        #expect(declaration.contentState.fields.map(\.line) == [6, 7, 8, 9, 10])
        #expect(declaration.enums["IntervalWorkoutAttributes.Plan"]?.cases.map(\.rawValue) == [.string("5x5"), .string("pyramid"), .string("tabata")])
        #expect(declaration.enums["Phase"]?.cases.map(\.rawValue) == [.string("warm-up"), .string("work"), .string("rest"), .string("cool-down")])
    }

    @Test func readsTheReferenceWorkoutApp() throws {
        let declaration = try read(DeclarationFixtures.workoutWidget)
        #expect(declaration.attributesType == "WorkoutWidgetAttributes")
        #expect(declaration.contentState.fields.map(\.key) == ["workoutTimer"])
        #expect(declaration.contentState.fields.first?.type == .closedDateRange)
        #expect(declaration.attributes.fields.first?.type == .enumeration("Workout"))
        #expect(declaration.enums["Workout"]?.rawType == .integer("Int"))
        #expect(declaration.enums["Workout"]?.cases.map(\.rawValue) == [.number(0), .number(1), .number(2)])
    }

    @Test func readsTheEmojiKind() throws {
        let declaration = try read(DeclarationFixtures.emoji)
        #expect(declaration.attributes.fields.map(\.key) == ["startTime", "endTime", "name", "image"])
        #expect(declaration.attributes.fields.map(\.type) == [.date, .date, .string, .optional(.url)])
        #expect(declaration.contentState.fields.map(\.type) == [.string])
    }

    @Test func skipsCommentsAttributesMethodsComputedAndStaticMembers() throws {
        let declaration = try read(DeclarationFixtures.noisy)
        #expect(declaration.attributesType == "DeliveryAttributes")
        // CodingKeys rename `stage` to "status"; `progress` is left out of them (it has a default), `kind` is a
        // `let` with a value; `label` and `shouted` are computed, `preview` static.
        let state = declaration.contentState
        #expect(state.fields.map(\.name) == ["stage", "eta", "window", "courier", "stops"])
        #expect(state.fields.map(\.key) == ["status", "eta", "window", "courier", "stops"])
        #expect(state.ignored == ["progress", "kind"])
        #expect(state.fields.map(\.type) == [
            .enumeration("Stage"), .date, .optional(.dateRange), .structure("DeliveryAttributes.Courier"),
            .array(.structure("DeliveryAttributes.Stop")),
        ])
        // `#if` keeps its first branch; `Array<Item>`, `Optional<URL>` and module-qualified names are read.
        #expect(declaration.attributes.fields.map(\.key) == ["orderNumber", "store", "items", "logo"])
        #expect(declaration.attributes.fields.map(\.type) == [.integer("Int64"), .string, .array(.structure("Item")), .optional(.url)])
        #expect(declaration.structs["Item"]?.fields.map(\.type) == [.string, .integer("UInt8"), .optional(.array(.string))])
        #expect(declaration.structs["DeliveryAttributes.Courier"]?.fields.map(\.key) == ["name", "phone"])
        #expect(declaration.enums["Stage"]?.cases.map(\.rawValue) == [.string("packed"), .string("on-the-way"), .string("delivered")])
        // The view's `Color` is never reached, so it is no error.
    }

    @Test func integerRawValuesCountUpFromThePreviousCase() throws {
        let declaration = try read("""
            struct A: ActivityAttributes {
                struct ContentState: Codable, Hashable { var level: Level; var count = 0; var ratio = 0.5; var on = true }
                enum Level: Int, Codable { case low = 1, mid, high = 10, top; case negative = -3, after }
            }
            """)
        #expect(declaration.enums["A.Level"]?.cases.map(\.rawValue) == [1, 2, 10, 11, -3, -2].map { .number($0) })
        #expect(declaration.contentState.fields.map(\.type) == [.enumeration("A.Level"), .integer("Int"), .double("Double"), .bool])
    }

    @Test func readsContentStateFromAnExtensionOrATypealias() throws {
        let fromExtension = try read("""
            struct A: ActivityAttributes { var name: String }
            extension A { struct ContentState: Codable, Hashable { var value: Int } }
            """)
        #expect(fromExtension.contentState.fields.map(\.key) == ["value"])
        let fromAlias = try read("""
            struct Progress: Codable, Hashable { var done: Int; var total: Int }
            struct A: ActivityAttributes { typealias ContentState = Progress; var name: String }
            """)
        #expect(fromAlias.contentState.name == "Progress")
        #expect(fromAlias.contentState.fields.map(\.key) == ["done", "total"])
    }

    @Test func recursiveStructsThroughArrays() throws {
        let declaration = try read("""
            struct A: ActivityAttributes {
                struct ContentState: Codable, Hashable { var root: Node }
                struct Node: Codable, Hashable { var name: String; var children: [Node] }
            }
            """)
        #expect(declaration.structs["A.Node"]?.fields.map(\.type) == [.string, .array(.structure("A.Node"))])
    }

    @Test func picksOneOfSeveralAttributesByName() throws {
        let source = """
            struct A: ActivityAttributes { struct ContentState: Codable, Hashable { var a: Int } }
            struct B: ActivityAttributes { struct ContentState: Codable, Hashable { var b: Int } }
            """
        #expect(error(source) == #"Attributes.swift:2: several structs conform to ActivityAttributes ("A", "B"); to read "A", write kind.json beside this file: {"swiftNames": ["A"]}"#)
        #expect(try ActivityDeclaration(swiftSource: source, attributesType: "B").contentState.fields.map(\.key) == ["b"])
    }

    @Test(arguments: [
        // The example of the issue, word for word.
        ("struct A: ActivityAttributes {\n    struct ContentState: Codable, Hashable {\n        var tint: Color\n    }\n}",
         #"Attributes.swift:3: unsupported type "Color" for property "tint" (\#(DeclarationResolver.supported))"#),
        ("import Foundation\nstruct A: Codable { var a: Int }",
         #"Attributes.swift:1: no struct conforms to ActivityAttributes (expected "struct …Attributes: ActivityAttributes { struct ContentState: Codable, Hashable { … } … }")"#),
        ("\nstruct A: ActivityAttributes {\n    var name: String\n}",
         #"Attributes.swift:2: struct "A" has no nested ContentState (ActivityAttributes requires "struct ContentState: Codable, Hashable { … }" inside it)"#),
        ("struct A: ActivityAttributes {\n    struct ContentState: Codable, Hashable {\n        var a: Int\n}",
         "Attributes.swift:1: unbalanced braces: the { opened here is never closed"),
        ("struct A: ActivityAttributes { struct ContentState: Codable, Hashable { var a: Int } }\n}",
         "Attributes.swift:2: unbalanced braces: } without a matching {"),
        ("struct A: ActivityAttributes {\n  struct ContentState: Codable, Hashable {\n    var a: Int\n    var a: String\n  }\n}",
         #"Attributes.swift:4: duplicate property "a" in ContentState (first declared on line 3)"#),
        ("struct A: ActivityAttributes {\n  let s = \"never closed\n}", "Attributes.swift:2: unterminated string literal"),
        ("struct A: ActivityAttributes {}\n/* open /* nested */", "Attributes.swift:2: unterminated block comment (/* is never closed by */)"),
        ("struct A: ActivityAttributes {\n  struct ContentState: Codable, Hashable { var k: Kind }\n  enum Kind: Double, Codable { case a }\n}",
         #"Attributes.swift:3: enum "Kind" has raw type Double; only String and integer raw types (or no raw type) are supported"#),
        ("struct A: ActivityAttributes {\n  struct ContentState: Codable, Hashable { var k: Kind }\n  enum Kind: String, Codable {\n    case a(Int)\n  }\n}",
         #"Attributes.swift:4: case "a" of enum Kind has associated values, which an enum with a raw type cannot have"#),
        ("struct A: ActivityAttributes {\n  struct ContentState: Codable, Hashable { var k: Kind }\n  enum Kind: String, Codable { case a = 1 }\n}",
         #"Attributes.swift:3: raw value 1 of case "a" is not a String literal"#),
        ("struct A: ActivityAttributes {\n  struct ContentState: Codable, Hashable {\n    var a: Int\n    var b: Int\n    enum CodingKeys: String, CodingKey { case a }\n  }\n}",
         #"Attributes.swift:4: property "b" is not in ContentState.CodingKeys and has no initial value (Swift cannot synthesize Decodable)"#),
        ("struct A: ActivityAttributes {\n  struct ContentState: Codable, Hashable {\n    var a: Int\n    enum CodingKeys: String, CodingKey { case a, z }\n  }\n}",
         #"Attributes.swift:4: CodingKeys case "z" matches no stored property of ContentState"#),
        ("struct A: ActivityAttributes {\n  struct ContentState: Codable, Hashable {\n    var onTap: () -> Void\n  }\n}",
         #"Attributes.swift:3: unsupported type "() -> Void" for property "onTap" (\#(DeclarationResolver.supported))"#),
        ("struct A: ActivityAttributes {\n  struct ContentState: Codable, Hashable {\n    var scores: [String: Color]\n  }\n}",
         #"Attributes.swift:3: unsupported type "Color" for property "scores" (\#(DeclarationResolver.supported))"#),
        ("struct A: ActivityAttributes {\n  struct ContentState: Codable, Hashable {\n    var span: ClosedRange<Int>\n  }\n}",
         #"Attributes.swift:3: unsupported type "ClosedRange<Int>" for property "span" (ranges are supported of Date only) (\#(DeclarationResolver.supported))"#),
        ("struct A: ActivityAttributes {\n  struct ContentState: Codable, Hashable {\n    var when = Date()\n  }\n}",
         #"Attributes.swift:3: property "when" has no type annotation; write "var when: Type""#),
        ("struct A: ActivityAttributes {\n  struct ContentState: Codable, Hashable {\n    var a: Int\n    init(from decoder: Decoder) throws { a = 1 }\n  }\n}",
         #"Attributes.swift:2: struct "ContentState" decodes itself with init(from:); only synthesized Codable conformances can be mirrored"#),
    ])
    func readerErrorsNameTheFileAndLine(source: String, expected: String) {
        #expect(error(source) == expected)
    }

    @Test func aTypeFromAnotherFileIsNamed() {
        let alone = DeclarationFixtures.workoutWidget.components(separatedBy: "enum Workout")[0]
        #expect(error(alone)?.hasPrefix(#"Attributes.swift:18: unsupported type "Workout" for property "workout""#) == true, "\(error(alone) ?? "")")
        #expect(throws: DeclarationError.self) { try ActivityDeclaration(swiftSource: alone, file: "WorkoutWidgetAttributes.swift") }
        do {
            _ = try ActivityDeclaration(swiftSource: alone, file: "WorkoutWidgetAttributes.swift")
        } catch {
            #expect(error.file == "WorkoutWidgetAttributes.swift" && error.line == 18)
            #expect(error.protocolError(field: "source").field == "source")
        }
    }

    @Test func tokenizerKeepsStringsAndDropsComments() throws {
        let tokens = try SwiftTokenizer.tokenize(#"""
            a /* x /* y */ z */ "b\n\(c("}"))" #"r"aw\n"# ##"two"#"## """
              multi
              """ // tail
            `default` -> 0x1F
            """#, file: "t.swift")
        #expect(tokens.map(\.kind) == [.identifier, .string, .string, .string, .string, .identifier, .punctuation, .number, .end])
        #expect(tokens[1].text == "b\n\\(…)")
        #expect(tokens[2].text == #"r"aw\n"#)
        #expect(tokens[3].text == ##"two"#"##)
        #expect(tokens[5].text == "default" && tokens[5].line == 4)
    }

    @Test func neverTrapsOrLoopsOnFragments() {
        // Prefixes of a real file (every cut is an unfinished declaration) and some hostile inputs.
        let source = DeclarationFixtures.noisy
        var inputs = stride(from: 0, to: source.count, by: 7).map { String(source.prefix($0)) }
        inputs += ["}", "{", "struct", "struct A: ActivityAttributes {", "var", "enum E: Int { case a = ", "\"\\(", "#", "##\"",
                   "struct A<T: ActivityAttributes", "@", "typealias A = A\nstruct S: ActivityAttributes { struct ContentState: Codable, Hashable { var a: A } }",
                   String(repeating: "(", count: 5000), String(repeating: "struct A {", count: 200), String(repeating: "\"\\(", count: 100),
                   "struct A: ActivityAttributes { struct ContentState: Codable, Hashable { var a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[Int" ]
        for input in inputs {
            _ = try? ActivityDeclaration(swiftSource: input)
        }
    }
}

extension DeclarationTests {
    @Test func onlyAnInitFromADecoderIsHandWrittenDecoding() throws {
        let declaration = try ActivityDeclaration(swiftSource: """
            struct A: ActivityAttributes {
                struct ContentState: Codable, Hashable {
                    var at: Date
                    init(from date: Date) { at = date }
                    init(at: Date) { self.at = at }
                }
            }
            """)
        #expect(declaration.contentState.fields.map(\.key) == ["at"])
        #expect(throws: DeclarationError.self) {
            try ActivityDeclaration(swiftSource: """
                struct A: ActivityAttributes {
                    struct ContentState: Codable, Hashable { var at: Date }
                    public init(from decoder: any Swift.Decoder) throws { }
                }
                """)
        }
    }
}

extension DeclarationTests {
    @Test func conformanceDeclaredInAnExtension() throws {
        let declaration = try ActivityDeclaration(swiftSource: """
            struct PizzaDeliveryAttributes {
                public typealias PizzaDeliveryStatus = ContentState
                public struct ContentState: Codable & Hashable {
                    var driverName: String
                    var deliveryTimer: ClosedRange<Date>
                    var status: Status
                }
                enum Status: String, Codable, CaseIterable {
                    case baking, onTheWay = "on the way"
                    var title: String {
                        switch self {
                        case .baking: return "Baking"
                        case .onTheWay: return "On the way"
                        }
                    }
                }
                var numberOfPizzas: Swift.Int
                var totalAmount: String
                let orderNumber: String
            }
            extension PizzaDeliveryAttributes: ActivityAttributes {}
            """)
        #expect(declaration.attributesType == "PizzaDeliveryAttributes")
        #expect(declaration.attributes.fields.map(\.key) == ["numberOfPizzas", "totalAmount", "orderNumber"])
        #expect(declaration.contentState.fields.map(\.type) == [.string, .closedDateRange, .enumeration("PizzaDeliveryAttributes.Status")])
        #expect(declaration.enums["PizzaDeliveryAttributes.Status"]?.cases.map(\.name) == ["baking", "onTheWay"])
    }
}

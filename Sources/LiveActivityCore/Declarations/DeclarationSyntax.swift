/// A type as written in the source, before names are resolved (`[Lap]`, `ClosedRange<Date>`, `Phase?`).
indirect enum TypeSyntax: Sendable, Equatable {
    /// A possibly qualified name with generic arguments: `Swift.Array<Int>` is `(["Swift", "Array"], [Int])`.
    case named([String], [TypeSyntax])
    /// `[T]`.
    case array(TypeSyntax)
    /// `[K: V]`.
    case dictionary(TypeSyntax, TypeSyntax)
    /// `T?` or `T!`.
    case optional(TypeSyntax)
    /// Anything else (tuples, functions, `some P`, compositions), as written.
    case other(String)

    /// The type as Swift would print it.
    var text: String {
        switch self {
        case .named(let path, let arguments):
            path.joined(separator: ".") + (arguments.isEmpty ? "" : "<" + arguments.map(\.text).joined(separator: ", ") + ">")
        case .array(let element): "[\(element.text)]"
        case .dictionary(let key, let value): "[\(key.text): \(value.text)]"
        case .optional(let wrapped): "\(wrapped.text)?"
        case .other(let text): text
        }
    }
}

/// A stored-property candidate (`var`/`let` that is not `static` and not computed).
struct PropertySyntax: Sendable, Equatable {
    var name: String
    var line: Int
    var type: TypeSyntax?
    var isLet: Bool
    var hasInitialValue: Bool
    /// The initial value's type when it is a lone literal (`= 3` → `Int`), for properties without an annotation.
    var literalType: String?
}

/// One `case` of an enum.
struct CaseSyntax: Sendable, Equatable {
    enum RawValue: Sendable, Equatable {
        case string(String)
        case integer(Int)
        /// A raw value the reader cannot use (a float, an expression), as written.
        case other(String)
    }

    /// One associated value: `minutes: Int` (label `minutes`) or `Int` (no label).
    struct AssociatedValue: Sendable, Equatable {
        var label: String?
        var type: TypeSyntax
    }

    var name: String
    var line: Int
    var rawValue: RawValue?
    var hasAssociatedValues: Bool
    /// The associated values read from `(…)`, in order.
    var associatedValues: [AssociatedValue] = []
}

/// A struct, enum or typealias declared in the file, under its qualified name (`Outer.Inner`).
struct TypeDeclarationSyntax: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case structure
        case enumeration
        case alias(TypeSyntax)
        /// A class, actor or protocol: known to exist, never decoded.
        case other(String)
    }

    var kind: Kind
    /// Qualified name components: `["IntervalWorkoutAttributes", "ContentState"]`.
    var path: [String]
    var line: Int
    /// What follows `:` (`ActivityAttributes`, `String, Codable`), plus conformances added by extensions.
    var inherits: [TypeSyntax] = []
    var isGeneric = false
    var properties: [PropertySyntax] = []
    var cases: [CaseSyntax] = []
    /// Whether the body declares `init(from:)` (hand-written decoding, which the reader cannot mirror).
    var hasCustomDecoder = false

    var name: String { path.last ?? "" }
    var qualifiedName: String { path.joined(separator: ".") }
}

/// Everything the parser found: type declarations by qualified name, in source order.
struct SourceSyntax: Sendable {
    var types: [String: TypeDeclarationSyntax] = [:]
    var order: [String] = []
    /// Conformances added by `extension Name: Protocol`, by the extended name as written.
    var extensionConformances: [String: [TypeSyntax]] = [:]
}

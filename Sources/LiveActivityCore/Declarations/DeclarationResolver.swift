/// Turns parsed syntax into an ``ActivityDeclaration``: finds the `ActivityAttributes` struct and its
/// `ContentState`, resolves each property's type against the file's own declarations and the supported
/// standard types, and applies synthesized `Codable`'s rules (`CodingKeys`, `let` with an initial value).
///
/// Only what the two structs reach is checked, so unrelated code in the file (views, other types) never
/// causes an error.
struct DeclarationResolver {
    let syntax: SourceSyntax
    let file: String
    var structs: [String: DeclaredStruct] = [:]
    var enums: [String: DeclaredEnum] = [:]
    var resolving: Set<String> = []

    static let supported = "supported: String, Bool, Int and Int8…UInt64, Double, Float, Decimal, Date, URL, UUID, "
        + "ClosedRange<Date>, Range<Date>, arrays, sets, dictionaries, optionals, typealiases, and structs and enums declared in this file"

    /// How the error for several `ActivityAttributes` structs in one file begins.
    static let severalStructs = "several structs conform to ActivityAttributes"

    init(syntax: SourceSyntax, file: String) {
        self.syntax = syntax
        self.file = file
    }

    func fail(_ line: Int, _ message: String) -> DeclarationError {
        DeclarationError(file: file, line: line, message: message)
    }

    // MARK: - The root

    /// The declaration of the `ActivityAttributes` struct named `name` (or the only one).
    mutating func declaration(named name: String?) throws(DeclarationError) -> ActivityDeclaration {
        let conforming = syntax.order.compactMap { syntax.types[$0] }.filter { $0.kind == .structure && conformsToActivityAttributes($0) }
        let root: TypeDeclarationSyntax
        if let name {
            guard let found = conforming.first(where: { $0.name == name || $0.qualifiedName == name }) else {
                let names = conforming.map { "\"\($0.qualifiedName)\"" }.joined(separator: ", ")
                throw fail(1, "no struct named \"\(name)\" conforms to ActivityAttributes\(names.isEmpty ? "" : " (found: \(names))")")
            }
            root = found
        } else {
            guard let first = conforming.first else {
                throw fail(1, "no struct conforms to ActivityAttributes (expected \"struct …Attributes: ActivityAttributes { "
                              + "struct ContentState: Codable, Hashable { … } … }\")")
            }
            guard conforming.count == 1 else {
                let names = conforming.map { "\"\($0.qualifiedName)\"" }.joined(separator: ", ")
                throw fail(conforming[1].line, "\(Self.severalStructs) (\(names)); to read \"\(first.qualifiedName)\", write kind.json beside "
                                               + "this file: " + #"{"swiftNames": ["\#(first.qualifiedName)"]}"#)
            }
            root = first
        }
        guard let stateSyntax = syntax.types[root.qualifiedName + ".ContentState"] else {
            throw fail(root.line, "struct \"\(root.name)\" has no nested ContentState (ActivityAttributes requires "
                                  + "\"struct ContentState: Codable, Hashable { … }\" inside it)")
        }
        let attributes = try structure(root, usedAt: root.line, property: nil)
        let stateType = try resolve(.named(stateSyntax.path, []), scope: root.path, line: stateSyntax.line, property: nil, depth: 0)
        guard case .structure(let stateName) = stateType, let state = structs[stateName] else {
            throw fail(stateSyntax.line, "\(root.name).ContentState must be a struct")
        }
        return ActivityDeclaration(attributesType: root.name, attributes: attributes, contentState: state, structs: structs, enums: enums)
    }

    private func conformsToActivityAttributes(_ declaration: TypeDeclarationSyntax) -> Bool {
        let inherited = declaration.inherits + (syntax.extensionConformances[declaration.qualifiedName] ?? [])
        return inherited.contains {
            if case .named(let path, _) = $0 { return path.last == "ActivityAttributes" }
            return false
        }
    }

    // MARK: - Types

    /// The declaration that `path` names from inside `scope` (innermost scope first), with its qualified name.
    private func lookup(_ path: [String], scope: [String]) -> TypeDeclarationSyntax? {
        guard let first = path.first else { return nil }
        for length in stride(from: scope.count, through: 0, by: -1) {
            let start = Array(scope.prefix(length)) + [first]
            guard syntax.types[start.joined(separator: ".")] != nil else { continue }
            return syntax.types[(start + path.dropFirst()).joined(separator: ".")]
        }
        return nil
    }

    func unsupported(_ type: TypeSyntax, _ property: String?, line: Int, note: String = "") -> DeclarationError {
        let subject = property.map { " for property \"\($0)\"" } ?? ""
        return fail(line, "unsupported type \"\(type.text)\"\(subject)\(note) (\(Self.supported))")
    }

    /// Resolves a written type in `scope` (the qualified path of the type the property is declared in).
    mutating func resolve(_ type: TypeSyntax, scope: [String], line: Int, property: String?, depth: Int) throws(DeclarationError) -> DeclaredType {
        guard depth <= 32 else { throw fail(line, "type \"\(type.text)\" is too deeply nested or its typealiases refer to each other") }
        switch type {
        case .optional(let wrapped):
            return .optional(try resolve(wrapped, scope: scope, line: line, property: property, depth: depth + 1))
        case .array(let element):
            return .array(try resolve(element, scope: scope, line: line, property: property, depth: depth + 1))
        case .dictionary(let key, let value):
            return .dictionary(key: try resolve(key, scope: scope, line: line, property: property, depth: depth + 1),
                               value: try resolve(value, scope: scope, line: line, property: property, depth: depth + 1))
        case .other:
            throw unsupported(type, property, line: line)
        case .named(var path, let arguments):
            if let declared = lookup(path, scope: scope) {
                return try resolve(declared, written: type, arguments: arguments, line: line, property: property, depth: depth)
            }
            if path.count == 2, ["Swift", "Foundation", "CoreGraphics", "CoreFoundation"].contains(path[0]) { path.removeFirst() }
            guard path.count == 1 else { throw unsupported(type, property, line: line) }
            return try standard(path[0], arguments, written: type, scope: scope, line: line, property: property, depth: depth)
        }
    }

    private mutating func resolve(_ declared: TypeDeclarationSyntax, written: TypeSyntax, arguments: [TypeSyntax], line: Int,
                                  property: String?, depth: Int) throws(DeclarationError) -> DeclaredType {
        switch declared.kind {
        case .structure:
            guard arguments.isEmpty, !declared.isGeneric else {
                throw unsupported(written, property, line: line, note: " (generic structs are not supported)")
            }
            _ = try structure(declared, usedAt: line, property: property)
            return .structure(declared.qualifiedName)
        case .enumeration:
            guard arguments.isEmpty else { throw unsupported(written, property, line: line) }
            try enumeration(declared, depth: depth)
            return .enumeration(declared.qualifiedName)
        case .alias(let target):
            return try resolve(target, scope: Array(declared.path.dropLast()), line: line, property: property, depth: depth + 1)
        case .other(let keyword):
            throw unsupported(written, property, line: line, note: " (a \(keyword), not a struct)")
        }
    }

    private static let integers: Set<String> = ["Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64"]
    private static let floats: Set<String> = ["Double", "Float", "Float32", "Float64", "CGFloat", "TimeInterval"]

    private mutating func standard(_ name: String, _ arguments: [TypeSyntax], written: TypeSyntax, scope: [String], line: Int,
                                   property: String?, depth: Int) throws(DeclarationError) -> DeclaredType {
        switch (name, arguments.count) {
        case ("String", 0): return .string
        case ("Bool", 0): return .bool
        case ("Date", 0): return .date
        case ("URL", 0): return .url
        case ("UUID", 0): return .uuid
        case ("Decimal", 0): return .decimal
        case ("Set", 1):
            return .set(try resolve(arguments[0], scope: scope, line: line, property: property, depth: depth + 1))
        case ("Dictionary", 2):
            return .dictionary(key: try resolve(arguments[0], scope: scope, line: line, property: property, depth: depth + 1),
                               value: try resolve(arguments[1], scope: scope, line: line, property: property, depth: depth + 1))
        case (_, 0) where Self.integers.contains(name): return .integer(name)
        case (_, 0) where Self.floats.contains(name): return .double(name)
        case ("Array", 1):
            return .array(try resolve(arguments[0], scope: scope, line: line, property: property, depth: depth + 1))
        case ("Optional", 1):
            return .optional(try resolve(arguments[0], scope: scope, line: line, property: property, depth: depth + 1))
        case ("ClosedRange", 1), ("Range", 1):
            guard (try? resolve(arguments[0], scope: scope, line: line, property: property, depth: depth + 1)) == .date else {
                throw unsupported(written, property, line: line, note: " (ranges are supported of Date only)")
            }
            return name == "Range" ? .dateRange : .closedDateRange
        default:
            throw unsupported(written, property, line: line)
        }
    }
}

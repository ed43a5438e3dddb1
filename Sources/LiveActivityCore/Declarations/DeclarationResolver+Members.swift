/// Structs (stored properties, `CodingKeys`) and raw-value enums, with synthesized `Codable`'s rules.
extension DeclarationResolver {
    /// Deepest chain of structs inside structs accepted.
    static let maximumNesting = 64

    /// The struct as synthesized `Decodable` reads it: which properties are decoded, from which keys.
    ///
    /// A `let` with an initial value is never decoded; with a `CodingKeys` enum, only its cases are, from
    /// their raw values; a property left out of `CodingKeys` needs an initial value (or to be an optional
    /// `var`), as Swift requires.
    mutating func structure(_ declaration: TypeDeclarationSyntax, usedAt line: Int, property: String?) throws(DeclarationError) -> DeclaredStruct {
        let name = declaration.qualifiedName
        if let done = structs[name] { return done }
        // A struct reached again while it is being resolved (`var laps: [Lap]` inside `Lap`): only its name is needed now.
        guard !resolving.contains(name) else { return DeclaredStruct(name: name, fields: [], ignored: [], line: declaration.line) }
        guard resolving.count < Self.maximumNesting else {
            throw fail(line, "structs nested too deeply (more than \(Self.maximumNesting) levels, from struct \"\(declaration.name)\")")
        }
        resolving.insert(name)
        defer { resolving.remove(name) }
        guard !declaration.hasCustomDecoder else {
            throw fail(declaration.line, "struct \"\(declaration.name)\" decodes itself with init(from:); "
                                         + "only synthesized Codable conformances can be mirrored")
        }
        var seen: [String: Int] = [:]
        for stored in declaration.properties {
            if let first = seen[stored.name] {
                throw fail(stored.line, "duplicate property \"\(stored.name)\" in \(declaration.name) (first declared on line \(first))")
            }
            seen[stored.name] = stored.line
        }
        let keys = try codingKeys(of: declaration)
        var fields: [DeclaredField] = []
        var ignored: [String] = []
        for stored in declaration.properties {
            if stored.isLet, stored.hasInitialValue {
                ignored.append(stored.name)
                continue
            }
            var key = stored.name
            if let keys {
                guard let renamed = keys[stored.name] else {
                    if stored.hasInitialValue || (!stored.isLet && Self.isOptional(stored.type)) {
                        ignored.append(stored.name)
                        continue
                    }
                    throw fail(stored.line, "property \"\(stored.name)\" is not in \(declaration.name).CodingKeys and has no initial "
                                            + "value (Swift cannot synthesize Decodable)")
                }
                key = renamed
            }
            guard let written = stored.type ?? stored.literalType.map({ TypeSyntax.named([$0], []) }) else {
                throw fail(stored.line, "property \"\(stored.name)\" has no type annotation; write \"var \(stored.name): Type\"")
            }
            let type = try resolve(written, scope: declaration.path, line: stored.line, property: stored.name, depth: 0)
            fields.append(DeclaredField(name: stored.name, key: key, type: type, hasDefault: stored.hasInitialValue, line: stored.line))
        }
        let result = DeclaredStruct(name: name, fields: fields, ignored: ignored, line: declaration.line)
        structs[name] = result
        return result
    }

    private static func isOptional(_ type: TypeSyntax?) -> Bool {
        switch type {
        case .optional?: true
        case .named(let path, _)?: path.last == "Optional"
        default: false
        }
    }

    /// Property name → JSON key from the struct's nested `enum CodingKeys`, or nil when it has none.
    private func codingKeys(of declaration: TypeDeclarationSyntax) throws(DeclarationError) -> [String: String]? {
        guard let keys = syntax.types[declaration.qualifiedName + ".CodingKeys"], keys.kind == .enumeration else { return nil }
        let stored = Set(declaration.properties.map(\.name))
        var map: [String: String] = [:]
        var owners: [String: String] = [:]
        for element in keys.cases {
            let key: String
            switch element.rawValue {
            case .string(let text)?: key = text
            case nil, .integer?: key = element.name
            case .other(let text)?:
                throw fail(element.line, "CodingKeys case \"\(element.name)\" has a raw value the reader cannot use: \(text)")
            }
            guard stored.contains(element.name) else {
                throw fail(element.line, "CodingKeys case \"\(element.name)\" matches no stored property of \(declaration.name)")
            }
            if let owner = owners[key] {
                throw fail(element.line, "CodingKeys cases \"\(owner)\" and \"\(element.name)\" both use the key \"\(key)\"")
            }
            owners[key] = element.name
            map[element.name] = key
        }
        return map
    }

    /// Raw types Swift allows that the reader does not (`Double`, `Character`…): refused by name.
    private static let otherRawTypes: Set<String> = ["Double", "Float", "Float32", "Float64", "CGFloat", "Character", "Substring"]

    /// Records an enum: with `String` or integer raw values (implicit `String` raw values are the case names,
    /// implicit integers count up from the previous case, from 0), or without a raw type, in Swift 5.5's
    /// synthesized keyed form (each associated value resolved like a property).
    mutating func enumeration(_ declaration: TypeDeclarationSyntax, depth: Int = 0) throws(DeclarationError) {
        let name = declaration.qualifiedName
        guard enums[name] == nil, !resolving.contains(name) else { return }
        var rawType: DeclaredType?
        var first: String?
        if case .named(var path, let arguments)? = declaration.inherits.first, arguments.isEmpty {
            if path.count == 2, path[0] == "Swift" { path.removeFirst() }
            first = path.count == 1 ? path[0] : nil
            if path == ["String"] { rawType = .string }
            if path.count == 1, ["Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64"].contains(path[0]) {
                rawType = .integer(path[0])
            }
        }
        guard !declaration.isGeneric else {
            throw fail(declaration.line, "enum \"\(declaration.name)\" is generic; only non-generic enums are supported")
        }
        if let first, Self.otherRawTypes.contains(first) {
            throw fail(declaration.line, "enum \"\(declaration.name)\" has raw type \(first); only String and integer raw types "
                                         + "(or no raw type) are supported")
        }
        guard let rawType else {
            try keyedEnumeration(declaration, depth: depth)
            return
        }
        var cases: [DeclaredEnum.Case] = []
        var owners: [JSONValue: String] = [:]
        var next = 0
        for element in declaration.cases {
            guard !element.hasAssociatedValues else {
                throw fail(element.line, "case \"\(element.name)\" of enum \(declaration.name) has associated values, which an enum with "
                                         + "a raw type cannot have")
            }
            let raw: JSONValue
            switch (rawType, element.rawValue) {
            case (.string, nil): raw = .string(element.name)
            case (.string, .string(let text)?): raw = .string(text)
            case (.integer, nil):
                raw = .number(Double(next))
                next = next &+ 1
            case (.integer, .integer(let value)?):
                raw = .number(Double(value))
                next = value &+ 1
            default:
                let written: String
                switch element.rawValue {
                case .string(let text)?: written = "\"\(text.clipped(to: 40))\""
                case .integer(let value)?: written = "\(value)"
                case .other(let text)?: written = text
                case nil: written = "?"
                }
                throw fail(element.line, "raw value \(written) of case \"\(element.name)\" is not a \(rawType.swiftName) literal")
            }
            if let owner = owners[raw] {
                throw fail(element.line, "raw value \(DecodingFailure.show(raw)) of case \"\(element.name)\" repeats case \"\(owner)\"")
            }
            owners[raw] = element.name
            cases.append(DeclaredEnum.Case(name: element.name, rawValue: raw))
        }
        let conformances = declaration.inherits + (syntax.extensionConformances[name] ?? [])
            + (syntax.extensionConformances[declaration.name] ?? [])
        let representable = (rawType == .string || rawType == .integer("Int")) && conformances.contains {
            if case .named(let path, _) = $0 { return path.last == "CodingKeyRepresentable" }
            return false
        }
        enums[name] = DeclaredEnum(name: name, rawType: rawType, cases: cases, line: declaration.line, isCodingKeyRepresentable: representable)
    }
}

extension DeclarationResolver {
    /// Records an enum without a raw type as Swift 5.5+ synthesizes its `Codable`: each case is a key; its
    /// associated values are the fields of the nested object, keyed by label or `_0`, `_1`… by position.
    /// - Throws: ``DeclarationError`` for a hand-written `init(from:)`, a custom `CodingKeys`, or an associated
    ///   value of an unsupported type.
    mutating func keyedEnumeration(_ declaration: TypeDeclarationSyntax, depth: Int) throws(DeclarationError) {
        let name = declaration.qualifiedName
        guard !declaration.hasCustomDecoder else {
            throw fail(declaration.line, "enum \"\(declaration.name)\" decodes itself with init(from:); "
                                         + "only synthesized Codable conformances can be mirrored")
        }
        if syntax.types[name + ".CodingKeys"] != nil {
            throw fail(declaration.line, "enum \"\(declaration.name)\" has its own CodingKeys; only the synthesized keyed form "
                                         + "({\"caseName\": {…}}) is supported")
        }
        resolving.insert(name)
        defer { resolving.remove(name) }
        var cases: [DeclaredEnum.Case] = []
        var seen: [String: Int] = [:]
        for element in declaration.cases {
            if let first = seen[element.name] {
                throw fail(element.line, "duplicate case \"\(element.name)\" in \(declaration.name) (first declared on line \(first))")
            }
            seen[element.name] = element.line
            guard element.rawValue == nil else {
                throw fail(element.line, "case \"\(element.name)\" of enum \(declaration.name) has a raw value but the enum has no raw type")
            }
            var payload: [DeclaredField] = []
            for (position, value) in element.associatedValues.enumerated() {
                let key = value.label ?? "_\(position)"
                let type = try resolve(value.type, scope: declaration.path, line: element.line, property: "\(element.name).\(key)", depth: depth + 1)
                payload.append(DeclaredField(name: key, key: key, type: type, hasDefault: false, line: element.line))
            }
            cases.append(DeclaredEnum.Case(name: element.name, rawValue: .string(element.name), payload: payload))
        }
        enums[name] = DeclaredEnum(name: name, rawType: .string, cases: cases, line: declaration.line, isKeyed: true)
    }
}

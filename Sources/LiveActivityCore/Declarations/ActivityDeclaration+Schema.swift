/// The declaration as JSON Schema (draft 2020-12, https://json-schema.org/draft/2020-12/schema), for
/// `GET /kinds` and the published contract files.
extension ActivityDeclaration {
    /// The JSON Schema dialect written.
    public static let jsonSchemaDialect = "https://json-schema.org/draft/2020-12/schema"

    /// A JSON Schema of `part` in `form`.
    ///
    /// The root is the struct itself; every other struct and enum it reaches is under `$defs` (by qualified
    /// name) and referenced with `$ref`, so recursive structs are fine. Non-optional fields are `required`;
    /// optional ones also accept `null`; keys not declared are allowed (the app ignores them). Each property's
    /// `description` gives its Swift type. Dates are `date-time` strings in the protocol form, numbers of
    /// seconds since 2001-01-01 in the Codable form; ranges `{"start", "end"}` or `[lower, upper]`.
    public func jsonSchema(for part: DeclaredPart, form: ContentForm = .protocolForm) -> JSONValue {
        var definitions: [String: JSONValue] = [:]
        var pending = reachedTypes(from: root(part))
        var seen = Set(pending)
        while let name = pending.popLast() {
            if let structure = structs[name] {
                definitions[name] = schema(of: structure, form: form)
                for next in reachedTypes(from: structure) where !seen.contains(next) {
                    seen.insert(next)
                    pending.append(next)
                }
            } else if let declared = enums[name] {
                definitions[name] = schema(of: declared, form: form)
                for next in declared.cases.flatMap({ reachedTypes(from: DeclaredStruct(name: "", fields: $0.payload, ignored: [], line: 0)) })
                where !seen.contains(next) {
                    seen.insert(next)
                    pending.append(next)
                }
            }
        }
        guard case .object(var schema) = schema(of: root(part), form: form) else { return .null }
        schema["$schema"] = .string(Self.jsonSchemaDialect)
        if !definitions.isEmpty { schema["$defs"] = .object(definitions) }
        return .object(schema)
    }

    /// Both schemas and the type's name: `{"attributesType": …, "attributes": schema, "contentState": schema}`.
    public func jsonDescription(form: ContentForm = .protocolForm) -> JSONValue {
        .object([
            "attributesType": .string(attributesType),
            "attributes": jsonSchema(for: .attributes, form: form),
            "contentState": jsonSchema(for: .contentState, form: form),
        ])
    }

    private func reachedTypes(from structure: DeclaredStruct) -> [String] {
        func names(_ type: DeclaredType) -> [String] {
            switch type {
            case .structure(let name), .enumeration(let name): [name]
            case .array(let inner), .set(let inner), .optional(let inner): names(inner)
            case .dictionary(let key, let value): names(key) + names(value)
            default: []
            }
        }
        return structure.fields.flatMap { names($0.type) }
    }

    private func schema(of structure: DeclaredStruct, form: ContentForm) -> JSONValue {
        var properties: [String: JSONValue] = [:]
        for field in structure.fields {
            guard case .object(var property) = schema(of: field.type, form: form) else { continue }
            property["description"] = .string("Swift: \(field.name): \(field.type.swiftName)")
            properties[field.key] = .object(property)
        }
        return .object([
            "title": .string(structure.swiftName),
            "type": .string("object"),
            "properties": .object(properties),
            "required": .array(structure.fields.filter { !$0.type.isOptional }.map { .string($0.key) }),
        ])
    }

    private func schema(of type: DeclaredType, form: ContentForm) -> JSONValue {
        let date: JSONValue = form == .protocolForm
            ? .object(["type": .string("string"), "format": .string("date-time")])
            : .object(["type": .string("number"), "description": .string("seconds since 2001-01-01T00:00:00Z")])
        switch type {
        case .string: return .object(["type": .string("string")])
        case .integer:
            var schema: [String: JSONValue] = ["type": .string("integer")]
            if let bounds = type.integerBounds {
                if bounds.lower != -9_223_372_036_854_775_808 { schema["minimum"] = .number(bounds.lower) }
                if !bounds.upperExclusive { schema["maximum"] = .number(bounds.upper) }
            }
            return .object(schema)
        case .double: return .object(["type": .string("number")])
        case .bool: return .object(["type": .string("boolean")])
        case .url: return .object(["type": .string("string"), "format": .string("uri-reference")])
        case .date: return date
        case .closedDateRange, .dateRange:
            if form == .protocolForm {
                return .object(["type": .string("object"), "properties": .object(["start": date, "end": date]),
                                "required": .array([.string("start"), .string("end")])])
            }
            return .object(["type": .string("array"), "prefixItems": .array([date, date]), "minItems": .number(2)])
        case .array(let element), .set(let element):
            return .object(["type": .string("array"), "items": schema(of: element, form: form)])
        case .optional(let wrapped):
            return .object(["anyOf": .array([schema(of: wrapped, form: form), .object(["type": .string("null")])])])
        case .structure(let name), .enumeration(let name):
            return .object(["$ref": .string("#/$defs/\(name)")])
        case .uuid: return .object(["type": .string("string"), "format": .string("uuid")])
        case .decimal: return .object(["type": .string("number")])
        case .dictionary(let key, let value):
            if key == .string { return .object(["type": .string("object"), "additionalProperties": schema(of: value, form: form)]) }
            if isObjectKey(key) {
                return .object(["type": .string("object"), "propertyNames": key == .integer("Int") ? .object(["pattern": .string("^[+-]?[0-9]+$")]) : schema(of: key, form: form),
                                "additionalProperties": schema(of: value, form: form)])
            }
            return .object(["type": .string("array"), "description": .string("alternating keys (\(key.swiftName)) and values (\(value.swiftName))")])
        }
    }

    /// A raw-value enum as `enum` of its raw values; a keyed enum as `oneOf` objects, one per case.
    private func schema(of declared: DeclaredEnum, form: ContentForm) -> JSONValue {
        guard declared.isKeyed else {
            return .object(["title": .string(declared.swiftName), "enum": .array(declared.cases.map(\.rawValue))])
        }
        let cases: [JSONValue] = declared.cases.map { element in
            let payload = schema(of: DeclaredStruct(name: element.name, fields: element.payload, ignored: [], line: 0), form: form)
            return .object(["type": .string("object"), "properties": .object([element.name: payload]), "required": .array([.string(element.name)])])
        }
        return .object(["title": .string(declared.swiftName), "oneOf": .array(cases)])
    }
}

import Foundation

extension ActivityDeclaration {
    /// A value of `part` in protocol form that the declaration accepts, for previews of a kind nobody has
    /// started yet (the gallery): each `String` is its field's name capitalised (`athlete` → `"Athlete"`),
    /// numbers 1 and 1.5, `Bool` true, dates `now`, ranges from 20 s before `now` to 50 s after it, enums
    /// their first case, arrays empty, optionals and URLs absent, structs filled the same way.
    /// - Parameters:
    ///   - part: attributes or content state.
    ///   - now: the instant dates are built around.
    /// - Returns: a JSON object.
    public func example(of part: DeclaredPart, now: Date) -> JSONValue {
        example(root(part), now: now, depth: 0)
    }

    private func example(_ declared: DeclaredStruct, now: Date, depth: Int) -> JSONValue {
        var object: [String: JSONValue] = [:]
        for field in declared.fields where !field.type.isOptional {
            object[field.key] = example(field.type, name: field.name, now: now, depth: depth)
        }
        return .object(object)
    }

    /// A raw-value enum's first raw value; a keyed enum's first case, `{"case": {…}}`, its associated values filled.
    private func enumExample(_ declared: DeclaredEnum?, now: Date, depth: Int) -> JSONValue {
        guard let declared, let first = declared.cases.first else { return .null }
        guard declared.isKeyed else { return first.rawValue }
        guard depth < 8 else { return .null }
        let payload = DeclaredStruct(name: first.name, fields: first.payload, ignored: [], line: 0)
        return .object([first.name: example(payload, now: now, depth: depth + 1)])
    }

    private func example(_ type: DeclaredType, name: String, now: Date, depth: Int) -> JSONValue {
        switch type {
        case .string: .string(name.prefix(1).uppercased() + name.dropFirst())
        case .integer: .number(1)
        case .double: .number(1.5)
        case .bool: .bool(true)
        case .date: .string(ISODate.format(now))
        case .url: .string("https://example.com/\(name)")
        case .closedDateRange, .dateRange:
            .object(["start": .string(ISODate.format(now.addingTimeInterval(-20))), "end": .string(ISODate.format(now.addingTimeInterval(50)))])
        case .array, .set, .optional: .array([])
        case .enumeration(let enumName): enumExample(enums[enumName], now: now, depth: depth)
        case .uuid: .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        case .decimal: .number(1.5)
        case .dictionary(let key, _): isObjectKey(key) ? .object([:]) : .array([])
        case .structure(let structName):
            depth < 8 ? structs[structName].map { example($0, now: now, depth: depth + 1) } ?? .null : .null
        }
    }
}

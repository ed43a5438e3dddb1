import Foundation

/// Reads a value in one ``ContentForm`` against a declaration and writes it in another, failing exactly where
/// the app's synthesized `init(from:)` under `JSONDecoder`'s default strategies would.
///
/// One walk serves the three conversions (Codable → protocol, protocol → protocol, protocol → Codable): only
/// dates and date ranges differ between the forms; everything else is checked the same way and copied.
struct DeclarationConverter {
    let declaration: ActivityDeclaration
    let source: ContentForm
    let target: ContentForm
    /// The caller's field (`content-state`), prefixed to warnings.
    let field: String
    private(set) var warnings: [DeclarationWarning] = []
    /// The current time, for warnings that depend on it (a Codable date that looks like Unix seconds);
    /// `nil`: no such warning. Never changes what decodes.
    let now: Date?

    /// Most warnings kept for one value.
    static let maximumWarnings = 32

    init(declaration: ActivityDeclaration, from source: ContentForm, to target: ContentForm, field: String, now: Date? = nil) {
        self.now = now
        self.declaration = declaration
        self.source = source
        self.target = target
        self.field = field
    }

    typealias Path = [DecodingFailure.PathComponent]

    mutating func warn(_ path: Path, _ message: String) {
        guard warnings.count < Self.maximumWarnings else { return }
        warnings.append(DeclarationWarning(field: fullPath(path), message: message))
    }

    /// `path` under the caller's field: `content-state.interval[1]`.
    func fullPath(_ path: Path) -> String {
        let relative = DecodingFailure.path(path)
        if relative.isEmpty { return field }
        return field.isEmpty || relative.hasPrefix("[") ? field + relative : "\(field).\(relative)"
    }

    // MARK: - Structs

    mutating func convert(_ value: JSONValue, as structure: DeclaredStruct, path: Path) throws(DecodingFailure) -> JSONValue {
        if value == .null, path.isEmpty {
            // The root: `JSONDecoder` asks for a keyed container of null (a nested null is caught by the field's type).
            throw DecodingFailure(kind: .valueNotFound, codingPath: path, type: "Dictionary<String, Any>",
                                  debugDescription: "Cannot get keyed decoding container -- found null value instead",
                                  reason: source == .codable ? "valueNotFound: expected an object of \(structure.swiftName), found null"
                                      : "required field is null (it is not optional)")
        }
        guard case .object(let object) = value else {
            throw mismatch("Dictionary<String, Any>", expected: "an object", value, path)
        }
        var result: [String: JSONValue] = [:]
        for field in structure.fields {
            let fieldPath = path + [.key(field.key)]
            guard let item = object[field.key], item != .null else {
                if field.type.isOptional { continue }
                if object[field.key] == nil {
                    throw DecodingFailure(kind: .keyNotFound, codingPath: path, key: field.key,
                                          debugDescription: "No value associated with key \"\(field.key)\".",
                                          reason: source == .codable ? "keyNotFound: no value associated with key \"\(field.key)\" "
                                              + "(\(field.type.swiftName) is not optional)" : "required field is missing")
                }
                throw valueNotFound(field.type, fieldPath)
            }
            result[field.key] = try convert(item, as: field.type.unwrapped, path: fieldPath)
        }
        for key in object.keys.sorted() where structure.field(forKey: key) == nil {
            if let renamed = structure.fields.first(where: { $0.name == key }) {
                warn(path, "key \"\(key)\" is not in \(structure.swiftName): CodingKeys decode \(renamed.name) from \"\(renamed.key)\"; "
                           + "the app ignores it")
            } else if structure.ignored.contains(key) {
                warn(path, "key \"\(key)\" is not decoded by \(structure.swiftName) (a let with an initial value, or left out of "
                           + "CodingKeys); the app ignores it")
            } else {
                warn(path, "key \"\(key.clipped(to: 64))\" is not in \(structure.swiftName); the app ignores it")
            }
        }
        return .object(result)
    }

    // MARK: - Values

    mutating func convert(_ value: JSONValue, as type: DeclaredType, path: Path) throws(DecodingFailure) -> JSONValue {
        if value == .null {
            if type.isOptional { return .null }
            throw valueNotFound(type, path)
        }
        switch type {
        case .optional(let wrapped):
            return try convert(value, as: wrapped, path: path)
        case .string:
            guard case .string = value else { throw mismatch("String", expected: "a string", value, path) }
            return value
        case .integer:
            return try integer(value, type, path)
        case .double(let name):
            // A Double reads a whole number beyond 2^53 rounded, as JSONDecoder does.
            if case .bigInteger = value, let number = value.numberValue { return .number(number) }
            guard case .number(let number) = value, number.isFinite else { throw mismatch(Self.swiftFloat(name), expected: "a number", value, path) }
            let isFloat = name == "Float" || name == "Float32"
            // Float: too large for it, or so small it would round to zero (JSONDecoder refuses both).
            if isFloat, abs(number) > Double(Float.greatestFiniteMagnitude) || (number != 0 && Float(number) == 0) {
                throw corrupted("number \(DecodingFailure.show(value)) does not fit in Float",
                                debug: "Parsed JSON number <\(DecodingFailure.show(value))> does not fit in Float.",
                                protocolReason: abs(number) > 1 ? "\(DecodingFailure.show(value)) is too large for a Float"
                                    : "\(DecodingFailure.show(value)) is too small for a Float (it would round to 0)", path)
            }
            return value
        case .bool:
            guard case .bool = value else { throw mismatch("Bool", expected: "a boolean", value, path) }
            return value
        case .url:
            guard case .string(let text) = value else { throw mismatch("String", expected: "a URL string", value, path) }
            guard URL(string: text) != nil else {
                throw corrupted("invalid URL string \(DecodingFailure.show(value))", debug: "Invalid URL string.",
                                protocolReason: "expected a URL, got \(DecodingFailure.show(value))", path)
            }
            return value
        case .date:
            return write(try date(value, path))
        case .closedDateRange, .dateRange:
            return try range(value, closed: type == .closedDateRange, path)
        case .array(let element), .set(let element):
            guard case .array(let items) = value else { throw mismatch("Array<Any>", expected: "an array", value, path) }
            var result: [JSONValue] = []
            result.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                result.append(try convert(item, as: element, path: path + [.index(index)]))
            }
            if case .set = type {
                // The app's Set holds equal elements once: the first of each is kept, in the order sent.
                var seen = Set<JSONValue>()
                result = result.filter { seen.insert($0).inserted }
            }
            return .array(result)
        case .structure(let name):
            guard let structure = declaration.structs[name] else { throw mismatch(type.swiftName, expected: "an object", value, path) }
            return try convert(value, as: structure, path: path)
        case .enumeration(let name):
            if let declared = declaration.enums[name], declared.isKeyed { return try keyed(value, declared, path) }
            return try enumeration(value, declaration.enums[name], path)
        case .uuid:
            guard case .string(let text) = value else { throw mismatch("String", expected: "a UUID string", value, path) }
            guard UUID(uuidString: text) != nil else {
                throw corrupted("invalid UUID string \(DecodingFailure.show(value))", debug: "Attempted to decode UUID from invalid UUID string.",
                                protocolReason: "expected a UUID such as \"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\", got \(DecodingFailure.show(value))",
                                path)
            }
            return value
        case .decimal:
            if case .bigInteger = value { return value }  // a Decimal holds its digits exactly
            guard case .number(let number) = value, number.isFinite else { throw mismatch("Decimal", expected: "a number", value, path) }
            guard Self.fitsDecimal(number) else {
                let shown = DecodingFailure.show(value)
                throw corrupted("number \(shown) does not fit in Decimal", debug: "Parsed JSON number <\(shown)> does not fit in Decimal.",
                                protocolReason: "\(shown) is beyond what a Decimal holds (its digits times 10^-128 to 10^127)", path)
            }
            return value
        case .dictionary(let key, let element):
            return try dictionary(value, key: key, value: element, path)
        }
    }

    private static func swiftFloat(_ name: String) -> String { name == "TimeInterval" ? "Double" : name }

    /// Whether `JSONDecoder` reads `number`, as written in its shortest form, into a `Decimal`: its digits times a
    /// power of ten from 10^-128 to 10^127 (`1e127` and `1e-128` do; `1e128`, `3.4e165` and `1.5e-128` are
    /// refused, though a `Double` holds them).
    static func fitsDecimal(_ number: Double) -> Bool {
        guard number != 0 else { return true }
        let text = "\(abs(number))"  // "1e+165", "1.5e-128", "123.45"
        let parts = text.split(separator: "e", maxSplits: 1)
        let mantissa = parts[0]
        let fractionDigits = mantissa.split(separator: ".", maxSplits: 1).dropFirst().first?.count ?? 0
        let exponent = (parts.count > 1 ? Int(parts[1]) ?? 0 : 0) - fractionDigits
        return (-128...127).contains(exponent)
    }

    private func integer(_ value: JSONValue, _ type: DeclaredType, _ path: Path) throws(DecodingFailure) -> JSONValue {
        let name = type.swiftName
        let bounds = type.integerBounds ?? (-9_223_372_036_854_775_808, 9_223_372_036_854_775_808, true)
        let inRange: Bool
        let whole: Bool
        switch value {
        case .number(let number) where number.isFinite:
            // From 2^53 on, a whole number a 64-bit type holds is a bigInteger: this one is beyond them all
            // (-9223372036854775809 reads as the Double -2^63, which Int64 would hold).
            inRange = number >= bounds.lower && (bounds.upperExclusive ? number < bounds.upper : number <= bounds.upper)
                && abs(number) < JSONValue.bigIntegerMagnitude
            whole = number.rounded() == number
        case .bigInteger(let digits):
            // Beyond 2^53: only the 64-bit types hold it, decided on the digits (a Double's bounds are rounded).
            let unsigned = name.hasPrefix("U")
            inRange = bounds.upperExclusive && (unsigned ? UInt64(digits) != nil : Int64(digits) != nil)
            whole = true
        default:
            throw mismatch(name, expected: "an integer", value, path)
        }
        guard whole, inRange else {
            let shown = DecodingFailure.show(value)
            let upper = bounds.upperExclusive ? "2^\(name.hasPrefix("U") ? 64 : 63) − 1" : DecodingFailure.show(.number(bounds.upper))
            throw corrupted("number \(shown) does not fit in \(name)", debug: "Parsed JSON number <\(shown)> does not fit in \(name).",
                            protocolReason: "expected a whole number from \(bounds.lower <= -9e18 ? "−2^63" : DecodingFailure.show(.number(bounds.lower))) to \(upper) "
                                + "(\(name)), got \(shown)", path)
        }
        return value
    }

    private func enumeration(_ value: JSONValue, _ declared: DeclaredEnum?, _ path: Path) throws(DecodingFailure) -> JSONValue {
        guard let declared else { throw mismatch("enum", expected: "an enum raw value", value, path) }
        let names = declared.cases.prefix(20).map { DecodingFailure.show($0.rawValue) }.joined(separator: ", ")
        let expected = declared.cases.isEmpty ? "no value (the enum has no cases)" : "one of \(names)"
        let raw: JSONValue
        if declared.rawType == .string {
            guard case .string = value else { throw mismatch("String", expected: expected, value, path) }
            raw = value
        } else {
            guard value.numberValue != nil else { throw mismatch(declared.rawType.swiftName, expected: expected, value, path) }
            raw = try integer(value, declared.rawType, path)
        }
        guard declared.case(rawValue: raw) != nil else {
            let shown = DecodingFailure.show(raw)
            let rawText: String = if case .string(let text) = raw { String(text.prefix(40)) } else { shown }
            throw corrupted("invalid enum raw value \(shown) for \(declared.swiftName)",
                            debug: "Cannot initialize \(declared.swiftName) from invalid \(declared.rawType.swiftName) value \(rawText)",
                            protocolReason: "unknown value \(shown); expected \(expected)", path, codableNote: "expected \(expected)")
        }
        return raw
    }

    // MARK: - Failures

    func mismatch(_ swiftType: String, expected: String, _ value: JSONValue, _ path: Path) -> DecodingFailure {
        let debug = "Expected to decode \(swiftType) but found \(DecodingFailure.found(value)) instead."
        return DecodingFailure(kind: .typeMismatch, codingPath: path, type: swiftType, debugDescription: debug,
                               reason: source == .codable ? "typeMismatch \(swiftType): expected to decode \(swiftType) but found "
                                   + "\(DecodingFailure.found(value)) instead" : "expected \(expected), got \(value.typeName)")
    }

    func valueNotFound(_ type: DeclaredType, _ path: Path) -> DecodingFailure {
        let name = type.swiftName
        return DecodingFailure(kind: .valueNotFound, codingPath: path, type: name,
                               debugDescription: "Expected \(name) value but found null instead.",
                               reason: source == .codable ? "valueNotFound \(name): found null, but \(name) is not optional"
                                   : "required field is null (it is not optional)")
    }

    func corrupted(_ detail: String, debug: String, protocolReason: String, _ path: Path, codableNote: String? = nil) -> DecodingFailure {
        DecodingFailure(kind: .dataCorrupted, codingPath: path, detail: detail, debugDescription: debug,
                        reason: source == .codable ? "dataCorrupted: \(detail)\(codableNote.map { " (\($0))" } ?? "")" : protocolReason)
    }
}

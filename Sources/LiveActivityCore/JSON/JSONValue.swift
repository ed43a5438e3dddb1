import Foundation

/// A JSON value as parsed from, or written to, the wire (RFC 8259).
///
/// Activity attributes and content states are kept as `JSONValue`, validated and normalised by their
/// ``ActivityKind``, so that the engine stays independent of any one kind of activity.
/// Numbers are `Double` (JSON has one number type), except a whole number from 2^53 in magnitude that an
/// `Int64` or `UInt64` holds: ``bigInteger(_:)`` keeps its digits, as `JSONDecoder` reads an app's `Int64` and
/// `UInt64` exactly (`9007199254740993` was kept, and shown, as `9007199254740992`).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    /// A whole number from 2^53 in magnitude within `Int64` or `UInt64` range, as its exact decimal digits
    /// (`"-9007199254740993"`, no `+` nor leading zeros), however it was written (`9007199254740993e0` too).
    /// Always this form in that range, so each value has one form; beyond it, and below 2^53, ``number(_:)``
    /// (so that a whole ``number(_:)`` from 2^53 on is out of every integer type's range).
    case bigInteger(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])
}

// MARK: - Parsing and writing

extension JSONValue {
    /// Parses one JSON text.
    ///
    /// - Parameters:
    ///   - bytes: UTF-8 JSON text.
    ///   - depthLimit: deepest nesting accepted (default ``maximumDepth``, what clients may send).
    /// - Returns: the parsed value.
    /// - Throws: ``ProtocolError`` with code `invalid_json` and the reason in words, naming the dotted path of
    ///   the value that could not be read (also as `field`) when the parser knows it; never the decoder's own
    ///   description (Swift type names, coding keys). A key that appears twice in one object is refused too,
    ///   naming its path (``JSONParser``).
    public static func parse(_ bytes: some Collection<UInt8>, depthLimit: Int = maximumDepth) throws(ProtocolError) -> JSONValue {
        // Foundation's decoder costs grow much faster than the nesting depth (a 1 KB message of 500 nested
        // arrays took over a second), so refuse deep nesting with one linear scan first. The same scan
        // refuses the trailing commas Foundation lets through (RFC 8259 has none).
        switch structuralProblem(in: bytes, depthLimit: depthLimit) {
        case .tooDeep(let depth)?:
            throw ProtocolError(.invalidJSON, field: nil, message: "message nests arrays or objects deeper than \(depthLimit) levels (\(depth)+)")
        case .trailingComma(let offset)?:
            throw ProtocolError(.invalidJSON, field: nil,
                                message: "message is not valid JSON: a comma before a closing bracket or brace at byte \(offset) (JSON allows no trailing commas)")
        case nil:
            break
        }
        // The fast path: the value, when it is certainly the one Foundation would give; else Foundation
        // decides, and names what is wrong.
        switch JSONParser.parse(bytes) {
        case .value(let value):
            return value
        case .duplicateKey(let path):
            throw ProtocolError(.invalidJSON, field: path,
                                message: "\(path): this key appears twice in one object; keys must be unique, since readers disagree on which one counts")
        case .unsure:
            break
        }
        do {
            return try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
        } catch {
            let (field, reason) = describe(error)
            // Foundation names no place for a broken document; the syntax check does.
            if field == nil, let syntax = JSONSyntaxCheck.firstError(in: bytes) {
                throw ProtocolError(.invalidJSON, field: nil, message: "message is not valid JSON: \(syntax.description)")
            }
            throw ProtocolError(.invalidJSON, field: field, message: field.map { "\($0): \(reason)" } ?? "message is not valid JSON: \(reason)")
        }
    }

    /// Deepest nesting of arrays and objects accepted in what clients send.
    public static let maximumDepth = 32
    /// Deepest nesting a client accepts from the server: what clients may send (``maximumDepth``) as the server
    /// wraps it in a reply (`snapshot` → `activities` → activity → `content` → `state` …), with room to spare.
    public static let maximumServerDepth = 2 * maximumDepth

    /// What the linear pre-scan of ``parse(_:)`` refuses before Foundation's decoder runs.
    enum StructuralProblem: Equatable {
        /// Arrays and objects nest deeper than the limit; the depth reached.
        case tooDeep(Int)
        /// A `,` followed (after whitespace) by `]` or `}`; the closing bracket's byte offset.
        case trailingComma(Int)
    }

    /// One pass over the text, outside strings: the first nesting past `depthLimit` or trailing comma, or nil.
    static func structuralProblem(in bytes: some Collection<UInt8>, depthLimit: Int) -> StructuralProblem? {
        // Over contiguous bytes, not the generic collection: callers in other modules reach this function
        // unspecialized, where each generic `next()` cost about 1,500 instructions (metadata look-ups), some
        // 440,000 per client message (BENCHMARKS.md, issue 30).
        if let problem = bytes.withContiguousStorageIfAvailable({ structuralProblem(inBuffer: $0, depthLimit: depthLimit) }) {
            return problem
        }
        return Array(bytes).withUnsafeBufferPointer { structuralProblem(inBuffer: $0, depthLimit: depthLimit) }
    }

    private static func structuralProblem(inBuffer bytes: UnsafeBufferPointer<UInt8>, depthLimit: Int) -> StructuralProblem? {
        var depth = 0, inString = false, escaped = false, afterComma = false
        for offset in 0..<bytes.count {
            let byte = bytes[offset]
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                continue
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > depthLimit { return .tooDeep(depth) }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if afterComma { return .trailingComma(offset) }
                depth -= 1
            default: break
            }
            afterComma = byte == UInt8(ascii: ",")
        }
        return nil
    }

    /// The path (dotted, `a.b[0]`) of the value the decoder failed on, if it knows one, and why, in words a client
    /// can act on. Foundation's own descriptions name Swift types and coding keys, so none is passed through,
    /// except the whole-document syntax reason, and only when it is plain.
    static func describe(_ error: any Error) -> (field: String?, reason: String) {
        guard let decoding = error as? DecodingError else { return (nil, "it could not be read") }
        let context: DecodingError.Context
        switch decoding {
        case .typeMismatch(_, let found), .valueNotFound(_, let found), .keyNotFound(_, let found), .dataCorrupted(let found):
            context = found
        @unknown default:
            return (nil, "it could not be read")
        }
        var path = ""
        for key in context.codingPath {
            if let index = key.intValue { path += "[\(index)]" } else { path += path.isEmpty ? key.stringValue : ".\(key.stringValue)" }
        }
        if path.isEmpty {
            // Foundation's sentence, when it says more than that the text is not JSON (a key with a lone surrogate
            // got only "The given data was not valid JSON.").
            if case .dataCorrupted = decoding, isPlain(context.debugDescription), context.debugDescription != "The given data was not valid JSON." {
                return (nil, context.debugDescription)
            }
            return (nil, "it is not one JSON value (check for a syntax error, a malformed or out-of-range number, or a string "
                        + "with a bad escape, an unescaped control character, a lone surrogate or bytes that are not UTF-8)")
        }
        return (String(path.prefix(200)), "the message is not valid JSON here: a malformed or out-of-range number "
                + "(such as 01, 1., - or 1e400), or a string with a bad escape, an unescaped control character, a lone "
                + "surrogate (\\ud800) or bytes that are not UTF-8")
    }

    /// Whether a decoder's sentence is fit for a client: no Swift type names, coding keys or error dumps.
    private static func isPlain(_ text: String) -> Bool {
        !text.isEmpty && !["Swift", "Decoding", "CodingKey", "Dictionary<", "Array<", "Error Domain", "UserInfo"].contains { text.contains($0) }
    }
}

extension JSONValue: Codable {
    /// Decodes any JSON value.
    /// - Throws: `DecodingError` if the input is not JSON.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            // A whole number from 2^53 on: its exact value, when an Int64 or UInt64 holds it (JSONDecoder reads
            // those exactly, whatever the form written).
            if !(abs(value) < Self.bigIntegerMagnitude),
               let exact = (try? container.decode(Int64.self)).map(String.init) ?? (try? container.decode(UInt64.self)).map(String.init) {
                self = Self.integer(digits: exact) ?? .number(value)
            } else {
                self = .number(value)
            }
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// The integer a JSON number is written as — `value` when it is integral with magnitude below 9e15, so
    /// that `3` stays `3` and not `3.0` — or nil for a number written as a `Double` (and for NaN and ±infinity).
    public static func integerForm(of value: Double) -> Int64? {
        value.rounded() == value && abs(value) < 9.0e15 ? Int64(value) : nil
    }

    /// 2^53: from this magnitude on, a whole number in `Int64` or `UInt64` range is a ``bigInteger(_:)``.
    static let bigIntegerMagnitude: Double = 9_007_199_254_740_992

    /// A whole number from its decimal digits (`-?[0-9]+`): ``number(_:)`` below 2^53 in magnitude,
    /// ``bigInteger(_:)`` from there on when an `Int64` or `UInt64` holds it; nil beyond both (or for text that
    /// is not digits).
    public static func integer(digits: some StringProtocol) -> JSONValue? {
        if let value = Int64(digits) {
            return abs(Double(value)) < bigIntegerMagnitude ? .number(Double(value)) : .bigInteger(String(value))
        }
        if let value = UInt64(digits) {
            return Double(value) < bigIntegerMagnitude ? .number(Double(value)) : .bigInteger(String(value))
        }
        return nil
    }

    /// The exact whole number a JSON number's text stands for, as digits (`"9007199254740993e0"` →
    /// `"9007199254740993"`, `"1.5e1"` → `"15"`), or nil when it has a fraction or more than 20 digits: what
    /// `JSONDecoder` reads into an `Int64` or `UInt64` exactly, whatever the form written.
    static func wholeDigits(ofNumber text: some StringProtocol) -> String? {
        var negative = false, integer = "", fraction = "", exponent = 0
        var rest = Substring(text)
        if rest.first == "-" { negative = true; rest = rest.dropFirst() }
        integer = String(rest.prefix { $0.isASCII && $0.isNumber })
        rest = rest.dropFirst(integer.count)
        if rest.first == "." {
            rest = rest.dropFirst()
            fraction = String(rest.prefix { $0.isASCII && $0.isNumber })
            rest = rest.dropFirst(fraction.count)
        }
        if rest.first == "e" || rest.first == "E" {
            guard let value = Int(rest.dropFirst()), abs(value) < 64 else { return nil }
            exponent = value
        } else if !rest.isEmpty {
            return nil
        }
        var digits = integer + fraction
        let scale = exponent - fraction.count
        if scale >= 0 {
            digits += String(repeating: "0", count: scale)
        } else {
            guard digits.suffix(-scale).allSatisfy({ $0 == "0" }) else { return nil }  // a fraction that is not zero
            digits.removeLast(-scale)
        }
        digits = String(digits.drop { $0 == "0" })
        if digits.isEmpty { return "0" }
        guard digits.count <= 20 else { return nil }
        return negative ? "-" + digits : digits
    }

    /// Encodes the value as JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .bigInteger(let digits):
            if let value = Int64(digits) { try container.encode(value) } else { try container.encode(UInt64(digits) ?? 0) }
        case .number(let value):
            if let integer = Self.integerForm(of: value) {
                try container.encode(integer)
            } else {
                try container.encode(value)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

// MARK: - Describing

extension JSONValue {
    /// The JSON type name, for error messages: `null`, `boolean`, `number`, `string`, `array` or `object`.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number, .bigInteger: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension Double {
    /// The number as a JSON text shows it, for error messages: whole numbers below 2^63 without a fraction (`-1`,
    /// not `-1.0`; `9007199254740992`, the double that 2^53 + 1 reads as, not `9007199254740992.0`), others in
    /// Swift's shortest round-trip form (`0.5`, `1e+300`).
    public var jsonText: String {
        if rounded() == self, abs(self) < 9_223_372_036_854_775_808 { return String(Int64(self)) }
        return "\(self)"
    }
}

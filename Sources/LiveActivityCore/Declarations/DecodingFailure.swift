/// Why a JSON value does not decode as a declared struct, in Swift's own terms.
///
/// Mirrors `DecodingError` (https://developer.apple.com/documentation/swift/decodingerror) as `JSONDecoder`
/// throws it from a synthesized `init(from:)`: a ``Kind``, the coding path, and the decoder's sentence. It
/// reads both as a whole verdict (``summary``: `keyNotFound "heartRate"`, `typeMismatch Double at interval[1]`)
/// and by field (``protocolError(field:)``: field `content-state.interval[1]`).
public struct DecodingFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// `DecodingError`'s cases.
    public enum Kind: String, Sendable, Hashable {
        /// A value of another JSON type (`DecodingError.typeMismatch`).
        case typeMismatch
        /// `null` where a non-optional value is needed (`DecodingError.valueNotFound`).
        case valueNotFound
        /// A non-optional key is absent (`DecodingError.keyNotFound`).
        case keyNotFound
        /// The value has the right type but cannot be used (`DecodingError.dataCorrupted`): an integer out of
        /// range, an unknown enum raw value, a range whose bounds are reversed, an invalid URL or date.
        case dataCorrupted
    }

    /// One step of a coding path: an object key or an array index.
    public enum PathComponent: Sendable, Hashable {
        /// An object key (`CodingKey.stringValue`).
        case key(String)
        /// An array index (`CodingKey.intValue` in an unkeyed container), from 0.
        case index(Int)
    }

    /// Which case of `DecodingError`.
    public var kind: Kind
    /// The coding path of the value at fault; for ``Kind/keyNotFound``, of the object that lacks ``key``.
    public var codingPath: [PathComponent]
    /// The absent key (``Kind/keyNotFound`` only).
    public var key: String?
    /// The Swift type expected (``Kind/typeMismatch`` and ``Kind/valueNotFound``): `Double`, `String`, `Array<Any>`.
    public var type: String?
    /// What is wrong with the data (``Kind/dataCorrupted`` only): `invalid enum raw value "sprint" for Phase`.
    public var detail: String?
    /// The decoder's own sentence: `Expected to decode Double but found a string instead.`
    public var debugDescription: String
    /// The explanation after the field in ``protocolError(field:)``: Swift's terms for the Codable form,
    /// the protocol's house style (`expected a string, got number`) for the protocol form.
    public var reason: String

    /// Creates a failure.
    public init(kind: Kind, codingPath: [PathComponent], key: String? = nil, type: String? = nil, detail: String? = nil,
                debugDescription: String, reason: String) {
        self.kind = kind
        self.codingPath = codingPath
        self.key = key
        self.type = type
        self.detail = detail
        self.debugDescription = debugDescription
        self.reason = reason
    }

    /// The path of the value at fault, `a.b[0]` (for ``Kind/keyNotFound``, including the absent key); empty
    /// for the root.
    public var fieldPath: String {
        Self.path(kind == .keyNotFound ? codingPath + [.key(key ?? "")] : codingPath)
    }

    /// One line in Swift's terms: `keyNotFound "heartRate"`, `typeMismatch Double at interval[1]`,
    /// `valueNotFound String at note`, `dataCorrupted: invalid enum raw value "sprint" for Phase at phase`.
    public var summary: String {
        let at = Self.path(codingPath)
        let location = at.isEmpty ? "" : " at \(at)"
        switch kind {
        case .keyNotFound: return "keyNotFound \"\(key ?? "")\"\(location)"
        case .typeMismatch: return "typeMismatch \(type ?? "Any")\(location)"
        case .valueNotFound: return "valueNotFound \(type ?? "Any")\(location)"
        case .dataCorrupted: return "dataCorrupted: \(detail ?? debugDescription)\(location)"
        }
    }

    /// ``summary``.
    public var description: String { summary }

    /// The failure as a request error for the value sent in `field` (`content-state`): field
    /// `content-state.interval[1]`, code `missing_field` for an absent or null value (`invalid_field`
    /// otherwise), message `content-state.interval[1]: ` + ``reason``.
    public func protocolError(field: String) -> ProtocolError {
        let relative = fieldPath
        var full = field
        if !relative.isEmpty { full = field.isEmpty || relative.hasPrefix("[") ? field + relative : "\(field).\(relative)" }
        let code: ProtocolError.Code = kind == .keyNotFound || kind == .valueNotFound ? .missingField : .invalidField
        let label = full.isEmpty ? "value" : full
        return ProtocolError(code, field: full.isEmpty ? nil : full, message: "\(label): \(reason)")
    }

    /// A coding path as text: keys joined with `.`, indices as `[n]`.
    public static func path(_ components: [PathComponent]) -> String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// A JSON value in a message: strings quoted (first 40 characters), whole numbers as digits,
    /// other values by type name.
    static func show(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): return "\"\(text.clipped(to: 40))\""
        case .number(let number):
            // Whole numbers below 2^53 as digits; beyond, the Double's own text (a whole number there that a 64-bit
            // type holds is a bigInteger, with its digits: this one was beyond them, and its digits are rounded).
            if number.rounded() == number, abs(number) < JSONValue.bigIntegerMagnitude { return String(Int64(number)) }
            return "\(number)"
        case .bigInteger(let digits): return digits
        case .bool(let flag): return "\(flag)"
        default: return value.typeName
        }
    }

    /// `JSONDecoder`'s words for what it found: `a string`, `a number`, `bool`, `an array`, `a dictionary`, `null`.
    static func found(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "bool"
        case .number, .bigInteger: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "a dictionary"
        }
    }
}

import Foundation

/// Typed, path-aware reads from a JSON object, for validating client messages.
///
/// Every error names the dotted path of the field (`content.state.workoutTimer.start`).
public struct FieldReader: Sendable {
    /// The object being read.
    public let object: [String: JSONValue]
    /// Dotted path of this object; empty at the message's top level.
    public let path: String

    /// Wraps a value that must be an object.
    /// - Throws: ``ProtocolError`` `invalid_field` (or `invalid_json` at the top level) when it is not an object.
    public init(_ value: JSONValue, path: String) throws(ProtocolError) {
        guard case .object(let object) = value else {
            if path.isEmpty {
                throw ProtocolError(.invalidJSON, field: nil, message: "message must be a JSON object, got \(value.typeName)")
            }
            throw ProtocolError.wrongType(path, expected: "an object", got: value)
        }
        self.object = object
        self.path = path
    }

    /// The dotted path of `key` inside this object.
    public func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The raw value of `key`, treating JSON `null` as absent.
    public func value(_ key: String) -> JSONValue? {
        guard let value = object[key], value != .null else { return nil }
        return value
    }

    /// Fails with `missing_field` when `key` is absent or null.
    public func required(_ key: String) throws(ProtocolError) -> JSONValue {
        guard let value = value(key) else { throw .missing(path(key)) }
        return value
    }

    /// A string, or `nil` when absent.
    /// - Parameter maxLength: longest accepted length, in characters (grapheme clusters), and at most
    ///   ``scalarsPerCharacter`` Unicode scalars for each of them (``scalarBound(forCharacters:)``).
    /// - Throws: ``ProtocolError`` `wrong_type` for another JSON type; `invalid_field` over either bound.
    public func string(_ key: String, maxLength: Int = 1024) throws(ProtocolError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw .wrongType(path(key), expected: "a string", got: value) }
        guard text.count <= maxLength else { throw .invalid(path(key), "longer than \(maxLength) characters") }
        let scalars = text.unicodeScalars.count, bound = Self.scalarBound(forCharacters: maxLength)
        guard scalars <= bound else {
            throw .invalid(path(key), "has \(scalars) Unicode scalars; at most \(bound) are accepted")
        }
        return text
    }

    /// The most Unicode scalars one character of a length limit may bring: 8 takes any emoji (a family of four
    /// is 7: four people and three joiners) and a letter with several accents; past it a "character" is a pile
    /// of combining marks, which would let `"a"` and 15,000 U+0301 pass a 256-character limit as one.
    public static let scalarsPerCharacter = 8

    /// The Unicode scalars a string of at most `characters` characters may hold: ``scalarsPerCharacter`` each.
    public static func scalarBound(forCharacters characters: Int) -> Int {
        characters.multipliedReportingOverflow(by: scalarsPerCharacter).overflow ? .max : characters * scalarsPerCharacter
    }

    /// A finite number, or `nil` when absent.
    public func number(_ key: String) throws(ProtocolError) -> Double? {
        guard let value = value(key) else { return nil }
        guard let number = value.numberValue, number.isFinite else {
            throw .wrongType(path(key), expected: "a number", got: value)
        }
        return number
    }

    /// A boolean, or `nil` when absent.
    public func bool(_ key: String) throws(ProtocolError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw .wrongType(path(key), expected: "a boolean", got: value) }
        return flag
    }

    /// An ISO-8601 date string, or `nil` when absent or null.
    /// - Throws: ``ProtocolError`` `invalid_field` when it is not a string laid out as an ISO-8601 date-time,
    ///   or names a date or time that does not exist (`2026-02-30`, `24:61`); the message says which part.
    public func date(_ key: String) throws(ProtocolError) -> Date? {
        guard let value = value(key) else { return nil }
        let expected = "expected an ISO-8601 date string such as \"2026-11-29T17:00:00Z\", got \(Self.show(value))"
        guard case .string(let text) = value else { throw .invalid(path(key), expected) }
        switch ISODate.read(text) {
        case .success(let date): return date
        case .failure(.notISO8601): throw .invalid(path(key), expected)
        case .failure(.impossible(let reason)): throw .invalid(path(key), "\(Self.show(value)) is not a real date and time: \(reason)")
        }
    }

    /// A nested object, or `nil` when absent.
    public func object(_ key: String) throws(ProtocolError) -> FieldReader? {
        guard let value = value(key) else { return nil }
        return try FieldReader(value, path: path(key))
    }

    static func show(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): "\"\(text.clipped(to: 40))\""
        case .number(let number): number.jsonText
        case .bigInteger(let digits): digits
        default: value.typeName
        }
    }
}

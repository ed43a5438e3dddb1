extension JSONValue {
    /// The member `key` of an object; `nil` for a missing key or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// The text of a string; `nil` for any other value.
    public var stringValue: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    /// The number (a ``JSONValue/bigInteger(_:)`` as the nearest `Double`); `nil` for any other value.
    public var numberValue: Double? {
        switch self {
        case .number(let number): number
        case .bigInteger(let digits): Double(digits)
        default: nil
        }
    }

    /// The members of an object; `nil` for any other value.
    public var objectValue: [String: JSONValue]? {
        guard case .object(let object) = self else { return nil }
        return object
    }
}

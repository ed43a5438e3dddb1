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

    /// The number; `nil` for any other value.
    public var numberValue: Double? {
        guard case .number(let number) = self else { return nil }
        return number
    }

    /// The members of an object; `nil` for any other value.
    public var objectValue: [String: JSONValue]? {
        guard case .object(let object) = self else { return nil }
        return object
    }
}

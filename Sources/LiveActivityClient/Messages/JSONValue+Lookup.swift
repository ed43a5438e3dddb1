import LiveActivityCore

/// Read-only lookups for reading server messages.
extension JSONValue {
    /// The member named `key` when this is an object, else nil.
    public func member(_ key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The number, when this is a number.
    var numberValue: Double? {
        if case .number(let number) = self { return number }
        return nil
    }

    /// The elements, when this is an array.
    var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The string or number as text (how a `requestId` is compared), else nil.
    var scalarText: String? {
        switch self {
        case .string(let text): text
        case .number(let number): number.rounded() == number && abs(number) < 9e15 ? String(Int64(number)) : String(number)
        default: nil
        }
    }
}

import LiveActivityCore

/// Read-only lookups for reading server messages.
extension JSONValue {
    /// The member named `key` when this is an object, else nil.
    public func member(_ key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    // `stringValue` and `numberValue` come from LiveActivityCore (JSONValue+Access.swift).

    /// The elements, when this is an array.
    var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The string or number as text (how a `requestId` is compared), else nil.
    var scalarText: String? {
        switch self {
        case .string(let text): text
        case .number(let number): JSONValue.integerForm(of: number).map(String.init) ?? String(number)
        case .bigInteger(let digits): digits
        default: nil
        }
    }
}

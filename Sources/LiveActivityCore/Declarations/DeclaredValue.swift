/// The two JSON shapes of an activity's attributes and content state.
public enum ContentForm: Sendable, Hashable {
    /// Swift's default `Codable` form, as APNs payloads carry it: `Date` as a number of seconds since
    /// 2001-01-01T00:00:00Z, `ClosedRange<Date>`/`Range<Date>` as `[lower, upper]`.
    case codable
    /// This server's protocol form (WebSocket clients, the CLI, the store, broadcasts): `Date` as an
    /// ISO-8601 string, ranges as `{"start": ISO-8601, "end": ISO-8601}`.
    case protocolForm
}

/// A value that decoded, in the form asked for, with what the app would silently ignore.
public struct DeclaredValue: Sendable, Hashable {
    /// The value, holding the declared keys only (absent optionals are left out).
    public var value: JSONValue
    /// Keys the app ignores (unknown or not decoded), extra range elements: worth telling the sender.
    public var warnings: [DeclarationWarning]

    /// Creates a result.
    public init(value: JSONValue, warnings: [DeclarationWarning]) {
        self.value = value
        self.warnings = warnings
    }
}

/// Something in a value that the app ignores: `key "hartRate" is not in ContentState; the app ignores it`.
public struct DeclarationWarning: Sendable, Hashable, CustomStringConvertible {
    /// Dotted path of the object or array concerned, from the caller's `field` (or the value's root).
    public var field: String
    /// The sentence.
    public var message: String

    /// Creates a warning.
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    /// `field: message` (or just the message at the root).
    public var description: String { field.isEmpty ? message : "\(field): \(message)" }
}

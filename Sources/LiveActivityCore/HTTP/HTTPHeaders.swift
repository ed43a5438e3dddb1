/// Request header fields, looked up by name without regard to case (RFC 9110 §5.1). Thread-safe (a value).
package struct HTTPHeaders: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    /// Values by lower-cased name. A field sent more than once holds the values lws joined.
    private var values: [String: String]

    /// Headers from `(name, value)` pairs; a later pair with the same name (in any case) wins.
    package init(_ fields: [(String, String)] = []) {
        values = [:]
        for (name, value) in fields { values[name.lowercased()] = value }
    }

    /// Headers from a literal, as `["apns-push-type": "liveactivity"]` (for tests).
    package init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    /// The value of the field `name` (`Authorization`, `apns-id`; any case), or nil when absent.
    package subscript(name: String) -> String? {
        get { values[name.lowercased()] }
        set { values[name.lowercased()] = newValue }
    }

    /// The lower-cased names present.
    package var names: [String] { values.keys.sorted() }
}

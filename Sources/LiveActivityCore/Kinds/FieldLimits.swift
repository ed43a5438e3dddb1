import Foundation

/// What `kind.json`'s `limits` adds to one declared field beyond its Swift type: bounds a server keeps
/// whatever the app's type allows (a name of 1…64 characters, an http(s) image URL, an end not before the
/// start). Checked on the normalised value (protocol form: strings, ISO-8601 dates), after the declaration
/// has decoded it; a field that is absent or `null` is not checked.
///
/// The JSON shape, by part and then field key (every key optional):
/// ```json
/// "limits": {
///   "attributes": {"name": {"minLength": 1, "maxLength": 64, "controlCharacters": false},
///                  "image": {"maxLength": 2048, "schemes": ["http", "https"]},
///                  "endTime": {"notBefore": "startTime"}},
///   "state": {"emoji": {"minLength": 1, "maxLength": 16, "maxScalars": 64, "controlCharacters": false}}
/// }
/// ```
/// docs/TEMPLATES.md documents each key.
public struct FieldLimits: Sendable, Equatable {
    /// Fewest characters (grapheme clusters) once leading and trailing white space is trimmed: 1 refuses
    /// an empty or blank string.
    public var minLength: Int?
    /// Most characters (grapheme clusters).
    public var maxLength: Int?
    /// Most Unicode scalars (bounds what one character may pack: ZWJ sequences, combining marks). Without it a
    /// ``maxLength`` still bounds them: ``FieldReader/scalarsPerCharacter`` for each character.
    public var maxScalars: Int?
    /// Whether control characters (Unicode category Cc) are allowed; `true` unless `kind.json` says `false`.
    public var controlCharacters: Bool
    /// For a URL: the accepted schemes, lower case; the URL must then be absolute, with a host and without a
    /// user name or password.
    public var schemes: [String]?
    /// For a date: the key of another date field of the same part it must not be before.
    public var notBefore: String?

    /// Creates limits; with no arguments, none.
    public init(minLength: Int? = nil, maxLength: Int? = nil, maxScalars: Int? = nil, controlCharacters: Bool = true,
                schemes: [String]? = nil, notBefore: String? = nil) {
        self.minLength = minLength
        self.maxLength = maxLength
        self.maxScalars = maxScalars
        self.controlCharacters = controlCharacters
        self.schemes = schemes
        self.notBefore = notBefore
    }

    /// Checks one normalised field of `object`.
    /// - Parameters:
    ///   - key: the field's key in `object`.
    ///   - object: the normalised part (attributes or state), for ``notBefore``.
    ///   - path: the field's dotted path, for messages (`attributes.name`).
    ///   - parent: the part's dotted path, for naming the ``notBefore`` field.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `path`.
    public func check(_ key: String, in object: [String: JSONValue], path: String, parent: String) throws(ProtocolError) {
        guard case .string(let text)? = object[key] else { return }
        if let minLength, text.trimmingCharacters(in: .whitespacesAndNewlines).count < minLength {
            throw .invalid(path, minLength == 1 ? "must not be empty" : "shorter than \(minLength) characters")
        }
        if let maxLength, text.count > maxLength { throw .invalid(path, "longer than \(maxLength) characters") }
        if let scalarBound = maxScalars ?? maxLength.map(FieldReader.scalarBound(forCharacters:)),
           text.unicodeScalars.count > scalarBound {
            throw .invalid(path, "has \(text.unicodeScalars.count) Unicode scalars; at most \(scalarBound) are accepted")
        }
        if !controlCharacters, text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .invalid(path, "must not contain control characters")
        }
        if let schemes { try Self.checkURL(text, schemes: schemes, field: path) }
        if let notBefore, let date = ISODate.parse(text), case .string(let otherText)? = object[notBefore],
           let other = ISODate.parse(otherText), date < other {
            let otherPath = parent.isEmpty ? notBefore : "\(parent).\(notBefore)"
            throw .invalid(path, "must not be before \(otherPath) (\(ISODate.format(other)))")
        }
    }

    /// Checks that `text` is an absolute URL with one of `schemes`, a host and no user info.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `field`.
    static func checkURL(_ text: String, schemes: [String], field: String) throws(ProtocolError) {
        let names = schemes.joined(separator: " or ")
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw .invalid(field, "expected an absolute \(names) URL, got \(FieldReader.show(.string(text)))")
        }
        guard schemes.contains(scheme) else {
            throw .invalid(field, "only \(names) URLs are accepted, got a \(scheme.clipped(to: 20)): URL")
        }
        guard let host = components.host, !host.isEmpty else { throw .invalid(field, "the URL has no host") }
        guard components.user == nil, components.password == nil else {
            throw .invalid(field, "URLs with a user name or password are not accepted")
        }
    }

    /// The limits in `kind.json`'s shape (only the keys that are set).
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        if let minLength { object["minLength"] = .number(Double(minLength)) }
        if let maxLength { object["maxLength"] = .number(Double(maxLength)) }
        if let maxScalars { object["maxScalars"] = .number(Double(maxScalars)) }
        if !controlCharacters { object["controlCharacters"] = .bool(false) }
        if let schemes { object["schemes"] = .array(schemes.map(JSONValue.string)) }
        if let notBefore { object["notBefore"] = .string(notBefore) }
        return .object(object)
    }

    /// Reads one field's limits from `kind.json`.
    /// - Throws: ``ProtocolError`` naming the bad key.
    static func read(_ reader: FieldReader) throws(ProtocolError) -> FieldLimits {
        func count(_ key: String) throws(ProtocolError) -> Int? {
            guard let value = reader.value(key) else { return nil }
            guard case .number(let number) = value, number.rounded() == number, number >= 0, number <= 1_000_000 else {
                throw .invalid(reader.path(key), "expected a whole number from 0 to 1000000")
            }
            return Int(number)
        }
        var limits = FieldLimits(minLength: try count("minLength"), maxLength: try count("maxLength"),
                                 maxScalars: try count("maxScalars"),
                                 controlCharacters: try reader.bool("controlCharacters") ?? true,
                                 notBefore: try reader.string("notBefore", maxLength: 128))
        if let value = reader.value("schemes") {
            guard case .array(let items) = value, !items.isEmpty else {
                throw .invalid(reader.path("schemes"), "expected an array of URL schemes, e.g. [\"https\"]")
            }
            limits.schemes = try items.enumerated().map { index, item throws(ProtocolError) in
                guard case .string(let scheme) = item, !scheme.isEmpty, scheme.count <= 32 else {
                    throw .invalid("\(reader.path("schemes"))[\(index)]", "expected a URL scheme such as \"https\"")
                }
                return scheme.lowercased()
            }
        }
        return limits
    }
}

/// An activity kind declared as data: the app's `ActivityAttributes` struct and its `ContentState`, read from
/// the Swift source the app itself compiles (issue 17).
///
/// Built by ``init(swiftSource:file:attributesType:)``; decodes JSON exactly as the app's synthesized
/// `Codable` conformance would (``decode(codable:as:)``), validates the protocol form
/// (``normalise(_:as:field:)``), converts between the two, and describes itself as JSON Schema.
/// Mirrors https://developer.apple.com/documentation/activitykit/activityattributes.
public struct ActivityDeclaration: Sendable, Hashable {
    /// The Swift name of the struct conforming to `ActivityAttributes` (an APNs payload's `attributes-type`).
    public var attributesType: String
    /// The attributes struct (its fixed fields).
    public var attributes: DeclaredStruct
    /// The nested `ContentState` struct (the fields that change).
    public var contentState: DeclaredStruct
    /// Every struct the two reach, by qualified name (including both of them).
    public var structs: [String: DeclaredStruct]
    /// Every enum they reach, by qualified name.
    public var enums: [String: DeclaredEnum]

    /// Reads the declaration from Swift source, as pasted from the app (`Attributes.swift`).
    ///
    /// Reads the struct conforming to `ActivityAttributes`, its nested `ContentState`, and every struct and
    /// `String`/`Int` enum they reach; skips functions, computed and `static` properties, comments, attributes,
    /// imports and `#if` branches after the first.
    /// - Parameters:
    ///   - source: the file's text.
    ///   - file: its name, for messages.
    ///   - attributesType: which struct to read when several conform to `ActivityAttributes`.
    /// - Throws: ``DeclarationError`` (`file:line: …`): unbalanced braces, an unterminated string or comment,
    ///   no (or several) `ActivityAttributes` structs, no `ContentState`, a property type that cannot be
    ///   decoded, a duplicate property, an unusable enum or `CodingKeys`.
    public init(swiftSource source: String, file: String = "Attributes.swift", attributesType: String? = nil) throws(DeclarationError) {
        let tokens = try SwiftTokenizer.tokenize(source, file: file)
        let syntax = try DeclarationParser.parse(tokens, file: file)
        var resolver = DeclarationResolver(syntax: syntax, file: file)
        self = try resolver.declaration(named: attributesType)
    }

    /// Creates a declaration from resolved parts.
    public init(attributesType: String, attributes: DeclaredStruct, contentState: DeclaredStruct,
                structs: [String: DeclaredStruct], enums: [String: DeclaredEnum]) {
        self.attributesType = attributesType
        self.attributes = attributes
        self.contentState = contentState
        self.structs = structs
        self.enums = enums
    }

    /// Whether a dictionary keyed by `key` is a JSON object (`String`, `Int`, or a `CodingKeyRepresentable`
    /// enum's raw values) rather than a flat array of alternating key, value, as `Dictionary(from:)` decides.
    public func isObjectKey(_ key: DeclaredType) -> Bool {
        if case .enumeration(let name) = key { return enums[name]?.isCodingKeyRepresentable ?? false }
        return key.isObjectKey
    }

    /// The struct for `part`.
    public func root(_ part: DeclaredPart) -> DeclaredStruct {
        part == .attributes ? attributes : contentState
    }
}

/// Which of the two structs a value is for.
public enum DeclaredPart: String, Sendable, Hashable, CaseIterable {
    /// The `ActivityAttributes` struct (`attributes` in an APNs payload).
    case attributes
    /// The nested `ContentState` (`content-state` in an APNs payload).
    case contentState
}

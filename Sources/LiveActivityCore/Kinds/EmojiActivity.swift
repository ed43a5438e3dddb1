import Foundation

/// The second reference app's activity: a named period with a remote thumbnail and an emoji.
///
/// - Attributes: `{"startTime": ISO-8601, "endTime": ISO-8601, "name": String, "image": URL?}`.
///   `name` is 1…64 characters; `image` is an `http`/`https` URL of at most 2048 characters (optional: without
///   one the page shows the fallback icon). `endTime` must not be before `startTime`. As in an APNs payload,
///   the dates may also be numbers of seconds since 2001-01-01 (Swift's default `Date` coding); they are
///   written back as ISO-8601 strings.
/// - ContentState: `{"emoji": String}`: one grapheme cluster (🏃‍♀️) or a short text of at most 16
///   characters, with no control characters.
///
/// The period `startTime…endTime` is a fixed attribute, not a countdown in the state, so the engine runs no
/// timer for this kind (no ticks, pause or extend); pages show the period from the attributes, and a client
/// that wants the activity to go stale at the end gives `content.staleDate`.
/// The server fetches `image` once and publishes the fitted thumbnail as the activity's `thumbnail`.
public struct EmojiActivity: ActivityKind {
    /// What `Kinds/emoji/kind.json` holds, for a registry made without the folder (``KindRegistry/builtIn``).
    public static let defaultMetadata = KindMetadata(
        name: "emoji", label: "Emoji", swiftNames: ["EmojiAttributes", "EmojiActivityAttributes", "EmojiWidgetAttributes"],
        title: "{{name}}", image: "image", fallbackIcon: "photo")

    /// The kind's folder metadata (``ActivityKind/metadata``).
    public let metadata: KindMetadata

    /// Creates the kind with its folder's metadata (`Kinds/emoji/kind.json`).
    public init(metadata: KindMetadata = Self.defaultMetadata) {
        self.metadata = metadata
    }

    /// Longest `name`, in characters (grapheme clusters).
    public static let maximumNameLength = 64
    /// Longest `image` URL, in characters.
    public static let maximumImageURLLength = 2048
    /// Longest `emoji`, in characters (grapheme clusters).
    public static let maximumEmojiLength = 16
    /// Most Unicode scalars in `emoji` (bounds what one "character" may pack: ZWJ sequences, combining marks).
    public static let maximumEmojiScalars = 64

    /// Validates and normalises the attributes (``ActivityKind/attributes(from:field:)``).
    /// - Throws: ``ProtocolError`` naming the bad field.
    public func attributes(from value: JSONValue, field: String) throws(ProtocolError) -> JSONValue {
        let reader = try FieldReader(value, path: field)
        let start = try date(reader, "startTime")
        let end = try date(reader, "endTime")
        guard end >= start else {
            throw .invalid(reader.path("endTime"), "must not be before \(reader.path("startTime")) (\(ISODate.format(start)))")
        }
        guard let name = try reader.string("name", maxLength: Self.maximumNameLength) else { throw .missing(reader.path("name")) }
        guard !name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw .invalid(reader.path("name"), "must not be empty")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalid(reader.path("name"), "must not contain control characters")
        }
        var attributes: [String: JSONValue] = [
            "startTime": .string(ISODate.format(start)),
            "endTime": .string(ISODate.format(end)),
            "name": .string(name),
        ]
        if let image = try reader.string("image", maxLength: Self.maximumImageURLLength) {
            try Self.checkImageURL(image, field: reader.path("image"))
            attributes["image"] = .string(image)
        }
        return .object(attributes)
    }

    /// Validates and normalises a content state (``ActivityKind/state(from:field:)``).
    /// - Throws: ``ProtocolError`` naming the bad field.
    public func state(from value: JSONValue, field: String) throws(ProtocolError) -> (state: JSONValue, timer: TimerRange?) {
        let reader = try FieldReader(value, path: field)
        let key = reader.path("emoji")
        guard let emoji = try reader.string("emoji", maxLength: Self.maximumEmojiLength) else { throw .missing(key) }
        guard !emoji.isEmpty else { throw .invalid(key, "must not be empty") }
        guard emoji.unicodeScalars.count <= Self.maximumEmojiScalars else {
            throw .invalid(key, "has \(emoji.unicodeScalars.count) Unicode scalars; at most \(Self.maximumEmojiScalars) are accepted")
        }
        guard !emoji.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .invalid(key, "must not contain control characters")
        }
        return (.object(["emoji": .string(emoji)]), nil)
    }

    /// The Codable form of `{"emoji": String}` is the same JSON, so this is ``state(from:field:)``.
    public func state(fromCodable value: JSONValue, field: String) throws(ProtocolError) -> (state: JSONValue, timer: TimerRange?) {
        try state(from: value, field: field)
    }

    /// `nil`: this kind has no countdown in its state, so the `durationSeconds` shortcut is refused.
    public func state(counting seconds: TimeInterval, from now: Date) -> (state: JSONValue, timer: TimerRange)? {
        nil
    }

    /// Never called (no countdown); returns `state` unchanged.
    public func state(_ state: JSONValue, with timer: TimerRange) -> JSONValue {
        state
    }

    /// `startTime` and `endTime` (``ActivityKind/dates(inAttributes:field:)``).
    public func dates(inAttributes attributes: JSONValue, field: String) -> [(field: String, date: Date)] {
        guard case .object(let object) = attributes else { return [] }
        return ["startTime", "endTime"].compactMap { key in
            guard case .string(let text)? = object[key], let date = ISODate.parse(text) else { return nil }
            return (field.isEmpty ? key : "\(field).\(key)", date)
        }
    }

    /// Checks that `text` is an absolute `http`/`https` URL with a host and no user info.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `field`.
    public static func checkImageURL(_ text: String, field: String) throws(ProtocolError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw .invalid(field, "expected an absolute http or https URL, got \(FieldReader.show(.string(text)))")
        }
        guard scheme == "http" || scheme == "https" else {
            throw .invalid(field, "only http and https image URLs are fetched, got a \(scheme.prefix(20)): URL")
        }
        guard let host = components.host, !host.isEmpty else { throw .invalid(field, "the URL has no host") }
        guard components.user == nil, components.password == nil else {
            throw .invalid(field, "URLs with a user name or password are not accepted")
        }
    }

    /// A date attribute: an ISO-8601 string, or (as APNs payloads carry it) seconds since 2001-01-01.
    private func date(_ reader: FieldReader, _ key: String) throws(ProtocolError) -> Date {
        guard let value = reader.value(key) else { throw .missing(reader.path(key)) }
        if case .number = value { return try CodableDate.decode(value, field: reader.path(key)) }
        guard let date = try reader.date(key) else { throw .missing(reader.path(key)) }
        return date
    }
}

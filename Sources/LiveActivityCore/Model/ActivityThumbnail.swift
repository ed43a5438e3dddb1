/// The fitted thumbnail of an activity's `image` attribute, as the server publishes it once fetched.
///
/// Encoded in the activity object as `"thumbnail": {"1x": "/images/{key}@1x.png", "2x": …, "3x": …}`: each
/// scale's URL on this server, a 48×48-point PNG (48, 96 and 144 pixels square). `key` is the SHA-256 of the
/// image URL (64 lowercase hex digits). Absent until the image has been fetched; never set when it cannot be.
public struct ActivityThumbnail: Sendable, Hashable, Encodable {
    /// The scales the server renders, in pixels per point.
    public static let scales = [1, 2, 3]
    /// The thumbnail's side, in points.
    public static let sidePoints = 48
    /// Where the images are served.
    public static let pathPrefix = "/images/"

    /// The cache key: SHA-256 of the image URL, 64 lowercase hex digits.
    public var key: String

    /// Creates the thumbnail for cache key `key`.
    public init(key: String) {
        self.key = key
    }

    /// The file name of one scale, `{key}@{scale}x.png`.
    public static func fileName(key: String, scale: Int) -> String { "\(key)@\(scale)x.png" }

    /// The URL path of one scale on this server.
    public func path(scale: Int) -> String { Self.pathPrefix + Self.fileName(key: key, scale: scale) }

    /// Reads `{"1x": "/images/{key}@1x.png", …}` back (from a stored activity).
    /// - Returns: `nil` when the object holds no well-formed 1× path.
    public init?(_ value: JSONValue) {
        guard case .object(let object) = value, case .string(let path)? = object["1x"],
              path.hasPrefix(Self.pathPrefix), path.hasSuffix("@1x.png") else { return nil }
        let key = String(path.dropFirst(Self.pathPrefix.count).dropLast("@1x.png".count))
        guard key.count == 64, key.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        self.key = key
    }

    /// Encodes `{"1x": path, "2x": path, "3x": path}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Dictionary(uniqueKeysWithValues: Self.scales.map { ("\($0)x", path(scale: $0)) }))
    }
}

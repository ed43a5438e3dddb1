import Foundation

/// The one JSON configuration for everything the server writes: dates as ISO-8601 UTC with milliseconds,
/// keys sorted so that equal messages are equal bytes. The server's other JSON (the inspector's records,
/// the HTTP API) uses it too.
public enum MessageEncoder {
    /// A configured encoder. `JSONEncoder` is safe to use from several threads once configured.
    public static let encoder: JSONEncoder = make()

    /// `userInfo` key of ``storeEncoder``: `true` makes an ``Activity`` encode the stores' form.
    public static let storedFormKey = CodingUserInfoKey(rawValue: "liveactivity.storedForm")!

    /// The same configuration, writing activities in the stores' form (``StoredActivity``): one encoding
    /// per stored activity, with no parse and re-encode.
    public static let storeEncoder: JSONEncoder = {
        let encoder = make()
        encoder.userInfo[storedFormKey] = true
        return encoder
    }()

    private static func make() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISODate.format(date))
        }
        return encoder
    }
}

/// Why an activity ended.
public enum EndReason: String, Sendable, Hashable, Codable {
    /// A client sent `end` (or `stop`).
    case request
    /// The server ended it 8 hours after it started, as iOS does (``Lifetime/maximumActive``).
    case lifetimeLimit
}

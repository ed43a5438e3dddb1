import Foundation

/// A read-only link that shows one activity, live, to anyone holding it, until it expires or is revoked.
///
/// The link's token is never stored: only its SHA-256 (`tokenHash`), so a copy of the database cannot be
/// turned into working links.
public struct Share: Sendable, Hashable, Codable {
    /// A short public id, for listing and revoking (not a secret).
    public var id: String
    /// SHA-256 of the token, 64 hex digits.
    public var tokenHash: String
    /// The one activity the link shows.
    public var activityId: String
    /// When it was made (UTC).
    public var createdAt: Date
    /// When it stops working (UTC); it also stops when the activity is dismissed.
    public var expiresAt: Date
    /// When it stopped working early (revoked, or its activity dismissed); kept so that the link then
    /// says "this share has ended" rather than "not found".
    public var endedAt: Date?

    /// Longest a share may live, in seconds (24 h).
    public static let maximumLifetime: TimeInterval = 24 * 3600

    /// How long an ended share is remembered (to answer 410 rather than 404), in seconds.
    public static let tombstoneLifetime: TimeInterval = 48 * 3600

    /// Creates a share.
    public init(id: String, tokenHash: String, activityId: String, createdAt: Date, expiresAt: Date, endedAt: Date? = nil) {
        self.id = id
        self.tokenHash = tokenHash
        self.activityId = activityId
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.endedAt = endedAt
    }

    /// Whether the link works at `now`.
    public func isLive(at now: Date) -> Bool { endedAt == nil && now < expiresAt }

    /// When a share made at `now` with `expiresIn` seconds (or none) expires: at most 24 h away.
    public static func expiry(now: Date, expiresIn: TimeInterval?) -> Date {
        now.addingTimeInterval(min(expiresIn ?? maximumLifetime, maximumLifetime))
    }

    /// Reads `expiresIn` (seconds, 1…86,400) from a message or request body.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `expiresIn`.
    public static func expiresIn(_ reader: FieldReader) throws(ProtocolError) -> TimeInterval? {
        guard let seconds = try reader.number("expiresIn") else { return nil }
        guard seconds >= 1, seconds <= maximumLifetime else {
            throw .invalid(reader.path("expiresIn"), "expected seconds from 1 to \(Int(maximumLifetime)) (24 h), got \(seconds.jsonText)")
        }
        return seconds
    }
}

/// A share as the dashboard lists it.
public struct ShareSummary: Sendable, Hashable, Encodable {
    /// The share's public id.
    public var id: String
    /// The activity it shows.
    public var activityId: String
    /// When it stops working (UTC).
    public var expiresAt: Date
    /// Connections watching through it now.
    public var viewers: Int
    /// The link, only in the reply that created it (the token is not kept).
    public var url: String?

    /// Creates a summary.
    public init(_ share: Share, viewers: Int, url: String? = nil) {
        id = share.id
        activityId = share.activityId
        expiresAt = share.expiresAt
        self.viewers = viewers
        self.url = url
    }
}

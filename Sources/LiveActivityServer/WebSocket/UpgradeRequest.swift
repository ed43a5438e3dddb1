import Foundation

/// A WebSocket handshake as the server judges it: the request line's path and the values it carries,
/// read once from the connection by the lws adapter.
struct UpgradeRequest: Sendable, Equatable {
    /// The request path without the query (`/ws`).
    var path: String
    /// `Origin`, when a browser sent one.
    var origin: String?
    /// `Host`.
    var host: String?
    /// The token presented: `Authorization: Bearer …` (scripts) or `?token=` (browsers).
    var token: String?
    /// `?share=`: a share link's token (the viewer sees one activity, read-only).
    var shareToken: String?
    /// `?since=`: resume after this sequence number.
    var since: UInt64?
    /// `?log=`: the event log `since` belongs to.
    var log: String?

    /// The bearer token of an `Authorization` value (`Bearer abc` → `abc`), or nil.
    static func bearer(_ authorization: String?) -> String? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingCharacters(in: .whitespaces)
    }
}

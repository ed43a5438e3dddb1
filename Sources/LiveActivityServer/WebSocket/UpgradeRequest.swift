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
}

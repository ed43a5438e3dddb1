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
    /// `?since=`: resume after this sequence number; nil when absent or not a whole number (see ``sinceText``).
    var since: UInt64?
    /// `?log=`: the event log `since` belongs to.
    var log: String?
    /// `?since=` as sent, when it was sent: a value that is not a whole number from 0 to 2^64 − 1 refuses the
    /// handshake (400 naming `since`), as `catchUp` refuses it, rather than being read as no `since`.
    var sinceText: String? = nil

    /// Reads `?since=`: the text as sent and its value, nil when it is not a whole number (0 … 2^64 − 1).
    static func since(_ text: String?) -> (value: UInt64?, text: String?) {
        (text.flatMap { $0.utf8.allSatisfy { (0x30...0x39).contains($0) } ? UInt64($0) : nil }, text)
    }
}

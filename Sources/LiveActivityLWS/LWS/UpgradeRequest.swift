import Foundation

/// A WebSocket handshake as the server judges it: the request line's path and the values it carries,
/// read once from the connection by the lws adapter.
package struct UpgradeRequest: Sendable, Equatable {
    /// The request path without the query (`/ws`).
    package var path: String
    /// `Origin`, when a browser sent one.
    package var origin: String?
    /// `Host`.
    package var host: String?
    /// The token presented: `Authorization: Bearer …` (scripts) or `?token=` (browsers).
    package var token: String?
    /// `?share=`: a share link's token (the viewer sees one activity, read-only).
    package var shareToken: String?
    /// `?since=`: resume after this sequence number; nil when absent or not a whole number (see ``sinceText``).
    package var since: UInt64?
    /// `?log=`: the event log `since` belongs to.
    package var log: String?
    /// `?since=` as sent, when it was sent: a value that is not a whole number from 0 to 2^64 − 1 refuses the
    /// handshake (400 naming `since`), as `catchUp` refuses it, rather than being read as no `since`.
    package var sinceText: String? = nil

    /// Reads `?since=`: the text as sent and its value, nil when it is not a whole number (0 … 2^64 − 1).
    package static func since(_ text: String?) -> (value: UInt64?, text: String?) {
        (text.flatMap { $0.utf8.allSatisfy { (0x30...0x39).contains($0) } ? UInt64($0) : nil }, text)
    }
}

import LiveActivityCore

/// Why a ``ProtocolClient`` call failed.
///
/// ``Kind/refused`` means the server answered with an `error` message (see ``refusal``); every other kind
/// means the conversation could not happen: bad URL, no connection, handshake failure, timeout or a dropped
/// connection.
public struct ClientError: Error, Sendable, CustomStringConvertible {
    /// The closed set of failure kinds.
    public enum Kind: Sendable, Equatable {
        /// The server URL is not a `ws://` or `wss://` URL with a host.
        case invalidURL
        /// The TCP connection, TLS or the WebSocket handshake failed.
        case connectionFailed
        /// No answer (connection or reply) within the time allowed.
        case timedOut
        /// The connection closed (by the server, the network, or ``ProtocolClient/close()``).
        case connectionClosed
        /// The server answered the request with an `error` message.
        case refused
    }

    /// An `error` message from the server (docs/PROTOCOL.md, "error").
    public struct Refusal: Sendable, Equatable {
        /// The protocol error code, e.g. `unknown_activity`.
        public var code: String
        /// The offending field as a dotted path, when the server named one.
        public var field: String?
        /// The server's human-readable explanation.
        public var message: String
    }

    /// What went wrong.
    public var kind: Kind
    /// A one-line explanation for people.
    public var message: String
    /// The server's answer, set only for ``Kind/refused``.
    public var refusal: Refusal?

    /// Creates an error of a kind other than ``Kind/refused``.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// Creates a ``Kind/refused`` error from the server's `error` message.
    public init(refusal: Refusal) {
        kind = .refused
        message = "\(refusal.code): \(refusal.message)"
        self.refusal = refusal
    }

    /// The one-line explanation.
    public var description: String { message }
}

import Foundation

/// How a ``ProtocolClient`` connects.
public struct ClientConfiguration: Sendable {
    /// The server's WebSocket endpoint.
    public var url: WebSocketURL
    /// Sent as `Authorization: Bearer <token>` on the handshake when set.
    public var token: String?
    /// Accept a self-signed, expired or wrongly named TLS certificate (`wss://` only).
    public var allowInsecureTLS: Bool
    /// How long ``ProtocolClient/connect()`` waits for the handshake to complete.
    public var connectTimeout: Duration
    /// PEM bundle of trusted certificate authorities for `wss://`; the system bundle by default.
    public var certificateAuthorityFile: String?
    /// Let libwebsockets print its own errors and warnings to standard error.
    public var libraryLogging: Bool

    /// The WebSocket subprotocol the client asks for (docs/PROTOCOL.md).
    public static let subprotocol = "liveactivity.v1"

    /// Creates a configuration.
    /// - Parameters:
    ///   - url: the server's WebSocket endpoint.
    ///   - token: bearer token for the `Authorization` header, or nil for none.
    ///   - allowInsecureTLS: accept certificates that do not verify (`--insecure`).
    ///   - connectTimeout: how long to wait for the connection and handshake.
    public init(url: WebSocketURL, token: String? = nil, allowInsecureTLS: Bool = false,
                connectTimeout: Duration = .seconds(10)) {
        self.url = url
        self.token = token
        self.allowInsecureTLS = allowInsecureTLS
        self.connectTimeout = connectTimeout
        let systemBundle = "/etc/ssl/certs/ca-certificates.crt"
        certificateAuthorityFile = FileManager.default.fileExists(atPath: systemBundle) ? systemBundle : nil
        libraryLogging = false
    }
}

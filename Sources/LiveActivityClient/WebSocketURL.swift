import Foundation

/// A parsed `ws://` or `wss://` server URL, split the way `lws_client_connect_info` wants it.
public struct WebSocketURL: Sendable, Equatable, CustomStringConvertible {
    /// Whether the connection uses TLS (`wss://`).
    public var secure: Bool
    /// Host name or IP address (without the brackets of an IPv6 literal).
    public var host: String
    /// TCP port; 80 for `ws://` and 443 for `wss://` when the URL gives none.
    public var port: Int
    /// Request path with any query, starting with `/`; `/ws` when the URL gives no path.
    public var path: String

    /// Creates a URL from its parts.
    /// - Parameters:
    ///   - secure: `wss://` (TLS) rather than `ws://`.
    ///   - host: host name or IP address, IPv6 without brackets.
    ///   - port: TCP port, 1…65535.
    ///   - path: request path (and query), starting with `/`.
    public init(secure: Bool, host: String, port: Int, path: String) {
        self.secure = secure
        self.host = host
        self.port = port
        self.path = path
    }

    /// Parses a server URL.
    ///
    /// - Parameter text: e.g. `ws://127.0.0.1:8080/ws` or `wss://example.org/ws`.
    /// - Throws: ``ClientError`` of kind ``ClientError/Kind/invalidURL`` naming what is wrong.
    public init(_ text: String) throws(ClientError) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw ClientError(.invalidURL, "\"\(text)\" is not a URL; expected ws://HOST[:PORT]/PATH or wss://…")
        }
        switch scheme {
        case "ws": secure = false
        case "wss": secure = true
        default:
            throw ClientError(.invalidURL, "\"\(text)\": the scheme must be ws or wss, not \(scheme)")
        }
        var host = components.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw ClientError(.invalidURL, "\"\(text)\" has no host") }
        self.host = host
        if let port = components.port {
            guard (1...65535).contains(port) else { throw ClientError(.invalidURL, "\"\(text)\": port \(port) is out of range") }
            self.port = port
        } else {
            port = secure ? 443 : 80
        }
        var path = components.percentEncodedPath
        if path.isEmpty { path = "/ws" }
        if let query = components.percentEncodedQuery { path += "?" + query }
        self.path = path
    }

    /// The value of the `Host` header: the host, plus the port when it is not the scheme's default.
    public var hostHeader: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return port == (secure ? 443 : 80) ? shown : "\(shown):\(port)"
    }

    /// The URL as text, e.g. `ws://127.0.0.1:8080/ws`.
    public var description: String { "\(secure ? "wss" : "ws")://\(hostHeader)\(path)" }
}

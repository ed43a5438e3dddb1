/// Why the server could not start.
public struct ServerError: Error, Sendable, CustomStringConvertible {
    /// Human-readable reason, naming the setting at fault.
    public let description: String

    /// Creates an error with a sentence naming the setting at fault.
    public init(_ description: String) { self.description = description }

    static func listen(host: String, port: Int) -> ServerError {
        ServerError("cannot listen on \(host):\(port) (address in use, not local, or not permitted)")
    }

    static let context = ServerError("libwebsockets could not create its context")

    static func publicDirectory(_ path: String) -> ServerError {
        ServerError("public directory \(path) does not exist or has no index.html (use --public DIR)")
    }
}

import Foundation
import LiveActivityClient
import LiveActivityCommandLine

/// The options every client subcommand takes: where the server is and how to reach it.
struct ClientOptions {
    /// `--server` (env `LIVEACTIVITY_SERVER`).
    var server = ProcessInfo.processInfo.environment["LIVEACTIVITY_SERVER"] ?? "ws://127.0.0.1:8080/ws"
    /// `--token` (env `LIVEACTIVITY_TOKEN`).
    var token = ProcessInfo.processInfo.environment["LIVEACTIVITY_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    /// `--timeout`: for connecting and for each reply.
    var timeout: Duration = .seconds(10)
    /// `--insecure`: accept any TLS certificate.
    var insecure = false
    /// `--verbose`: let libwebsockets print its errors.
    var verbose = false
    /// `--help` was given.
    var help = false

    /// The usage lines for these options, shared by every client subcommand.
    static let usage = """
      --server URL        ws:// or wss:// endpoint (default ws://127.0.0.1:8080/ws; env LIVEACTIVITY_SERVER)
      --token TOKEN       sent as "Authorization: Bearer TOKEN" (env LIVEACTIVITY_TOKEN)
      --timeout SECONDS   how long to wait to connect and for each reply (default 10)
      --insecure          with wss://, accept a self-signed or otherwise unverified certificate
      --verbose           show libwebsockets' own errors on standard error
      -h, --help          show this help
    """

    /// The exit statuses, shared by every client subcommand.
    static let exitStatuses = """
    exit status: 0 success, 1 the server refused the request or the token, 2 usage error (a malformed --server
    URL too), 3 cannot connect or no reply
    """

    /// Reads option `name` if it is one of the shared options.
    /// - Returns: whether it was.
    /// - Throws: ``UsageError`` for a missing or bad value.
    mutating func read(_ name: String, from arguments: inout ArgumentList) throws(UsageError) -> Bool {
        switch name {
        case "--server": server = try arguments.value(for: name)
        case "--token": token = try arguments.value(for: name)
        case "--timeout":
            let text = try arguments.value(for: name)
            guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
                throw UsageError("--timeout must be a number of seconds above 0, got \"\(text)\"")
            }
            timeout = .milliseconds(Int64((seconds * 1000).rounded()))
        case "--insecure": try arguments.requireNoValue(name); insecure = true
        case "--verbose": try arguments.requireNoValue(name); verbose = true
        case "-h", "--help": help = true
        default: return false
        }
        return true
    }

    /// The client configuration these options describe.
    /// - Throws: ``ClientError`` of kind `invalidURL` for a bad `--server` (reported as a usage error, exit 2).
    func configuration() throws(ClientError) -> ClientConfiguration {
        var configuration = ClientConfiguration(url: try WebSocketURL(server), token: token,
                                                allowInsecureTLS: insecure, connectTimeout: timeout)
        configuration.libraryLogging = verbose
        return configuration
    }
}

import Foundation
import LiveActivityClient
import LiveActivityCommandLine
import LiveActivityCore

/// What every client subcommand shares: help detection, usage errors, connecting, and mapping failures
/// to exit statuses (0 success, 1 refused by the server — an `error` reply or a token refused on the handshake —,
/// 2 usage error — a malformed `--server` URL included —, 3 cannot connect or no reply).
enum ClientRunner {
    /// Reads a subcommand's arguments: the shared client options (`--server`, `--token`, …) first, then
    /// `option` for the command's own options (it returns false for a name it does not know), and
    /// `positional` for everything else.
    /// - Throws: ``UsageError`` naming the unknown option or bad value.
    static func parse(_ arguments: [String], into options: inout ClientOptions,
                      option: (String, inout ArgumentList) throws(UsageError) -> Bool,
                      positional: (String) throws(UsageError) -> Void) throws(UsageError) {
        var list = ArgumentList(arguments)
        while let argument = list.next() {
            switch argument {
            case .option(let name):
                if try options.read(name, from: &list) { continue }
                guard try option(name, &list) else { throw UsageError("unknown option \"\(name)\"") }
            case .positional(let value):
                try positional(value)
            }
        }
    }

    /// Whether the arguments ask for help (`-h` or `--help` before any `--`).
    static func wantsHelp(_ arguments: [String]) -> Bool {
        for argument in arguments {
            if argument == "--" { return false }
            if argument == "-h" || argument == "--help" { return true }
        }
        return false
    }

    /// Prints a usage error for `command` on standard error.
    /// - Returns: 2.
    static func usageError(_ command: String, _ error: UsageError) -> Int32 {
        printError("liveactivity \(command): \(error.message)\nRun \"liveactivity \(command) --help\" for usage.")
        return 2
    }

    /// Connects as `options` say, runs `body` with the open client, then closes it.
    /// - Returns: `body`'s status; 1 when the server refused a request or the token (HTTP 401 on the
    ///   handshake); 2 for a malformed `--server` URL; 3 when it cannot connect, the connection drops or a
    ///   reply times out.
    static func withConnection(_ command: String, _ options: ClientOptions,
                               _ body: (ProtocolClient) throws(ClientError) -> Int32) -> Int32 {
        let client: ProtocolClient
        do {
            client = ProtocolClient(configuration: try options.configuration())
            try client.connect()
        } catch {
            var error = error
            if error.message.contains("TLS handshake failed"), !options.insecure {
                error.message += "\n(if the server's certificate is self-signed, --insecure accepts it)"
            }
            return report(command, error)
        }
        defer { client.close() }
        do {
            return try body(client)
        } catch {
            return report(command, error)
        }
    }

    /// Prints `error` on standard error.
    /// - Returns: 1 for a refusal by the server (an `error` reply, or a handshake refused for the token), 2 for
    ///   a malformed `--server` URL (a usage error), 3 otherwise.
    static func report(_ command: String, _ error: ClientError) -> Int32 {
        if let refusal = error.refusal {
            // The server's message already names the field (docs/PROTOCOL.md, "error").
            printError("liveactivity \(command): the server refused the request: \(refusal.code): \(refusal.message)")
            return 1
        }
        if error.kind == .invalidURL {
            return usageError(command, UsageError("--server: \(error.message)"))
        }
        printError("liveactivity \(command): \(error.message)")
        return 3
    }

    /// Parses a duration option's value (`--duration`, `--for`); it must be more than zero.
    /// - Parameter option: the option's name, for the message.
    /// - Throws: ``UsageError`` naming `option` and what is wrong.
    static func duration(_ text: String, option: String = "--duration") throws(UsageError) -> Double {
        let duration: Duration
        do { duration = try DurationParser.parse(text) } catch { throw UsageError("\(option): \(error.description)") }
        let seconds = Double(duration.components.seconds)
        guard seconds > 0 else { throw UsageError("\(option) must be more than 0 seconds, got \"\(text)\"") }
        return seconds
    }

    /// Parses a `--relevance` value: a finite number.
    static func relevance(_ text: String) throws(UsageError) -> Double {
        guard let value = Double(text), value.isFinite else {
            throw UsageError("--relevance must be a number, got \"\(text)\"")
        }
        return value
    }
}

import Foundation
import LiveActivityCore
import LiveActivityServer

/// `liveactivity serve`: runs the server until SIGINT or SIGTERM.
enum ServeCommand {
    static let usage = """
    usage: liveactivity serve [--host ADDRESS] [--port PORT] [--public DIR] [--verbose]

      --host ADDRESS   address to listen on (default 127.0.0.1; env LIVEACTIVITY_HOST)
      --port PORT      TCP port, 0 picks a free one (default 8080; env LIVEACTIVITY_PORT)
      --public DIR     folder served at / (default: ./Public, or the Public folder of this checkout)
      --verbose        log every connection and event to standard error

    The first line printed is the URL the server listens on. Ctrl-C or SIGTERM stops it cleanly.
    """

    /// Parses options, starts the server and blocks until a signal stops it.
    /// - Returns: 0 after a clean stop, 1 if the server cannot start, 2 on a usage error.
    static func run(_ arguments: [String]) -> Int32 {
        let environment = ProcessInfo.processInfo.environment
        var host = environment["LIVEACTIVITY_HOST"] ?? "127.0.0.1"
        var portText = environment["LIVEACTIVITY_PORT"] ?? "8080"
        var publicPath: String?
        var verbose = false
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            func value() -> String? {
                guard let next = iterator.next() else {
                    printError("liveactivity serve: \(argument) needs a value\n\n\(usage)")
                    return nil
                }
                return next
            }
            switch argument {
            case "--host": guard let v = value() else { return 2 }; host = v
            case "--port": guard let v = value() else { return 2 }; portText = v
            case "--public": guard let v = value() else { return 2 }; publicPath = v
            case "--verbose": verbose = true
            case "-h", "--help":
                print(usage)
                return 0
            default:
                printError("liveactivity serve: unknown option \"\(argument)\"\n\n\(usage)")
                return 2
            }
        }
        guard let port = Int(portText), (0...65535).contains(port) else {
            printError("liveactivity serve: --port must be a number from 0 to 65535, got \"\(portText)\"")
            return 2
        }
        guard let publicDirectory = publicPath.map({ URL(fileURLWithPath: $0) }) ?? defaultPublicDirectory() else {
            printError("liveactivity serve: no Public folder found here or beside the executable; pass --public DIR")
            return 2
        }

        var configuration = ServerConfiguration(publicDirectory: publicDirectory)
        configuration.host = host
        configuration.port = port
        let logger = Logger(label: "liveactivity", level: verbose ? .debug : .info)
        do {
            let server = try LiveActivityServer(configuration: configuration, logger: logger)
            let boundPort = try server.start()
            let shownHost = host.contains(":") ? "[\(host)]" : host
            // Unbuffered, so that scripts and tests read the URL at once.
            FileHandle.standardOutput.write(Data("Listening on http://\(shownHost):\(boundPort)/\n".utf8))
            let signals = stopOnSignals(server)
            server.waitUntilStopped()
            withExtendedLifetime(signals) {}
            return 0
        } catch {
            printError("liveactivity serve: \(error)")
            return 1
        }
    }

    /// Stops the server on SIGINT or SIGTERM; the returned sources must be kept alive.
    private static func stopOnSignals(_ server: LiveActivityServer) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { server.stop() }
            source.resume()
            return source
        }
    }

    /// `./Public`, else the `Public` folder found walking up from the executable (a checkout's `.build/...`).
    private static func defaultPublicDirectory() -> URL? {
        let fileManager = FileManager.default
        let here = URL(fileURLWithPath: fileManager.currentDirectoryPath).appendingPathComponent("Public")
        if fileManager.fileExists(atPath: here.appendingPathComponent("index.html").path) { return here }
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = folder.appendingPathComponent("Public")
            if fileManager.fileExists(atPath: candidate.appendingPathComponent("index.html").path) { return candidate }
            folder.deleteLastPathComponent()
        }
        return nil
    }
}

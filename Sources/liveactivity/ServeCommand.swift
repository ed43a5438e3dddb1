import Foundation
import LiveActivityCore
import LiveActivityServer
import LiveActivityStore

/// `liveactivity serve`: runs the server until SIGINT or SIGTERM.
enum ServeCommand {
    static let usage = """
    usage: liveactivity serve [--host ADDRESS] [--port PORT] [--public DIR] [--data-dir DIR | --memory]
                              [--log-events N] [--log-hours H] [--durability full|normal] [--verbose]

      --host ADDRESS     address to listen on (default 127.0.0.1; env LIVEACTIVITY_HOST)
      --port PORT        TCP port, 0 picks a free one (default 8080; env LIVEACTIVITY_PORT)
      --public DIR       folder served at / (default: ./Public, or the Public folder of this checkout)
      --data-dir DIR     where the SQLite store lives (default ./data; env LIVEACTIVITY_DATA_DIR)
      --memory           keep everything in memory only (nothing survives a restart)
      --log-events N     most events kept for resuming clients (default 100000)
      --log-hours H      oldest events kept for resuming clients, in hours (default 24)
      --durability MODE  full: fsync every commit (default); normal: survive crashes, not power loss
      --verbose          log every connection and event to standard error

    The first line printed is the URL the server listens on. Ctrl-C or SIGTERM stops it cleanly.
    """

    /// Parses options, starts the server and blocks until a signal stops it.
    /// - Returns: 0 after a clean stop, 1 if the server cannot start, 2 on a usage error.
    static func run(_ arguments: [String]) -> Int32 {
        let environment = ProcessInfo.processInfo.environment
        var host = environment["LIVEACTIVITY_HOST"] ?? "127.0.0.1"
        var portText = environment["LIVEACTIVITY_PORT"] ?? "8080"
        var publicPath: String?
        var dataPath = environment["LIVEACTIVITY_DATA_DIR"] ?? "data"
        var inMemory = false
        var retention = SQLiteActivityStore.Retention()
        var durability = SQLiteActivityStore.Durability.full
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
            case "--data-dir": guard let v = value() else { return 2 }; dataPath = v
            case "--memory": inMemory = true
            case "--log-events":
                guard let v = value() else { return 2 }
                guard let count = Int(v), count >= 1 else {
                    printError("liveactivity serve: --log-events must be a whole number from 1, got \"\(v)\"")
                    return 2
                }
                retention.maximumEvents = count
            case "--log-hours":
                guard let v = value() else { return 2 }
                guard let hours = Double(v), hours > 0, hours.isFinite else {
                    printError("liveactivity serve: --log-hours must be a positive number, got \"\(v)\"")
                    return 2
                }
                retention.maximumAge = hours * 3600
            case "--durability":
                guard let v = value() else { return 2 }
                guard let mode = SQLiteActivityStore.Durability(rawValue: v) else {
                    printError("liveactivity serve: --durability must be full or normal, got \"\(v)\"")
                    return 2
                }
                durability = mode
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
        let store: any ActivityStore
        if inMemory {
            store = InMemoryActivityStore(logCapacity: retention.maximumEvents)
        } else {
            do {
                store = try SQLiteActivityStore(directory: URL(fileURLWithPath: dataPath), retention: retention, durability: durability)
            } catch {
                printError("liveactivity serve: cannot use the data directory \"\(dataPath)\": \(error)")
                return 1
            }
        }
        do {
            let server = try LiveActivityServer(configuration: configuration, store: store, logger: logger)
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

import Foundation
import LiveActivityCluster
import LiveActivityCommandLine
import LiveActivityCore
import LiveActivityServer
import LiveActivityStore

/// `liveactivity serve`: runs the server until SIGINT or SIGTERM.
enum ServeCommand {
    /// Parses options, opens the store, starts the server and blocks until a signal stops it.
    /// - Returns: 0 after a clean stop, 1 if the server cannot start, 2 on a usage error.
    static func run(_ arguments: [String]) -> Int32 {
        // Before any thread exists: SIGINT and SIGTERM stay pending until a thread takes them with
        // sigwait, so a signal that arrives at any moment (even right after the URL line) is never lost.
        var termination = terminationSignals()
        pthread_sigmask(SIG_BLOCK, &termination, nil)
        let options: ServeOptions
        do throws(UsageError) {
            guard let parsed = try ServeOptions.parse(arguments, environment: ProcessInfo.processInfo.environment) else {
                print(ServeOptions.usage)
                return 0
            }
            options = parsed
        } catch {
            printError("liveactivity serve: \(error.message)\nRun \"liveactivity serve --help\" for usage.")
            return 2
        }

        let configuration = options.configuration
        let logger = Logger(label: "liveactivity", level: options.logLevel, format: options.logFormat)
        do {
            try configuration.validate()
        } catch {
            printError("liveactivity serve: \(plainDescription(error))")
            return 1
        }
        let store: any ActivityStore
        if let url = options.clusterURL {
            do {
                store = try RedisActivityStore(endpoint: try RedisEndpoint(url), logCapacity: options.retention.maximumEvents)
            } catch {
                printError("liveactivity serve: cannot use the cluster \"\(url)\": \(plainDescription(error))")
                return 1
            }
        } else if options.inMemory {
            store = InMemoryActivityStore(logCapacity: options.retention.maximumEvents)
        } else {
            do {
                store = try SQLiteActivityStore(directory: URL(fileURLWithPath: options.dataPath), retention: options.retention,
                                                durability: options.durability)
            } catch {
                printError("liveactivity serve: cannot use the data directory \"\(options.dataPath)\": \(plainDescription(error))")
                return 1
            }
        }
        do {
            let server = try LiveActivityServer(configuration: configuration, store: store, logger: logger)
            // The server's stop is safe before, during and after start.
            stopOnSignals(server, termination)
            let boundPort = try server.start()
            let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
            let scheme = configuration.usesTLS ? "https" : "http"
            // Written at once by the writer's thread, so that scripts and tests read the URL at once; queued, so
            // that a standard output nobody reads never holds the server up.
            LogWriter.standardOutput.write("Listening on \(scheme)://\(host):\(boundPort)/")
            LogWriter.standardOutput.write("Push-to-start token: \(server.pushToStartToken)")
            if let apnsPort = server.apnsPort {
                LogWriter.standardOutput.write("APNs (HTTP/2) on \(scheme)://\(host):\(apnsPort)/")
            }
            if configuration.access.isOpen {
                logger.info("no tokens configured: every client may control (loopback only)")
            }
            server.waitUntilStopped()
            // Best effort, bounded: a stalled standard error must not hold up the exit.
            LogWriter.flushStandardStreams(timeout: .seconds(1))
            return 0
        } catch {
            printError("liveactivity serve: \(plainDescription(error))")
            return 1
        }
    }

    /// SIGINT and SIGTERM, which stop the server, and SIGHUP, which reloads its kind folders.
    private static func terminationSignals() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGHUP)
        return set
    }

    /// Stops the server when SIGINT or SIGTERM arrives, and reloads its kinds on SIGHUP (blocked in every
    /// thread, taken here with sigwait).
    private static func stopOnSignals(_ server: LiveActivityServer, _ signals: sigset_t) {
        let thread = Thread.named("signals") {
            var set = signals
            var number: Int32 = 0
            while sigwait(&set, &number) == 0, number == SIGHUP {
                server.reloadKinds()
            }
            server.stop()
        }
        thread.start()
    }
}

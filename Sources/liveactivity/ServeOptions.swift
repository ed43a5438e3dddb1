import Foundation
import LiveActivityCommandLine
import LiveActivityCore
import LiveActivityServer
import LiveActivityStore

/// `liveactivity serve`'s options, parsed from arguments over the environment over the embedded defaults.
struct ServeOptions {
    static let usage = """
    usage: liveactivity serve [options]

    Listening
      --host ADDRESS          address to listen on (default 127.0.0.1; env LIVEACTIVITY_HOST)
      --port PORT             TCP port, 0 picks a free one (default 8080; env LIVEACTIVITY_PORT)
      --public DIR            folder served at / (default: ./Public, or the Public folder of this checkout)
      --kinds DIR             a folder of more activity kinds (one folder each: Attributes.swift, optional
                              kind.json and templates), loaded beside the built-in ones in Kinds/ next to
                              the public folder, reloaded when they change or on SIGHUP; repeatable
                              (a missing DIR, a file or a kind folder itself: refuses to start)
      --tls-cert FILE         PEM certificate chain: serve https and wss on the same port
      --tls-key FILE          PEM private key for --tls-cert

    Access (see docs/SECURITY.md)
      --controller-token T    token that may start, update and end (env LIVEACTIVITY_CONTROLLER_TOKEN);
                              required when --host is not a loopback address
      --viewer-token T        token needed to watch (env LIVEACTIVITY_VIEWER_TOKEN); default: anyone may watch
      --allowed-origin URL    also accept WebSockets from this origin (repeatable; default: same origin only;
                              env LIVEACTIVITY_ALLOWED_ORIGINS, comma-separated)

    Storage
      --data-dir DIR          where the SQLite store lives (default ./data; env LIVEACTIVITY_DATA_DIR)
      --memory                keep everything in memory only (nothing survives a restart; not with --data-dir)
      --cluster redis://HOST:PORT[/DB]
                              share activities and events with other instances through Redis
                              (env LIVEACTIVITY_REDIS_URL); replaces the SQLite store
      --log-events N          most events kept for resuming clients (default 100000)
      --log-hours H           oldest events kept for resuming clients, in hours (default 24)
      --durability MODE       full: fsync every commit (default); normal: survive crashes, not power loss

    Images (thumbnails of activities' image URLs)
      --image-cache DIR       thumbnail folder (default <data-dir>/images; a temporary folder with --memory)
      --image-cache-bytes N   most bytes the thumbnail folder holds, least recently used evicted (default 67108864)
      --allow-private-image-hosts
                              also fetch from hosts resolving to loopback, link-local or private addresses

    Limits
      --max-message-bytes N   largest WebSocket message (default 65536; larger: close 1009)
      --max-connections N     WebSocket connections at once (default 20000; over it: HTTP 503)
      --max-activities N      live activities at once (default 64)
      --max-queued-bytes N    bytes queued for one slow client before it is closed 1013 (default 4194304)
      --rate N                messages per second per connection (default 20; over it: rate_limited)
      --burst N               burst size for --rate (default 40)
      --ping-interval S       seconds of silence before a WebSocket ping (default 30)
      --idle-timeout S        seconds of silence before a connection is dropped (default 75)
      --deflate on|off        permessage-deflate for WebSocket clients that offer it, each message
                              compressed once for all of them (default on)
      --heartbeat-seconds S   seconds between heartbeat messages to every watching client (default 15)
      --event-loop epoll|poll what waits for the sockets: epoll (through libev) or libwebsockets' own
                              poll() over every socket (default epoll; poll when libev is missing)
      --io-uring on|off       hand each broadcast's sends to the kernel together through io_uring (default
                              on; off, or refused by the kernel, one send() per client)

    APNs (HTTP/2 provider API for real APNs clients; see docs/APNS-BACKENDS.md)
      --apns-port PORT        also serve APNs's API over HTTP/2 on this port, 0 picks one (default: off;
                              env LIVEACTIVITY_APNS_PORT); TLS with --tls-cert/--tls-key (ALPN h2, or none),
                              else h2c with prior knowledge
      --apns-key FILE         the AuthKey_<KeyID>.p8 your backend signs provider tokens with: their ES256
                              signature is verified (without it, tokens are checked for shape and age only,
                              and only on an open loopback server)
      --apns-max-streams N    streams open at once per connection (default 100; more are refused)
      --apns-max-header-bytes N
                              largest header list of one request (default 16384; larger: stream reset)
      --apns-max-body-bytes N largest request body (default 8192, at least 5120; larger: 413 PayloadTooLarge)
      --apns-max-connections N
                              HTTP/2 connections at once (default 256; more are closed)

    Push inspector (/inspector)
      --emulate-budget        mark updates a device would throttle (the dashboard still shows them)
      --budget-per-hour N     priority-10 pushes per hour before throttling (default 30; Apple publishes none)
      --render-floor-seconds S
                              shortest interval between rendered updates of one activity (default 15)

      --log-level LEVEL       debug, info (default: one line per event), notice, warning or error
      --log-format FORMAT     text (default) or json (one object per line); env LIVEACTIVITY_LOG_FORMAT
      --verbose               same as --log-level debug (every connection too)
      -h, --help              show this help

    The first line printed is the URL the server listens on, the second the push-to-start token, then with
    --apns-port the APNs URL ("APNs (HTTP/2) on https://HOST:PORT/"). Ctrl-C or SIGTERM stops it cleanly.
    """

    var configuration: ServerConfiguration
    var dataPath: String
    var inMemory = false
    var clusterURL: String?
    var retention = SQLiteActivityStore.Retention()
    var durability = SQLiteActivityStore.Durability.full
    var logLevel = Logger.Level.info
    var logFormat = Logger.Format.text

    /// Parses `arguments`; returns `nil` after printing help.
    /// - Throws: ``UsageError`` naming the bad option or value.
    static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> ServeOptions? {
        var configuration = ServerConfiguration(publicDirectory: URL(fileURLWithPath: "Public"))
        configuration.host = environment["LIVEACTIVITY_HOST"] ?? configuration.host
        var options = ServeOptions(configuration: configuration, dataPath: environment["LIVEACTIVITY_DATA_DIR"] ?? "data")
        options.clusterURL = environment["LIVEACTIVITY_REDIS_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if let format = environment["LIVEACTIVITY_LOG_FORMAT"].flatMap(Logger.Format.init(rawValue:)) { options.logFormat = format }
        var controllerToken = environment["LIVEACTIVITY_CONTROLLER_TOKEN"]
        var viewerToken = environment["LIVEACTIVITY_VIEWER_TOKEN"]
        var portText = environment["LIVEACTIVITY_PORT"] ?? "8080"
        var apnsPortText = environment["LIVEACTIVITY_APNS_PORT"].flatMap { $0.isEmpty ? nil : $0 }
        options.configuration.allowedOrigins = (environment["LIVEACTIVITY_ALLOWED_ORIGINS"] ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        var publicPath: String?
        var imageCachePath: String?
        /// Whether --data-dir was given on the command line (the environment's default may meet --memory).
        var dataDirectoryGiven = false

        var list = ArgumentList(arguments)
        while let argument = try list.nextOption() {
            switch argument {
            case "--host": options.configuration.host = try list.value(for: argument)
            case "--port": portText = try list.value(for: argument)
            case "--public": publicPath = try list.value(for: argument)
            case "--kinds": options.configuration.extraKindsDirectories.append(URL(fileURLWithPath: try list.value(for: argument)))
            case "--tls-cert": options.configuration.tlsCertificatePath = try list.value(for: argument)
            case "--tls-key": options.configuration.tlsPrivateKeyPath = try list.value(for: argument)
            case "--controller-token": controllerToken = try list.value(for: argument)
            case "--viewer-token": viewerToken = try list.value(for: argument)
            case "--allowed-origin":
                let origin = try list.value(for: argument)
                guard origin.hasPrefix("http://") || origin.hasPrefix("https://") else {
                    throw UsageError("--allowed-origin must look like https://example.com, got \"\(origin)\"")
                }
                options.configuration.allowedOrigins.append(origin.hasSuffix("/") ? String(origin.dropLast()) : origin)
            case "--data-dir":
                options.dataPath = try list.value(for: argument)
                dataDirectoryGiven = true
            case "--memory": options.inMemory = try list.flag(argument)
            case "--cluster": options.clusterURL = try list.value(for: argument)
            case "--image-cache": imageCachePath = try list.value(for: argument)
            case "--image-cache-bytes": options.configuration.images.cacheBytes = try list.whole(for: argument, minimum: 1024 * 1024)
            case "--allow-private-image-hosts": options.configuration.images.allowPrivateHosts = try list.flag(argument)
            case "--log-events": options.retention.maximumEvents = try list.whole(for: argument, minimum: 1)
            case "--log-hours": options.retention.maximumAge = try list.number(for: argument, minimum: 0.001) * 3600
            case "--durability":
                let text = try list.value(for: argument)
                guard let mode = SQLiteActivityStore.Durability(rawValue: text) else {
                    throw UsageError("--durability must be full or normal, got \"\(text)\"")
                }
                options.durability = mode
            case "--max-message-bytes": options.configuration.maximumMessageBytes = try list.whole(for: argument, minimum: 1024)
            case "--max-connections": options.configuration.maximumConnections = try list.whole(for: argument, minimum: 1)
            case "--max-activities": options.configuration.maximumLiveActivities = try list.whole(for: argument, minimum: 1)
            case "--max-queued-bytes": options.configuration.maximumQueuedBytes = try list.whole(for: argument, minimum: 65536)
            case "--rate": options.configuration.messagesPerSecond = try list.number(for: argument, minimum: 0.1)
            case "--burst": options.configuration.messageBurst = try list.number(for: argument, minimum: 1)
            case "--ping-interval": options.configuration.pingIntervalSeconds = try list.whole(for: argument, minimum: 1)
            case "--idle-timeout": options.configuration.idleTimeoutSeconds = try list.whole(for: argument, minimum: 2)
            case "--deflate": options.configuration.permessageDeflate = try list.onOff(for: argument)
            case "--heartbeat-seconds": options.configuration.heartbeatSeconds = try list.whole(for: argument, minimum: 1)
            case "--event-loop":
                let name = try list.value(for: argument)
                guard let loop = ServerConfiguration.EventLoop(rawValue: name) else {
                    throw UsageError("--event-loop must be epoll or poll, got \"\(name)\"")
                }
                options.configuration.eventLoop = loop
            case "--io-uring": options.configuration.ioUring = try list.onOff(for: argument)
            case "--apns-port": apnsPortText = try list.value(for: argument)
            case "--apns-key": options.configuration.apns.keyPath = try list.value(for: argument)
            case "--apns-max-streams": options.configuration.apns.maximumStreams = try list.whole(for: argument, minimum: 1)
            case "--apns-max-header-bytes": options.configuration.apns.maximumHeaderBytes = try list.whole(for: argument, minimum: 1024)
            case "--apns-max-body-bytes": options.configuration.apns.maximumBodyBytes = try list.whole(for: argument, minimum: 5120)
            case "--apns-max-connections": options.configuration.apns.maximumConnections = try list.whole(for: argument, minimum: 1)
            case "--emulate-budget": options.configuration.budget.enabled = try list.flag(argument)
            case "--budget-per-hour": options.configuration.budget.priorityTenPerHour = try list.whole(for: argument, minimum: 1)
            case "--render-floor-seconds": options.configuration.budget.renderFloorSeconds = try list.number(for: argument, minimum: 0)
            case "--verbose": options.logLevel = try list.flag(argument) ? .debug : options.logLevel
            case "--log-level":
                let text = try list.value(for: argument)
                guard let level = Logger.Level(rawValue: text) else {
                    throw UsageError("--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text)\"")
                }
                options.logLevel = level
            case "--log-format":
                let text = try list.value(for: argument)
                guard let format = Logger.Format(rawValue: text) else {
                    throw UsageError("--log-format must be text or json, got \"\(text)\"")
                }
                options.logFormat = format
            case "-h", "--help": return nil
            default: throw UsageError("unknown option \"\(argument)\"")
            }
        }
        for directory in options.configuration.extraKindsDirectories {
            // The rule `kinds check DIR` applies: a missing folder, a file or a kind folder itself loads nothing.
            if let problem = KindCheck.directoryProblem(directory, advice: { "pass the folder that holds it (--kinds \($0))" }) {
                throw UsageError("--kinds \(directory.path): \(problem)")
            }
        }
        if options.inMemory && dataDirectoryGiven {
            throw UsageError("--memory and --data-dir cannot be used together: --memory writes nothing to disk (use --image-cache DIR for thumbnails)")
        }
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw UsageError("--port must be a number from 0 to 65535, got \"\(portText)\"")
        }
        options.configuration.port = port
        if let apnsPortText {
            guard let apnsPort = Int(apnsPortText), (0...65535).contains(apnsPort) else {
                throw UsageError("--apns-port must be a number from 0 to 65535, got \"\(apnsPortText)\"")
            }
            options.configuration.apns.port = apnsPort
        }
        options.configuration.access = AccessPolicy(controllerToken: controllerToken, viewerToken: viewerToken)
        guard let publicDirectory = publicPath.map({ URL(fileURLWithPath: $0) }) ?? defaultPublicDirectory() else {
            throw UsageError("no Public folder found here or beside the executable; pass --public DIR")
        }
        options.configuration.publicDirectory = publicDirectory
        guard let kindsDirectory = defaultKindsDirectory(beside: publicDirectory) else {
            throw UsageError("no Kinds folder (with workout/kind.json) found beside \(publicDirectory.path) or the executable; install Kinds/ next to Public/")
        }
        options.configuration.kindsDirectory = kindsDirectory
        options.configuration.images.cacheDirectory = URL(fileURLWithPath: imageCachePath ?? (options.inMemory
            ? NSTemporaryDirectory() + "liveactivity-images-\(ProcessInfo.processInfo.processIdentifier)"
            : URL(fileURLWithPath: options.dataPath).appendingPathComponent("images").path))
        return options
    }

    /// The built-in kinds `serve` loads without `--public`: what `kinds check DIR` loads first, as `serve` does.
    static func builtInKindsDirectory() -> URL? {
        defaultKindsDirectory(beside: defaultPublicDirectory() ?? URL(fileURLWithPath: "Public"))
    }

    /// The built-in kinds: the `Kinds` folder beside the public folder (a checkout, the installed share
    /// folder), else the one found walking up from the executable; `nil` when there is none (`serve` then
    /// refuses to start: the built-in kinds are data in that folder).
    private static func defaultKindsDirectory(beside publicDirectory: URL) -> URL? {
        let fileManager = FileManager.default
        let marker = "workout/kind.json"
        let beside = publicDirectory.standardizedFileURL.deletingLastPathComponent().appendingPathComponent("Kinds")
        if fileManager.fileExists(atPath: beside.appendingPathComponent(marker).path) { return beside }
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = folder.appendingPathComponent("Kinds")
            if fileManager.fileExists(atPath: candidate.appendingPathComponent(marker).path) { return candidate }
            folder.deleteLastPathComponent()
        }
        return nil
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

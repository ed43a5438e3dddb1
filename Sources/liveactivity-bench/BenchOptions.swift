import Foundation
import LiveActivityCommandLine

/// What one `liveactivity-bench` run does, parsed from the command line.
struct BenchOptions {
    static let usage = """
    usage: liveactivity-bench --server ws://127.0.0.1:PORT/ws [options]

    Opens N WebSocket clients to a running `liveactivity serve`, starts one activity from a controller
    connection, sends M `update`s whose alert body carries a sequence number and a send timestamp, and
    measures when every client receives each `activity` `updated` event.

      --server URL           ws://HOST:PORT/ws of the server (plain ws only); repeat it to spread the
                             watching clients round-robin over several instances (e.g. a --cluster)
      --publish-server URL   where the controller connects (default: the first --server); with a
                             different instance, every update crosses the cluster's Redis hop
      --token T              controller token (sent as ?token=); omit for a server without tokens
      --viewer-token T       token for the N watching clients (default: none)
      --clients N            watching connections (default 100)
      --messages M           updates to send; 0 = idle run, only connect and hold (default 100)
      --rate R               updates per second; 0 = as fast as possible, keeping --window in flight (default 20)
      --window W             updates not yet received by every client, most at once, when --rate 0 (default 32)
      --duration S           stop publishing after S seconds even if M is not reached (default: none)
      --idle-seconds S       hold the connections idle S seconds before measuring memory (default 0)
      --deflate on|off       offer permessage-deflate (default off)
      --ticks on|off         on: a 600 s countdown runs, so the server ticks every second (default);
                             off: the countdown is already over, no ticks (exact encode counts)
      --server-pid PID       read the server's VmRSS and CPU time from /proc/PID (the first --server's
                             process; its /metrics give the broadcast counters)
      --dials K              connection attempts in flight at once (default 128)
      --quiet-timeout S      stop waiting once nothing arrived for S seconds (default 3)
      --drain-timeout S      stop waiting S seconds after the last update was sent (default 30)
      --label NAME           a name for the run in the output (default: fanout, or idle when M is 0)
      --out FILE             also append the JSON line to FILE
      -h, --help             show this help

    Prints one JSON line, then a table. Exit status: 0 when every update reached every connected client
    and every client connected, 1 otherwise, 2 on a usage error.
    """

    /// One server's WebSocket address, parsed from a `ws://HOST:PORT/PATH` URL.
    struct Endpoint: Hashable {
        var host: String
        /// TCP port, 1…65535.
        var port: Int
        /// WebSocket path, `/ws` by default.
        var path: String

        /// The URL again, for the output.
        var url: String { "ws://\(host):\(port)\(path)" }
    }

    /// Where the watching clients connect (one or more `--server`s, used round-robin); never empty
    /// after ``parse(_:)``.
    var servers: [Endpoint] = []
    /// Where the controller connects (`--publish-server`, default the first of ``servers``).
    var publishServer = Endpoint(host: "127.0.0.1", port: 0, path: "/ws")
    /// The first server: the one ``ServerProbe`` reads (`--server-pid`, `/metrics`).
    var host: String { servers.first?.host ?? publishServer.host }
    /// The first server's TCP port.
    var port: Int { servers.first?.port ?? publishServer.port }
    var controllerToken: String?
    var viewerToken: String?
    /// Watching connections (the controller is one more).
    var clients = 100
    /// Updates to send.
    var messages = 100
    /// Updates per second; 0 = closed loop with ``window``.
    var rate = 20.0
    /// Updates in flight at most when ``rate`` is 0.
    var window = 32
    /// Longest publishing phase, in seconds.
    var duration: Double?
    /// Idle hold before the memory reading, in seconds.
    var idleSeconds = 0.0
    var deflate = false
    var ticks = true
    var serverPID: Int32?
    /// Connection attempts in flight at once.
    var dials = 128
    /// Seconds without any delivery after which draining stops.
    var quietTimeout = 3.0
    /// Seconds after the last send after which draining stops.
    var drainTimeout = 30.0
    var label: String?
    var outputPath: String?

    /// Parses `arguments` (without the program name); `nil` after `--help`.
    /// - Throws: ``UsageError`` naming the bad option or value.
    static func parse(_ arguments: [String]) throws(UsageError) -> BenchOptions? {
        var options = BenchOptions()
        var serverURLs: [String] = []
        var publishURL: String?
        var list = ArgumentList(arguments)
        while let argument = try list.nextOption() {
            switch argument {
            case "--server": serverURLs.append(try list.value(for: argument))
            case "--publish-server": publishURL = try list.value(for: argument)
            case "--token": options.controllerToken = try list.value(for: argument)
            case "--viewer-token": options.viewerToken = try list.value(for: argument)
            case "--clients", "-n": options.clients = try list.whole(for: argument, minimum: 1)
            case "--messages", "-m": options.messages = try list.whole(for: argument, minimum: 0)
            case "--rate": options.rate = try list.number(for: argument, minimum: 0)
            case "--window": options.window = try list.whole(for: argument, minimum: 1)
            case "--duration": options.duration = try list.number(for: argument, minimum: 0.1)
            case "--idle-seconds": options.idleSeconds = try list.number(for: argument, minimum: 0)
            case "--deflate": options.deflate = try list.onOff(for: argument)
            case "--ticks": options.ticks = try list.onOff(for: argument)
            case "--server-pid": options.serverPID = Int32(try list.whole(for: argument, minimum: 1))
            case "--dials": options.dials = try list.whole(for: argument, minimum: 1)
            case "--quiet-timeout": options.quietTimeout = try list.number(for: argument, minimum: 0.1)
            case "--drain-timeout": options.drainTimeout = try list.number(for: argument, minimum: 0.1)
            case "--label": options.label = try list.value(for: argument)
            case "--out": options.outputPath = try list.value(for: argument)
            case "-h", "--help": return nil
            default: throw UsageError("unknown option \"\(argument)\"")
            }
        }
        guard !serverURLs.isEmpty else { throw UsageError("--server ws://HOST:PORT/ws is required") }
        for url in serverURLs { options.servers.append(try endpoint(url, option: "--server")) }
        if let publishURL {
            options.publishServer = try endpoint(publishURL, option: "--publish-server")
        } else {
            options.publishServer = options.servers[0]
        }
        return options
    }

    /// Splits `ws://host:port/path` into an ``Endpoint``.
    /// - Throws: ``UsageError`` naming `option` when the scheme is not `ws://` or the port is missing.
    private static func endpoint(_ url: String, option: String) throws(UsageError) -> Endpoint {
        guard url.hasPrefix("ws://") else { throw UsageError("\(option) must start with ws://, got \"\(url)\"") }
        let rest = url.dropFirst("ws://".count)
        let authority = rest.prefix { $0 != "/" }
        let pathPart = rest.dropFirst(authority.count)
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]),
              (1...65535).contains(port) else {
            throw UsageError("\(option) needs an explicit port (ws://127.0.0.1:PORT/ws), got \"\(url)\"")
        }
        return Endpoint(host: String(authority[..<colon]), port: port, path: pathPart.isEmpty ? "/ws" : String(pathPart))
    }
}

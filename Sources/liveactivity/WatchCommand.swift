import Foundation
import LiveActivityClient
import LiveActivityCommandLine
import LiveActivityCore
import Synchronization

/// `liveactivity watch`: follows the server live until Ctrl-C.
enum WatchCommand {
    static let usage = """
    usage: liveactivity watch [--json] [options]

    Follows every change live until Ctrl-C (exit 0). On a terminal it redraws a table of the activities
    with their countdowns every second; otherwise it prints the table after each change. With --json it
    prints every server message (snapshot, activity, tick, …) as one JSON line instead.
    When the connection drops (the server restarts, the network fails) it says so on standard error and
    reconnects, waiting 0.5 s, then 1, 2, 4 … up to 10 s between tries, and resumes after the last event
    it saw (`/ws?since=N&log=ID`): the events it missed come first, then `caughtUp` (or a `reset` snapshot
    when the server's log no longer reaches back). A connection that stays silent for 2.5 heartbeat intervals
    (the server sends a heartbeat every --heartbeat-seconds, whatever runs) counts as dropped too: a laptop
    that slept or a network that lost the flow closes nothing. Exits 3 if the first connection fails (or, with
    --no-reconnect, when the connection drops), and 0 once standard output is closed (`watch --json | head`).

      --json              print each server message as one line of JSON
      --no-reconnect      exit 3 when the connection drops instead of reconnecting
    \(ClientOptions.usage)

    \(ClientOptions.exitStatuses)
    """

    /// Parses the arguments, connects and prints until stopped, reconnecting after a drop.
    /// - Returns: 0 after SIGINT or SIGTERM (or once standard output closes), 1 when the server refuses the
    ///   token, 2 on a usage error, 3 when the first connection fails (or any drop, with `--no-reconnect`).
    static func run(_ arguments: [String]) -> Int32 {
        if ClientRunner.wantsHelp(arguments) { print(usage); return 0 }
        var options = ClientOptions()
        var json = false
        var reconnect = true
        do throws(UsageError) {
            try ClientRunner.parse(arguments, into: &options, option: { name, list throws(UsageError) in
                switch name {
                case "--json": json = true
                case "--no-reconnect": reconnect = false
                default: return false
                }
                try list.requireNoValue(name)
                return true
            }, positional: { value throws(UsageError) in
                throw UsageError("unexpected argument \"\(value)\"")
            })
        } catch {
            return ClientRunner.usageError("watch", error)
        }
        let configuration: ClientConfiguration
        do throws(ClientError) {
            configuration = try options.configuration()
        } catch {
            return ClientRunner.report("watch", error)
        }

        let stop = StopFlag()
        let signals = stop.installSignalHandlers()
        defer { withExtendedLifetime(signals) {} }
        var view = WatchView(server: options.server, terminal: isatty(STDOUT_FILENO) == 1)
        var position = ResumePosition()
        /// The server's heartbeat interval, kept across reconnections (in seconds; nil until a message says it).
        var heartbeatSeconds: Double?
        var retry = 0
        while !stop.isSet {
            var attempt = configuration
            attempt.url.path = position.path(resuming: configuration.url.path)
            let client = ProtocolClient(configuration: attempt)
            do throws(ClientError) {
                try client.connect()
            } catch {
                client.close()
                // A first connection that fails, or a token the server refuses, is the user's to fix.
                guard reconnect, position.everConnected, error.refusal == nil, error.kind != .refused else {
                    return ClientRunner.report("watch", error)
                }
                retry += 1
                if !wait(for: retry, after: "cannot reconnect: \(error.message)", until: stop) { break }
                continue
            }
            if position.everConnected { printError("liveactivity watch: reconnected\(position.resumeNote)") }
            position.everConnected = true
            retry = 0
            let ended: Int32?
            var liveness = ConnectionLiveness(openedAt: Date(), intervalSeconds: heartbeatSeconds)
            do throws(ClientError) {
                defer { heartbeatSeconds = liveness.intervalSeconds }
                ended = try follow(client, json: json, view: &view, position: &position, liveness: &liveness, stop: stop)
                client.close()
            } catch {
                // A silent connection will not answer a close handshake: drop it at once.
                client.close(grace: error.kind == .timedOut ? .zero : .seconds(2))
                guard reconnect, error.refusal == nil else { return ClientRunner.report("watch", error) }
                retry += 1
                if !wait(for: retry, after: "connection lost: \(error.message)", until: stop) { break }
                continue
            }
            if let ended { return ended }
        }
        return 0
    }

    /// Prints messages from one connection until the user stops or standard output closes.
    /// - Returns: the exit status to end with (0), or nil when stopped by a signal.
    /// - Throws: ``ClientError`` when the connection drops or fails, or of kind `timedOut` when it stays
    ///   silent longer than `liveness` allows (a dead connection that closed nothing).
    private static func follow(_ client: ProtocolClient, json: Bool, view: inout WatchView, position: inout ResumePosition,
                               liveness: inout ConnectionLiveness, stop: StopFlag) throws(ClientError) -> Int32? {
        var lastDrawnSecond = -1
        while !stop.isSet {
            guard let message = try client.next(timeout: .milliseconds(200)) else {
                if let silence = liveness.deadSilence(at: Date()), let interval = liveness.intervalSeconds {
                    throw ClientError(.timedOut, "nothing from the server for \(Int(silence)) s (it sends a heartbeat every \(Int(interval)) s)")
                }
                if !json, view.terminal {
                    let second = Int(Date().timeIntervalSince1970)
                    if second != lastDrawnSecond {
                        lastDrawnSecond = second
                        guard view.draw() else { return 0 }
                    }
                }
                continue
            }
            // A server that needs a token to watch says so, unasked, in an `error` without a requestId.
            if let refusal = message.refusal, message.requestId == nil, refusal.code == "unauthorized" {
                var refusal = refusal
                refusal.message += " (give --token or LIVEACTIVITY_TOKEN)"
                throw ClientError(refusal: refusal)
            }
            position.note(message)
            liveness.heard(message)
            if json {
                guard writeOutput(message.text.replacingOccurrences(of: "\n", with: " ") + "\n") else { return 0 }
                continue
            }
            let changed = view.apply(message)
            if view.terminal {
                lastDrawnSecond = Int(Date().timeIntervalSince1970)
                guard view.draw() else { return 0 }
            } else if changed {
                guard view.draw() else { return 0 }
            }
        }
        return 0
    }

    /// Says why on standard error and sleeps before try `retry` (1, 2, …): 0.5 s doubling up to 10 s.
    /// - Returns: false when a stop signal arrived while waiting.
    private static func wait(for retry: Int, after why: String, until stop: StopFlag) -> Bool {
        let delay = min(10.0, 0.5 * pow(2.0, Double(min(retry, 8) - 1)))
        printError("liveactivity watch: \(why); reconnecting in \(delay < 1 ? String(delay) : String(Int(delay))) s")
        let deadline = Date().addingTimeInterval(delay)
        while Date() < deadline {
            if stop.isSet { return false }
            usleep(50_000)
        }
        return !stop.isSet
    }
}

/// Where `watch` resumes after a drop: the last event sequence it saw and the server's log id.
struct ResumePosition {
    /// The `sequence` of the last `activity` event, `snapshot` or `caughtUp` received.
    private(set) var sequence: UInt64?
    /// The `logId` of the last `snapshot` or `caughtUp`.
    private(set) var logId: String?
    /// Whether any connection has been established (only later drops are retried).
    var everConnected = false

    /// Records the position a message carries (`activity`, `snapshot`, `caughtUp`; others carry none).
    mutating func note(_ message: IncomingMessage) {
        switch message.type {
        case "activity", "snapshot", "caughtUp":
            if let sequence = message.sequence { self.sequence = sequence }
            if let logId = message.logId { self.logId = logId }
        default:
            break
        }
    }

    /// `base` (the `--server` URL's path and query) with `since=` and `log=` added once there is a position.
    func path(resuming base: String) -> String {
        guard let sequence else { return base }
        var path = base + (base.contains("?") ? "&" : "?") + "since=\(sequence)"
        if let logId, let escaped = logId.addingPercentEncoding(withAllowedCharacters: .alphanumerics) {
            path += "&log=" + escaped
        }
        return path
    }

    /// For the "reconnected" notice.
    var resumeNote: String { sequence.map { "; resuming after event \($0)" } ?? "" }
}

/// Set by SIGINT or SIGTERM; read by the watch loop. Thread-safe.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Whether a stop signal arrived.
    var isSet: Bool { flag.load(ordering: .relaxed) }

    /// Routes SIGINT and SIGTERM to this flag; keep the returned sources alive while watching.
    func installSignalHandlers() -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in flag.store(true, ordering: .relaxed) }
            source.resume()
            return source
        }
    }
}

/// What `watch` shows without `--json`: the activities as the server's messages describe them.
struct WatchView {
    /// The server URL, for the title line.
    let server: String
    /// Whether standard output is a terminal (redraw in place) or a pipe/file (append tables).
    let terminal: Bool
    private var activities: [String: ActivitySummary] = [:]
    /// Server time minus local time, in seconds, from the latest `serverTime`.
    private var clockOffset: TimeInterval = 0
    /// The latest event line, shown under the table.
    private var lastEvent = ""
    /// Each activity's countdown end as the latest `tick` gave it, for those whose state alone gives none.
    private var tickEnds: [String: (end: Date, tickedAt: Date)] = [:]

    init(server: String, terminal: Bool) {
        self.server = server
        self.terminal = terminal
    }

    /// Applies one server message.
    /// - Returns: whether the set of activities or their states changed (not just a tick).
    mutating func apply(_ message: IncomingMessage) -> Bool {
        if let serverTime = message.serverTime { clockOffset = serverTime.timeIntervalSince(message.receivedAt) }
        switch message.type {
        case "snapshot":
            activities = Dictionary((message.activities ?? []).map { ($0.id, $0) }, uniquingKeysWith: { $1 })
            lastEvent = "snapshot: \(activities.count) activit\(activities.count == 1 ? "y" : "ies")"
            return true
        case "activity":
            guard let activity = message.activity else { return false }
            if message.event == "dismissed" { activities[activity.id] = nil } else { activities[activity.id] = activity }
            lastEvent = "\(message.event ?? "event"): \(activity.title) \(activity.id)"
            return true
        case "tick":
            // The server's countdown for each running activity, whatever the shape of its field.
            let serverTime = message.serverTime ?? message.receivedAt
            for (id, seconds) in message.timers { tickEnds[id] = (serverTime.addingTimeInterval(TimeInterval(seconds)), serverTime) }
            return false
        default:
            return false
        }
    }

    /// Prints the table: in place on a terminal, else appended after a blank line.
    /// - Returns: false when standard output is closed.
    func draw() -> Bool {
        let serverNow = Date().addingTimeInterval(clockOffset)
        let rows = activities.values.sorted(by: ActivitySummary.presentationOrder).map { activity in
            tickEnds[activity.id].map { activity.counting(to: $0.end, tickedAt: $0.tickedAt) } ?? activity
        }
        let table = rows.isEmpty ? "(no activities)\n" : ActivityTable.render(rows, serverNow: serverNow)
        let time = ISODate.format(serverNow)
        if terminal {
            return writeOutput("\u{1B}[H\u{1B}[2J" + "liveactivity watch \(server) — \(time) — Ctrl-C to stop\n\n"
                        + table + "\n" + lastEvent + "\n")
        } else {
            return writeOutput("\(time) \(lastEvent)\n" + table + "\n")
        }
    }
}

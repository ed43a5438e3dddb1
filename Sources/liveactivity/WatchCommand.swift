import Foundation
import LiveActivityClient
import LiveActivityCore
import Synchronization

/// `liveactivity watch`: follows the server live until Ctrl-C.
enum WatchCommand {
    static let usage = """
    usage: liveactivity watch [--json] [options]

    Follows every change live until Ctrl-C (exit 0). On a terminal it redraws a table of the activities
    with their countdowns every second; otherwise it prints the table after each change. With --json it
    prints every server message (snapshot, activity, tick, …) as one JSON line instead.
    Exits 3 when the connection drops, and 0 once standard output is closed (as in `watch --json | head`).

      --json              print each server message as one line of JSON
    \(ClientOptions.usage)

    \(ClientOptions.exitStatuses)
    """

    /// Parses the arguments, connects and prints until stopped.
    /// - Returns: 0 after SIGINT or SIGTERM (or once standard output closes), 2 on a usage error, 3 when it
    ///   cannot connect or the connection drops.
    static func run(_ arguments: [String]) -> Int32 {
        if ClientRunner.wantsHelp(arguments) { print(usage); return 0 }
        var options = ClientOptions()
        var json = false
        do throws(UsageError) {
            try ClientRunner.parse(arguments, into: &options, option: { name, list throws(UsageError) in
                guard name == "--json" else { return false }
                try list.requireNoValue(name)
                json = true
                return true
            }, positional: { value throws(UsageError) in
                throw UsageError("unexpected argument \"\(value)\"")
            })
        } catch {
            return ClientRunner.usageError("watch", error)
        }

        let stop = StopFlag()
        let signals = stop.installSignalHandlers()
        defer { withExtendedLifetime(signals) {} }
        return ClientRunner.withConnection("watch", options) { client throws(ClientError) in
            var view = WatchView(server: options.server, terminal: isatty(STDOUT_FILENO) == 1)
            var lastDrawnSecond = -1
            while !stop.isSet {
                guard let message = try client.next(timeout: .milliseconds(200)) else {
                    if !json, view.terminal {
                        let second = Int(Date().timeIntervalSince1970)
                        if second != lastDrawnSecond {
                            lastDrawnSecond = second
                            guard view.draw() else { return 0 }
                        }
                    }
                    continue
                }
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
    }
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
        default:
            return false
        }
    }

    /// Prints the table: in place on a terminal, else appended after a blank line.
    /// - Returns: false when standard output is closed.
    func draw() -> Bool {
        let serverNow = Date().addingTimeInterval(clockOffset)
        let rows = activities.values.sorted(by: ActivitySummary.presentationOrder)
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

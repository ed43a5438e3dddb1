import Foundation
import LiveActivityCore

/// Dispatches `liveactivity <subcommand> [options]`.
///
/// Exit status: 0 success, 1 runtime failure (the port is taken; the server refused a request), 2 usage
/// error, 3 the client cannot reach the server (connection refused, bad URL, handshake failure, timeout).
enum Command {
    static let usage = """
    usage: liveactivity <command> [options]

    commands:
      serve     run the server (dashboard over HTTP, protocol over WebSocket at /ws)
      start     start an activity (a workout, or any kind with --attributes/--state) and print its id
      update    restart an activity's countdown, optionally with an alert
      end       end one activity or all of them (alias: stop)
      pause     freeze an activity's countdown
      resume    let a paused countdown run again
      extend    move the end of an activity's countdown (--by 1m, --by -1m)
      list      print the activities (table, or --json)
      watch     follow every change live until Ctrl-C (table, or --json lines)
      share     print a read-only link that shows one activity live (expires; revocable)
      kinds     kinds list: print the activity kinds the server accepts;
                kinds check DIR: check kind folders (Attributes.swift, kind.json, templates), no server
                kinds check --server URL: list the server's activities its kinds no longer read

    Client commands talk to --server URL (default ws://127.0.0.1:8080/ws; env LIVEACTIVITY_SERVER).

    Run `liveactivity <command> --help` for a command's options.
    """

    /// Runs the command line and returns the process exit status.
    static func run(_ arguments: [String]) -> Int32 {
        guard let name = arguments.first else {
            printError(usage)
            return 2
        }
        let rest = Array(arguments.dropFirst())
        switch name {
        case "serve": return ServeCommand.run(rest)
        case "start": return StartActivityCommand.run(rest)
        case "update": return UpdateActivityCommand.run(rest)
        case "end", "stop": return EndActivityCommand.run(rest, name: name)
        case "pause", "resume", "extend": return CountdownCommand.run(rest, name: name)
        case "list": return ListCommand.run(rest)
        case "watch": return WatchCommand.run(rest)
        case "share": return ShareCommand.run(rest)
        case "kinds": return KindsCommand.run(rest)
        case "-h", "--help", "help":
            print(usage)
            return 0
        default:
            printError("liveactivity: unknown command \"\(name)\" (the commands are below)\n\n\(usage)")
            return 2
        }
    }
}

/// Writes a line to standard error, after the lines a logger queued (waiting at most a second for them).
func printError(_ text: String) {
    LogWriter.standardError.flush(timeout: .seconds(1))
    try? FileHandle.standardError.write(contentsOf: Data((text + "\n").utf8))
}

/// An error as one line for people: Foundation's file errors by their system reason ("No such file or
/// directory"), not their `NSCocoaErrorDomain` dump; every other error as it describes itself.
func plainDescription(_ error: any Error) -> String {
    let nsError = error as NSError
    guard nsError.domain == NSCocoaErrorDomain else { return "\(error)" }
    if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? any Error {
        if let posix = underlying as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        let inner = underlying as NSError
        if inner.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(inner.code))) }
    }
    // Foundation's sentence without its "(NSCocoaErrorDomain error 512.)" tail.
    let text = nsError.localizedDescription
    guard let tail = text.range(of: " (NSCocoaErrorDomain") else { return text }
    return String(text[..<tail.lowerBound]) + " (file system error \(nsError.code))"
}

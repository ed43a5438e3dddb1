import Foundation
import LiveActivityClient
import LiveActivityCommandLine
import LiveActivityCore
import LiveActivityServer

/// `liveactivity kinds list`: prints the activity kinds the server accepts (`GET /kinds`);
/// `liveactivity kinds check DIR`: checks kind folders on disk, with no server; `kinds check --server URL`
/// lists the server's activities its current kinds no longer read; `liveactivity kinds new DIR --from FILE`
/// writes a new kind folder from an app's declaration (``KindScaffold``).
enum KindsCommand {
    static let usage = """
    usage: liveactivity kinds list [--json] [--server URL] [--token TOKEN] [--timeout SECONDS]
           liveactivity kinds check DIR
           liveactivity kinds check [DIR] --server URL [--token TOKEN] [--timeout SECONDS]
           liveactivity kinds new DIR --from Attributes.swift [--swift-name NAME]

    check DIR: reads every kind folder of DIR as `serve --kinds DIR` would (kind.json, Attributes.swift, the
    templates) and prints one line per kind that reads; exit 0 when all do, else 1 with one
    `file:line: message` line per problem on standard error. Needs no server.
    check --server URL: lists the server's activities that its kinds no longer read (a declaration changed,
    a folder removed): they are kept, marked, never deleted. One `marked<TAB>ID<TAB>KIND<TAB>REASON` line
    each on standard output; exit 0 when none is marked (saying so on standard error), else 1.

    new DIR --from FILE: writes a new kind folder DIR (its name is the wire name) from an app's
    ActivityAttributes declaration: Attributes.swift, kind.json (label, Swift name, enum labels) and the five
    templates of the generated layout, as a starting point to edit (docs/TEMPLATES.md). --swift-name picks
    the struct when several conform to ActivityAttributes. Overwrites nothing; prints the files written.

    list: prints the activity kinds the server accepts: each kind's name, its Swift type names, its countdown
    field and its presentations (a table, or the server's JSON with --json). Reads GET /kinds on the
    --server's host and port (plain ws:// servers only; for wss:// use https://HOST/kinds).

    \(ClientOptions.exitStatuses)
    """

    /// Runs `kinds <subcommand>`.
    /// - Returns: the exit status (0, 1 refused, 2 usage error, 3 cannot connect).
    static func run(_ arguments: [String]) -> Int32 {
        if ClientRunner.wantsHelp(arguments) { print(usage); return 0 }
        if arguments.first == "check" { return check(Array(arguments.dropFirst())) }
        if arguments.first == "new" { return new(Array(arguments.dropFirst())) }
        var options = ClientOptions()
        var json = false
        var subcommand: String?
        do throws(UsageError) {
            try ClientRunner.parse(arguments, into: &options, option: { name, list throws(UsageError) in
                guard name == "--json" else { return false }
                try list.requireNoValue(name)
                json = true
                return true
            }, positional: { value throws(UsageError) in
                guard subcommand == nil else { throw UsageError("unexpected argument \"\(value)\"") }
                guard value == "list" else { throw UsageError("unknown kinds command \"\(value)\"; expected list or check") }
                subcommand = value
            })
            guard subcommand != nil else { throw UsageError("missing kinds command (list or check)") }
        } catch {
            return ClientRunner.usageError("kinds", error)
        }
        let answer: (body: [UInt8], items: [JSONValue])
        switch fetch("/kinds", member: "kinds", options: options) {
        case .success(let fetched): answer = fetched
        case .failure(let failure): return failure.status
        }
        let kinds = answer.items
        if json {
            _ = writeOutput(String(decoding: answer.body, as: UTF8.self) + "\n")
            return 0
        }
        var lines = ["NAME\tSWIFT NAMES\tCOUNTDOWN\tPRESENTATIONS"]
        for kind in kinds {
            let names = (kind["swiftNames"].flatMap { value -> [JSONValue]? in if case .array(let a) = value { a } else { nil } } ?? [])
                .compactMap(\.stringValue).joined(separator: ",")
            let presentations = (kind["presentations"].flatMap { value -> [JSONValue]? in if case .array(let a) = value { a } else { nil } } ?? [])
                .compactMap(\.stringValue).joined(separator: ",")
            lines.append([kind["name"]?.stringValue ?? "?", names.isEmpty ? "-" : names,
                          kind["countdown"]?.stringValue ?? "-", presentations.isEmpty ? "-" : presentations].joined(separator: "\t"))
        }
        _ = writeOutput(lines.joined(separator: "\n") + "\n")
        return 0
    }

    /// Runs `kinds new DIR --from FILE [--swift-name NAME]` (``KindScaffold``).
    /// - Returns: 0 when the folder was written and reads, 1 with a `file:line: message` on standard error, 2 for
    ///   a usage error.
    static func new(_ arguments: [String]) -> Int32 {
        var directory: String?
        var from: String?
        var swiftName: String?
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            let (name, inline) = argument.hasPrefix("--") && argument.contains("=")
                ? (String(argument.prefix { $0 != "=" }), Optional(String(argument.drop { $0 != "=" }.dropFirst()))) : (argument, nil)
            switch name {
            case "--from", "--swift-name":
                guard let value = inline ?? rest.popFirst() else { return ClientRunner.usageError("kinds", UsageError("\(name) needs a value")) }
                if name == "--from" { from = value } else { swiftName = value }
            default:
                guard !name.hasPrefix("--"), directory == nil else {
                    return ClientRunner.usageError("kinds", UsageError("unexpected argument \"\(argument)\" for kinds new"))
                }
                directory = argument
            }
        }
        guard let directory, let from else {
            return ClientRunner.usageError("kinds", UsageError("kinds new needs a folder to write (DIR) and --from Attributes.swift"))
        }
        do throws(KindFolderError) {
            let written = try KindScaffold.write(to: URL(fileURLWithPath: directory), from: URL(fileURLWithPath: from), swiftName: swiftName)
            _ = writeOutput(written.map { "wrote\t\($0)" }.joined(separator: "\n") + "\n")
            return 0
        } catch {
            printError(error.description)
            return 1
        }
    }

    /// Runs `kinds check [DIR] [--server URL]`.
    /// Warnings (a Swift name two folders declare) are printed as `warning: …` lines on standard error and
    /// do not change the status.
    /// - Returns: 0 when every folder reads and no activity is marked, 1 with `file:line: message` lines on
    ///   standard error or `marked` lines on standard output, 2 for a usage error, 3 when the server cannot be reached.
    static func check(_ arguments: [String]) -> Int32 {
        let asksServer = arguments.contains { $0 == "--server" || $0.hasPrefix("--server=") }
        var options = ClientOptions()
        var directory: String?
        do throws(UsageError) {
            try ClientRunner.parse(arguments, into: &options, option: { _, _ in false }, positional: { value throws(UsageError) in
                guard directory == nil else { throw UsageError("kinds check takes one folder of kind folders, got a second: \"\(value)\"") }
                directory = value
            })
            guard directory != nil || asksServer else {
                throw UsageError("kinds check needs a folder of kind folders (DIR) or --server URL")
            }
        } catch {
            return ClientRunner.usageError("kinds", error)
        }
        var status: Int32 = 0
        if let directory {
            let result = KindCheck.check(URL(fileURLWithPath: directory), builtIn: ServeOptions.builtInKindsDirectory())
            let lines = result.kinds.map { "ok\t\($0.name)\t\($0.path)" }
            if !lines.isEmpty { _ = writeOutput(lines.joined(separator: "\n") + "\n") }
            for problem in result.problems { printError(problem) }
            for warning in result.warnings { printError("warning: \(warning)") }
            if !result.problems.isEmpty { status = 1 }
        }
        if asksServer { status = max(status, markedActivities(options)) }
        return status
    }

    /// Prints the server's marked activities (``Activity/kindProblem``) from `GET /api/activities`.
    /// - Returns: 0 when none is marked, 1 when some are, 2 for a wss:// URL, 3 when the server cannot be reached.
    private static func markedActivities(_ options: ClientOptions) -> Int32 {
        let activities: [JSONValue]
        switch fetch("/api/activities", member: "activities", options: options) {
        case .success(let fetched): activities = fetched.items
        case .failure(let failure): return failure.status
        }
        let lines = activities.compactMap { activity -> String? in
            guard let problem = activity["kindProblem"]?.stringValue else { return nil }
            return ["marked", activity["id"]?.stringValue ?? "?", activity["attributesType"]?.stringValue ?? "?", problem].joined(separator: "\t")
        }
        if lines.isEmpty {
            // Standard output stays empty (one line per marked activity); people get a word that it ran.
            printError(activities.isEmpty ? "the server has no activities; none is marked"
                       : activities.count == 1 ? "the server's one activity is not marked"
                       : "none of the server's \(activities.count) activities is marked")
        } else {
            _ = writeOutput(lines.joined(separator: "\n") + "\n")
        }
        return lines.isEmpty ? 0 : 1
    }

    /// Why a read of the server ended the command: the exit status, its message already printed.
    private struct FetchFailure: Error {
        let status: Int32
    }

    /// GETs `path` over plain HTTP from the host and port of `options.server` and reads the array `member` of
    /// the JSON answer (`GET /kinds`'s `kinds`, `GET /api/activities`'s `activities`).
    /// - Returns: the body as received and the array; or a failure with exit status 2 (a bad or wss:// URL),
    ///   3 (the server cannot be reached) or 1 (any other answer), its message printed on standard error.
    private static func fetch(_ path: String, member: String, options: ClientOptions) -> Result<(body: [UInt8], items: [JSONValue]), FetchFailure> {
        let url: WebSocketURL
        do { url = try WebSocketURL(options.server) } catch {
            return .failure(FetchFailure(status: ClientRunner.usageError("kinds", UsageError(error.message))))
        }
        guard !url.secure else {
            printError("liveactivity kinds: \(options.server) is wss://; this command reads plain HTTP only (fetch https://\(url.hostHeader)\(path))")
            return .failure(FetchFailure(status: 2))
        }
        let answer: (status: Int, body: [UInt8])
        do {
            answer = try PlainHTTPGet.get(host: url.host, port: url.port, path: path, token: options.token,
                                          timeout: options.timeout.timeInterval)
        } catch {
            printError("liveactivity kinds: \(error.message)")
            return .failure(FetchFailure(status: 3))
        }
        guard answer.status == 200, let value = try? JSONValue.parse(answer.body), case .array(let items)? = value[member] else {
            printError("liveactivity kinds: the server answered \(answer.status): \(String(decoding: answer.body.prefix(200), as: UTF8.self))")
            return .failure(FetchFailure(status: 1))
        }
        return .success((answer.body, items))
    }
}

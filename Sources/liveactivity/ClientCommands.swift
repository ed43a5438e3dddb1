import Foundation
import LiveActivityClient
import LiveActivityCommandLine
import LiveActivityCore

/// `liveactivity start`: requests a new activity of any kind and prints its id.
enum StartActivityCommand {
    static let usage = """
    usage: liveactivity start WORKOUT --duration DURATION [--relevance N] [options]
           liveactivity start KIND --attributes JSON (--state JSON | --duration DURATION) [--stale-date ISO-8601]
                              [--relevance N] [options]

    Starts an activity and prints its id on standard output. The first form starts a workout with a
    countdown (WORKOUT: one the server's workout kind lists, e.g. jogging, aerobics, yoga); the second any
    kind the server lists (`liveactivity kinds list`), with its attributes and
    content state as JSON objects in this protocol's form (ISO-8601 dates, {"start","end"} ranges).

      --duration DURATION   countdown length: 70, 70s, 2m, 1m30s, 1h (kinds with a countdown)
      --attributes JSON     the kind's attributes, e.g. '{"name":"Run","startTime":"…","endTime":"…"}'
      --state JSON          the kind's content state, e.g. '{"emoji":"🏃"}'
      --stale-date ISO      content.staleDate (with --state)
      --relevance N         relevance score, higher sorts first (default 0)
    \(ClientOptions.usage)

    \(ClientOptions.exitStatuses)
    """

    /// Reads a JSON object option.
    /// - Throws: ``UsageError`` naming the option when the text is not a JSON object.
    static func object(_ name: String, _ text: String) throws(UsageError) -> JSONValue {
        let value: JSONValue
        do {
            value = try JSONValue.parse(Array(text.utf8))
        } catch {
            // The parser's own words say where the text stops being JSON.
            throw UsageError("\(name) is not JSON: \(error.message)")
        }
        guard case .object = value else {
            throw UsageError("\(name) must be a JSON object, got \(value.typeName) \"\(text.clipped(to: 60))\"")
        }
        return value
    }

    /// Parses the arguments, sends the request and prints the result.
    /// - Returns: the exit status (0, 1 refused, 2 usage error, 3 cannot connect or no reply).
    static func run(_ arguments: [String]) -> Int32 {
        if ClientRunner.wantsHelp(arguments) { print(usage); return 0 }
        var options = ClientOptions()
        var workout: String?
        var seconds: Double?
        var relevance: Double?
        var attributes: JSONValue?
        var state: JSONValue?
        var staleDate: String?
        do throws(UsageError) {
            try ClientRunner.parse(arguments, into: &options, option: { name, list throws(UsageError) in
                switch name {
                case "--duration": seconds = try ClientRunner.duration(try list.value(for: name))
                case "--relevance": relevance = try ClientRunner.relevance(try list.value(for: name))
                case "--attributes": attributes = try object(name, try list.value(for: name))
                case "--state": state = try object(name, try list.value(for: name))
                case "--stale-date":
                    let text = try list.value(for: name)
                    guard ISODate.parse(text) != nil else { throw UsageError("--stale-date must be an ISO-8601 date, got \"\(text.clipped(to: 40))\"") }
                    staleDate = text
                default: return false
                }
                return true
            }, positional: { value throws(UsageError) in
                guard workout == nil else { throw UsageError("unexpected argument \"\(value)\"") }
                workout = value
            })
            // Which workouts exist is the server's to say (Kinds/workout/kind.json): it names them when it refuses one.
            guard workout != nil else { throw UsageError("missing workout (e.g. yoga) or KIND with --attributes") }
            if state != nil, seconds != nil { throw UsageError("give --state or --duration, not both") }
            if staleDate != nil, state == nil { throw UsageError("--stale-date needs --state") }
            guard seconds != nil || state != nil else {
                throw UsageError(attributes == nil
                    ? "--duration is required to start a workout such as yoga; another kind takes KIND --attributes JSON --state JSON"
                    : "--state JSON (or --duration) is required")
            }
        } catch {
            return ClientRunner.usageError("start", error)
        }
        var request: [String: JSONValue] = ["type": .string("start")]
        if let attributes {
            request["attributesType"] = .string(workout!)
            request["attributes"] = attributes
        } else {
            request["attributesType"] = .string("workout")
            request["attributes"] = .object(["workout": .string(workout!)])
        }
        if let state {
            var content: [String: JSONValue] = ["state": state, "relevanceScore": .number(relevance ?? 0)]
            if let staleDate { content["staleDate"] = .string(staleDate) }
            request["content"] = .object(content)
        } else {
            request["durationSeconds"] = .number(seconds!)
            if let relevance { request["relevanceScore"] = .number(relevance) }
        }
        return ClientRunner.withConnection("start", options) { client throws(ClientError) in
            let ack = try client.request(request, timeout: options.timeout)
            guard let id = ack.activityId else {
                throw ClientError(.connectionClosed, "the server's ack carries no activityId: \(ack.text)")
            }
            writeOutput(id + "\n")
            return 0
        }
    }
}

/// `liveactivity update`: replaces an activity's countdown, optionally with an alert.
enum UpdateActivityCommand {
    static let usage = """
    usage: liveactivity update ID (--duration DURATION | --state JSON [--stale-date ISO-8601]) [--relevance N]
                              [--alert-title TITLE --alert-body BODY] [options]

    Restarts the activity's countdown from now, or gives it a new content state, and optionally shows an
    alert with the update.

      --duration DURATION   new countdown length: 70, 70s, 2m, 1m30s, 1h (kinds with the shortcut)
      --state JSON          new ContentState in this protocol's form (any kind; docs/PROTOCOL.md)
      --stale-date DATE     when the new content goes stale (ISO-8601; with --state)
      --relevance N         new relevance score (default 0)
      --alert-title TITLE   alert title (give --alert-body with it)
      --alert-body BODY     alert body (give --alert-title with it)
    \(ClientOptions.usage)

    \(ClientOptions.exitStatuses)
    """

    /// Parses the arguments, sends the request and prints the result.
    /// - Returns: the exit status (0, 1 refused, 2 usage error, 3 cannot connect or no reply).
    static func run(_ arguments: [String]) -> Int32 {
        if ClientRunner.wantsHelp(arguments) { print(usage); return 0 }
        var options = ClientOptions()
        var id: String?
        var seconds: Double?
        var relevance: Double?
        var alertTitle: String?
        var alertBody: String?
        var state: JSONValue?
        var staleDate: String?
        do throws(UsageError) {
            try ClientRunner.parse(arguments, into: &options, option: { name, list throws(UsageError) in
                switch name {
                case "--duration": seconds = try ClientRunner.duration(try list.value(for: name))
                case "--state": state = try StartActivityCommand.object(name, try list.value(for: name))
                case "--stale-date":
                    let text = try list.value(for: name)
                    guard ISODate.parse(text) != nil else { throw UsageError("--stale-date must be an ISO-8601 date, got \"\(text.clipped(to: 40))\"") }
                    staleDate = text
                case "--relevance": relevance = try ClientRunner.relevance(try list.value(for: name))
                case "--alert-title": alertTitle = try list.value(for: name)
                case "--alert-body": alertBody = try list.value(for: name)
                default: return false
                }
                return true
            }, positional: { value throws(UsageError) in
                guard id == nil else { throw UsageError("unexpected argument \"\(value)\"") }
                id = value
            })
            guard id != nil else { throw UsageError("missing activity ID") }
            if state != nil, seconds != nil { throw UsageError("give --state or --duration, not both") }
            guard seconds != nil || state != nil else { throw UsageError("--duration or --state JSON is required") }
            if staleDate != nil, state == nil { throw UsageError("--stale-date needs --state") }
            if alertTitle != nil, alertBody == nil { throw UsageError("--alert-title needs --alert-body") }
            if alertBody != nil, alertTitle == nil { throw UsageError("--alert-body needs --alert-title") }
        } catch {
            return ClientRunner.usageError("update", error)
        }
        var request: [String: JSONValue] = ["type": .string("update"), "activityId": .string(id!)]
        if let state {
            var content: [String: JSONValue] = ["state": state, "relevanceScore": .number(relevance ?? 0)]
            if let staleDate { content["staleDate"] = .string(staleDate) }
            request["content"] = .object(content)
        } else {
            request["durationSeconds"] = .number(seconds!)
            if let relevance { request["relevanceScore"] = .number(relevance) }
        }
        if let alertTitle, let alertBody {
            request["alert"] = .object(["title": .string(alertTitle), "body": .string(alertBody)])
        }
        return ClientRunner.withConnection("update", options) { client throws(ClientError) in
            _ = try client.request(request, timeout: options.timeout)
            return 0
        }
    }
}

/// `liveactivity end` (alias `stop`): ends one activity or all of them.
enum EndActivityCommand {
    /// The help text, naming the command as typed (`end` or `stop`).
    static func usage(_ name: String) -> String {
        """
        usage: liveactivity \(name) ID|--all [--dismiss immediate|default|after=ISO-8601] [options]

        Ends the activity (or every activity not yet dismissed, with --all).

          --all                 end every activity
          --dismiss POLICY      when to remove it from every list: default (4 hours after it ended),
                                immediate, or after=2026-11-29T18:00:00Z (at most 4 hours after it ended)
        \(ClientOptions.usage)

        \(ClientOptions.exitStatuses)
        """
    }

    /// Parses the arguments, sends the request and prints the result.
    /// - Parameter name: `end` or `stop`, as typed (for messages).
    /// - Returns: the exit status (0, 1 refused, 2 usage error, 3 cannot connect or no reply).
    static func run(_ arguments: [String], name: String) -> Int32 {
        if ClientRunner.wantsHelp(arguments) { print(usage(name)); return 0 }
        var options = ClientOptions()
        var id: String?
        var all = false
        var policy: JSONValue?
        do throws(UsageError) {
            var list = ArgumentList(arguments)
            while let argument = list.next() {
                switch argument {
                case .option(let option):
                    if try options.read(option, from: &list) { continue }
                    switch option {
                    case "--all": try list.requireNoValue(option); all = true
                    case "--dismiss": policy = try dismissalPolicy(try list.value(for: option))
                    default: throw UsageError("unknown option \"\(option)\"")
                    }
                case .positional(let value):
                    guard id == nil else { throw UsageError("unexpected argument \"\(value)\"") }
                    id = value
                }
            }
            if id != nil, all { throw UsageError("give an activity ID or --all, not both") }
            guard id != nil || all else { throw UsageError("missing activity ID (or --all)") }
        } catch {
            return ClientRunner.usageError(name, error)
        }
        var request: [String: JSONValue] = ["type": .string("end")]
        if let id { request["activityId"] = .string(id) } else { request["all"] = .bool(true) }
        if let policy { request["dismissalPolicy"] = policy }
        return ClientRunner.withConnection(name, options) { client throws(ClientError) in
            _ = try client.request(request, timeout: options.timeout)
            return 0
        }
    }

    /// Reads `--dismiss`: `immediate`, `default` or `after=ISO-8601`, as the protocol's `dismissalPolicy`.
    /// - Throws: ``UsageError`` for anything else or a date that does not parse.
    static func dismissalPolicy(_ text: String) throws(UsageError) -> JSONValue {
        switch text {
        case "immediate", "default": return .string(text)
        default:
            guard text.hasPrefix("after=") else {
                throw UsageError("--dismiss must be immediate, default or after=ISO-8601, got \"\(text)\"")
            }
            let date = String(text.dropFirst("after=".count))
            guard ISODate.parse(date) != nil else {
                throw UsageError("--dismiss after=: \"\(date)\" is not an ISO-8601 date-time such as 2026-11-29T18:00:00Z")
            }
            return .object(["after": .string(date)])
        }
    }
}

/// `liveactivity list`: prints every activity not dismissed, as a table or as JSON.
enum ListCommand {
    static let usage = """
    usage: liveactivity list [--json] [options]

    Prints every activity not yet dismissed, most relevant first: a table of id, workout, state,
    remaining time (m:ss) and relevance, or with --json the protocol's activities array.

      --json              print the activities as one JSON array (docs/PROTOCOL.md, "The activity object")
    \(ClientOptions.usage)

    \(ClientOptions.exitStatuses)
    """

    /// Parses the arguments, sends the request and prints the result.
    /// - Returns: the exit status (0, 1 refused, 2 usage error, 3 cannot connect or no reply).
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
            return ClientRunner.usageError("list", error)
        }
        return ClientRunner.withConnection("list", options) { client throws(ClientError) in
            let snapshot = try client.request(["type": .string("list")], timeout: options.timeout)
            if json {
                writeOutput(encode(snapshot.member("activities") ?? .array([])) + "\n")
            } else {
                let serverNow = (snapshot.serverTime ?? snapshot.receivedAt) + Date().timeIntervalSince(snapshot.receivedAt)
                writeOutput(ActivityTable.render(snapshot.activities ?? [], serverNow: serverNow))
            }
            return 0
        }
    }

    /// One line of JSON with sorted keys.
    static func encode(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }
}

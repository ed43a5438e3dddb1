import LiveActivityClient
import LiveActivityCommandLine
import LiveActivityCore

/// `liveactivity pause`, `resume` and `extend`: the protocol's countdown messages (docs/PROTOCOL.md, "`pause`,
/// `resume`, `extend`") for one activity of any kind with a countdown, as the dashboard's PAUSE, RESUME and
/// ±1 min send them.
enum CountdownCommand {
    /// The help text of `name` (`pause`, `resume` or `extend`).
    static func usage(_ name: String) -> String {
        let synopsis: String
        switch name {
        case "pause": synopsis = """
            usage: liveactivity pause ID [options]

            Freezes the activity's countdown (content.state.pausedAt = now) until `liveactivity resume`.
            """
        case "resume": synopsis = """
            usage: liveactivity resume ID [options]

            Lets a paused countdown run again; its end moves forward by the time it was paused.
            """
        default: synopsis = """
            usage: liveactivity extend ID --by DURATION [options]

            Moves the end of the activity's countdown: later, or earlier with a leading minus (never before now).

              --by DURATION         how far: 60, 1m, 1m30s; -1m shortens
            """
        }
        return "\(synopsis)\n\(ClientOptions.usage)\n\n\(ClientOptions.exitStatuses)"
    }

    /// Parses the arguments, sends the request and prints nothing on success.
    /// - Parameters:
    ///   - arguments: the arguments after the command's name.
    ///   - name: `pause`, `resume` or `extend`: the message's `type`.
    /// - Returns: the exit status (0, 1 refused, 2 usage error, 3 cannot connect or no reply).
    static func run(_ arguments: [String], name: String) -> Int32 {
        if ClientRunner.wantsHelp(arguments) { print(usage(name)); return 0 }
        var options = ClientOptions()
        var id: String?
        var seconds: Double?
        do throws(UsageError) {
            try ClientRunner.parse(arguments, into: &options, option: { option, list throws(UsageError) in
                guard name == "extend", option == "--by" else { return false }
                seconds = try signedDuration(try list.value(for: option))
                return true
            }, positional: { value throws(UsageError) in
                guard id == nil else { throw UsageError("unexpected argument \"\(value)\"") }
                id = value
            })
            guard id != nil else { throw UsageError("missing activity ID") }
            if name == "extend", seconds == nil { throw UsageError("--by DURATION is required (e.g. --by 1m, or --by -1m)") }
        } catch {
            return ClientRunner.usageError(name, error)
        }
        var request: [String: JSONValue] = ["type": .string(name), "activityId": .string(id!)]
        if let seconds { request["seconds"] = .number(seconds) }
        return ClientRunner.withConnection(name, options) { client throws(ClientError) in
            _ = try client.request(request, timeout: options.timeout)
            return 0
        }
    }

    /// Reads `--by`: a duration (``ClientRunner/duration(_:option:)``), negative with a leading `-`.
    /// - Returns: seconds, never 0.
    /// - Throws: ``UsageError`` naming `--by`.
    static func signedDuration(_ text: String) throws(UsageError) -> Double {
        if text.hasPrefix("-") { return -(try ClientRunner.duration(String(text.dropFirst()), option: "--by")) }
        return try ClientRunner.duration(text, option: "--by")
    }
}

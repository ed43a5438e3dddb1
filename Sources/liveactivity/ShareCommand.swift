import Foundation
import LiveActivityClient
import LiveActivityCommandLine
import LiveActivityCore

/// `liveactivity share`: makes a read-only link to one activity and prints it.
enum ShareCommand {
    static let usage = """
    usage: liveactivity share ID [--for DURATION] [options]

    Makes a link that shows this one activity, live and read-only, to anyone who has it, and prints the
    link's full URL. It stops working after --for (default and at most 24h) or when the activity is
    dismissed. Needs the controller role.

      --for DURATION        how long the link works: 30m, 2h, 1h30m (default 24h)
    \(ClientOptions.usage)

    \(ClientOptions.exitStatuses)
    """

    /// Parses the arguments, asks for the link and prints it.
    /// - Returns: the exit status (0, 1 refused, 2 usage error, 3 cannot connect or no reply).
    static func run(_ arguments: [String]) -> Int32 {
        if ClientRunner.wantsHelp(arguments) { print(usage); return 0 }
        var options = ClientOptions()
        var activityId: String?
        var seconds: Double?
        do throws(UsageError) {
            try ClientRunner.parse(arguments, into: &options, option: { name, list throws(UsageError) in
                switch name {
                case "--for": seconds = try ClientRunner.duration(try list.value(for: name), option: name)
                default: return false
                }
                return true
            }, positional: { value throws(UsageError) in
                guard activityId == nil else { throw UsageError("unexpected argument \"\(value)\"") }
                activityId = value
            })
            guard activityId != nil else { throw UsageError("missing activity ID") }
            if let seconds, seconds > Share.maximumLifetime { throw UsageError("--for must be at most 24h") }
        } catch {
            return ClientRunner.usageError("share", error)
        }
        var request: [String: JSONValue] = ["type": .string("share"), "activityId": .string(activityId!)]
        if let seconds { request["expiresIn"] = .number(seconds) }
        return ClientRunner.withConnection("share", options) { client throws(ClientError) in
            let reply = try client.request(request, timeout: options.timeout)
            guard case .array(let shares)? = reply.value.member("shares"), let path = shares.first?.member("url")?.stringValue else {
                throw ClientError(.connectionClosed, "the server's reply carries no link: \(reply.text)")
            }
            let url = try WebSocketURL(options.server)
            writeOutput("\(url.secure ? "https" : "http")://\(url.hostHeader)\(path)\n")
            return 0
        }
    }
}

import Foundation

/// A message from the server (see docs/PROTOCOL.md, "Server → client"), encoded once into the bytes of one
/// text frame, whatever the number of clients it goes to.
public enum ServerMessage: Sendable {
    /// On connect and in reply to `list`: every activity not dismissed, in presentation order. `reset` is
    /// true when it answers a resume whose events are no longer in the log; `role` tells the connection
    /// what it may do.
    case snapshot(requestId: JSONValue?, serverTime: Date, sequence: UInt64, activities: [Activity], reset: Bool = false,
                  role: AccessPolicy.Role? = nil, logId: String? = nil)
    /// In reply to `push`: what APNs would answer (`status`, `reason` when refused) and what the device
    /// would do (`verdict`, `detail`).
    case pushResult(requestId: JSONValue?, result: PushResult)
    /// In reply to `share` (with the link's `url`, shown once) and `shares`.
    case shares(requestId: JSONValue?, shares: [ShareSummary])
    /// `GET /api/push-to-start-token`: the token `start` pushes are addressed to.
    case pushToStartToken(String)
    /// In reply to `hello`: the connection's role from now on.
    case hello(requestId: JSONValue?, role: AccessPolicy.Role)
    /// After the events replayed for a resume (`/ws?since=N` or `catchUp`): live events follow.
    case caughtUp(requestId: JSONValue?, serverTime: Date, sequence: UInt64, role: AccessPolicy.Role? = nil, logId: String? = nil)
    /// In reply to `history`: finished activities, newest first.
    case history(requestId: JSONValue?, entries: [HistoryEntry])
    /// After every change.
    case activity(ActivityEvent, serverTime: Date)
    /// Once per second while a countdown runs.
    case tick(Tick)
    /// Every `intervalSeconds` to every watching client, whatever runs: a connection that hears nothing for
    /// a few intervals is dead (browsers hide WebSocket pings from pages).
    case heartbeat(serverTime: Date, intervalSeconds: Int)
    /// A request was accepted; `activityIds` is set for `end` with `all`.
    case ack(requestId: JSONValue?, activityId: String?, activityIds: [String]?)
    /// A request was refused.
    case error(requestId: JSONValue?, ProtocolError)

    /// The UTF-8 JSON text of the message.
    /// - Parameter heartbeatSeconds: the server's heartbeat interval, written as `heartbeatSeconds` into a
    ///   `snapshot`, `caughtUp` or `hello` (the messages that start a connection's conversation), so a client
    ///   can tell a silent connection from its first message rather than from its first heartbeat; nil
    ///   leaves it out (HTTP reads).
    public func encoded(heartbeatSeconds: Int? = nil) -> [UInt8] {
        // The messages of every update, written without Codable (the same bytes; ServerMessage+Text.swift).
        if let text = writtenDirectly() { return text }
        return codableEncoded(heartbeatSeconds: heartbeatSeconds)
    }

    /// The text through `JSONEncoder` and ``Wire``: every message (the reference the direct writer is tested
    /// against).
    func codableEncoded(heartbeatSeconds: Int? = nil) -> [UInt8] {
        do {
            return Array(try MessageEncoder.encoder.encode(Wire(self, heartbeatSeconds: heartbeatSeconds)))
        } catch {
            // Only non-finite numbers can fail, and validation refuses them; keep the connection useful anyway.
            return Array(#"{"type":"error","code":"internal","message":"could not encode a message"}"#.utf8)
        }
    }
}

/// The JSON shape of each ``ServerMessage``.
private struct Wire: Encodable {
    let message: ServerMessage
    /// Written into `snapshot`, `caughtUp` and `hello` when set.
    let heartbeatSeconds: Int?
    init(_ message: ServerMessage, heartbeatSeconds: Int? = nil) {
        self.message = message
        self.heartbeatSeconds = heartbeatSeconds
    }

    private enum Key: String, CodingKey {
        case type, requestId, role, logId, serverTime, sequence, activities, reset, event, activity, alert, timers, workouts
        case intervalSeconds, heartbeatSeconds
        case activityId, activityIds, code, field, message, pushToStartToken, shares
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        switch message {
        case .snapshot(let requestId, let serverTime, let sequence, let activities, let reset, let role, let logId):
            try c.encode("snapshot", forKey: .type)
            try c.encodeIfPresent(requestId, forKey: .requestId)
            try c.encodeIfPresent(role, forKey: .role)
            try c.encodeIfPresent(logId, forKey: .logId)
            try c.encode(serverTime, forKey: .serverTime)
            try c.encode(sequence, forKey: .sequence)
            try c.encode(activities, forKey: .activities)
            if reset { try c.encode(true, forKey: .reset) }
            try c.encodeIfPresent(heartbeatSeconds, forKey: .heartbeatSeconds)
        case .pushResult(let requestId, let result):
            try c.encode("pushResult", forKey: .type)
            try c.encodeIfPresent(requestId, forKey: .requestId)
            try result.encode(to: encoder)
        case .shares(let requestId, let shares):
            try c.encode("shares", forKey: .type)
            try c.encodeIfPresent(requestId, forKey: .requestId)
            try c.encode(shares, forKey: .shares)
        case .pushToStartToken(let token):
            try c.encode("pushToStartToken", forKey: .type)
            try c.encode(token, forKey: .pushToStartToken)
        case .hello(let requestId, let role):
            try c.encode("hello", forKey: .type)
            try c.encodeIfPresent(requestId, forKey: .requestId)
            try c.encode(role, forKey: .role)
            try c.encodeIfPresent(heartbeatSeconds, forKey: .heartbeatSeconds)
        case .caughtUp(let requestId, let serverTime, let sequence, let role, let logId):
            try c.encode("caughtUp", forKey: .type)
            try c.encodeIfPresent(requestId, forKey: .requestId)
            try c.encodeIfPresent(role, forKey: .role)
            try c.encodeIfPresent(logId, forKey: .logId)
            try c.encode(serverTime, forKey: .serverTime)
            try c.encode(sequence, forKey: .sequence)
            try c.encodeIfPresent(heartbeatSeconds, forKey: .heartbeatSeconds)
        case .history(let requestId, let entries):
            try c.encode("history", forKey: .type)
            try c.encodeIfPresent(requestId, forKey: .requestId)
            try c.encode(entries, forKey: .workouts)
        case .activity(let event, let serverTime):
            try c.encode("activity", forKey: .type)
            try c.encode(event.kind.rawValue, forKey: .event)
            try c.encode(event.sequence, forKey: .sequence)
            try c.encode(serverTime, forKey: .serverTime)
            try c.encode(event.activity, forKey: .activity)
            try c.encodeIfPresent(event.alert, forKey: .alert)
        case .tick(let tick):
            try c.encode("tick", forKey: .type)
            try c.encode(tick.serverTime, forKey: .serverTime)
            try c.encode(tick.timers, forKey: .timers)
        case .heartbeat(let serverTime, let intervalSeconds):
            try c.encode("heartbeat", forKey: .type)
            try c.encode(serverTime, forKey: .serverTime)
            try c.encode(intervalSeconds, forKey: .intervalSeconds)
        case .ack(let requestId, let activityId, let activityIds):
            try c.encode("ack", forKey: .type)
            try c.encodeIfPresent(requestId, forKey: .requestId)
            try c.encodeIfPresent(activityId, forKey: .activityId)
            try c.encodeIfPresent(activityIds, forKey: .activityIds)
        case .error(let requestId, let error):
            try c.encode("error", forKey: .type)
            try c.encodeIfPresent(requestId, forKey: .requestId)
            try c.encode(error.code.rawValue, forKey: .code)
            try c.encodeIfPresent(error.field, forKey: .field)
            try c.encode(error.message, forKey: .message)
        }
    }
}

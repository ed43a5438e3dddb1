import Foundation
import LiveActivityCore

/// One message received from the server: its JSON text exactly as sent, and the parsed value.
public struct IncomingMessage: Sendable {
    /// The text frame's payload (one line of JSON).
    public let text: String
    /// The parsed JSON, or `.null` when the text was not JSON.
    public let value: JSONValue
    /// When the frame was received, by the local clock.
    public let receivedAt: Date

    /// Parses a received text frame.
    /// - Parameters:
    ///   - bytes: the whole message's UTF-8 payload.
    ///   - receivedAt: local receive time.
    public init(bytes: [UInt8], receivedAt: Date = Date()) {
        text = String(decoding: bytes, as: UTF8.self)
        value = (try? JSONValue.parse(bytes, depthLimit: JSONValue.maximumServerDepth)) ?? .null
        self.receivedAt = receivedAt
    }

    /// The member named `key` of the message object.
    public func member(_ key: String) -> JSONValue? { value.member(key) }

    /// `type`: `snapshot`, `activity`, `tick`, `ack` or `error`.
    public var type: String? { value.member("type")?.stringValue }

    /// `requestId` as text (a number is written without a fraction), when present.
    public var requestId: String? { value.member("requestId")?.scalarText }

    /// `serverTime` (UTC), when present.
    public var serverTime: Date? { value.member("serverTime")?.stringValue.flatMap(ISODate.parse) }

    /// `event` of an `activity` message (`started`, `updated`, `stale`, `timerFinished`, `ended`, `dismissed`).
    public var event: String? { value.member("event")?.stringValue }

    /// `sequence`: of an `activity` event, its own; of a `snapshot` or `caughtUp`, the last event's so far.
    public var sequence: UInt64? {
        value.member("sequence")?.numberValue.flatMap { $0 >= 0 && $0 < 9.007_199_254_740_992e15 ? UInt64($0) : nil }
    }

    /// `logId` of a `snapshot` or `caughtUp`: the identity of the server's event log (resume with `log=`).
    public var logId: String? { value.member("logId")?.stringValue }

    /// `activity` of an `activity` message.
    public var activity: ActivitySummary? { value.member("activity").flatMap(ActivitySummary.init) }

    /// `activities` of a `snapshot`, in the server's order.
    public var activities: [ActivitySummary]? {
        value.member("activities")?.arrayValue?.compactMap(ActivitySummary.init)
    }

    /// `activityId` of an `ack`.
    public var activityId: String? { value.member("activityId")?.stringValue }

    /// `activityIds` of an `ack` to `end` with `all`.
    public var activityIds: [String]? { value.member("activityIds")?.arrayValue?.compactMap(\.stringValue) }

    /// `timers` of a `tick`: activity id → whole seconds left.
    public var timers: [String: Int] {
        var result: [String: Int] = [:]
        for timer in value.member("timers")?.arrayValue ?? [] {
            if let id = timer.member("activityId")?.stringValue, let seconds = timer.member("remainingSeconds")?.numberValue {
                result[id] = Int(seconds)
            }
        }
        return result
    }

    /// The server's refusal, when this is an `error` message.
    public var refusal: ClientError.Refusal? {
        guard type == "error" else { return nil }
        return ClientError.Refusal(code: value.member("code")?.stringValue ?? "error",
                                   field: value.member("field")?.stringValue,
                                   message: value.member("message")?.stringValue ?? text)
    }
}

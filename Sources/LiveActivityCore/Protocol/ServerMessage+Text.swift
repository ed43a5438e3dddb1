import Foundation

/// The messages every update sends — the `activity` event to every watching client and the `ack` to the
/// client that sent it — written straight by ``JSONTextWriter``: the same bytes as ``ServerMessage/codableEncoded(heartbeatSeconds:)``
/// (keys sorted, the same fields present or absent), at a fraction of `JSONEncoder`'s cost per update.
/// `JSONTextWriterTests` compares the two on generated messages.
extension ServerMessage {
    /// The text of an `activity` or `ack`, or `nil` for every other message (and for a number JSON cannot
    /// hold, which the Codable path answers with its `internal` error).
    func writtenDirectly() -> [UInt8]? {
        do throws(JSONTextWriter.NonFiniteNumber) {
            switch self {
            case .activity(let event, let serverTime):
                var text = JSONTextWriter(capacity: 1024)
                text.beginObject()
                text.key("activity"); try text.activity(event.activity)
                if let alert = event.alert { text.key("alert"); text.alert(alert) }
                text.key("event"); text.string(event.kind.rawValue)
                text.key("sequence"); text.integer(event.sequence)
                text.key("serverTime"); text.date(serverTime)
                text.key("type"); text.raw("\"activity\"")
                text.endObject()
                return text.bytes
            case .ack(let requestId, let activityId, let activityIds):
                var text = JSONTextWriter(capacity: 128)
                text.beginObject()
                if let activityId { text.key("activityId"); text.string(activityId) }
                if let activityIds {
                    text.key("activityIds"); try text.value(.array(activityIds.map(JSONValue.string)))
                }
                if let requestId { text.key("requestId"); try text.value(requestId) }
                text.key("type"); text.raw("\"ack\"")
                text.endObject()
                return text.bytes
            default:
                // Every other message, written through Codable: no writer is made for it.
                return nil
            }
        } catch {
            return nil
        }
    }
}

extension JSONTextWriter {
    /// The protocol's activity object, as ``Activity/encode(to:)`` writes it; with `storedForm`, the stores'
    /// form (``MessageEncoder/storeEncoder``'s: no `kindProblem`, with `lastPushTimestamp` and `timerFinished`).
    mutating func activity(_ activity: Activity, storedForm: Bool = false) throws(NonFiniteNumber) {
        beginObject()
        key("activityState"); string(activity.activityState.rawValue)
        key("attributes"); try value(activity.attributes)
        key("attributesType"); string(activity.attributesType)
        if let channelId = activity.channelId { key("channelId"); string(channelId) }
        key("content"); try content(activity.content)
        key("dismissalDate"); date(activity.dismissalDate)
        key("endDate"); date(activity.endDate)
        if let endReason = activity.endReason { key("endReason"); string(endReason.rawValue) }
        key("id"); string(activity.id)
        if !storedForm, let problem = activity.kindProblem { key("kindProblem"); string(problem) }
        if storedForm, let timestamp = activity.lastPushTimestamp { key("lastPushTimestamp"); try double(timestamp) }
        if let pushToken = activity.pushToken { key("pushToken"); string(pushToken) }
        key("startDate"); date(activity.startDate)
        if let thumbnail = activity.thumbnail {
            key("thumbnail")
            beginObject()
            for scale in ActivityThumbnail.scales {
                if bytes.last != UInt8(ascii: "{") { raw(",") }
                string("\(scale)x"); raw(":"); string(thumbnail.path(scale: scale))
            }
            endObject()
        }
        if storedForm { key("timerFinished"); bool(activity.timerFinished) }
        endObject()
    }

    /// `{relevanceScore, staleDate, state}`, as ``ActivityContent/encode(to:)`` writes it.
    mutating func content(_ content: ActivityContent) throws(NonFiniteNumber) {
        beginObject()
        key("relevanceScore"); try number(content.relevanceScore)
        key("staleDate"); date(content.staleDate)
        key("state"); try value(content.state)
        endObject()
    }

    /// `{body, sound?, title}`, as `AlertConfiguration`'s synthesized encoding writes it.
    mutating func alert(_ alert: AlertConfiguration) {
        beginObject()
        key("body"); string(alert.body)
        if let sound = alert.sound { key("sound"); string(sound) }
        key("title"); string(alert.title)
        endObject()
    }
}

import Foundation

/// The form in which stores keep activities and events: the protocol's JSON plus the engine's own fields
/// (`timerFinished`), so a restart resumes exactly where the server stopped.
public enum StoredActivity {
    /// Encodes an activity: its wire object without `kindProblem` (worked out again under the kinds loaded,
    /// never stored), with `"timerFinished"` and `"lastPushTimestamp"` added. Written by ``JSONTextWriter``,
    /// the same bytes as ``MessageEncoder/storeEncoder`` writes (the store thread encodes every change, and
    /// `JSONEncoder` took a sixth of its time); an activity holding a number JSON cannot hold takes the
    /// Codable path, as before.
    public static func encode(_ activity: Activity) -> String {
        var text = JSONTextWriter(capacity: 1024)
        do throws(JSONTextWriter.NonFiniteNumber) {
            try text.activity(activity, storedForm: true)
            return String(decoding: text.bytes, as: UTF8.self)
        } catch {
            return codableEncoded(activity)
        }
    }

    /// ``encode(_:)-(Activity)`` through `Codable` (``MessageEncoder/storeEncoder``): the reference the direct
    /// writer is held to, and its fallback.
    static func codableEncoded(_ activity: Activity) -> String {
        String(decoding: (try? MessageEncoder.storeEncoder.encode(activity)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// Decodes what ``encode(_:)`` wrote; the countdown is read again from the state by its kind.
    ///
    /// Kinds change (a folder removed, a declaration changed): an activity whose kind is no longer known, or
    /// whose state its kind no longer reads, is kept as stored, with no countdown, rather than refused, so
    /// that loading a store never fails on it and nothing is deleted. Updates to it are then refused with
    /// the kind's own error (``ActivityCenter``), naming the field.
    /// - Parameter kinds: the kinds that read the countdown from the state.
    /// - Throws: ``ProtocolError`` naming the field when the stored text is not a valid activity.
    public static func decode(_ text: String, kinds: KindRegistry) throws(ProtocolError) -> Activity {
        let reader = try FieldReader(try JSONValue.parse(Array(text.utf8)), path: "activity")
        guard let id = try reader.string("id", maxLength: 256) else { throw .missing("activity.id") }
        guard let typeName = try reader.string("attributesType") else { throw .missing("activity.attributesType") }
        guard let content = try reader.object("content") else { throw .missing("activity.content") }
        let stored = try content.required("state")
        var (state, timer): (JSONValue, TimerRange?) = (stored, nil)
        let kind = try? kinds.kind(named: typeName, field: "activity.attributesType")
        if let kind, let read = try? kind.state(from: stored, field: content.path("state")) {
            (state, timer) = read
        }
        guard let stateName = try reader.string("activityState"), let activityState = ActivityState(rawValue: stateName) else {
            throw .invalid("activity.activityState", "not an activity state")
        }
        guard let startDate = try reader.date("startDate") else { throw .missing("activity.startDate") }
        timer = kind?.anchored(timer, startDate: startDate) ?? timer
        var activity = Activity(
            id: id, attributesType: typeName, attributes: try reader.required("attributes"),
            content: ActivityContent(state: state, staleDate: try content.date("staleDate"),
                                     relevanceScore: try content.number("relevanceScore") ?? 0),
            timer: timer, activityState: activityState, startDate: startDate,
            endDate: try reader.date("endDate"), dismissalDate: try reader.date("dismissalDate"),
            timerFinished: try reader.bool("timerFinished") ?? false,
            endReason: try reader.string("endReason").flatMap(EndReason.init(rawValue:)))
        activity.pushToken = try reader.string("pushToken")
        activity.lastPushTimestamp = try reader.number("lastPushTimestamp")
        activity.thumbnail = reader.value("thumbnail").flatMap(ActivityThumbnail.init)
        activity.channelId = try reader.string("channelId", maxLength: 128)
        return activity
    }

    /// Encodes an event: kind, sequence, the stored activity and the alert (`{"activity":…,"alert":…,
    /// "event":…,"sequence":…}`, keys sorted as everywhere else).
    /// - Parameter activityText: ``encode(_:)-(Activity)`` of `event.activity`, when the caller has it already
    ///   (a store writes it to its activities row too); nil: encoded here.
    public static func encode(_ event: ActivityEvent, activityText: String? = nil) -> String {
        var text = "{\"activity\":"
        text += activityText ?? encode(event.activity)
        if let alert = event.alert {
            text += ",\"alert\":"
            var writer = JSONTextWriter(capacity: 64 + alert.title.utf8.count + alert.body.utf8.count)
            writer.alert(alert)  // as the wire writes it: no "sound" when there is none (read back as nil either way)
            text += String(decoding: writer.bytes, as: UTF8.self)
        }
        text += ",\"event\":\"\(event.kind.rawValue)\",\"sequence\":\(event.sequence)}"
        return text
    }

    /// Decodes what ``encode(_:)-(ActivityEvent)`` wrote.
    /// - Parameter kinds: the kinds that read the countdown from the state.
    /// - Throws: ``ProtocolError`` when the stored text is not a valid event.
    public static func decodeEvent(_ text: String, kinds: KindRegistry) throws(ProtocolError) -> ActivityEvent {
        let reader = try FieldReader(try JSONValue.parse(Array(text.utf8)), path: "event")
        guard let name = try reader.string("event"), let kind = ActivityEvent.Kind(rawValue: name) else {
            throw .invalid("event.event", "not an event kind")
        }
        guard let sequence = try reader.number("sequence") else { throw .missing("event.sequence") }
        let stored = try reader.required("activity")
        guard case .object = stored else { throw .invalid("event.activity", "not an object") }
        var writer = JSONTextWriter(capacity: text.utf8.count)
        do throws(JSONTextWriter.NonFiniteNumber) {
            try writer.value(stored)
        } catch {
            throw .invalid("event.activity", "holds a number JSON cannot hold")
        }
        let activityText = String(decoding: writer.bytes, as: UTF8.self)
        var alert: AlertConfiguration?
        if let object = try reader.object("alert"), let title = try object.string("title"), let body = try object.string("body") {
            alert = AlertConfiguration(title: title, body: body, sound: try object.string("sound"))
        }
        guard sequence >= 0, sequence < 9.0e15, sequence.rounded() == sequence else { throw .invalid("event.sequence", "not a sequence number") }
        return ActivityEvent(kind: kind, sequence: UInt64(sequence), activity: try decode(activityText, kinds: kinds), alert: alert)
    }
}

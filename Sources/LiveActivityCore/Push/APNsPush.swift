import Foundation

/// An APNs Live Activity push payload, as Apple documents it:
/// `{"aps":{"timestamp","event","content-state","stale-date","dismissal-date","relevance-score","alert",
/// "attributes-type","attributes"}}`.
///
/// Sources: "Starting and updating Live Activities with ActivityKit push notifications"
/// (https://developer.apple.com/documentation/activitykit/starting-and-updating-live-activities-with-activitykit-push-notifications);
/// `timestamp`, `stale-date` and `dismissal-date` are Unix seconds; `content-state` is the `ContentState` in
/// Swift's default `Codable` form.
public struct APNsPush: Sendable {
    /// `aps.event`.
    public enum Event: String, Sendable {
        case start, update, end
    }

    /// What the push asks for.
    public var event: Event
    /// When the data was generated (Unix seconds); older than the last applied push ⇒ ignored.
    public var timestamp: Double
    /// The `ContentState` in Swift `Codable` form, if present.
    public var contentState: JSONValue?
    /// `stale-date` (from Unix seconds).
    public var staleDate: Date?
    /// `dismissal-date` (from Unix seconds), for `end`.
    public var dismissalDate: Date?
    /// `relevance-score`.
    public var relevanceScore: Double?
    /// `alert` (`title` and `body` as strings or localisation dictionaries; `sound`).
    public var alert: AlertConfiguration?
    /// `attributes-type`, for `start`.
    public var attributesType: String?
    /// `attributes`, for `start`.
    public var attributes: JSONValue?
    /// `input-push-channel`, for `start`: the broadcast channel ID the started activity subscribes to (iOS 18).
    public var inputPushChannel: String?
    /// `input-push-token`, for `start`: `1` asks the started activity for a push token of its own.
    public var inputPushToken: Int?

    /// Largest accepted `timestamp`: 2^53, the last whole number a JSON number (a `Double`) holds exactly.
    /// Beyond it consecutive timestamps compare equal, so "newer than the last push" means nothing; it is far
    /// above any Unix time in seconds, milliseconds (flagged as ``PushCause/futureTimestamp``) or microseconds.
    public static let maximumTimestamp: Double = 9_007_199_254_740_992

    /// Largest payload APNs accepts for a Live Activity, in bytes.
    public static let maximumBytes = 4096
    /// Largest payload APNs accepts for a broadcast push (`POST /4/broadcasts/apps/{bundleId}`), in bytes: 5 KB.
    /// Source: "Sending broadcast push notification requests to APNs".
    public static let maximumBroadcastBytes = 5120

    /// Reads a payload.
    /// - Throws: ``PushRejection`` (`BadPayload`, HTTP 400) naming the key that is missing or malformed: among
    ///   others a `timestamp` that is negative or above ``maximumTimestamp``, a `stale-date` or `dismissal-date`
    ///   more than about 1,000 years either side of its epoch (``CodableDate/unix(_:field:)``); (413 `PayloadTooLarge`) a payload over
    ///   ``maximumBytes``.
    /// - Parameter maximumBytes: the size limit (``maximumBytes``; ``maximumBroadcastBytes`` for broadcasts).
    public static func parse(_ payload: JSONValue, maximumBytes: Int = maximumBytes) throws(PushRejection) -> APNsPush {
        // APNs measures the body it receives; a WebSocket `push` carries it re-encoded, measured the same way.
        let size = (try? MessageEncoder.encoder.encode(payload).count) ?? 0
        if size > maximumBytes {
            throw PushRejection(status: 413, reason: "PayloadTooLarge",
                                detail: "the payload is \(size) bytes encoded; Live Activity payloads may be at most \(maximumBytes) bytes")
        }
        do throws(ProtocolError) {
            // The payload's own name: read as a message, a string payload was refused as "message must be a
            // JSON object", which names neither the field nor what was expected.
            guard case .object = payload else {
                throw ProtocolError.invalid("payload", "expected a JSON object with \"aps\" (an APNs payload), got \(payload.typeName)")
            }
            let root = try FieldReader(payload, path: "")
            guard let aps = try root.object("aps") else { throw ProtocolError.missing("aps") }
            guard let eventName = try aps.string("event") else { throw ProtocolError.missing("aps.event") }
            guard let event = Event(rawValue: eventName) else {
                throw ProtocolError.invalid("aps.event", "expected \"start\", \"update\" or \"end\", got \"\(eventName.clipped(to: 20))\"")
            }
            guard let timestamp = try aps.number("timestamp") else { throw ProtocolError.missing("aps.timestamp") }
            guard timestamp >= 0, timestamp <= maximumTimestamp else {
                throw ProtocolError.invalid("aps.timestamp", "expected Unix seconds from 0 to 2^53, got \(timestamp.jsonText)"
                                            + (timestamp < 0 ? " (before 1970)" : " (beyond what a Double orders exactly)"))
            }
            var push = APNsPush(event: event, timestamp: timestamp)
            push.contentState = aps.value("content-state")
            push.staleDate = try aps.number("stale-date").map { seconds throws(ProtocolError) in try CodableDate.unix(seconds, field: "aps.stale-date") }
            push.dismissalDate = try aps.number("dismissal-date").map { seconds throws(ProtocolError) in try CodableDate.unix(seconds, field: "aps.dismissal-date") }
            push.relevanceScore = try aps.number("relevance-score")
            push.attributesType = try aps.string("attributes-type", maxLength: 256)
            push.attributes = aps.value("attributes")
            if let channel = try aps.string("input-push-channel", maxLength: 128) {
                guard BroadcastChannel.isWellFormedID(channel) else {
                    throw ProtocolError.invalid("aps.input-push-channel", "\"\(channel.clipped(to: 64))\" is not a channel ID (base64 of 16 bytes, from POST /1/apps/{bundleId}/channels)")
                }
                push.inputPushChannel = channel
            }
            if let token = try aps.number("input-push-token") {
                guard token == 0 || token == 1 else { throw ProtocolError.invalid("aps.input-push-token", "expected 1 (or 0), got \(token.jsonText)") }
                push.inputPushToken = Int(token)
            }
            if let alert = try aps.object("alert") {
                push.alert = AlertConfiguration(title: try text(alert, "title"), body: try text(alert, "body"),
                                                sound: try alert.string("sound", maxLength: 256))
            }
            return push
        } catch {
            throw PushRejection(status: 400, reason: "BadPayload", detail: error.message, field: error.field)
        }
    }

    private init(event: Event, timestamp: Double) {
        self.event = event
        self.timestamp = timestamp
    }

    /// An alert string: plain, or a localisation dictionary (`loc-key`, `loc-args`) shown by its key.
    private static func text(_ alert: FieldReader, _ key: String) throws(ProtocolError) -> String {
        switch alert.value(key) {
        case .string(let text)?: return String(text.prefix(1024))
        case .object(let object)?:
            if case .string(let locKey)? = object["loc-key"] { return locKey }
            throw ProtocolError.missing(alert.path("\(key).loc-key"))
        case nil: return ""
        case let other?: throw ProtocolError.wrongType(alert.path(key), expected: "a string or a localisation dictionary", got: other)
        }
    }
}

/// A push APNs itself would refuse: the HTTP status and APNs `reason`, with our `detail`.
public struct PushRejection: Error, Sendable, Equatable {
    /// HTTP status: 400, 403, 404, 405, 410, 413 or 429.
    public var status: Int
    /// APNs's reason string (`BadDeviceToken`, `PayloadTooLarge`, `InvalidPushType`, …) or `BadPayload`.
    public var reason: String
    /// What exactly is wrong, naming the key.
    public var detail: String
    /// The key path at fault, if any.
    public var field: String?
    /// For 410 `Unregistered`: when the token stopped being valid, in milliseconds since 1970 (APNs's
    /// `timestamp`).
    public var timestamp: Int64?

    /// Creates a rejection.
    public init(status: Int, reason: String, detail: String, field: String? = nil, timestamp: Int64? = nil) {
        self.status = status
        self.reason = reason
        self.detail = detail
        self.field = field
        self.timestamp = timestamp
    }
}

/// Why a push APNs would accept (HTTP 200) was ignored or dropped by the device, or applied with a warning:
/// a stable name for each cause (the `cause` of `pushResult`, the `liveactivity-cause` header).
public enum PushCause: String, Sendable, Equatable, Codable, CaseIterable {
    /// Applied, but its `stale-date` has already passed: iOS shows it as stale at once.
    case staleDateInPast
    /// `timestamp` not newer than the last applied push's (ignored).
    case oldTimestamp
    /// An update to an activity that has ended (ignored).
    case activityEnded
    /// `timestamp` more than 8 hours ahead of the device's clock (dropped).
    case futureTimestamp
    /// `content-state` does not decode as the `ContentState` (dropped); the detail names the key path.
    case undecodableContentState
    /// No `content-state` where one is needed (dropped).
    case missingContentState
    /// `attributes` do not decode as the `ActivityAttributes` (dropped); the detail names the key path.
    case undecodableAttributes
    /// `attributes-type` missing or naming no `ActivityAttributes` type of the app (dropped).
    case unknownAttributesType
    /// `attributes` and `content-state` swapped: one decodes as the other (dropped).
    case swappedAttributesAndContentState
    /// A `start` without an `alert` (dropped).
    case missingAlert
    /// The device would refuse it for another limit (too many activities, content too large).
    case limitExceeded
    /// A broadcast to a channel no live activity is subscribed to (nothing to update).
    case noSubscribers
    /// A push-to-start whose `input-push-channel` names no registered channel (dropped).
    case channelNotRegistered
}

/// What became of a push APNs would accept (HTTP 200): applied, or dropped or ignored by the device.
public enum PushVerdict: Sendable, Equatable {
    /// Applied: the activity changed.
    case applied
    /// iOS would ignore it (an older timestamp, an ended activity).
    case ignored(String)
    /// iOS would drop it (a content-state that does not decode, a start without an alert, an unknown
    /// attributes type).
    case dropped(String)

    /// `applied`, `ignored` or `dropped`.
    public var name: String {
        switch self {
        case .applied: "applied"
        case .ignored: "ignored"
        case .dropped: "dropped"
        }
    }

    /// Why it was ignored or dropped.
    public var reason: String? {
        switch self {
        case .applied: nil
        case .ignored(let reason), .dropped(let reason): reason
        }
    }
}

import Foundation

/// One Live Activity: fixed attributes, dynamic content and where it is in its life.
///
/// Mirrors ActivityKit's `Activity<Attributes>` (https://developer.apple.com/documentation/activitykit/activity).
/// Encoded as the protocol's activity object (see docs/PROTOCOL.md).
public struct Activity: Sendable, Hashable, Encodable {
    /// Server-assigned identifier (a UUID string).
    public var id: String
    /// The ``ActivityKind/attributesType`` name, e.g. `"workout"`.
    public var attributesType: String
    /// The fixed `ActivityAttributes`, normalised by the kind.
    public var attributes: JSONValue
    /// The current content.
    public var content: ActivityContent
    /// The countdown read from `content.state`, if the kind has one.
    public var timer: TimerRange?
    /// Lifecycle state.
    public var activityState: ActivityState
    /// When the activity started (UTC).
    public var startDate: Date
    /// When it ended (UTC), `nil` while running.
    public var endDate: Date?
    /// When it is or was dismissed (UTC), `nil` while running.
    public var dismissalDate: Date?
    /// Whether `timerFinished` has been sent for the current timer.
    public var timerFinished: Bool
    /// Why it ended, `nil` while running.
    public var endReason: EndReason?
    /// The token that addresses this activity in APNs-shaped pushes (`POST /3/device/{pushToken}`):
    /// 64 lowercase hex digits, as APNs device tokens are.
    public var pushToken: String?
    /// The `aps.timestamp` (Unix seconds) of the last push applied; older pushes are ignored, as on iOS.
    public var lastPushTimestamp: Double?
    /// The fitted thumbnail of `attributes.image`, once the server has fetched it; `nil` until then (or when it cannot be).
    public var thumbnail: ActivityThumbnail?
    /// The broadcast channel it is subscribed to (iOS 18 `PushType.channel`): a `start` with `channelId`, or a
    /// push-to-start with `input-push-channel`; broadcasts to the channel update it. `nil` for none.
    public var channelId: String?
    /// Why its attributes or state no longer validate under its kind (its `Attributes.swift` changed, or its
    /// kind is gone), e.g. `content.state.note: required field is missing`; `nil` when they do. Computed by
    /// the engine when kinds load (``ActivityCenter/markKindProblems()``), never stored: the activity is kept as it was.
    public var kindProblem: String?

    /// Creates an activity.
    public init(id: String, attributesType: String, attributes: JSONValue, content: ActivityContent, timer: TimerRange?,
                activityState: ActivityState = .active, startDate: Date, endDate: Date? = nil,
                dismissalDate: Date? = nil, timerFinished: Bool = false, endReason: EndReason? = nil) {
        self.id = id
        self.attributesType = attributesType
        self.attributes = attributes
        self.content = content
        self.timer = timer
        self.activityState = activityState
        self.startDate = startDate
        self.endDate = endDate
        self.dismissalDate = dismissalDate
        self.timerFinished = timerFinished
        self.endReason = endReason
    }

    private enum CodingKeys: String, CodingKey {
        case id, attributesType, attributes, content, activityState, startDate, endDate, dismissalDate, endReason, pushToken, thumbnail, channelId, kindProblem
        case timerFinished, lastPushTimestamp
    }

    /// Encodes the protocol's activity object; absent dates are written as `null`, `endReason` only once ended.
    /// An encoder whose `userInfo` has ``MessageEncoder/storedFormKey`` set to `true` writes the stores' form
    /// instead (``StoredActivity``): no `kindProblem`, plus `timerFinished` and `lastPushTimestamp`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(attributesType, forKey: .attributesType)
        try container.encode(attributes, forKey: .attributes)
        try container.encode(content, forKey: .content)
        try container.encode(activityState, forKey: .activityState)
        try container.encode(startDate, forKey: .startDate)
        try container.encode(endDate, forKey: .endDate)
        try container.encode(dismissalDate, forKey: .dismissalDate)
        try container.encodeIfPresent(endReason, forKey: .endReason)
        try container.encodeIfPresent(pushToken, forKey: .pushToken)
        try container.encodeIfPresent(thumbnail, forKey: .thumbnail)
        try container.encodeIfPresent(channelId, forKey: .channelId)
        if encoder.userInfo[MessageEncoder.storedFormKey] as? Bool == true {
            try container.encode(timerFinished, forKey: .timerFinished)
            try container.encodeIfPresent(lastPushTimestamp, forKey: .lastPushTimestamp)
        } else {
            try container.encodeIfPresent(kindProblem, forKey: .kindProblem)
        }
    }
}

extension Activity {
    /// The protocol's activity object as UTF-8 JSON (as in `snapshot.activities`), for the read API.
    public func encodedJSON() -> [UInt8] {
        Array((try? MessageEncoder.encoder.encode(self)) ?? Data("{}".utf8))
    }
}

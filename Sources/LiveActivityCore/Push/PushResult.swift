/// The answer to one APNs-shaped push, over HTTP (status, `apns-id`, headers) or WebSocket (`pushResult`).
public struct PushResult: Sendable, Equatable, Encodable {
    /// HTTP status as APNs would give it: 200, or 400 / 403 / 404 / 405 / 410 / 413 / 429.
    public var status: Int
    /// The `apns-id` (a UUID, the request's own when it sent one).
    public var apnsId: String
    /// APNs's `reason` when refused.
    public var reason: String?
    /// For status 200: `applied`, `ignored` or `dropped`.
    public var verdict: String?
    /// Why it was refused, ignored or dropped.
    public var detail: String?
    /// For 410 `Unregistered`: when the token stopped being valid, in milliseconds since 1970.
    public var timestamp: Int64?
    /// The activity addressed or started, if any.
    public var activityId: String?
    /// For a broadcast: the activities it reached (subscribed to the channel), in order. Absent otherwise.
    public var activityIds: [String]?
    /// For status 200: the ``PushCause`` of an ignored or dropped push, or `staleDateInPast` for an applied one.
    public var cause: String?
    /// For an applied push: what iOS would do that the sender may not expect (a stale date already past), and
    /// the keys the app's type would silently ignore (``ActivityCenter/PushOutcome/warnings``), joined by `; `.
    public var warning: String?

    /// A refusal.
    public init(_ rejection: PushRejection, apnsId: String) {
        status = rejection.status
        self.apnsId = apnsId
        reason = rejection.reason
        detail = rejection.detail
        timestamp = rejection.timestamp
    }

    /// An accepted broadcast push and what the devices subscribed to its channel did with it.
    public init(_ outcome: ActivityCenter.BroadcastOutcome, requestId: String) {
        status = 200
        apnsId = requestId
        verdict = outcome.verdict.name
        detail = outcome.verdict.reason
        cause = outcome.cause?.rawValue
        activityIds = outcome.activityIds
        warning = outcome.warnings.isEmpty ? nil : outcome.warnings.joined(separator: "; ")
    }

    /// An accepted push and what the device did with it.
    public init(_ outcome: ActivityCenter.PushOutcome, apnsId: String) {
        status = 200
        self.apnsId = apnsId
        verdict = outcome.verdict.name
        detail = outcome.verdict.reason
        activityId = outcome.activityId
        cause = outcome.cause?.rawValue
        let warnings = (outcome.warning.map { [$0] } ?? []) + outcome.warnings
        warning = warnings.isEmpty ? nil : warnings.joined(separator: "; ")
    }
}

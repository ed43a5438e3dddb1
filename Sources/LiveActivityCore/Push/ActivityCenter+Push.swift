import Foundation

/// Applying APNs-shaped pushes as iOS would: the same lifecycle as the native messages, plus the device's
/// own rules (push tokens, timestamps, drops).
extension ActivityCenter {
    /// What a push accepted by APNs (HTTP 200) did.
    public struct PushOutcome: Sendable {
        /// Applied, ignored or dropped, with the reason.
        public var verdict: PushVerdict
        /// The activity addressed or started.
        public var activityId: String?
        /// The events, in order (none unless applied).
        public var events: [ActivityEvent]
        /// Why it was ignored or dropped, or what to beware of although it applied (``PushCause/staleDateInPast``).
        public var cause: PushCause? = nil
        /// For an applied push: what iOS would do that the sender may not expect (a stale date already past).
        public var warning: String? = nil
        /// Keys of `content-state` and `attributes` the app's type would silently ignore (declared kinds).
        public var warnings: [String] = []
    }

    /// How far ahead of the device's clock a push `timestamp` may be: iOS drops pushes dated more than 8 hours
    /// in the future (Apple DTS, forum thread 776165).
    public static let maximumTimestampLead: TimeInterval = 8 * 3600

    /// The live activity addressed by `pushToken`, if any.
    public func activity(withPushToken pushToken: String) -> Activity? {
        activities.values.first { $0.pushToken == pushToken }
    }

    /// Applies one push at `now`, then any deadline already due.
    /// - Parameters:
    ///   - push: the parsed payload.
    ///   - pushToken: the token it was sent to: the server's push-to-start token for `start`, an
    ///     activity's `pushToken` otherwise.
    ///   - pushToStartToken: the server's push-to-start token.
    ///   - now: the current time (UTC).
    ///   - isChannelRegistered: whether a channel ID names a registered broadcast channel (for a start's
    ///     `input-push-channel`; an unknown one drops the push with ``PushCause/channelNotRegistered``).
    ///   - newID: makes the id of a started activity.
    /// - Returns: the verdict and events.
    /// - Throws: ``PushRejection`` when APNs itself would refuse the push (`BadDeviceToken`, 400, for a token
    ///   never issued; `Unregistered`, 410, with the time it stopped being valid, for a dismissed activity's), or its
    ///   `aps.stale-date` or `aps.dismissal-date` lies outside the ``DateWindow`` around `now` (`BadPayload`,
    ///   400, naming the key), or a start's `aps.attributes-type` is a Swift name two user kinds declare
    ///   (`BadPayload`, 400, naming the candidate kinds; ``KindRegistry/match(pushType:)``); nothing has changed then.
    public mutating func applyPush(_ push: APNsPush, pushToken: String, pushToStartToken: String, now: Date,
                                   isChannelRegistered: (String) -> Bool = { _ in false },
                                   newID: () -> String) throws(PushRejection) -> PushOutcome {
        var outcome: PushOutcome
        switch push.event {
        case .start:
            guard AccessPolicy.constantTimeEquals(pushToken, pushToStartToken) else {
                throw PushRejection(status: 400, reason: "BadDeviceToken", detail: "start pushes go to the push-to-start token (GET /api/push-to-start-token)")
            }
            try checkDates(push, now: now)
            try checkAttributesTypeIsUnambiguous(push)
            if let future = futureTimestamp(push, now: now, nil) { return future }
            if let channel = push.inputPushChannel, !isChannelRegistered(channel) {
                return dropped(.channelNotRegistered, "aps.input-push-channel \(channel) is not a registered channel "
                               + "(create it with POST /1/apps/{bundleId}/channels); iOS cannot subscribe the activity to it")
            }
            outcome = startFromPush(push, now: now, newID: newID)
        case .update, .end:
            guard let activity = activity(withPushToken: pushToken) else {
                if let retired = retiredPushTokens.retiredDate(of: pushToken) {
                    throw PushRejection(status: 410, reason: "Unregistered",
                                        detail: "the activity with push token \(pushToken.clipped(to: 64)) was dismissed at \(ISODate.format(retired)); "
                                            + "the token is no longer valid: stop sending to it",
                                        timestamp: Int64((retired.timeIntervalSince1970 * 1000).rounded(.down)))
                }
                if AccessPolicy.constantTimeEquals(pushToken, pushToStartToken) {
                    throw PushRejection(status: 400, reason: "BadDeviceToken",
                                        detail: "\(push.event.rawValue) pushes go to the activity's own push token (its pushToken); this is the "
                                            + "push-to-start token, which takes start pushes only")
                }
                throw PushRejection(status: 400, reason: "BadDeviceToken", detail: "no live activity has push token \(pushToken.clipped(to: 64))")
            }
            try checkDates(push, now: now)
            if let future = futureTimestamp(push, now: now, activity) { return future }
            outcome = push.event == .update ? updateFromPush(push, activity, now: now) : endFromPush(push, activity, now: now)
        }
        outcome.warnings = ignoredKeys(push, activityId: outcome.activityId, now: now)
        if outcome.verdict == .applied {
            outcome.events += advance(to: now)
            if push.event != .end, let stale = push.staleDate, stale <= now {
                outcome.cause = .staleDateInPast
                outcome.warning = "aps.stale-date \(Self.number(push.staleDate!.timeIntervalSince1970)) (\(ISODate.format(stale))) has already passed: "
                    + "iOS applies the update but shows the activity as stale at once"
            }
        }
        return outcome
    }

    /// What a broadcast push accepted by APNs (HTTP 200) did to the activities subscribed to its channel.
    public struct BroadcastOutcome: Sendable {
        /// Applied (to at least one activity), else the first subscriber's ignored or dropped verdict, else
        /// ignored with ``PushCause/noSubscribers``.
        public var verdict: PushVerdict
        /// Why it was ignored or dropped (as ``PushOutcome/cause``).
        public var cause: PushCause?
        /// The activities subscribed to the channel that it reached, in start order (ids).
        public var activityIds: [String]
        /// What it did to each of them, in the same order.
        public var outcomes: [PushOutcome]
        /// The events, in order (those of the activities it applied to, then deadlines already due).
        public var events: [ActivityEvent]
        /// What the subscribers' apps would silently ignore in the push (as ``PushOutcome/warnings``), each
        /// sentence once, in subscriber order.
        public var warnings: [String]
    }

    /// Applies one broadcast push (iOS 18) at `now` to every activity subscribed to `channelId` (live, or
    /// ended for an `end`), each as iOS applies a push to it: an update is ignored by an ended activity or
    /// one whose last push is newer; an end is applied even when older. Then any deadline already due.
    /// Source: "Sending broadcast push notification requests to APNs".
    /// - Parameters:
    ///   - push: the parsed payload (at most ``APNsPush/maximumBroadcastBytes``).
    ///   - channelId: the registered channel it was sent to.
    ///   - now: the current time (UTC).
    /// - Returns: the verdict, the activities reached and the events.
    /// - Throws: ``PushRejection`` 400 `BadPayload` for a `start` (a channel updates and ends activities; a
    ///   push-to-start with `input-push-channel` starts one) or an `aps.stale-date` / `aps.dismissal-date`
    ///   outside the ``DateWindow``; nothing has changed then.
    public mutating func applyBroadcast(_ push: APNsPush, channelId: String, now: Date) throws(PushRejection) -> BroadcastOutcome {
        guard push.event != .start else {
            throw PushRejection(status: 400, reason: "BadPayload", detail: "aps.event: broadcast pushes update or end Live Activities; "
                                + "start one with a push-to-start push carrying aps.input-push-channel", field: "aps.event")
        }
        try checkDates(push, now: now)
        let subscribers = activities.values.filter { $0.channelId == channelId && $0.activityState != .dismissed }
            .sorted { ($0.startDate, $0.id) < ($1.startDate, $1.id) }
        var outcomes: [PushOutcome] = []
        var events: [ActivityEvent] = []
        var warningsByKind: [String: [String]] = [:]
        for activity in subscribers {
            var outcome: PushOutcome
            if let future = futureTimestamp(push, now: now, activity) {
                outcome = future
            } else if push.event == .update {
                outcome = updateFromPush(push, activity, now: now)
            } else {
                outcome = endFromPush(push, activity, now: now)
            }
            if outcome.verdict == .applied { events += outcome.events }
            outcome.events = []
            // The same payload against the same kind says the same: decode it once per kind, not per subscriber.
            if warningsByKind[activity.attributesType] == nil {
                warningsByKind[activity.attributesType] = ignoredKeys(push, activityId: activity.id, now: now)
            }
            outcome.warnings = warningsByKind[activity.attributesType] ?? []
            outcomes.append(outcome)
        }
        events += advance(to: now)
        let verdict: PushVerdict
        let cause: PushCause?
        if outcomes.contains(where: { $0.verdict == .applied }) {
            verdict = .applied
            cause = nil
        } else if let first = outcomes.first {
            verdict = first.verdict
            cause = first.cause
        } else {
            verdict = .ignored("no live activity is subscribed to channel \(channelId): nothing to update")
            cause = .noSubscribers
        }
        var warnings: [String] = []
        for warning in outcomes.flatMap(\.warnings) where !warnings.contains(warning) { warnings.append(warning) }
        return BroadcastOutcome(verdict: verdict, cause: cause, activityIds: subscribers.map(\.id), outcomes: outcomes, events: events,
                                warnings: warnings)
    }

    /// Checks the push's own dates, `aps.stale-date` and `aps.dismissal-date`, against the ``DateWindow`` around
    /// `now`. Dates inside `content-state` and `attributes` are left to the device, as iOS decodes them: a wrong
    /// epoch there is applied, and the inspector's date lens flags it.
    /// - Throws: ``PushRejection`` 400 `BadPayload` naming the first key out of the window.
    private func checkDates(_ push: APNsPush, now: Date) throws(PushRejection) {
        do throws(ProtocolError) {
            try DateWindow.check(push.staleDate, field: "aps.stale-date", now: now)
            try DateWindow.check(push.dismissalDate, field: "aps.dismissal-date", now: now)
        } catch {
            throw PushRejection(status: 400, reason: "BadPayload", detail: error.message, field: error.field)
        }
    }

    /// A push dated more than ``maximumTimestampLead`` ahead of `now`: dropped, as iOS does.
    private func futureTimestamp(_ push: APNsPush, now: Date, _ activity: Activity?) -> PushOutcome? {
        let lead = push.timestamp - now.timeIntervalSince1970
        guard lead > Self.maximumTimestampLead else { return nil }
        var hint = ""
        if push.timestamp > 1e11 { hint = " (it looks like milliseconds: send Unix seconds)" }
        return dropped(.futureTimestamp, "aps.timestamp \(Self.number(push.timestamp)) is \(Self.hours(lead)) ahead of the device's clock; "
                       + "iOS drops pushes dated more than 8 hours in the future\(hint)", activity)
    }

    /// Whether the push's `attributes` and `content-state` are swapped: one decodes as the other for `kind`.
    private func swapped(_ push: APNsPush, kind: any ActivityKind) -> String? {
        if let state = push.contentState, (try? kind.attributes(from: state, field: "aps.content-state")) != nil {
            return "aps.content-state decodes as \(kind.attributesType) attributes, not as its ContentState: "
                + "attributes and content-state look swapped (content-state carries the dynamic part)"
        }
        if let attributes = push.attributes, (try? kind.state(fromCodable: attributes, field: "aps.attributes")) != nil {
            return "aps.attributes decodes as the \(kind.attributesType) ContentState, not as its attributes: "
                + "attributes and content-state look swapped (attributes carries the fixed part)"
        }
        return nil
    }

    /// Refuses a start whose `attributes-type` is a Swift name two or more user kinds declare: which app
    /// the backend means cannot be told, and routing it to either would silently drop it for the other.
    /// - Throws: ``PushRejection`` 400 `BadPayload` on `aps.attributes-type`, naming the candidate kinds and
    ///   telling the backend to send the kind's wire name.
    private func checkAttributesTypeIsUnambiguous(_ push: APNsPush) throws(PushRejection) {
        guard let name = push.attributesType, case .ambiguous(let candidates) = kinds.match(pushType: name) else { return }
        let listed = candidates.map { "\"\($0)\"" }.joined(separator: ", ")
        throw PushRejection(status: 400, reason: "BadPayload",
                            detail: "aps.attributes-type \"\(name.clipped(to: 64))\" is ambiguous: the kinds \(listed) all declare that struct; "
                                + "send the kind's wire name as attributes-type (\(candidates.map { "\"\($0)\"" }.joined(separator: " or ")))",
                            field: "aps.attributes-type")
    }

    /// What the app would ignore in the push's `content-state` and `attributes`, by the kind of the
    /// activity addressed or started (or named by `attributes-type`), and the dates it would misread
    /// (Unix seconds where Swift counts from 2001, judged against `now`).
    private func ignoredKeys(_ push: APNsPush, activityId: String?, now: Date) -> [String] {
        let kind: (any ActivityKind)?
        if let activityId, let activity = activities[activityId] {
            kind = try? self.kind(of: activity)
        } else {
            kind = push.attributesType.flatMap { kinds.kind(forPushType: $0) }
        }
        guard let kind else { return [] }
        var warnings: [String] = []
        if let state = push.contentState { warnings += kind.warnings(inCodable: state, as: .contentState, field: "aps.content-state", now: now) }
        if push.event == .start, let attributes = push.attributes {
            warnings += kind.warnings(inCodable: attributes, as: .attributes, field: "aps.attributes", now: now)
        }
        return warnings
    }

    /// A number as people write it (no `.0` for whole numbers).
    static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    private static func hours(_ seconds: TimeInterval) -> String {
        seconds >= 86_400 * 365 ? String(format: "%.0f years", seconds / (86_400 * 365.25)) : String(format: "%.1f hours", seconds / 3600)
    }

    private mutating func startFromPush(_ push: APNsPush, now: Date, newID: () -> String) -> PushOutcome {
        guard let typeName = push.attributesType else {
            return dropped(.unknownAttributesType, "aps.attributes-type is missing; iOS cannot tell which activity to start")
        }
        guard let kind = kinds.kind(forPushType: typeName) else {
            let known = kinds.all.flatMap { [$0.attributesType] + $0.swiftTypeNames }.joined(separator: ", ")
            return dropped(.unknownAttributesType, "aps.attributes-type \"\(typeName.clipped(to: 60))\" names no ActivityAttributes type here; known: \(known)")
        }
        guard push.alert != nil else { return dropped(.missingAlert, "aps.alert is missing: iOS drops start pushes without an alert") }
        if let swapped = swapped(push, kind: kind) { return dropped(.swappedAttributesAndContentState, swapped) }
        guard let attributesValue = push.attributes else { return dropped(.undecodableAttributes, "aps.attributes is missing") }
        do throws(ProtocolError) {
            let attributes: JSONValue
            do throws(ProtocolError) {
                attributes = try kind.attributes(fromCodable: attributesValue, field: "aps.attributes")
            } catch {
                return dropped(.undecodableAttributes, error.message)
            }
            let content = try content(push, kind: kind, required: true)!
            let id = newID()
            var outcome = try start(StartCommand(kind: kind, attributes: attributes, content: content, channelId: push.inputPushChannel),
                                    now: now, id: id, pushToken: PushToken.random())
            activities[id]?.lastPushTimestamp = push.timestamp
            outcome.events = outcome.events.map { event in
                var event = event
                event.activity.lastPushTimestamp = push.timestamp
                return event
            }
            return PushOutcome(verdict: .applied, activityId: id, events: outcome.events)
        } catch {
            return dropped(Self.cause(of: error), error.message)
        }
    }

    private mutating func updateFromPush(_ push: APNsPush, _ activity: Activity, now: Date) -> PushOutcome {
        guard activity.activityState.isLive else {
            return ignored(.activityEnded, "the activity has ended; iOS ignores updates to ended activities", activity)
        }
        if let last = activity.lastPushTimestamp, push.timestamp <= last {
            return ignored(.oldTimestamp, "aps.timestamp \(Self.number(push.timestamp)) is not newer than the last applied push's (\(Self.number(last))); iOS ignores it", activity)
        }
        if let kind = try? kind(of: activity), let swapped = swapped(push, kind: kind) {
            return dropped(.swappedAttributesAndContentState, swapped, activity)
        }
        do throws(ProtocolError) {
            guard let content = try content(push, kind: try kind(of: activity), required: true) else {
                return dropped(.missingContentState, "aps.content-state is missing", activity)
            }
            return try applying(push.timestamp, to: activity.id) { center throws(ProtocolError) in
                try center.update(UpdateCommand(activityId: activity.id, content: content, alert: push.alert), now: now)
            }
        } catch {
            return dropped(Self.cause(of: error), error.message, activity)
        }
    }

    private mutating func endFromPush(_ push: APNsPush, _ activity: Activity, now: Date) -> PushOutcome {
        // iOS applies an end even with an older timestamp (Apple DTS, forum thread 776165).
        do throws(ProtocolError) {
            let content = activity.activityState.isLive ? try content(push, kind: try kind(of: activity), required: false) : nil
            let policy: DismissalPolicy = push.dismissalDate.map { .after($0) } ?? .default
            let timestamp = max(push.timestamp, activity.lastPushTimestamp ?? push.timestamp)
            return try applying(timestamp, to: activity.id) { center throws(ProtocolError) in
                try center.end(EndCommand(target: .one(activity.id), content: content, dismissalPolicy: policy), now: now)
            }
        } catch {
            return dropped(Self.cause(of: error), error.message, activity)
        }
    }

    /// Sets the activity's `lastPushTimestamp` to `timestamp` and applies `change`; if `change` throws, the
    /// activity is put back as it was, so a refused push leaves no trace.
    /// - Throws: what `change` throws (``ProtocolError``).
    private mutating func applying(_ timestamp: Double, to id: String,
                                   _ change: (inout ActivityCenter) throws(ProtocolError) -> Outcome) throws(ProtocolError) -> PushOutcome {
        let saved = activities[id]
        activities[id]?.lastPushTimestamp = timestamp
        do {
            let outcome = try change(&self)
            return PushOutcome(verdict: .applied, activityId: id, events: outcome.events)
        } catch {
            activities[id] = saved
            throw error
        }
    }

    /// The push's content (state, stale date, relevance) for `kind`; `nil` when it carries no state and
    /// none is required.
    private func content(_ push: APNsPush, kind: any ActivityKind, required: Bool) throws(ProtocolError) -> ContentInput? {
        guard let state = push.contentState else {
            if required { throw ProtocolError.missing("aps.content-state") }
            return nil
        }
        try ContentLimits.check(state: state, field: "aps.content-state")
        let (normalised, timer) = try kind.state(fromCodable: state, field: "aps.content-state")
        return .resolved(ActivityContent(state: normalised, staleDate: push.staleDate, relevanceScore: push.relevanceScore ?? 0), timer)
    }

    private func dropped(_ cause: PushCause, _ reason: String, _ activity: Activity? = nil) -> PushOutcome {
        PushOutcome(verdict: .dropped(reason), activityId: activity?.id, events: [], cause: cause)
    }

    private func ignored(_ cause: PushCause, _ reason: String, _ activity: Activity) -> PushOutcome {
        PushOutcome(verdict: .ignored(reason), activityId: activity.id, events: [], cause: cause)
    }

    /// The cause of a drop for an error from decoding or applying a push's content.
    private static func cause(of error: ProtocolError) -> PushCause {
        if error.code == .limitExceeded { return .limitExceeded }
        if error.code == .missingField, error.field == "aps.content-state" { return .missingContentState }
        if let field = error.field, field.hasPrefix("aps.attributes") { return .undecodableAttributes }
        return .undecodableContentState
    }
}

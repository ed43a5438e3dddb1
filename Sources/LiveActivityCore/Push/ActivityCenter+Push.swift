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
    }

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
    ///   - newID: makes the id of a started activity.
    /// - Returns: the verdict and events.
    /// - Throws: ``PushRejection`` when APNs itself would refuse the push (`BadDeviceToken`, 400); nothing
    ///   has changed then.
    public mutating func applyPush(_ push: APNsPush, pushToken: String, pushToStartToken: String, now: Date,
                                   newID: () -> String) throws(PushRejection) -> PushOutcome {
        var outcome: PushOutcome
        switch push.event {
        case .start:
            guard AccessPolicy.constantTimeEquals(pushToken, pushToStartToken) else {
                throw PushRejection(status: 400, reason: "BadDeviceToken", detail: "start pushes go to the push-to-start token (GET /api/push-to-start-token)")
            }
            outcome = startFromPush(push, now: now, newID: newID)
        case .update, .end:
            guard let activity = activity(withPushToken: pushToken) else {
                throw PushRejection(status: 400, reason: "BadDeviceToken", detail: "no live activity has push token \(pushToken.prefix(64))")
            }
            outcome = push.event == .update ? updateFromPush(push, activity, now: now) : endFromPush(push, activity, now: now)
        }
        if outcome.verdict == .applied { outcome.events += advance(to: now) }
        return outcome
    }

    private mutating func startFromPush(_ push: APNsPush, now: Date, newID: () -> String) -> PushOutcome {
        guard let typeName = push.attributesType else { return dropped("aps.attributes-type is missing; iOS cannot tell which activity to start") }
        guard let kind = ActivityKinds.kind(forPushType: typeName) else {
            let known = ActivityKinds.all.flatMap { [$0.attributesType] + $0.swiftTypeNames }.joined(separator: ", ")
            return dropped("aps.attributes-type \"\(typeName.prefix(60))\" names no ActivityAttributes type here; known: \(known)")
        }
        guard push.alert != nil else { return dropped("aps.alert is missing: iOS drops start pushes without an alert") }
        guard let attributesValue = push.attributes else { return dropped("aps.attributes is missing") }
        do throws(ProtocolError) {
            let attributes = try kind.attributes(from: attributesValue, field: "aps.attributes")
            let content = try content(push, kind: kind, required: true)!
            let id = newID()
            var outcome = try start(StartCommand(kind: kind, attributes: attributes, content: content), now: now, id: id,
                                    pushToken: PushToken.random())
            activities[id]?.lastPushTimestamp = push.timestamp
            outcome.events = outcome.events.map { event in
                var event = event
                event.activity.lastPushTimestamp = push.timestamp
                return event
            }
            return PushOutcome(verdict: .applied, activityId: id, events: outcome.events)
        } catch {
            return dropped(error.message)
        }
    }

    private mutating func updateFromPush(_ push: APNsPush, _ activity: Activity, now: Date) -> PushOutcome {
        guard activity.activityState.isLive else { return ignored("the activity has ended; iOS ignores updates to ended activities", activity) }
        if let last = activity.lastPushTimestamp, push.timestamp <= last {
            return ignored("aps.timestamp \(push.timestamp) is not newer than the last applied push's (\(last)); iOS ignores it", activity)
        }
        do throws(ProtocolError) {
            guard let content = try content(push, kind: try kind(of: activity), required: true) else { return dropped("aps.content-state is missing") }
            let saved = activities[activity.id]
            activities[activity.id]?.lastPushTimestamp = push.timestamp
            do {
                let outcome = try update(UpdateCommand(activityId: activity.id, content: content, alert: push.alert), now: now)
                return PushOutcome(verdict: .applied, activityId: activity.id, events: outcome.events)
            } catch {
                activities[activity.id] = saved
                throw error
            }
        } catch {
            return dropped(error.message, activity)
        }
    }

    private mutating func endFromPush(_ push: APNsPush, _ activity: Activity, now: Date) -> PushOutcome {
        // iOS applies an end even with an older timestamp (Apple DTS, forum thread 776165).
        do throws(ProtocolError) {
            let content = activity.activityState.isLive ? try content(push, kind: try kind(of: activity), required: false) : nil
            let policy: DismissalPolicy = push.dismissalDate.map { .after($0) } ?? .default
            let saved = activities[activity.id]
            activities[activity.id]?.lastPushTimestamp = max(push.timestamp, activity.lastPushTimestamp ?? push.timestamp)
            do {
                let outcome = try end(EndCommand(target: .one(activity.id), content: content, dismissalPolicy: policy), now: now)
                return PushOutcome(verdict: .applied, activityId: activity.id, events: outcome.events)
            } catch {
                activities[activity.id] = saved
                throw error
            }
        } catch {
            return dropped(error.message, activity)
        }
    }

    /// The push's content (state, stale date, relevance) for `kind`; `nil` when it carries no state and
    /// none is required.
    private func content(_ push: APNsPush, kind: any ActivityKind.Type, required: Bool) throws(ProtocolError) -> ContentInput? {
        guard let state = push.contentState else {
            if required { throw ProtocolError.missing("aps.content-state") }
            return nil
        }
        try ContentLimits.check(state: state, field: "aps.content-state")
        let (normalised, timer) = try kind.state(fromCodable: state, field: "aps.content-state")
        return .resolved(ActivityContent(state: normalised, staleDate: push.staleDate, relevanceScore: push.relevanceScore ?? 0), timer)
    }

    private func dropped(_ reason: String, _ activity: Activity? = nil) -> PushOutcome {
        PushOutcome(verdict: .dropped(reason), activityId: activity?.id, events: [])
    }

    private func ignored(_ reason: String, _ activity: Activity) -> PushOutcome {
        PushOutcome(verdict: .ignored(reason), activityId: activity.id, events: [])
    }
}

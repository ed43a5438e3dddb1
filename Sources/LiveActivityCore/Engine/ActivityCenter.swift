import Foundation

/// Every live activity and its lifecycle, as ActivityKit runs it; pure and clock-free.
///
/// The caller passes the current time into every method, so tests drive it with any clock. Each change
/// returns the ``ActivityEvent``s it caused, numbered by a server-wide `sequence`. Deadlines (scheduled
/// starts, stale dates, countdown ends, dismissal dates, the 8-hour cap) are applied by ``advance(to:)``;
/// ``nextDeadline`` says when that is next due. Not thread-safe: one owner (the service thread) calls it.
public struct ActivityCenter: Sendable {
    /// Activities not yet dismissed, by id.
    public internal(set) var activities: [String: Activity] = [:]
    /// The sequence number of the last event; 0 before the first.
    public internal(set) var sequence: UInt64
    /// Most activities that may be live (pending, active or stale) at once.
    public var maximumLive: Int
    /// The kinds that validate starts and updates; swapped when kinds are reloaded (activities keep their
    /// `attributesType` and find their kind again by name).
    public var kinds: KindRegistry
    /// The push tokens of activities dismissed since the center was made, for APNs's 410 `Unregistered`.
    public internal(set) var retiredPushTokens = RetiredPushTokens()

    /// What an accepted request produced.
    public struct Outcome: Sendable {
        /// The activity the request named or created (not set for `end` with `all`).
        public var activityId: String?
        /// Every activity ended by `end` with `all`.
        public var activityIds: [String]?
        /// The events, in order.
        public var events: [ActivityEvent]
    }

    /// Creates a center.
    /// - Parameters:
    ///   - activities: activities restored from a store.
    ///   - sequence: the last sequence number handed out.
    ///   - maximumLive: cap on live activities (ActivityKit allows a handful per app).
    ///   - kinds: the kinds accepted.
    public init(activities: [Activity] = [], sequence: UInt64 = 0, maximumLive: Int = 64, kinds: KindRegistry) {
        self.kinds = kinds
        self.activities = Dictionary(uniqueKeysWithValues: activities.map { ($0.id, $0) })
        self.sequence = sequence
        self.maximumLive = maximumLive
        markKindProblems()
    }

    // MARK: Queries

    /// Activities in presentation order: `relevanceScore` highest first, then newest `startDate`, then id.
    public var ordered: [Activity] {
        activities.values.sorted { a, b in
            if a.content.relevanceScore != b.content.relevanceScore { return a.content.relevanceScore > b.content.relevanceScore }
            if a.startDate != b.startDate { return a.startDate > b.startDate }
            return a.id < b.id
        }
    }

    /// The tick for `now`: every running countdown not yet at zero (paused ones included, marked), and every
    /// pending activity with the time to its start; `nil` when there is none.
    public func tick(at now: Date) -> Tick? {
        let timers = ordered.compactMap { activity -> Tick.Timer? in
            guard let timer = activity.timer else { return nil }
            switch activity.activityState {
            case .pending:
                let startsIn = activity.startDate.timeIntervalSince(now)
                return Tick.Timer(activityId: activity.id, remainingSeconds: Int(timer.end.timeIntervalSince(timer.start).rounded(.up)),
                                  startsInSeconds: max(0, Int(startsIn.rounded(.up))))
            case .active, .stale:
                guard timer.isPaused || timer.end > now else { return nil }
                return Tick.Timer(activityId: activity.id, remainingSeconds: timer.remainingSeconds(at: now), paused: timer.isPaused)
            case .ended, .dismissed:
                return nil
            }
        }
        return timers.isEmpty ? nil : Tick(serverTime: now, timers: timers)
    }

    /// The earliest instant (UTC) at which ``advance(to:)`` has something to do, or `nil`.
    public var nextDeadline: Date? {
        activities.values.compactMap(Self.deadline(of:)).min()
    }

    static func deadline(of activity: Activity) -> Date? {
        var dates: [Date] = []
        switch activity.activityState {
        case .pending:
            dates.append(activity.startDate)
        case .active, .stale:
            dates.append(activity.startDate.addingTimeInterval(Lifetime.maximumActive))
            if let timer = activity.timer, !activity.timerFinished, !timer.isPaused { dates.append(timer.end) }
            if activity.activityState == .active, let stale = activity.content.staleDate { dates.append(stale) }
        case .ended:
            if let dismissal = activity.dismissalDate { dates.append(dismissal) }
        case .dismissed:
            break
        }
        return dates.min()
    }

    // MARK: Commands

    /// Applies a command at `now`, then any deadline already due.
    /// - Parameters:
    ///   - command: the validated command (`list`, `catchUp` and `history` change nothing).
    ///   - now: the current time (UTC).
    ///   - newID: makes the id of a started activity (its push token is random).
    /// - Returns: the activity named, and the events caused, in order.
    /// - Throws: ``ProtocolError`` (`unknown_activity`, `activity_ended`, `invalid_state`, `limit_exceeded`,
    ///   `invalid_field`, also for a date outside the ``DateWindow`` around `now`); nothing has changed when it
    ///   throws.
    public mutating func apply(_ command: ClientMessage.Command, now: Date, newID: () -> String) throws(ProtocolError) -> Outcome {
        var outcome: Outcome
        switch command {
        case .start(let start):
            // A native start's own dates; a push's attributes are decoded as the device decodes them.
            try DateWindow.check(start.startDate, field: "startDate", now: now)
            for (field, date) in start.kind.dates(inAttributes: start.attributes, field: "attributes") {
                try DateWindow.check(date, field: field, now: now)
            }
            outcome = try self.start(start, now: now, id: newID(), pushToken: PushToken.random())
        case .update(let update): outcome = try self.update(update, now: now)
        case .end(let end): outcome = try self.end(end, now: now)
        case .pause(let id): outcome = try pause(id, now: now)
        case .resume(let id): outcome = try resume(id, now: now)
        case .extend(let id, let seconds): outcome = try extend(id, by: seconds, now: now)
        case .list, .catchUp, .history, .hello, .push, .share, .unshare, .shares, .inspect: outcome = Outcome(events: [])
        }
        outcome.events += advance(to: now)
        return outcome
    }

    mutating func start(_ command: StartCommand, now: Date, id: String, pushToken: String) throws(ProtocolError) -> Outcome {
        let live = activities.values.count { $0.activityState.isLive }
        guard live < maximumLive else {
            throw ProtocolError(.limitExceeded, field: nil,
                                message: "too many activities: \(live) are live and the limit is \(maximumLive); end one first")
        }
        let begin = max(command.startDate ?? now, now)
        let (content, timer) = try command.content.resolve(for: command.kind, now: begin)
        var activity = Activity(id: id, attributesType: command.kind.attributesType, attributes: command.attributes,
                                content: content, timer: command.kind.anchored(timer, startDate: begin),
                                activityState: begin > now ? .pending : .active,
                                startDate: begin)
        activity.pushToken = pushToken
        activity.channelId = command.channelId
        activities[id] = activity
        return Outcome(activityId: id, events: [event(begin > now ? .scheduled : .started, activity)])
    }

    mutating func update(_ command: UpdateCommand, now: Date) throws(ProtocolError) -> Outcome {
        var activity = try live(command.activityId)
        let kind = try kind(of: activity)
        let (content, resolved) = try command.content.resolve(for: kind, now: max(now, activity.startDate))
        let timer = kind.anchored(resolved, startDate: activity.startDate)
        activity.content = content
        if timer != activity.timer { activity.timerFinished = false }
        activity.timer = timer
        if activity.activityState == .stale { activity.activityState = .active }
        // The new state has just passed `kind`, and the attributes, fixed, passed it when it last loaded
        // (``markKindProblems()`` runs on every reload): an unmarked activity stays unmarked without being read
        // again; a marked one is read again, as its state may be what was wrong.
        if activity.kindProblem != nil { activity.kindProblem = kindProblem(of: activity) }
        activities[activity.id] = activity
        return Outcome(activityId: activity.id, events: [event(.updated, activity, alert: command.alert)])
    }

    mutating func end(_ command: EndCommand, now: Date) throws(ProtocolError) -> Outcome {
        if case .after(let date) = command.dismissalPolicy {
            try DateWindow.check(date, field: "dismissalPolicy.after", now: now)
        }
        switch command.target {
        case .one(let id):
            guard let activity = activities[id] else { throw unknown(id) }
            var finalContent: (ActivityContent, TimerRange?)?
            if let content = command.content {
                guard activity.activityState.isLive else {
                    throw ProtocolError(.activityEnded, field: "content", message: "content: activity \(id) has already ended; its final content cannot change")
                }
                finalContent = try content.resolve(for: try kind(of: activity), now: now)
            }
            return Outcome(activityId: id, events: end(id, content: finalContent, policy: command.dismissalPolicy, reason: .request, now: now))
        case .all:
            // Resolve every final content before ending anything, so that a bad one changes nothing.
            var plan: [(id: String, content: (ActivityContent, TimerRange?)?)] = []
            for activity in ordered {
                var finalContent: (ActivityContent, TimerRange?)?
                if let content = command.content, activity.activityState.isLive {
                    finalContent = try content.resolve(for: try kind(of: activity), now: now)
                }
                plan.append((activity.id, finalContent))
            }
            var events: [ActivityEvent] = []
            for (id, content) in plan {
                events += end(id, content: content, policy: command.dismissalPolicy, reason: .request, now: now)
            }
            return Outcome(activityIds: plan.map(\.id), events: events)
        }
    }

    /// Ends one activity (or, if it has ended already, re-applies the dismissal policy: `ended` again when that
    /// moves its dismissal date, `dismissed` when the new date is due). A pending activity never showed, so it is
    /// dismissed at once.
    private mutating func end(_ id: String, content: (ActivityContent, TimerRange?)?, policy: DismissalPolicy, reason: EndReason,
                              now: Date) -> [ActivityEvent] {
        guard var activity = activities[id] else { return [] }
        var events: [ActivityEvent] = []
        if activity.activityState.isLive {
            if let (content, timer) = content {
                activity.content = content
                activity.timer = (try? kind(of: activity))?.anchored(timer, startDate: activity.startDate) ?? timer
            }
            let wasPending = activity.activityState == .pending
            activity.activityState = .ended
            activity.endDate = now
            activity.endReason = reason
            activity.dismissalDate = wasPending ? now : policy.dismissalDate(endDate: now, now: now)
            activities[id] = activity
            events.append(event(.ended, activity))
        } else {
            let dismissal = policy.dismissalDate(endDate: activity.endDate ?? now, now: now)
            if dismissal != activity.dismissalDate {
                activity.dismissalDate = dismissal
                activities[id] = activity
                // A moved dismissal date is a change like any other: the `ended` event again (same end date and
                // final content) carries it to watchers, to the store and to other instances. Without it the new
                // date was acknowledged and applied here but never stored, so a restart put the old one back.
                // A date already due dismisses at once instead (below).
                if dismissal > now { events.append(event(.ended, activity)) }
            }
        }
        if let dismissal = activity.dismissalDate, dismissal <= now {
            events.append(dismiss(id))
        }
        return events
    }

    // MARK: Deadlines

    /// Applies every deadline due at `now`: scheduled starts (`started`), the 8-hour cap (`ended`),
    /// countdowns reaching zero (`timerFinished`), stale dates (`stale`) and dismissal dates (`dismissed`).
    /// - Parameter now: the current time (UTC).
    /// - Returns: the events, in order.
    public mutating func advance(to now: Date) -> [ActivityEvent] {
        var events: [ActivityEvent] = []
        let due = activities.values
            .filter { Self.deadline(of: $0).map { $0 <= now } ?? false }
            .sorted { ($0.startDate, $0.id) < ($1.startDate, $1.id) }
        for original in due {
            var activity = original
            if activity.activityState == .pending, now >= activity.startDate {
                activity.activityState = .active
                activities[activity.id] = activity
                events.append(event(.started, activity))
            }
            if activity.activityState.isRunning, now >= activity.startDate.addingTimeInterval(Lifetime.maximumActive) {
                events += end(activity.id, content: nil, policy: .default, reason: .lifetimeLimit, now: now)
                continue
            }
            if activity.activityState.isRunning, let timer = activity.timer, !activity.timerFinished, timer.hasFinished(at: now) {
                activity.timerFinished = true
                activities[activity.id] = activity
                events.append(event(.timerFinished, activity))
            }
            if activity.activityState == .active, let stale = activity.content.staleDate, now >= stale {
                activity.activityState = .stale
                activities[activity.id] = activity
                events.append(event(.stale, activity))
            }
            if activity.activityState == .ended, let dismissal = activity.dismissalDate, now >= dismissal {
                events.append(dismiss(activity.id))
            }
        }
        return events
    }

    // MARK: Replication

    /// Applies events recorded elsewhere (another instance), in order: each one's activity replaces ours
    /// (or leaves, once dismissed). Events at or below ``sequence`` were applied already and are skipped.
    /// - Returns: the events applied, and whether a gap stopped it (the caller must fetch the missing ones).
    public mutating func applyReplicated(_ events: [ActivityEvent]) -> (applied: [ActivityEvent], gap: Bool) {
        var applied: [ActivityEvent] = []
        for event in events where event.sequence > sequence {
            guard event.sequence == sequence + 1 else { return (applied, true) }
            if event.kind == .dismissed {
                activities[event.activity.id] = nil
                retire(event.activity)
            } else {
                activities[event.activity.id] = event.activity
            }
            sequence = event.sequence
            applied.append(event)
        }
        return (applied, false)
    }

    // MARK: Helpers

    private mutating func dismiss(_ id: String) -> ActivityEvent {
        var activity = activities.removeValue(forKey: id)!
        activity.activityState = .dismissed
        retire(activity)
        return event(.dismissed, activity)
    }

    /// Remembers the push tokens of activities dismissed before this center was made (read back from the
    /// store at start), oldest first, so that a restarted server still answers a push to one 410
    /// `Unregistered` rather than 400 `BadDeviceToken`.
    /// - Parameter dismissed: dismissed activities, oldest dismissal first; those without a token are skipped.
    public mutating func rememberDismissed(_ dismissed: [Activity]) {
        for activity in dismissed { retire(activity) }
    }

    /// Remembers a dismissed activity's push token as no longer valid from its dismissal date.
    private mutating func retire(_ activity: Activity) {
        guard let token = activity.pushToken else { return }
        retiredPushTokens.retire(token, at: activity.dismissalDate ?? activity.endDate ?? activity.startDate)
    }

    mutating func event(_ kind: ActivityEvent.Kind, _ activity: Activity, alert: AlertConfiguration? = nil) -> ActivityEvent {
        sequence += 1
        return ActivityEvent(kind: kind, sequence: sequence, activity: activity, alert: alert)
    }

    /// The activity `id` if it still takes updates (pending, active or stale).
    func live(_ id: String) throws(ProtocolError) -> Activity {
        guard let activity = activities[id] else { throw unknown(id) }
        guard activity.activityState.isLive else {
            throw ProtocolError(.activityEnded, field: "activityId",
                                message: "activityId: activity \(id) has ended; ended activities take no updates")
        }
        return activity
    }

    func kind(of activity: Activity) throws(ProtocolError) -> any ActivityKind {
        try kinds.kind(named: activity.attributesType, field: "attributesType")
    }

    private func unknown(_ id: String) -> ProtocolError {
        ProtocolError(.unknownActivity, field: "activityId", message: "activityId: no activity with id \"\(id.clipped(to: 128))\" (never started, or already dismissed)")
    }
}

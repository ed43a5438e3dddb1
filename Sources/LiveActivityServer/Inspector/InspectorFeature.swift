import Foundation
import LiveActivityCore

/// The push inspector as a feature: every push and client message with its verdict, raw payload, decoded
/// state, date lens and diff, kept in memory (the last ``Inspector/capacity``), served as
/// `GET /api/inspections`, streamed to connections that sent `inspect`, and shown by the page `/inspector`
/// (``InspectorRoutes``); an activity's timeline (`GET /api/activities/{id}/timeline`) and the activity as it
/// was at an instant (``activity(_:asOf:then:)``, given to renderings by closure).
///
/// Records what the features answered as a ``RequestObserver``; keeps each activity's latest content for its
/// diffs as a ``ChangeObserver`` (never from a read of the event log). Registers the `inspect` command (a
/// reply). Service thread only.
final class InspectorFeature: ServerFeature, RequestObserver, ChangeObserver {
    /// What the inspector sees of the server. Closures are called on the service thread.
    struct Context {
        /// The current time (the server's clock, whole milliseconds).
        var now: () -> Date
        /// The committed activities (what clients have been told).
        var center: () -> ActivityCenter
        /// Who may read the inspector's routes.
        var access: AccessPolicy
        /// The folder holding inspector.html.
        var publicDirectory: URL
        /// Budget emulation (`--emulate-budget`).
        var budget: BudgetEmulation
        /// The live-activity limit, which bounds the contents kept for diffs (4 × it, at least 256).
        var maximumLiveActivities: Int
        /// The open session with this id, nil when it closed or is closing.
        var openSession: (UInt64) -> Session?
        /// Queues a frame for one client, in order with the broadcast.
        var enqueue: (Frame, Session) -> Void
        /// Queues a reply for one client.
        var send: (ServerMessage, Session) -> Void
        /// Reads the store on the reader thread (`body` there, never on the service thread) and hands the
        /// events it returns to the continuation, on the service thread.
        var readEvents: (@escaping @Sendable (any ActivityStore) -> [ActivityEvent], @escaping ([ActivityEvent]) -> Void) -> Void
        /// Runs `body` off the service thread (encoding a timeline) and hands its bytes to the continuation,
        /// on the service thread.
        var offLoop: (@escaping @Sendable () -> [UInt8], @escaping ([UInt8]) -> Void) -> Void
    }

    /// The records, the subscribers, the event times and contents, the budget emulation's clock.
    let inspector = Inspector()
    /// What it sees of the server.
    private let context: Context
    /// The committed activities.
    private var center: ActivityCenter { context.center() }
    /// The server's clock.
    private func clock() -> Date { context.now() }

    /// The inspector, its diffs starting from `activities`' stored contents.
    init(activities: [Activity], context: Context) {
        self.context = context
        for activity in activities { inspector.contents[activity.id] = activity.content.jsonValue }
    }

    // MARK: Registration and observing

    /// Registers `/inspector`, `GET /api/inspections`, the timeline route and the `inspect` command.
    func register(in tables: inout FeatureTables) {
        InspectorRoutes(publicDirectory: context.publicDirectory).register(on: &tables.routes, context: InspectorRoutes.Context(
            now: context.now,
            access: context.access,
            records: { [unowned self] since in Array(inspector.records(after: since)) },
            budgetEmulation: context.budget.enabled,
            timeline: { [unowned self] id, then in timeline(of: id, then: then) }))
        tables.commands.register("inspect", .reply) { [unowned self] call in
            guard case .inspect(let since) = call.command else { return }
            subscribe(call.session, since: since, requestId: call.message.requestId)
        }
    }

    /// Records one answered client message (see ``inspectMessage(_:answer:from:)``).
    func messageAnswered(_ message: ClientMessage, answer: Result<ActivityCenter.Outcome, ProtocolError>?, from session: Session) {
        inspectMessage(message, answer: answer, from: session)
    }

    /// Records one answered APNs-shaped request (see ``inspectPush(_:pushToken:result:events:priority:transport:requestId:at:type:channelId:)``).
    func pushAnswered(_ push: AnsweredPush) {
        inspectPush(push.payload, pushToken: push.pushToken, result: push.result, events: push.events, priority: push.priority,
                    transport: push.transport, requestId: push.requestId, at: push.at, type: push.type, channelId: push.channelId)
    }

    /// Keeps the committed events' contents for the next diff.
    func committed(_ events: [ActivityEvent], at now: Date) {
        noteContents(events)
    }

    /// Forgets a connection that closed (it no longer gets new records).
    func unsubscribe(_ sessionId: UInt64) {
        inspector.subscribers.remove(sessionId)
    }

    /// How a message that reached the change path was answered: its outcome, or the error.
    typealias MessageAnswer = Result<ActivityCenter.Outcome, ProtocolError>

    /// Largest raw payload kept per record, in encoded bytes.
    static let inspectedRawLimit = 16 * 1024

    // MARK: Hooks

    /// Records one client message once it is answered. `answer` is the outcome of a change (ack or error);
    /// `nil` for messages answered before (refusals, reads, pushes — those are recorded by ``inspectPush``).
    func inspectMessage(_ message: ClientMessage, answer: MessageAnswer?, from session: Session) {
        let now = clock()
        var typeName = "invalid"
        if case .object(let object)? = message.raw, case .string(let type)? = object["type"] { typeName = String(type.prefix(64)) }
        var verdict = "answered"
        var cause: String?
        var detail: String?
        var events: [ActivityEvent] = []
        var activityId: String?
        var alert: AlertConfiguration?
        switch message.command {
        case .failure(let error):
            (verdict, cause, detail) = ("refused", error.code.rawValue, error.message)
        case .success(let command):
            if case .inspect = command { return }
            activityId = Self.activityId(of: command)
            if case .update(let update) = command { alert = update.alert }
            if let answer {
                switch answer {
                case .success(let outcome):
                    verdict = "applied"
                    events = outcome.events
                    activityId = outcome.activityId ?? activityId
                case .failure(let error):
                    (verdict, cause, detail) = ("refused", error.code.rawValue, error.message)
                }
            } else if session.scope != nil {
                (verdict, cause, detail) = ("refused", ProtocolError.Code.forbidden.rawValue, "a share link is read-only: it can only watch")
            } else if case .hello = command {
                verdict = "answered"
            } else if session.role == .unauthenticated {
                (verdict, cause, detail) = ("refused", ProtocolError.Code.unauthorized.rawValue, "present a token first with hello")
            } else if command.isControl, session.role < .controller {
                (verdict, cause, detail) = ("refused", ProtocolError.Code.forbidden.rawValue, "\(command.name) needs the controller role")
            } else if case .push = command {
                return  // recorded by inspectPush with its PushResult
            }
        }
        var raw = message.raw
        if typeName == "hello", case .object(var object)? = raw, object["token"] != nil {
            object["token"] = .string("(hidden)")
            raw = .object(object)
        }
        var record = Inspection(id: 0, at: now, source: "message", transport: "websocket", type: typeName, event: nil,
                                requestId: message.requestId, pushToken: nil, apnsId: nil, priority: nil, activityId: activityId,
                                status: nil, verdict: verdict, cause: cause, detail: detail, warning: nil,
                                raw: Self.kept(raw, receivedBytes: message.rawByteCount),
                                decoded: nil, dates: raw.map { DateLens.message($0, now: now) } ?? [], diff: nil, noOp: false,
                                events: [], throttled: nil)
        describe(&record, events: events, alert: alert, priorityTen: false, now: now)
        publish(record)
    }

    /// Records one APNs-shaped push with what APNs would answer and what the device would do.
    /// - Parameters:
    ///   - pushToken: the device token it went to; nil for a broadcast.
    ///   - type: `push`, or `broadcast` for a push to a channel.
    ///   - channelId: for a broadcast, its channel; the record also lists the activities it reached
    ///     (`result.activityIds`).
    func inspectPush(_ payload: JSONValue, pushToken: String?, result: PushResult, events: [ActivityEvent], priority: Int?,
                     transport: String, requestId: JSONValue?, at now: Date, type: String = "push", channelId: String? = nil) {
        var event: String?
        if case .object(let root) = payload, case .object(let aps)? = root["aps"], case .string(let name)? = aps["event"] {
            event = String(name.prefix(16))
        }
        let activityId = result.activityId ?? pushToken.flatMap { center.activity(withPushToken: $0)?.id }
        var record = Inspection(id: 0, at: now, source: "push", transport: transport, type: type, event: event, requestId: requestId,
                                pushToken: pushToken.map { String($0.prefix(128)) }, apnsId: result.apnsId, priority: priority,
                                activityId: activityId, status: result.status,
                                verdict: result.status == 200 ? (result.verdict ?? "applied") : "refused",
                                cause: result.cause ?? result.reason, detail: result.detail, warning: result.warning,
                                raw: Self.kept(payload), decoded: nil,
                                dates: DateLens.push(payload, declaration: declaration(forPush: payload, activityId: activityId, events: events), now: now),
                                diff: nil,
                                noOp: false, events: [], throttled: nil)
        record.channelId = channelId
        record.activityIds = result.activityIds
        describe(&record, events: events, alert: events.first { $0.kind == .updated }?.alert, priorityTen: (priority ?? 10) == 10, now: now)
        publish(record)
    }

    /// Fills in the decoded content, the diff, the no-op flag, the events and the budget emulation.
    private func describe(_ record: inout Inspection, events: [ActivityEvent], alert: AlertConfiguration?, priorityTen: Bool, now: Date) {
        record.events = events.map { Inspection.EventRef(event: $0.kind.rawValue, sequence: $0.sequence, activityId: $0.activity.id) }
        if let id = record.activityId {
            let activity = events.last(where: { $0.activity.id == id })?.activity ?? center.activities[id]
            record.decoded = activity?.content.jsonValue
        }
        let changed = [ActivityEvent.Kind.updated, .paused, .resumed, .extended, .ended]
        var seen: Set<String> = []
        for event in events where !seen.contains(event.activity.id) && (changed.contains(event.kind) || event.kind == .started || event.kind == .scheduled) {
            seen.insert(event.activity.id)
            let id = event.activity.id
            let after = event.activity.content.jsonValue
            if id == record.activityId, changed.contains(event.kind) {
                if let before = inspector.contents[id] {
                    let diff = Inspector.diff(before, after)
                    record.diff = diff
                    record.noOp = event.kind == .updated && diff.isEmpty && alert == nil
                }
                if event.kind == .updated {
                    record.throttled = inspector.throttling(context.budget, activityId: id, priorityTen: priorityTen, now: now)
                }
            }
        }
    }

    /// Keeps each activity's latest content for the next diff (``Inspector/contents``): from the events of
    /// inspected changes, of other instances' changes (`--cluster`) and, at start, of the stored activities, so
    /// that a diff never needs the event log.
    func noteContents(_ events: [ActivityEvent]) {
        for event in events {
            if event.kind == .dismissed {
                inspector.contents[event.activity.id] = nil
            } else {
                inspector.contents[event.activity.id] = event.activity.content.jsonValue
            }
        }
        if inspector.contents.count > 4 * max(64, context.maximumLiveActivities) {
            inspector.contents = inspector.contents.filter { center.activities[$0.key] != nil }
        }
    }

    /// Keeps a record and sends it to every connection that sent `inspect`.
    private func publish(_ record: Inspection) {
        let kept = inspector.append(record)
        guard !inspector.subscribers.isEmpty else { return }
        let frame = Frame(Self.inspectionMessage(kept, requestId: nil))
        for id in inspector.subscribers {
            guard let session = context.openSession(id) else {
                inspector.subscribers.remove(id)
                continue
            }
            context.enqueue(frame, session)
        }
    }

    /// `{"type":"inspection","inspection":{…}}`.
    static func inspectionMessage(_ record: Inspection, requestId: JSONValue?) -> [UInt8] {
        struct Message: Encodable {
            let type = "inspection"
            let requestId: JSONValue?
            let inspection: Inspection
        }
        return Array((try? MessageEncoder.encoder.encode(Message(requestId: requestId, inspection: record))) ?? Data())
    }

    /// Answers `inspect`: the records after `since`, one `inspection` message each, then `ack`; new records
    /// follow as they happen.
    func subscribe(_ session: Session, since: UInt64?, requestId: JSONValue?) {
        for record in inspector.records(after: since) {
            context.enqueue(Frame(Self.inspectionMessage(record, requestId: nil)), session)
        }
        inspector.subscribers.insert(session.id)
        context.send(.ack(requestId: requestId, activityId: nil, activityIds: nil), session)
    }

    /// The raw value to keep: as is, or a note when it is too large.
    private static func kept(_ raw: JSONValue?, receivedBytes: Int = 0) -> JSONValue? {
        guard let raw else { return nil }
        // Surely small enough (see ClientMessage.rawByteCount): no encoding just to measure it.
        if receivedBytes > 0, receivedBytes * 6 <= inspectedRawLimit { return raw }
        let size = (try? MessageEncoder.encoder.encode(raw).count) ?? 0
        return size > inspectedRawLimit ? .string("(\(size) bytes: too large to keep)") : raw
    }

    /// The activity a command names, if one.
    private static func activityId(of command: ClientMessage.Command) -> String? {
        switch command {
        case .update(let update): update.activityId
        case .end(let end): if case .one(let id) = end.target { id } else { nil }
        case .pause(let id), .resume(let id), .extend(let id, _), .share(let id, _): id
        case .shares(let id): id
        default: nil
        }
    }

    // MARK: Event log

    /// Most events of one activity a timeline or a rendering of an instant (`at=`) reads: its newest ones.
    static let timelineEventLimit = 10_000
    /// Most events of the log scanned for them, when the store has no index by activity (Redis, memory).
    static let timelineScanLimit = 100_000

    /// Reads `activityId`'s newest events from the event log (at most ``timelineEventLimit``) on the reader
    /// thread, then calls `then` with them, oldest first, on the service thread (empty when the log has none
    /// or cannot be read).
    func readLogEvents(for activityId: String, then: @escaping ([ActivityEvent]) -> Void) {
        let newest = center.sequence
        context.readEvents({ store in
            (try? store.events(ofActivity: activityId, through: newest, limit: InspectorFeature.timelineEventLimit,
                               scanLimit: InspectorFeature.timelineScanLimit)) ?? []
        }, then)
    }

    /// When each event happened: as seen by the request that caused it, else the date the event is about
    /// (start, stale date, countdown end, end, dismissal), else the previous event's time (`approximate`).
    func timed(_ events: [ActivityEvent]) -> [(event: ActivityEvent, at: Date, approximate: Bool)] {
        var result: [(event: ActivityEvent, at: Date, approximate: Bool)] = []
        var previous: Date?
        for event in events {
            let activity = event.activity
            var at = inspector.time(ofEvent: event.sequence)
            if at == nil {
                switch event.kind {
                case .started: at = activity.startDate
                case .stale: at = activity.content.staleDate
                case .timerFinished: at = activity.timer?.end
                case .ended: at = activity.endDate
                case .dismissed: at = activity.dismissalDate
                case .paused: at = activity.timer?.pausedAt
                default: at = nil
                }
            }
            let approximate = at == nil
            var time = at ?? previous ?? activity.startDate
            if let previous, time < previous { time = previous }
            previous = time
            result.append((event, time, approximate))
        }
        return result
    }

    /// `activityId` as it was at `instant`: the activity of its last logged event at or before then; `nil`
    /// before it started (or when the log no longer has it and it is not live). The log is read off the
    /// service thread; `then` runs on it.
    func activity(_ activityId: String, asOf instant: Date, then: @escaping (Activity?) -> Void) {
        readLogEvents(for: activityId) { [self] logged in
            let events = timed(logged)
            if events.isEmpty {
                guard let live = center.activities[activityId], live.startDate <= instant else { return then(nil) }
                return then(live)
            }
            then(events.last { $0.at <= instant }?.event.activity)
        }
    }

    // MARK: Timelines

    /// One activity's life on a time axis.
    struct Timeline: Encodable, Sendable {
        /// One logged event on the axis: when it happened (``InspectorFeature/timed(_:)``) and the state after it.
        struct Point: Encodable, Sendable {
            var sequence: UInt64
            var event: String
            var at: Date
            var approximate: Bool
            var activityState: String
        }
        /// One inspector record about the activity on the axis: a push or message and its verdict.
        struct Push: Encodable, Sendable {
            var inspectionId: UInt64
            var at: Date
            var type: String
            var event: String?
            var verdict: String
            var cause: String?
            var noOp: Bool
            var throttled: Bool
        }
        let type = "timeline"
        var activityId: String
        var serverTime: Date
        var startDate: Date
        /// When the 8-hour limit ends it, if it is still live then.
        var capDate: Date
        var staleDate: Date?
        var endDate: Date?
        var dismissalDate: Date?
        var activityState: String
        /// The axis: from the first event to the last one (or now, while live).
        var from: Date
        var to: Date
        var events: [Point]
        var inspections: [Push]
    }

    /// The timeline of `activityId` from the event log (read off the service thread) and the inspector's
    /// records, encoded as JSON off the service thread too; `then` gets it on the service thread, nil when the
    /// activity is unknown.
    func timeline(of activityId: String, then: @escaping ([UInt8]?) -> Void) {
        readLogEvents(for: activityId) { [self] logged in
            guard let timeline = timeline(of: activityId, logged: logged) else { return then(nil) }
            context.offLoop({ Array((try? MessageEncoder.encoder.encode(timeline)) ?? Data()) }, then)
        }
    }

    /// The timeline of `activityId` from its logged events and the inspector's records; nil when unknown.
    private func timeline(of activityId: String, logged: [ActivityEvent]) -> Timeline? {
        let events = timed(logged)
        guard let latest = events.last?.event.activity ?? center.activities[activityId] else { return nil }
        let now = clock()
        let records = inspector.records.filter { $0.activityId == activityId }
        let points = events.map { Timeline.Point(sequence: $0.event.sequence, event: $0.event.kind.rawValue, at: $0.at,
                                                 approximate: $0.approximate, activityState: $0.event.activity.activityState.rawValue) }
        let pushes = records.map { Timeline.Push(inspectionId: $0.id, at: $0.at, type: $0.type, event: $0.event, verdict: $0.verdict,
                                                 cause: $0.cause, noOp: $0.noOp, throttled: $0.throttled != nil) }
        let first = [events.first?.at, records.first?.at, latest.startDate].compactMap { $0 }.min() ?? now
        var last = [events.last?.at, records.last?.at].compactMap { $0 }.max() ?? now
        if latest.activityState.isLive || latest.activityState == .ended { last = max(last, now) }
        if last <= first { last = first.addingTimeInterval(1) }
        return Timeline(activityId: activityId, serverTime: now, startDate: latest.startDate,
                        capDate: latest.startDate.addingTimeInterval(Lifetime.maximumActive), staleDate: latest.content.staleDate,
                        endDate: latest.endDate, dismissalDate: latest.dismissalDate, activityState: latest.activityState.rawValue,
                        from: first, to: last, events: points, inspections: pushes)
    }

    // MARK: Dates

    /// The declaration of the declared kind a push addresses (the activity `activityId`, as `events` or the
    /// committed state hold it) or starts (`aps.attributes-type`), for the date lens; nil for built-in kinds.
    func declaration(forPush payload: JSONValue, activityId: String?, events: [ActivityEvent]) -> ActivityDeclaration? {
        var typeName = activityId.flatMap { id in
            (events.last { $0.activity.id == id }?.activity ?? center.activities[id])?.attributesType
        }
        if typeName == nil, case .object(let root) = payload, case .object(let aps)? = root["aps"],
           case .string(let name)? = aps["attributes-type"] {
            typeName = name
        }
        return (typeName.flatMap { center.kinds.kind(forPushType: $0) } as? DeclaredKind)?.declaration
    }
}

import Foundation
import Testing
@testable import LiveActivityCore
@testable import LiveActivityServer
@testable import LiveActivityLWS
import KindFixtures

/// The kernel without sockets: ``WebSocketSessions`` dispatching client messages through the ``CommandTable``
/// after the role and scope checks, and ``ActivityCommands`` judging, acknowledging and publishing changes
/// through a ``ChangeCommitter`` over a store in memory (which records at once), with a fake clock. Sessions
/// have no connection; what they would be written is read from the hub, as the lws adapter would on WRITEABLE.
struct KernelTests {
    /// Records what the observers are told.
    final class Recorder: ChangeObserver, RequestObserver {
        var committed: [(kinds: [ActivityEvent.Kind], at: Date)] = []
        var answered: [(type: String, applied: Bool?)] = []
        func committed(_ events: [ActivityEvent], at now: Date) { committed.append((events.map(\.kind), now)) }
        func messageAnswered(_ message: ClientMessage, answer: Result<ActivityCenter.Outcome, ProtocolError>?, from session: Session) {
            let type = (try? message.command.get().name) ?? "invalid"
            answered.append((type, answer.map { (try? $0.get()) != nil }))
        }
        func pushAnswered(_ push: AnsweredPush) {}
    }

    /// A committer, sessions and (optionally) the activity commands, wired as the composition root wires them.
    final class Kernel {
        /// The fake clock's reading.
        let time = Locked(Date(timeIntervalSince1970: 1_800_000_000))
        var now: Date {
            get { time.withLock { $0 } }
            set { time.withLock { $0 = newValue } }
        }
        let committer: ChangeCommitter
        let sessions: WebSocketSessions
        let recorder = Recorder()
        var channels: Set<String> = []

        init(access: AccessPolicy = AccessPolicy(), extra: (inout FeatureTables) -> Void = { _ in }, activityCommands: Bool = true) {
            var configuration = ServerConfiguration(publicDirectory: URL(fileURLWithPath: "/nonexistent"))
            configuration.access = access
            let logger = Logger(label: "test", level: .error)
            let metrics = ServerMetrics()
            let time = self.time
            let clock: @Sendable () -> Date = { time.withLock { $0 } }
            let center = ActivityCenter(activities: [], sequence: 0, maximumLive: 10, kinds: .builtIn)
            committer = ChangeCommitter(store: InMemoryActivityStore(), start: ChangePipeline(center), onServiceThread: { true },
                                        metrics: metrics, logger: logger, clock: clock)
            committer.connect(handOver: { job in job() })
            sessions = WebSocketSessions(configuration: configuration, hub: Hub(maximumQueuedBytes: 1 << 20), committer: committer, onServiceThread: { true },
                                         metrics: metrics, logger: logger, clock: clock, logID: "log")
            sessions.context = WebSocketSessions.Context(kinds: { .builtIn })
            timing = TimingDriver(heartbeatInterval: 15, committer: committer, sessions: sessions, clock: clock)
            var features: [any ServerFeature] = [sessions]
            if activityCommands {
                features.append(ActivityCommands(committer: committer, context: ActivityCommands.Context(
                    now: clock,
                    channels: { [unowned self] in let known = channels; return { known.contains($0) } },
                    reply: { [unowned self] message, session in sessions.sendIfOpen(message, to: session) },
                    requestObservers: { [unowned self] in [recorder] })))
            }
            var tables = FeatureTables()
            for feature in features { feature.register(in: &tables) }
            extra(&tables)
            sessions.commands = tables.commands
            sessions.requestObservers = [recorder]
            committer.observers = [timing, sessions, recorder]
            timing.scheduleTimer = { [unowned self] seconds in scheduled.append(seconds) }
            self.features = features
        }
        /// The timing, its timer recorded in ``scheduled`` rather than armed.
        let timing: TimingDriver
        /// What the timing asked the timer for (seconds), in order.
        var scheduled: [TimeInterval] = []
        private var features: [any ServerFeature] = []

        /// Opens a session presenting `token` (or none), and drops its greeting.
        func open(token: String? = nil, scope: String? = nil) -> Session {
            let session = sessions.sessionOpened(UpgradeRequest(path: "/ws", token: token), connection: nil)
            session.scope = scope
            _ = written(to: session)
            return session
        }

        /// Sends one JSON message as a whole text frame.
        func send(_ json: String, from session: Session) {
            Array(json.utf8).withUnsafeBytes { sessions.received($0, isFinal: true, isBinary: false, session: session) }
        }

        /// What `session` would be written now, as JSON objects, in order.
        func written(to session: Session) -> [[String: Any]] {
            var messages: [[String: Any]] = []
            while case .frame(let frame, _) = sessions.hub.nextWrite(for: session) {
                messages.append((try? JSONSerialization.jsonObject(with: Data(frame.bytes))) as? [String: Any] ?? [:])
            }
            return messages
        }
    }

    // MARK: CommandTable dispatch

    @Test func aRegisteredCommandReachesItsHandlerWithItsCommandAndSession() {
        var calls: [(String, UInt64)] = []
        let kernel = Kernel(extra: { tables in
            tables.commands.register("shares", .reply) { call in calls.append((call.command.name, call.session.id)) }
        }, activityCommands: false)
        let session = kernel.open()
        kernel.send(#"{"type":"shares","requestId":7}"#, from: session)
        #expect(calls.map(\.0) == ["shares"] && calls.map(\.1) == [session.id])
        // Answered without the change path: the sessions tell the request observers, with no outcome.
        #expect(kernel.recorder.answered.map(\.type) == ["shares"])
        #expect(kernel.recorder.answered.first?.applied == nil)
        #expect(kernel.sessions.commands.names.contains("hello") && kernel.sessions.commands.names.contains("list"))
    }

    @Test func rolesAndScopesAreCheckedBeforeAnyHandler() {
        var called = 0
        let kernel = Kernel(access: AccessPolicy(controllerToken: "c", viewerToken: "v"), extra: { tables in
            tables.commands.register("update", .change) { _ in called += 1 }
            tables.commands.register("shares", .reply) { _ in called += 1 }
        }, activityCommands: false)
        let viewer = kernel.open(token: "v")
        kernel.send(#"{"type":"update","requestId":1,"activityId":"a","durationSeconds":60}"#, from: viewer)
        let forbidden = kernel.written(to: viewer)
        #expect(forbidden.first?["code"] as? String == "forbidden" && forbidden.first?["field"] as? String == "type")

        let anonymous = kernel.open()
        kernel.send(#"{"type":"shares","requestId":2}"#, from: anonymous)
        #expect(kernel.written(to: anonymous).first?["code"] as? String == "unauthorized")

        let shareViewer = kernel.open(token: "v", scope: "a")
        kernel.send(#"{"type":"shares","requestId":3}"#, from: shareViewer)
        #expect(kernel.written(to: shareViewer).first?["code"] as? String == "forbidden")
        #expect(called == 0)

        // `hello` is the one message a client without a role may send; it then gets its snapshot.
        kernel.send(#"{"type":"hello","requestId":4,"token":"c"}"#, from: anonymous)
        #expect(kernel.written(to: anonymous).map { $0["type"] as? String } == ["hello", "snapshot"])
        kernel.send(#"{"type":"shares","requestId":5}"#, from: anonymous)
        #expect(called == 1)
    }

    @Test func aCommandNoFeatureRegisteredIsAnsweredUnknownType() {
        let kernel = Kernel(activityCommands: false)
        let session = kernel.open()
        kernel.send(#"{"type":"shares","requestId":1}"#, from: session)
        let reply = kernel.written(to: session)
        #expect(reply.first?["code"] as? String == "unknown_type" && reply.first?["requestId"] as? Int == 1)
    }

    // MARK: ActivityCommands

    @Test func startIsAcknowledgedThenBroadcastAtTheTimeItWasJudged() throws {
        let kernel = Kernel()
        let controller = kernel.open()
        let watcher = kernel.open()
        kernel.send(#"{"type":"start","requestId":"s","attributes":{"workout":"yoga"},"durationSeconds":600}"#, from: controller)
        let toController = kernel.written(to: controller)
        #expect(toController.map { $0["type"] as? String } == ["ack", "activity"], "the ack before the event")
        let id = try #require(toController.first?["activityId"] as? String)
        #expect(kernel.written(to: watcher).map { $0["type"] as? String } == ["activity"])
        #expect(kernel.committer.center.activities[id] != nil)
        #expect(kernel.recorder.committed.map(\.kinds) == [[.started]])
        #expect(kernel.recorder.committed.first?.at == kernel.now)
        #expect(kernel.recorder.answered.map(\.type) == ["start"] && kernel.recorder.answered.first?.applied == true)
    }

    @Test func aRefusedCommandIsAnsweredWithItsErrorAndPublishesNothing() {
        let kernel = Kernel()
        let controller = kernel.open()
        kernel.send(#"{"type":"update","requestId":1,"activityId":"nope","durationSeconds":60}"#, from: controller)
        #expect(kernel.written(to: controller).first?["code"] as? String == "unknown_activity")
        kernel.send(#"{"type":"start","requestId":2,"attributes":{"workout":"yoga"},"durationSeconds":600,"channelId":"AAAAAAAAAAAAAAAAAAAAAA=="}"#, from: controller)
        let refusal = kernel.written(to: controller).first
        #expect(refusal?["code"] as? String == "invalid_field" && refusal?["field"] as? String == "channelId")
        #expect(kernel.recorder.committed.isEmpty)
        #expect(kernel.recorder.answered.map(\.applied) == [false, false])

        kernel.channels = ["AAAAAAAAAAAAAAAAAAAAAA=="]
        kernel.send(#"{"type":"start","requestId":3,"attributes":{"workout":"yoga"},"durationSeconds":600,"channelId":"AAAAAAAAAAAAAAAAAAAAAA=="}"#, from: controller)
        #expect(kernel.written(to: controller).first?["type"] as? String == "ack")
    }

    @Test func listAnswersFromWhatClientsWereTold() {
        let kernel = Kernel()
        let controller = kernel.open()
        kernel.send(#"{"type":"start","requestId":1,"attributes":{"workout":"yoga"},"durationSeconds":600}"#, from: controller)
        _ = kernel.written(to: controller)
        kernel.send(#"{"type":"list","requestId":2}"#, from: controller)
        let snapshot = kernel.written(to: controller)
        #expect(snapshot.first?["type"] as? String == "snapshot")
        #expect((snapshot.first?["activities"] as? [Any])?.count == 1)
    }

    // MARK: TimingDriver

    @Test func aDeadlineIsAppliedThroughTheCommitterAndBroadcastAtTheTimerPass() throws {
        let kernel = Kernel()
        let controller = kernel.open()
        kernel.send(#"{"type":"start","requestId":1,"attributes":{"workout":"yoga"},"durationSeconds":60}"#, from: controller)
        #expect(kernel.written(to: controller).map { $0["type"] as? String } == ["ack", "activity"])
        let started = kernel.now
        kernel.now = started.addingTimeInterval(61)
        kernel.timing.timerFired()
        #expect(kernel.recorder.committed.map(\.kinds) == [[.started], [.timerFinished, .stale]], "the countdown ends, and its stale date with it")
        #expect(kernel.recorder.committed.last?.at == started.addingTimeInterval(61))
        let written = kernel.written(to: controller)
        #expect(written.contains { $0["type"] as? String == "activity" && $0["event"] as? String == "timerFinished" })
        #expect(!kernel.scheduled.isEmpty && kernel.scheduled.allSatisfy { $0 > 0 && $0 <= 1 }, "re-armed for the next second at the latest")
    }
}

import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityServer

/// Features' WebSocket command handlers driven through the command table they register (``FeatureTables``),
/// with a fake server side: an injected clock, an ``ActivityCenter`` of the test's own as the change pipeline
/// (a change commits at once) and recorded replies. No sockets, no sleeps.
struct FeatureCommandTests {
    /// The fake server side: the clock, the activities, what was sent to whom and what was told.
    final class FakeServer {
        var now = Date(timeIntervalSince1970: 1_800_000_000)
        var center = ActivityCenter(activities: [], sequence: 0, kinds: .builtIn)
        /// Replies, in order: (session id, message).
        var sent: [(UInt64, ServerMessage)] = []
        var answered: [AnsweredPush] = []
        var committed: [[ActivityEvent]] = []
        var closed: [(shareId: String, reason: String)] = []
        var observers: [any ChangeObserver] = []

        /// Judges and commits at once, then tells the observers, as the server's change path does.
        var proposer: ChangeProposer {
            ChangeProposer { [unowned self] now, body, completion in
                var speculative = center
                do {
                    let (value, events) = try body(&speculative)
                    center = speculative
                    completion(.success(value))
                    if !events.isEmpty {
                        committed.append(events)
                        for observer in observers { observer.committed(events, at: now) }
                    }
                } catch {
                    completion(.failure(error))
                }
            }
        }

        func send(_ message: ServerMessage, to session: Session) { sent.append((session.id, message)) }
    }

    private static func session(_ id: UInt64, role: AccessPolicy.Role = .controller) -> Session {
        Session(id: id, connection: nil, role: role,
                rateLimit: MessageRateLimit(bucket: TokenBucket(capacity: 10, rate: 10), closeAfter: 10))
    }

    /// Runs one client message through `table`, as the sessions do once the sender's role is checked.
    private static func dispatch(_ json: String, _ table: CommandTable, from session: Session) throws {
        let message = ClientMessage.parse(Array(json.utf8), kinds: .builtIn)
        let command = try message.command.get()
        let entry = try #require(table.entry(for: command), "no handler for \(command.name)")
        entry.handler(CommandCall(message: message, command: command, session: session))
    }

    // MARK: Push

    private func makePush(_ server: FakeServer, pushToStartToken: String) -> Push {
        Push(channels: ChannelRegistry([]), context: Push.Context(
            authority: ProviderAuthority(access: AccessPolicy(), key: nil),
            now: { server.now },
            pushToStartToken: pushToStartToken,
            change: server.proposer,
            recordChannel: { _, done in done(nil) },
            storageUnavailable: { _ in ProtocolError(.storageUnavailable, field: nil, message: "store down") },
            pushAnswered: { server.answered.append($0) },
            sendIfOpen: { server.send($0, to: $1) },
            newID: { "A" }))
    }

    private func startPayload(at now: Date) -> String {
        let reference = now.timeIntervalSinceReferenceDate
        return #"{"aps":{"timestamp":\#(now.timeIntervalSince1970),"event":"start","attributes-type":"WorkoutWidgetAttributes","#
            + #""attributes":{"workout":2},"content-state":{"workoutTimer":[\#(reference),\#(reference + 600)]},"#
            + #""alert":{"title":"t","body":"b"}}}"#
    }

    @Test func pushRegistersItsCommandAsAChangeAndItsRoutesOnBothPorts() {
        let push = makePush(FakeServer(), pushToStartToken: PushToken.random())
        var tables = FeatureTables()
        push.register(in: &tables)
        #expect(tables.commands.names == ["push"])
        let message = ClientMessage.parse(Array(#"{"type":"push","pushToken":"x","payload":{}}"#.utf8), kinds: .builtIn)
        #expect(tables.commands.entry(for: try! message.command.get())?.path == .change)
        for router in [tables.routes, tables.apnsRoutes] {
            var answer: HTTPResponse?
            router.dispatch(HTTPRequest(method: .get, path: "/3/device/abc"), HTTPResponder { answer = $0 })
            #expect(answer?.status == .methodNotAllowed, "the push endpoint answers on both ports")
        }
        var miss: HTTPResponse?
        tables.apnsRoutes.dispatch(HTTPRequest(method: .get, path: "/elsewhere"), HTTPResponder { miss = $0 })
        #expect(miss?.status == .notFound && String(decoding: miss?.body ?? [], as: UTF8.self).contains("BadPath"))
    }

    @Test func aPushCommandStartsAnActivityAndAnswersPushResultThenTellsTheInspector() throws {
        let server = FakeServer()
        let token = PushToken.random()
        let push = makePush(server, pushToStartToken: token)
        var tables = FeatureTables()
        push.register(in: &tables)
        let session = Self.session(7)
        try Self.dispatch(#"{"type":"push","requestId":1,"pushToken":"\#(token)","payload":\#(startPayload(at: server.now))}"#,
                          tables.commands, from: session)
        #expect(server.center.activities["A"] != nil)
        #expect(server.sent.count == 1)
        guard case (7, .pushResult(let requestId, let result))? = server.sent.first else {
            Issue.record("expected a pushResult, got \(server.sent)")
            return
        }
        #expect(requestId == .number(1))
        #expect(result.status == 200 && result.verdict == "applied")
        #expect(server.answered.count == 1)
        #expect(server.answered.first?.transport == "websocket")
        #expect(server.answered.first?.events.map(\.kind) == [.started])
        #expect(server.committed.count == 1, "the events are published by the change path, not by push")
    }

    @Test func aRefusedPushAnswersItsRejectionAndChangesNothing() throws {
        let server = FakeServer()
        let push = makePush(server, pushToStartToken: PushToken.random())
        var tables = FeatureTables()
        push.register(in: &tables)
        try Self.dispatch(#"{"type":"push","requestId":"r","pushToken":"\#(PushToken.random())","payload":{"aps":{}}}"#,
                          tables.commands, from: Self.session(1))
        guard case (1, .pushResult(_, let result))? = server.sent.first else {
            Issue.record("expected a pushResult, got \(server.sent)")
            return
        }
        #expect(result.status != 200)
        #expect(server.center.activities.isEmpty && server.committed.isEmpty)
        #expect(server.answered.first?.events.isEmpty == true)
    }

    // MARK: Shares

    private func makeShares(_ server: FakeServer) -> Shares {
        Shares(shares: [], context: Shares.Context(
            links: ShareLinks.Context(
                now: { server.now },
                access: AccessPolicy(),
                activity: { server.center.activities[$0] },
                keep: { share, done in
                    done(server.center.activities[share.activityId] == nil
                         ? ProtocolError(.unknownActivity, field: "activityId", message: "activityId: unknown") : nil)
                },
                saveEnded: { _ in },
                viewers: { _ in 2 },
                closeViewers: { server.closed.append(($0, $1)) },
                storageUnavailable: { _ in ProtocolError(.storageUnavailable, field: nil, message: "store down") },
                logger: Logger(label: "test", level: .error)),
            send: { server.send($0, to: $1) },
            sendIfOpen: { server.send($0, to: $1) },
            sharePage: { _, _, _ in HTTPResponse(status: .ok, contentType: "text/html", body: []) }))
    }

    private func addActivity(_ id: String, to server: FakeServer) throws {
        let start = #"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":600}"#
        let message = ClientMessage.parse(Array(start.utf8), kinds: .builtIn)
        _ = try server.center.apply(try message.command.get(), now: server.now, newID: { id })
    }

    @Test func sharesRegistersShareAsAChangeAndUnshareAndSharesAsReplies() {
        let shares = makeShares(FakeServer())
        var tables = FeatureTables()
        shares.register(in: &tables)
        #expect(tables.commands.names == ["share", "shares", "unshare"])
        func path(_ json: String) -> CommandTable.Path? {
            (try? ClientMessage.parse(Array(json.utf8), kinds: .builtIn).command.get()).flatMap { tables.commands.entry(for: $0)?.path }
        }
        #expect(path(#"{"type":"share","activityId":"a"}"#) == .change)
        #expect(path(#"{"type":"unshare","shareId":"s"}"#) == .reply)
        #expect(path(#"{"type":"shares"}"#) == .reply)
    }

    @Test func shareListAndUnshareThroughTheCommandTable() throws {
        let server = FakeServer()
        try addActivity("a1", to: server)
        let shares = makeShares(server)
        var tables = FeatureTables()
        shares.register(in: &tables)
        let session = Self.session(3)

        try Self.dispatch(#"{"type":"share","requestId":1,"activityId":"a1","expiresIn":60}"#, tables.commands, from: session)
        guard case (3, .shares(.number(1), let made))? = server.sent.last, let link = made.first else {
            Issue.record("expected shares, got \(server.sent)")
            return
        }
        #expect(link.url?.hasPrefix(ShareLinks.path) == true)
        #expect(link.expiresAt == server.now.addingTimeInterval(60))

        try Self.dispatch(#"{"type":"shares","requestId":2,"activityId":"a1"}"#, tables.commands, from: session)
        guard case (3, .shares(.number(2), let listed))? = server.sent.last else {
            Issue.record("expected shares, got \(server.sent)")
            return
        }
        #expect(listed.map(\.id) == [link.id] && listed.first?.viewers == 2 && listed.first?.url == nil)

        try Self.dispatch(#"{"type":"unshare","requestId":3,"shareId":"\#(link.id)"}"#, tables.commands, from: session)
        guard case (3, .ack(.number(3), "a1", nil))? = server.sent.last else {
            Issue.record("expected an ack, got \(server.sent)")
            return
        }
        #expect(server.closed.map(\.reason) == ["share revoked"])

        try Self.dispatch(#"{"type":"unshare","requestId":4,"shareId":"\#(link.id)"}"#, tables.commands, from: session)
        guard case (3, .error(.number(4), let error))? = server.sent.last else {
            Issue.record("expected an error, got \(server.sent)")
            return
        }
        #expect(error.field == "shareId")
    }

    @Test func aShareOfAnUnknownActivityIsRefused() throws {
        let server = FakeServer()
        let shares = makeShares(server)
        var tables = FeatureTables()
        shares.register(in: &tables)
        try Self.dispatch(#"{"type":"share","requestId":1,"activityId":"nope"}"#, tables.commands, from: Self.session(1))
        guard case (1, .error(_, let error))? = server.sent.last else {
            Issue.record("expected an error, got \(server.sent)")
            return
        }
        #expect(error.code == .unknownActivity)
    }

    @Test func sharesEndWhenTheirActivityIsDismissedOrWhenTheyExpire() throws {
        let server = FakeServer()
        try addActivity("a1", to: server)
        try addActivity("a2", to: server)
        let shares = makeShares(server)
        var tables = FeatureTables()
        shares.register(in: &tables)
        try Self.dispatch(#"{"type":"share","activityId":"a1","expiresIn":600}"#, tables.commands, from: Self.session(1))
        try Self.dispatch(#"{"type":"share","activityId":"a2","expiresIn":60}"#, tables.commands, from: Self.session(1))
        let dismissed = try #require(server.center.activities["a1"])
        shares.committed([ActivityEvent(kind: .dismissed, sequence: 9, activity: dismissed)], at: server.now)
        #expect(server.closed.map(\.reason) == ["activity dismissed"])
        server.now += 61
        shares.expire(now: server.now)
        #expect(server.closed.map(\.reason) == ["activity dismissed", "share expired"])
        #expect(shares.links.summaries(activityId: nil, context: ShareLinks.Context(
            now: { server.now }, access: AccessPolicy(), activity: { _ in nil }, keep: { _, _ in }, saveEnded: { _ in },
            viewers: { _ in 0 }, closeViewers: { _, _ in }, storageUnavailable: { _ in ProtocolError(.storageUnavailable, field: nil, message: "") },
            logger: Logger(label: "test", level: .error))).isEmpty)
    }
}

/// The inspector's `inspect` command and its observing, through the table it registers and a fake context.
struct InspectorFeatureCommandTests {
    final class FakeServer {
        var now = Date(timeIntervalSince1970: 1_800_000_000)
        var center = ActivityCenter(activities: [], sequence: 0, kinds: .builtIn)
        var sessions: [UInt64: Session] = [:]
        /// Frames and replies, in order: (session id, JSON text).
        var sent: [(UInt64, String)] = []

        func context() -> InspectorFeature.Context {
            InspectorFeature.Context(
                now: { self.now }, center: { self.center }, access: AccessPolicy(),
                publicDirectory: FileManager.default.temporaryDirectory, budget: BudgetEmulation(), maximumLiveActivities: 10,
                openSession: { self.sessions[$0] },
                enqueue: { frame, session in self.sent.append((session.id, String(decoding: UnsafeBufferPointer(start: frame.payload, count: frame.count), as: UTF8.self))) },
                send: { message, session in self.sent.append((session.id, String(decoding: message.encoded(), as: UTF8.self))) },
                readEvents: { _, then in then([]) },
                offLoop: { body, then in then(body()) })
        }
    }

    private static func session(_ id: UInt64) -> Session {
        Session(id: id, connection: nil, role: .viewer,
                rateLimit: MessageRateLimit(bucket: TokenBucket(capacity: 10, rate: 10), closeAfter: 10))
    }

    @Test func inspectReplaysTheRecordsThenAcksThenStreamsNewOnesUntilTheSessionGoes() throws {
        let server = FakeServer()
        let inspector = InspectorFeature(activities: [], context: server.context())
        var tables = FeatureTables()
        inspector.register(in: &tables)
        #expect(tables.commands.names == ["inspect"])
        let watcher = Self.session(1)
        server.sessions[1] = watcher
        let list = ClientMessage.parse(Array(#"{"type":"list","requestId":"l"}"#.utf8), kinds: .builtIn)
        inspector.messageAnswered(list, answer: nil, from: watcher)

        let inspect = ClientMessage.parse(Array(#"{"type":"inspect","requestId":"i"}"#.utf8), kinds: .builtIn)
        let command = try inspect.command.get()
        #expect(tables.commands.entry(for: command)?.path == .reply)
        tables.commands.entry(for: command)?.handler(CommandCall(message: inspect, command: command, session: watcher))
        #expect(server.sent.count == 2)
        #expect(server.sent[0].1.contains(#""type":"inspection""#) && server.sent[0].1.contains(#""type":"list""#))
        #expect(server.sent[1].1.contains(#""type":"ack""#) && server.sent[1].1.contains(#""requestId":"i""#))

        inspector.messageAnswered(list, answer: nil, from: watcher)
        #expect(server.sent.count == 3, "a new record goes to the subscriber")
        inspector.unsubscribe(1)
        inspector.messageAnswered(list, answer: nil, from: watcher)
        #expect(server.sent.count == 3, "not after it went")
    }
}

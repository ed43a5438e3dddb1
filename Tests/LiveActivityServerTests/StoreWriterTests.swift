import Foundation
import Testing
import LiveActivityCore
@testable import LiveActivityServer
import KindFixtures

/// The store thread against a fake store that can hold a commit open (a slow fsync) or fail: no sockets, and
/// every wait is for a state (a semaphore), never for time.
struct StoreWriterTests {
    /// Records in memory; the first `holdFirst` commits wait for ``release``; `failing` commits throw.
    final class GatedStore: ActivityStore, @unchecked Sendable {
        private let inner = Locked(InMemoryActivityStore())
        /// {lock} every `record` call's sequences, in order.
        let calls = Locked<[[UInt64]]>([])
        /// Signalled when a held commit has started.
        let entered = DispatchSemaphore(value: 0)
        /// Lets a held commit finish.
        let release = DispatchSemaphore(value: 0)
        let holdFirst: Int
        let failing: Bool

        init(holdFirst: Int = 1, failing: Bool = false) {
            self.holdFirst = holdFirst
            self.failing = failing
        }

        func record(_ events: [ActivityEvent]) throws {
            let count = calls.withLock { calls in
                calls.append(events.map(\.sequence))
                return calls.count
            }
            if count <= holdFirst {
                entered.signal()
                release.wait()
            }
            if failing { throw CocoaError(.fileWriteOutOfSpace) }
            try inner.withLock { try $0.record(events) }
        }
        func load() throws -> (activities: [Activity], sequence: UInt64) { try inner.withLock { try $0.load() } }
        func events(after sequence: UInt64) throws -> [ActivityEvent]? { try inner.withLock { try $0.events(after: sequence) } }
        func history(limit: Int, before: Date?, beforeId: String?) throws -> [HistoryEntry] { [] }
        func pushToStartToken() throws -> String { "token" }
        func logID() throws -> String { "log" }
        func shares() throws -> [Share] { [] }
        func save(_ share: Share) throws {}
        func channels() throws -> [BroadcastChannel] { [] }
        func save(_ channel: BroadcastChannel) throws {}
        func deleteChannel(id: String) throws {}
    }

    /// Collects the writer's reports.
    final class Reports: @unchecked Sendable {
        let all = Locked<[StoreWriter.Report]>([])
        let arrived = DispatchSemaphore(value: 0)

        /// Waits for the next report (10 s at most, a failure).
        func next() -> StoreWriter.Report? {
            guard arrived.wait(timeout: .now() + 10) == .success else { return nil }
            return all.withLock { $0.removeFirst() }
        }
    }

    /// Five events (sequences 1…5): a start and four updates.
    private func events() throws -> [ActivityEvent] {
        var center = ActivityCenter(kinds: .builtIn)
        var events: [ActivityEvent] = []
        let start = try ClientMessage.parse(Array(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#.utf8), kinds: .builtIn).command.get()
        events += try center.apply(start, now: Date(), newID: { "a1" }).events
        for seconds in 1...4 {
            let update = try ClientMessage.parse(Array(#"{"type":"update","activityId":"a1","durationSeconds":\#(seconds)}"#.utf8), kinds: .builtIn).command.get()
            events += try center.apply(update, now: Date(), newID: { "a1" }).events
        }
        return events
    }

    private func writer(_ store: GatedStore) -> (StoreWriter, Reports) {
        let writer = StoreWriter(store: store, logger: Logger(label: "test", level: .error))
        let reports = Reports()
        writer.deliver = { report in
            reports.all.withLock { $0.append(report) }
            reports.arrived.signal()
        }
        writer.start()
        return (writer, reports)
    }

    private func submission(_ ticket: UInt64, _ event: ActivityEvent, generation: UInt64 = 1) -> ChangePipeline.Submission {
        ChangePipeline.Submission(ticket: ticket, generation: generation, work: .record(events: [event], shares: []))
    }

    private func tickets(_ report: StoreWriter.Report?, recorded: Bool) -> [UInt64] {
        (report?.results ?? []).compactMap { ticket, result in
            if case .recorded = result { return recorded ? ticket : nil }
            return recorded ? nil : ticket
        }
    }

    @Test func changesQueuedDuringACommitAreRecordedTogetherInOneCall() throws {
        let store = GatedStore()
        let (writer, reports) = writer(store)
        defer { writer.stop() }
        let events = try events()
        writer.submit([submission(1, events[0])])
        writer.releaseHeld()
        #expect(store.entered.wait(timeout: .now() + 10) == .success)
        // While the first commit is held open, four more arrive.
        writer.submit([submission(2, events[1]), submission(3, events[2])])
        writer.submit([submission(4, events[3]), submission(5, events[4])])
        writer.releaseHeld()
        store.release.signal()

        let first = reports.next()
        #expect(tickets(first, recorded: true) == [1])
        #expect(first?.commits == 1 && first?.changes == 1)
        let second = reports.next()
        #expect(tickets(second, recorded: true) == [2, 3, 4, 5])
        #expect(second?.commits == 1 && second?.changes == 4)
        #expect(store.calls.withLock { $0 } == [[1], [2, 3, 4, 5]])
        #expect(try store.load().sequence == 5)
    }

    @Test func afterAFailedCommitTheChangesJudgedOnItAreRefusedWithoutTouchingTheStore() throws {
        let store = GatedStore(failing: true)
        let (writer, reports) = writer(store)
        defer { writer.stop() }
        let events = try events()
        writer.submit([submission(1, events[0])])
        writer.releaseHeld()
        #expect(store.entered.wait(timeout: .now() + 10) == .success)
        store.release.signal()
        #expect(tickets(reports.next(), recorded: false) == [1])

        // Judged on the failed one before the service thread heard of the failure: same generation.
        writer.submit([submission(2, events[1])])
        writer.releaseHeld()
        #expect(tickets(reports.next(), recorded: false) == [2])
        #expect(store.calls.withLock { $0.count } == 1, "refused without a call to the store")
    }

    @Test func aNewerGenerationSupersedesOlderSubmissionsStillQueued() throws {
        let store = GatedStore()
        let (writer, reports) = writer(store)
        defer { writer.stop() }
        let events = try events()
        writer.submit([submission(1, events[0])])
        writer.releaseHeld()
        #expect(store.entered.wait(timeout: .now() + 10) == .success)
        // Queued behind the held commit: two of generation 1, then the service thread moved on to generation 2.
        writer.submit([submission(2, events[1]), submission(3, events[2])])
        writer.submit([submission(4, events[1], generation: 2)])
        writer.releaseHeld()
        store.release.signal()

        #expect(tickets(reports.next(), recorded: true) == [1])
        let second = reports.next()
        #expect(tickets(second, recorded: false) == [2, 3])
        #expect(tickets(second, recorded: true) == [4])
        #expect(store.calls.withLock { $0 } == [[1], [2]])
    }

    @Test func submissionsOfOneRoundAreHeldAndCommittedTogether() throws {
        let store = GatedStore(holdFirst: 0)
        let (writer, reports) = writer(store)
        defer { writer.stop() }
        let events = try events()
        // Three changes accepted in one round of the event loop, submitted one by one.
        for (index, event) in events.prefix(3).enumerated() { writer.submit([submission(UInt64(index + 1), event)]) }
        #expect(writer.waitUntilIdle(before: Date() + 10))
        let report = reports.next()
        #expect(tickets(report, recorded: true) == [1, 2, 3])
        #expect(report?.commits == 1 && report?.changes == 3)
        #expect(store.calls.withLock { $0 } == [[1, 2, 3]])
    }

    @Test func heldSubmissionsStayBeforeLaterItems() throws {
        let store = GatedStore(holdFirst: 0)
        let (writer, reports) = writer(store)
        defer { writer.stop() }
        let events = try events()
        writer.submit([submission(1, events[0])])
        let relayed = DispatchSemaphore(value: 0)
        writer.relay { relayed.signal() }
        #expect(relayed.wait(timeout: .now() + 10) == .success)
        #expect(tickets(reports.next(), recorded: true) == [1], "reported before the relay ran")
    }

    @Test func stopFinishesWhatIsQueued() throws {
        let store = GatedStore(holdFirst: 0)
        let (writer, reports) = writer(store)
        let events = try events()
        writer.submit(events.enumerated().map { submission(UInt64($0.offset + 1), $0.element) })
        writer.stop()
        var recorded: [UInt64] = []
        while let report = reports.all.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { recorded += tickets(report, recorded: true) }
        #expect(recorded == [1, 2, 3, 4, 5])
    }
}

import Foundation
import LiveActivityCore

/// The store's own thread: records the changes the service thread submits, many at a time, and reports
/// each one's result back.
///
/// Group commit: each time round, the thread takes every submission queued so far and records all their
/// events with one ``ActivityStore/record(_:)`` call (SQLite: one transaction, one fsync; Redis: one script
/// call), then keeps their shares, then reports the results of the whole group at once. A group whose
/// record fails fails whole; when another instance recorded first (``StoreConflict``), the thread reads what
/// it recorded (the catch-up) before reporting.
///
/// Generations (see ``ChangePipeline``): after a group of generation *g* failed, every later submission of
/// generation *g* or older is refused without touching the store (it was judged on top of the failed
/// ones); a submission of a newer generation supersedes every older one still queued.
///
/// A store that ``ActivityStore/recordsInstantly`` (memory) gets no thread: ``submit(_:)`` records on the
/// caller's thread and reports before it returns. Thread-safe.
final class StoreWriter: @unchecked Sendable {
    /// What one round did: each submission's result, in submission order, and what it cost.
    struct Report: Sendable {
        /// Tickets and results, in the order the submissions were made.
        var results: [(ticket: UInt64, result: ChangePipeline.StoreResult)] = []
        /// ``ActivityStore/record(_:)`` calls that succeeded (0 or 1).
        var commits = 0
        /// Submissions with events those calls recorded.
        var changes = 0
    }

    private enum Item {
        case submission(ChangePipeline.Submission)
        case save([Share])
        case relay(@Sendable () -> Void)
        case channel(ChannelChange, @Sendable ((any Error)?) -> Void)
    }

    /// A change to the kept broadcast channels.
    enum ChannelChange: Sendable {
        /// Keep a new channel.
        case save(BroadcastChannel)
        /// Forget the channel with this ID.
        case delete(String)
    }

    private let store: any ActivityStore
    private let logger: Logger
    /// Whether the store records instantly: no thread, everything on the caller's thread.
    let isSynchronous: Bool
    /// Where reports go: the service thread's inbox (or, when synchronous, straight to the server). Set once,
    /// before the first submission.
    var deliver: @Sendable (Report) -> Void = { _ in }

    private let condition = NSCondition()
    /// {condition} items not taken yet, oldest first.
    private var queue: [Item] = []
    /// {condition} submissions not yet handed to the store thread (``submit(_:)``), after those in `queue`.
    private var held: [Item] = []
    /// {condition} whether the thread is working on a round.
    private var busy = false
    /// {condition} set by ``stop()``: the thread finishes what is queued, then exits.
    private var stopping = false
    /// {condition} whether the thread runs.
    private var running = false
    private let exited = DispatchSemaphore(value: 0)

    /// The store thread's own (or, when synchronous, the caller's): the newest generation seen, and the
    /// newest generation whose group failed.
    private var newestGeneration: UInt64 = 0
    private var failedGeneration: UInt64 = 0

    /// Creates a writer for `store`; no thread runs until ``start()``.
    init(store: any ActivityStore, logger: Logger) {
        self.store = store
        self.logger = logger
        isSynchronous = store.recordsInstantly
    }

    // MARK: Any thread

    /// Starts the store thread (nothing to do for a synchronous store).
    func start() {
        guard !isSynchronous else { return }
        condition.lock()
        defer { condition.unlock() }
        guard !running else { return }
        running = true
        stopping = false
        let thread = Thread.named("store-writer") { [self] in run() }
        thread.start()
    }

    /// Finishes everything queued, then stops the thread; returns once it has exited.
    func stop() {
        condition.lock()
        guard running else { condition.unlock(); return }
        queue += held
        held = []
        stopping = true
        condition.broadcast()
        condition.unlock()
        exited.wait()
    }

    /// Queues submissions, in order; each one's result comes back through ``deliver``.
    ///
    /// They are held, not handed to the store thread, until ``releaseHeld()`` (the service loop calls it
    /// after each round, or within a long round once the oldest has waited 1 ms) or the next other item:
    /// every change a round of the event loop accepted then goes into one group, one commit and one report.
    /// Handed over one by one, the store thread (woken at once, on a busy machine on the same core) committed
    /// them one by one: one fsync, one wake-up of the service thread and one broadcast each.
    func submit(_ submissions: [ChangePipeline.Submission]) {
        guard !submissions.isEmpty else { return }
        if isSynchronous {
            process(submissions.map(Item.submission))
            return
        }
        condition.lock()
        held += submissions.map(Item.submission)
        condition.unlock()
    }

    /// Hands the held submissions to the store thread, as one round.
    func releaseHeld() {
        condition.lock()
        if !held.isEmpty {
            queue += held
            held = []
            condition.broadcast()
        }
        condition.unlock()
    }

    /// Keeps share links, after everything queued before; a failure is logged (nothing waits for it).
    func save(_ shares: [Share]) {
        guard !shares.isEmpty else { return }
        enqueue([.save(shares)])
    }

    /// Keeps or forgets a broadcast channel after everything queued before; `done` is called with nil or the
    /// store's error, on the store thread (or, for a synchronous store, before this returns).
    func change(_ change: ChannelChange, done: @escaping @Sendable ((any Error)?) -> Void) {
        enqueue([.channel(change, done)])
    }

    /// Runs `job` on the store thread once everything queued before has been reported: what it hands to
    /// the service thread arrives after those reports (the cluster feed's events come this way, so an
    /// instance never takes its own recorded events for another's).
    func relay(_ job: @escaping @Sendable () -> Void) {
        enqueue([.relay(job)])
    }

    /// Waits until nothing is queued or being recorded, or until `deadline`.
    /// - Returns: whether the writer is idle.
    @discardableResult
    func waitUntilIdle(before deadline: Date) -> Bool {
        releaseHeld()
        condition.lock()
        defer { condition.unlock() }
        while (!queue.isEmpty || busy) && running {
            if !condition.wait(until: deadline) { break }
        }
        return queue.isEmpty && !busy
    }

    private func enqueue(_ items: [Item]) {
        if isSynchronous {
            process(items)
            return
        }
        condition.lock()
        queue += held
        held = []
        queue += items
        condition.broadcast()
        condition.unlock()
    }

    // MARK: Store thread

    private func run() {
        condition.lock()
        while true {
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty { break }
            let items = queue
            queue = []
            busy = true
            condition.unlock()
            process(items)
            condition.lock()
            busy = false
            condition.broadcast()
        }
        running = false
        condition.broadcast()
        condition.unlock()
        exited.signal()
    }

    /// Handles one round's items in order: consecutive submissions are recorded as one group; a read, a save
    /// or a relay ends the group before it. Records of a superseded or failed generation are refused.
    private func process(_ items: [Item]) {
        for case .submission(let submission) in items { newestGeneration = max(newestGeneration, submission.generation) }
        var report = Report()
        var group: [ChangePipeline.Submission] = []
        func flush() {
            record(group, into: &report)
            group = []
            if !report.results.isEmpty { deliver(report) }
            report = Report()
        }
        for item in items {
            switch item {
            case .submission(let submission):
                switch submission.work {
                case .record where submission.generation < newestGeneration || submission.generation <= failedGeneration:
                    report.results.append((submission.ticket, .failed(ChangePipeline.StoreFailure(
                        "not recorded: it was judged on a change that failed or was judged again"))))
                case .record:
                    group.append(submission)
                case .catchUp(let after):
                    // A read depends on nothing: never refused.
                    flush()
                    report.results.append((submission.ticket, .caughtUp(catchUp(after: after))))
                    flush()
                }
            case .save(let shares):
                flush()
                for share in shares {
                    do { try store.save(share) } catch {
                        logger.error("could not record a share", ["share.id": share.id, "error": "\(error)"])
                    }
                }
            case .relay(let job):
                flush()
                job()
            case .channel(let change, let done):
                flush()
                do {
                    switch change {
                    case .save(let channel): try store.save(channel)
                    case .delete(let id): try store.deleteChannel(id: id)
                    }
                    done(nil)
                } catch {
                    logger.error("could not record a channel change", ["error": "\(error)"])
                    done(error)
                }
            }
        }
        flush()
    }

    /// Records one group: all its events in one call, then its shares.
    private func record(_ group: [ChangePipeline.Submission], into report: inout Report) {
        guard !group.isEmpty else { return }
        let events = group.flatMap(\.events)
        if let first = events.first {
            do {
                try store.record(events)
                report.commits += 1
                report.changes += group.count { !$0.events.isEmpty }
            } catch let conflict as StoreConflict {
                failedGeneration = max(failedGeneration, group.map(\.generation).max() ?? 0)
                logger.debug("another instance changed first; catching up", ["store.sequence": "\(conflict.sequence)"])
                let found = catchUp(after: first.sequence - 1)
                report.results += group.map { ($0.ticket, .conflict(found)) }
                // Racing instances spread out before they try again.
                usleep(useconds_t.random(in: 200...2000))
                return
            } catch {
                failedGeneration = max(failedGeneration, group.map(\.generation).max() ?? 0)
                logger.error("store failed; change refused", ["error": "\(error)", "changes": "\(group.count)"])
                report.results += group.map { ($0.ticket, .failed(ChangePipeline.StoreFailure("\(error)"))) }
                return
            }
        }
        for submission in group {
            guard case .record(_, let shares) = submission.work, !shares.isEmpty else {
                report.results.append((submission.ticket, .recorded))
                continue
            }
            do {
                for share in shares { try store.save(share) }
                report.results.append((submission.ticket, .recorded))
            } catch {
                logger.error("could not record a share", ["error": "\(error)"])
                report.results.append((submission.ticket, .notSaved(ChangePipeline.StoreFailure("\(error)"))))
            }
        }
    }

    /// Reads what the store holds after `sequence` (what another instance recorded).
    private func catchUp(after sequence: UInt64) -> ChangePipeline.CatchUp {
        do {
            if let events = try store.events(after: sequence) { return .events(events) }
            let (activities, last) = try store.load()
            return .reload(activities: activities, sequence: last)
        } catch {
            logger.warning("could not catch up with the store", ["error": "\(error)"])
            return .unavailable(ChangePipeline.StoreFailure("\(error)"))
        }
    }
}

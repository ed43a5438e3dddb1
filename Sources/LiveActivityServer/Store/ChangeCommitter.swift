import Foundation
import LiveActivityCore

/// The service thread's side of the store pipeline that is not ``ChangePipeline`` itself. Service thread only.
final class StoreStage {
    /// Effects waiting to be carried out, oldest first. Effects made while others are being carried out (a
    /// completion that proposes a change, a store that reports at once) wait their turn, so completions
    /// always run in the pipeline's order.
    var effects: [ChangePipeline.Effects] = []
    /// Whether ``ChangeCommitter/carryOut(_:)`` is running.
    var carryingOut = false
    /// What clients have been told, as of the step being carried out (``ChangePipeline/Step/publish(_:)``);
    /// nil until the first change is settled (the pipeline's committed state is then the start state).
    var told: ActivityCenter?
    /// When (monotonic ns) the oldest submission the store writer holds was made; 0: it holds none. See
    /// ``ChangeCommitter/releaseHeldSubmissionsIfDue()``.
    var heldSince: UInt64 = 0
}

/// Commits changes: judges them on the speculative state (``ChangePipeline``), has ``StoreWriter`` record
/// them on its own thread (or at once, for a store that ``ActivityStore/recordsInstantly``), runs every
/// completion on the service thread in the order the changes were accepted, and then publishes the
/// committed events to its ``ChangeObserver``s (the sessions' broadcast, share expiry, thumbnails, the
/// inspector's contents, the timing's hold).
///
/// Publishing: a local change's events right after its completion ran (the sender's `ack` before the
/// event); other instances' events (``ChangePipeline/Step/replicated(_:)``) as they are applied, through
/// ``ChangeObserver/replicated(_:at:)``; a store reload through ``onReloaded`` (watching clients are greeted
/// again). `now` is the server time the change was judged at (a replicated step: when it was applied).
///
/// Owns the store's writer and reader connections: the reader serves resume, history, timelines and
/// renderings of an instant off the service thread.
///
/// Threading: service thread only, except the hand-over of the store's results (``connect(handOver:)``). `@unchecked Sendable` so that its unowned reference may ride in inbox jobs, which
/// run on the service thread.
final class ChangeCommitter: @unchecked Sendable {
    /// The store changes are recorded in and read from.
    let store: any ActivityStore
    /// Records changes on the store thread, many at a time (or at once, for a store in memory).
    let writer: StoreWriter
    /// Reads the store off the service thread: resume, history, timelines, renderings of an instant.
    let reader: StoreReader
    /// The rest of the pipeline's service-thread state: what clients were told, effects in progress.
    let stage = StoreStage()
    /// The pipeline, checked to be touched on the service thread only (debug builds).
    private let boundPipeline: ServiceBound<ChangePipeline>
    /// Told of every committed change, in this order (the timing, then the sessions' broadcast, then the
    /// features' effects). Held unowned: the composition root keeps them alive, and they may hold the
    /// committer (the sessions do) without a cycle.
    var observers: [any ChangeObserver] {
        get { held.map(\.observer) }
        set { held = newValue.map(HeldObserver.init) }
    }
    /// An observer, unowned.
    private struct HeldObserver {
        unowned let observer: any ChangeObserver
    }
    private var held: [HeldObserver] = []
    /// Runs after a store reload (``ChangePipeline/Step/reloaded``): the sessions greet every watching
    /// client again with a fresh snapshot.
    var onReloaded: () -> Void = {}
    /// Runs after each batch of effects is carried out: the timer's next deadline may have moved (the timing
    /// driver re-arms it).
    var onCarriedOut: () -> Void = {}
    /// Counts commits and changes for `/metrics`.
    private let metrics: ServerMetrics
    private let logger: Logger
    /// The server's clock (whole milliseconds).
    private let clock: @Sendable () -> Date

    /// Longest a change waits in the service loop before going to the store thread (ns): 1 ms. Changes are
    /// handed over once per round of the loop (one group, one commit; ``releaseHeldSubmissions()``), but a
    /// round that writes to 10,000 clients lasts tens of milliseconds, and a change accepted at its start
    /// then waited for all of it. Checked on every WRITEABLE and between clients while a broadcast is written,
    /// which is where a long round spends its time.
    static let longestGroupDelay: UInt64 = 1_000_000

    /// - Parameters:
    ///   - store: where changes are recorded; its reads go through ``reader``.
    ///   - start: the pipeline as loaded from the store.
    ///   - onServiceThread: whether the caller runs on the service thread (checked in debug builds).
    ///   - metrics: the server's counters (store commits and changes).
    ///   - logger: where store failures are logged.
    ///   - clock: the server's clock.
    init(store: any ActivityStore, start: ChangePipeline, onServiceThread: @escaping @Sendable () -> Bool,
         metrics: ServerMetrics, logger: Logger, clock: @escaping @Sendable () -> Date) {
        self.store = store
        writer = StoreWriter(store: store, logger: logger)
        reader = StoreReader(store: store)
        boundPipeline = ServiceBound(start, owner: onServiceThread)
        self.metrics = metrics
        self.logger = logger
        self.clock = clock
    }

    /// Routes the writer's reports and the reader's finished reads to the service thread: through
    /// `handOver` (the inbox) from their threads, or straight in when the store records at once. Called once
    /// by the composition root, before the store thread starts.
    /// - Parameter handOver: runs a job on the service thread soon; called from the store's threads.
    func connect(handOver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        let synchronous = writer.isSynchronous
        // Unowned, not weak: the writer is stopped before the committer goes, and a weak reference would give
        // it a side table, which makes every retain and release a slow path.
        writer.deliver = { [unowned self] report in
            if synchronous {
                storeReported(report)
            } else {
                // The store thread: hand the results to the service thread.
                handOver { [unowned self] in storeReported(report) }
            }
        }
        // The service loop waits for the reader (``StoreReader/drain()``) before the committer can go.
        reader.handBack = { [unowned self] ticket, value in
            handOver { [unowned self] in reader.finish(ticket, value) }
        }
    }

    // MARK: State

    /// The committed and speculative activities, and the changes waiting for the store between them.
    var pipeline: ChangePipeline {
        get { boundPipeline.value }
        _modify { yield &boundPipeline.value }
    }

    /// What clients have been told: the pipeline's committed state as of the step being carried out, so that
    /// a reply or tick run between two settled changes shows the first and not yet the second. Reads,
    /// snapshots, ticks, broadcasts.
    var center: ActivityCenter { stage.told ?? pipeline.committed }

    /// Swaps in newly loaded kinds, in the pipeline and in what clients were last told.
    func replaceKinds(_ kinds: KindRegistry) {
        pipeline.replaceKinds(kinds)
        stage.told?.replaceKinds(kinds)
    }

    // MARK: Changes

    /// Proposes a change computed by `body` from the speculative state (the committed state plus the changes
    /// still waiting for the store); its events are recorded by the store thread, grouped with others, and
    /// published to the ``observers`` once durable, right after `completion` ran. `body` may run again: when
    /// another instance recorded events first (``StoreConflict``), the change is judged again on top of them,
    /// for up to 2 seconds; in a cluster, a change `body` refuses with a ``ProtocolError`` is judged once more
    /// after reading the shared log, if it held events this instance had not applied yet.
    /// - Parameters:
    ///   - now: the server time the change is judged at; its events are published with it (`serverTime`).
    ///   - body: returns a value for the completion and the events to record.
    ///   - completion: called once, on the service thread, in the order changes were proposed: `.success`
    ///     with what `body` returned once its events are durable (the committed state then holds them; at once
    ///     for a store in memory); `.failure` with what `body` threw (nothing recorded), or with the store's
    ///     error (nothing changed; every change judged on top of this one fails too).
    func change<Value>(judgedAt now: Date,
                       _ body: @escaping (inout ActivityCenter) throws -> (Value, [ActivityEvent]),
                       completion: @escaping (Result<Value, any Error>) -> Void) {
        carryOut(pipeline.propose({ [unowned self] center in
            let (value, events) = try body(&center)
            return ChangePipeline.Verdict(events: events, onCommit: { [unowned self] in
                completion(.success(value))
                publish(events, at: now)
            })
        }, catchUpOnRefusal: store is any ReplicatedStore, now: Date(), onFailure: { completion(.failure($0)) }))
    }

    /// Proposes a judged verdict as it is (a new share: no events, nothing published), through the pipeline.
    /// - Parameters:
    ///   - judge: judges on the speculative state; throws to refuse.
    ///   - onFailure: called on the service thread with the refusal or the store's error.
    func propose(_ judge: @escaping ChangePipeline.Judge, onFailure: @escaping (any Error) -> Void) {
        carryOut(pipeline.propose(judge, now: Date(), onFailure: onFailure))
    }

    /// Runs `reply` once every change accepted before it is settled (at once if none waits), so that a reply
    /// needing no store never overtakes an earlier change's acknowledgement.
    func inTurn(_ reply: @escaping () -> Void) {
        carryOut(pipeline.barrier(reply))
    }

    /// Tells the observers of committed events (never empty), in registration order.
    /// - Parameter now: the server time they were judged at.
    func publish(_ events: [ActivityEvent], at now: Date) {
        guard !events.isEmpty else { return }
        for entry in held { entry.observer.committed(events, at: now) }
    }

    /// Carries out what the pipeline asked for: submissions to the store first, then the steps in order
    /// (completions and the publishing after them, other instances' events, fresh snapshots after a reload);
    /// then ``onCarriedOut`` (the timer's next deadline may have moved).
    func carryOut(_ effects: ChangePipeline.Effects) {
        guard !effects.submissions.isEmpty || !effects.steps.isEmpty else { return }
        stage.effects.append(effects)
        guard !stage.carryingOut else { return }
        stage.carryingOut = true
        defer { stage.carryingOut = false }
        while !stage.effects.isEmpty {
            let next = stage.effects.removeFirst()
            writer.submit(next.submissions)
            if !next.submissions.isEmpty, !writer.isSynchronous, stage.heldSince == 0 {
                stage.heldSince = DispatchTime.now().uptimeNanoseconds
            }
            for step in next.steps {
                switch step {
                case .publish(let center):
                    stage.told = center
                case .run(let completion):
                    completion()
                case .replicated(let events):
                    guard !events.isEmpty else { continue }
                    let now = clock()
                    for entry in held { entry.observer.replicated(events, at: now) }
                case .reloaded:
                    onReloaded()
                }
            }
        }
        onCarriedOut()
    }

    /// The `storage_unavailable` error for a store failure. The store's own error text (file paths, SQLite
    /// or Redis messages) stays in the server's log, written here; the client learns only that nothing
    /// changed and that it may try again.
    func storageUnavailable(_ error: any Error) -> ProtocolError {
        logger.warning("storage unavailable; request refused", ["error": "\(error)"])
        return ProtocolError(.storageUnavailable, field: nil,
                             message: "the store is unavailable right now (the server's log has the cause); nothing was changed, try again")
    }

    // MARK: The store thread

    /// Hands the held submissions to the store thread, as one group (the service loop, after each round).
    func releaseHeldSubmissions() {
        stage.heldSince = 0
        writer.releaseHeld()
    }

    /// Hands the held submissions over when the oldest has waited ``longestGroupDelay``; cheap when none is
    /// held (one comparison), as it runs once per client written.
    @inline(__always)
    func releaseHeldSubmissionsIfDue() {
        guard stage.heldSince != 0 else { return }
        if DispatchTime.now().uptimeNanoseconds - stage.heldSince >= Self.longestGroupDelay { releaseHeldSubmissions() }
    }

    /// Takes one round of the store's results: counts them for `/metrics`, settles the changes.
    func storeReported(_ report: StoreWriter.Report) {
        metrics.storeCommits += report.commits
        metrics.storeChanges += report.changes
        carryOut(pipeline.resolve(report.results, now: Date()))
    }

    /// Lets the store finish: waits for the store thread and runs what it reports, until nothing waits (or 5
    /// seconds pass). At start-up, so that deadlines passed while the server was down are applied before the
    /// first client is served; at shutdown, before the clients are closed, so that they get their
    /// acknowledgements.
    /// - Parameter runInbox: runs the jobs other threads handed to the service thread; returns how many ran.
    func finishStoreWork(runInbox: () -> Int) {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            // The writer hands its reports to the inbox before it counts as idle.
            let idle = writer.waitUntilIdle(before: deadline)
            let jobs = runInbox()
            if pipeline.isIdle || (idle && jobs == 0) { break }
        }
    }
}

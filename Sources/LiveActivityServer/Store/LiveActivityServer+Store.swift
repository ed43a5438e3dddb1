import Foundation
import LiveActivityCore

/// The service thread's side of the store pipeline that is not ``ChangePipeline`` itself. Service thread only.
final class StoreStage {
    /// Effects waiting to be carried out, oldest first. Effects made while others are being carried out (a
    /// completion that proposes a change, a store that reports at once) wait their turn, so completions
    /// always run in the pipeline's order.
    var effects: [ChangePipeline.Effects] = []
    /// Whether ``LiveActivityServer/carryOut(_:)`` is running.
    var carryingOut = false
    /// Messages of each session (by id) waiting behind changes still waiting for the store, oldest first.
    var deferred: [UInt64: [ClientMessage]] = [:]
    /// What clients have been told, as of the step being carried out (``ChangePipeline/Step/publish(_:)``);
    /// nil until the first change is settled (the pipeline's committed state is then the start state).
    var told: ActivityCenter?
    /// When (monotonic ns) the oldest submission the store writer holds was made; 0: it holds none. See
    /// ``LiveActivityServer/releaseHeldSubmissionsIfDue()``.
    var heldSince: UInt64 = 0
}

/// Changes go through ``ChangePipeline`` and are recorded by ``StoreWriter`` on its own thread (or at once,
/// for a store that ``ActivityStore/recordsInstantly``); every completion runs on the service thread, in the
/// order the changes were accepted. Service thread only, except where noted.
extension LiveActivityServer {
    /// Routes the writer's reports: through the inbox from its thread, or straight in when it records at once.
    /// Called once, at the end of `init`.
    func connectStoreWriter() {
        let synchronous = storeWriter.isSynchronous
        // Unowned, not weak: the writer is stopped before the server goes, and a weak reference would give the
        // server a side table, which makes every retain and release of it (one per lws callback) a slow path.
        storeWriter.deliver = { [unowned self] report in
            if synchronous {
                storeReported(report)
            } else {
                // The store thread: hand the results to the service thread.
                perform { server in server.storeReported(report) }
            }
        }
    }

    /// Routes the reader's finished reads to the service thread, where their continuations run. Called once,
    /// at the end of `init`. Unowned, as for the writer: the service loop waits for the reader before the
    /// server can go (``StoreReader/drain()``).
    func connectStoreReader() {
        storeReader.handBack = { [unowned self] ticket, value in
            perform { server in server.storeReader.finish(ticket, value) }
        }
    }

    /// Longest a change waits in the service loop before going to the store thread (ns): 1 ms. Changes are
    /// handed over once per round of the loop (one group, one commit; ``releaseHeldSubmissions()``), but a
    /// round that writes to 10,000 clients lasts tens of milliseconds, and a change accepted at its start
    /// then waited for all of it. Checked on every WRITEABLE and between clients while a broadcast is written,
    /// which is where a long round spends its time.
    static let longestGroupDelay: UInt64 = 1_000_000

    /// Hands the held submissions to the store thread, as one group (the service loop, after each round).
    func releaseHeldSubmissions() {
        storeStage.heldSince = 0
        storeWriter.releaseHeld()
    }

    /// Hands the held submissions over when the oldest has waited ``longestGroupDelay``; cheap when none is
    /// held (one comparison), as it runs once per client written.
    @inline(__always)
    func releaseHeldSubmissionsIfDue() {
        guard storeStage.heldSince != 0 else { return }
        if DispatchTime.now().uptimeNanoseconds - storeStage.heldSince >= Self.longestGroupDelay { releaseHeldSubmissions() }
    }

    /// Takes one round of the store's results: counts them for `/metrics`, settles the changes.
    func storeReported(_ report: StoreWriter.Report) {
        metrics.storeCommits += report.commits
        metrics.storeChanges += report.changes
        carryOut(pipeline.resolve(report.results, now: Date()))
    }

    /// Carries out what the pipeline asked for: submissions to the store first, then the steps in order
    /// (completions, broadcasts of other instances' events, fresh snapshots after a reload); then re-arms the
    /// timer, whose next deadline may have moved.
    func carryOut(_ effects: ChangePipeline.Effects) {
        guard !effects.submissions.isEmpty || !effects.steps.isEmpty else { return }
        storeStage.effects.append(effects)
        guard !storeStage.carryingOut else { return }
        storeStage.carryingOut = true
        defer { storeStage.carryingOut = false }
        while !storeStage.effects.isEmpty {
            let next = storeStage.effects.removeFirst()
            storeWriter.submit(next.submissions)
            if !next.submissions.isEmpty, !storeWriter.isSynchronous, storeStage.heldSince == 0 {
                storeStage.heldSince = DispatchTime.now().uptimeNanoseconds
            }
            for step in next.steps {
                switch step {
                case .publish(let center):
                    storeStage.told = center
                case .run(let completion):
                    completion()
                case .replicated(let events):
                    publishReplicated(events, at: clock())
                case .reloaded:
                    for session in hub.sessions.values where session.cursor != nil { greet(session, since: nil) }
                }
            }
        }
        scheduleTimer(now: clock())
    }

    /// Publishes events this instance committed: the sessions broadcast them, then the change observers
    /// (share expiry, thumbnails, the inspector's contents) are told, in order. Called after the change's own
    /// completion (its sender's answer before the event).
    func publishCommitted(_ events: [ActivityEvent], at now: Date) {
        guard !events.isEmpty else { return }
        broadcast(events, at: now)
        for observer in changeObservers { observer.committed(events, at: now) }
    }

    /// Publishes events another instance committed (``ChangePipeline/Step/replicated(_:)``): broadcast, then
    /// the observers' ``ChangeObserver/replicated(_:at:)``.
    func publishReplicated(_ events: [ActivityEvent], at now: Date) {
        guard !events.isEmpty else { return }
        broadcast(events, at: now)
        for observer in changeObservers { observer.replicated(events, at: now) }
    }

    /// Runs `reply` once every change accepted before it is settled (at once if none waits), so that a reply
    /// needing no store never overtakes an earlier change's acknowledgement.
    func inTurn(_ reply: @escaping () -> Void) {
        carryOut(pipeline.barrier(reply))
    }

    /// Queues one client message behind the changes still waiting for the store, when it must wait: it is
    /// not a change itself (a change is judged at once, on the speculative state), or messages of the same
    /// client already wait. Its turn comes in ``handle(_:from:inTurn:)``.
    /// - Returns: whether the message was queued (the caller stops there).
    func waitsForTurn(_ message: ClientMessage, from session: Session) -> Bool {
        if storeStage.deferred[session.id] != nil {
            storeStage.deferred[session.id]!.append(message)
            return true
        }
        if pipeline.isIdle || goesToStore(message, from: session) { return false }
        storeStage.deferred[session.id] = [message]
        inTurn { [self] in takeTurn(session) }
        return true
    }

    /// Handles a session's waiting messages, in order, until one that must wait again (a reply behind a
    /// change just proposed).
    private func takeTurn(_ session: Session) {
        guard hub.sessions[session.id] === session else {
            storeStage.deferred[session.id] = nil
            return
        }
        while let message = storeStage.deferred[session.id]?.first {
            storeStage.deferred[session.id]!.removeFirst()
            let wasChange = goesToStore(message, from: session)
            handle(message, from: session, inTurn: true)
            guard let next = storeStage.deferred[session.id]?.first else { break }
            if wasChange, !goesToStore(next, from: session), !pipeline.isIdle {
                inTurn { [self] in takeTurn(session) }
                return
            }
        }
        storeStage.deferred[session.id] = nil
    }

    /// Whether ``handle(_:from:inTurn:)`` takes `message` to the change path (a change, a push, a share),
    /// rather than answering it at once (a read, an error, `hello`).
    func goesToStore(_ message: ClientMessage, from session: Session) -> Bool {
        guard session.scope == nil, session.role != .unauthenticated, case .success(let command) = message.command else { return false }
        if command.isControl, session.role < .controller { return false }
        if let entry = tables.commands.entry(for: command) { return entry.path == .change }
        switch command {
        case .start, .update, .end, .pause, .resume, .extend, .push, .share: return true
        case .hello, .list, .catchUp, .history, .unshare, .shares, .inspect: return false
        }
    }

    /// Queues a message for a client, unless its connection has closed meanwhile (a completion that ran
    /// after the store).
    func sendIfOpen(_ message: ServerMessage, to session: Session) {
        guard hub.sessions[session.id] === session else { return }
        send(message, to: session)
    }

    /// Lets the store finish: waits for the store thread and runs what it reports, until nothing waits
    /// (or 5 seconds pass). At start-up, so that deadlines passed while the server was down are applied
    /// before the first client is served; at shutdown, before the clients are closed, so that they get
    /// their acknowledgements.
    func finishStoreWork() {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            // The writer hands its reports to the inbox before it counts as idle.
            let idle = storeWriter.waitUntilIdle(before: deadline)
            let jobs = inbox.drain()
            for job in jobs { job(self) }
            if pipeline.isIdle || (idle && jobs.isEmpty) { break }
        }
    }
}

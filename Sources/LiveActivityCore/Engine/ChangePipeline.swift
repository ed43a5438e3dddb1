import Foundation

/// Changes between being judged and being durable, as a pure state machine: no I/O, no threads, no clock
/// of its own (the caller passes the time in).
///
/// It keeps two ``ActivityCenter``s. ``committed`` is what clients have been told: every event in it is in
/// the store; snapshots, ticks, reads and broadcasts use only this one. ``speculative`` is `committed` plus
/// the changes still waiting for the store; new changes are judged against it, so many changes can wait for
/// the store at once (and be recorded together, one transaction for all).
///
/// The caller (the server's service thread) drives it:
/// - ``propose(_:catchUpOnRefusal:now:onFailure:)`` judges a change. A refusal needs no store; a change
///   with events (or shares) becomes a ``Submission`` for the store.
/// - ``barrier(_:)`` queues a reply that needs no store behind the changes before it, so one client's
///   replies keep the order of its requests.
/// - ``resolve(_:now:)`` takes the store's results, in the order the submissions were made.
/// - ``receive(replicated:now:)`` takes events another server instance recorded (a cluster).
///
/// Every call returns ``Effects``: submissions to hand to the store (first), then ``Step``s to run in
/// order (a change's `onCommit` once it is durable, failure replies, barrier replies, others' events).
///
/// Generations: every submission carries ``generation``. When the store fails (or another instance
/// recorded first), every change still waiting was judged on a state that will not be, so they are all
/// failed (or judged again), and the generation goes up; the store refuses, without touching its data,
/// any submission of a generation that failed or that a newer one superseded. Not thread-safe: one owner.
public struct ChangePipeline {
    /// What a judged change asks of the store, and what to do once it is durable.
    public struct Verdict {
        /// The events to record, in order (none for a change that only touches memory).
        public var events: [ActivityEvent]
        /// Share links to keep (after the events).
        public var shares: [Share]
        /// Runs once the change is durable and every change before it has been settled (ack, broadcast).
        public var onCommit: () -> Void

        /// Creates a verdict.
        public init(events: [ActivityEvent] = [], shares: [Share] = [], onCommit: @escaping () -> Void) {
            self.events = events
            self.shares = shares
            self.onCommit = onCommit
        }

        /// Whether the store has anything to do for it.
        var needsStore: Bool { !events.isEmpty || !shares.isEmpty }
    }

    /// Judges a change: mutates the center it is given and says what to record, or throws to refuse (the
    /// center is then dropped). May run again on another state (after another instance's events).
    public typealias Judge = (inout ActivityCenter) throws -> Verdict

    /// Work for the store, identified by `ticket`.
    public struct Submission: Sendable {
        /// What the store is asked to do.
        public enum Work: Sendable {
            /// Record the events (one atomic step with the rest of the group), then keep the shares.
            case record(events: [ActivityEvent], shares: [Share])
            /// Read the events recorded after `after` (another instance's), or everything if the log no
            /// longer reaches back that far.
            case catchUp(after: UInt64)
        }
        /// Identifies the submission in ``StoreResult``s.
        public let ticket: UInt64
        /// The pipeline's ``ChangePipeline/generation`` when it was made.
        public let generation: UInt64
        /// What to do.
        public let work: Work

        /// Creates a submission (the pipeline makes them; tests of a store thread too).
        public init(ticket: UInt64, generation: UInt64, work: Work) {
            self.ticket = ticket
            self.generation = generation
            self.work = work
        }

        /// The events it records (none for a read).
        public var events: [ActivityEvent] {
            if case .record(let events, _) = work { return events }
            return []
        }
    }

    /// What the store did with one submission.
    public enum StoreResult: Sendable {
        /// Recorded (and its shares kept).
        case recorded
        /// Not recorded: the store failed, or refused it because it depends on a change that failed or was
        /// superseded. Every change after it fails too.
        case failed(StoreFailure)
        /// Its events (if any) are recorded, but a share could not be kept: only this submission fails (if it
        /// had events, it still commits: they are durable).
        case notSaved(StoreFailure)
        /// Not recorded: another instance recorded events first; here is what it recorded.
        case conflict(CatchUp)
        /// The answer to a ``Submission/Work/catchUp(after:)`` read.
        case caughtUp(CatchUp)
    }

    /// What a catch-up read found.
    public enum CatchUp: Sendable {
        /// The events recorded after the sequence asked for, in order.
        case events([ActivityEvent])
        /// The log no longer reaches back: every activity not dismissed, and the last sequence.
        case reload(activities: [Activity], sequence: UInt64)
        /// The read failed.
        case unavailable(StoreFailure)
    }

    /// A store error, as text (the store's own error stays in the server's log).
    public struct StoreFailure: Error, Sendable, CustomStringConvertible {
        /// What went wrong.
        public let description: String
        /// Wraps a description.
        public init(_ description: String) { self.description = description }
    }

    /// One thing for the caller to do, in order.
    public enum Step {
        /// The committed state as of this point in the steps: what replies, snapshots and ticks run by the
        /// steps after it must read (not ``ChangePipeline/committed``, which already holds every change
        /// settled by the same call). It comes before each change's `onCommit`, each `replicated` and
        /// `reloaded`, so a reply between two changes shows the first and not the second, as its place
        /// among the broadcast events says.
        case publish(ActivityCenter)
        /// Run a completion: a change's `onCommit`, a failure or refusal reply, a barrier's reply.
        case run(() -> Void)
        /// Events another instance recorded are now committed: broadcast them.
        case replicated([ActivityEvent])
        /// The committed state was replaced wholesale (the log did not reach back): every client needs a
        /// fresh snapshot.
        case reloaded
    }

    /// What a call asks of the caller: first hand ``submissions`` to the store, in order, then run ``steps``.
    public struct Effects {
        /// Work for the store, in order.
        public var submissions: [Submission] = []
        /// Completions and broadcasts, in order.
        public var steps: [Step] = []
        /// No effects.
        public init() {}
    }

    /// One change, barrier or refusal waiting its turn.
    private struct Entry {
        enum State {
            /// A reply that needs no store; runs when it reaches the head.
            case barrier(() -> Void)
            /// Judged; waiting for the store (`ticket`), or needing none (`nil`).
            case judged(ticket: UInt64?)
            /// Recorded; waiting for the changes before it.
            case durable
            /// Refused in a cluster; waiting for a catch-up read (`ticket`) before the refusal is final.
            case awaitingCatchUp(ticket: UInt64, refusal: any Error)
            /// Settled with an error (refused, or the store failed): answered when it reaches the head.
            case failed(any Error)
        }
        var state: State
        var judge: Judge?
        var onFailure: ((any Error) -> Void)?
        var verdict: Verdict?
        /// The speculative state once this change is applied.
        var after: ActivityCenter?
        var proposedAt: Date
        var catchUpOnRefusal = false

        /// The ticket of the store work it waits for.
        var ticket: UInt64? {
            switch state {
            case .judged(let ticket): ticket
            case .awaitingCatchUp(let ticket, _): ticket
            default: nil
            }
        }
    }

    /// What clients have been told: every change in it is durable.
    public private(set) var committed: ActivityCenter
    /// ``committed`` plus every change waiting for the store; new changes are judged against it.
    public private(set) var speculative: ActivityCenter
    /// Goes up each time the changes waiting were failed or judged again; submissions carry it.
    public private(set) var generation: UInt64 = 1
    /// How long a change may keep losing races against other instances before it fails, in seconds.
    public var conflictPatience: TimeInterval = 2
    /// Waiting entries, oldest first, from `head`.
    private var entries: [Entry] = []
    private var head = 0
    private var lastTicket: UInt64 = 0

    /// Starts with `center` committed and nothing waiting.
    public init(_ center: ActivityCenter) {
        committed = center
        speculative = center
    }

    /// The kinds both centers validate with.
    public var kinds: KindRegistry { committed.kinds }

    /// Swaps the kinds of both centers (a reload of the kind folders); activities keep their state and find
    /// their kind again by `attributesType`, so changes already waiting are unaffected; those that no longer
    /// validate are marked (``Activity/kindProblem``).
    public mutating func replaceKinds(_ kinds: KindRegistry) {
        committed.replaceKinds(kinds)
        speculative.replaceKinds(kinds)
    }

    /// Whether nothing is waiting (no change, no barrier).
    public var isIdle: Bool { head == entries.count }

    /// How many changes and barriers are waiting.
    public var waiting: Int { entries.count - head }

    // MARK: Calls

    /// Judges a change against ``speculative``.
    /// - Parameters:
    ///   - judge: computes the change; may run again later on a newer state.
    ///   - catchUpOnRefusal: in a cluster: when `judge` refuses with a ``ProtocolError``, read the shared log
    ///     once and judge again if it held events this instance had not applied (the refusal may come from
    ///     not knowing yet what another instance just did).
    ///   - now: the current time, for ``conflictPatience``.
    ///   - onFailure: runs, in turn, with the refusal (what `judge` threw) or the store's failure.
    /// - Returns: the submission for the store, or (if nothing waits) the completion to run now.
    public mutating func propose(_ judge: @escaping Judge, catchUpOnRefusal: Bool = false, now: Date,
                                 onFailure: @escaping (any Error) -> Void) -> Effects {
        var effects = Effects()
        var entry = Entry(state: .judged(ticket: nil), judge: judge, onFailure: onFailure, proposedAt: now,
                          catchUpOnRefusal: catchUpOnRefusal)
        do {
            try assess(&entry, into: &effects)
        } catch {
            if catchUpOnRefusal, error is ProtocolError {
                let ticket = nextTicket()
                entry.state = .awaitingCatchUp(ticket: ticket, refusal: error)
                effects.submissions.append(Submission(ticket: ticket, generation: generation, work: .catchUp(after: committed.sequence)))
            } else {
                entry.state = .failed(error)
            }
        }
        entries.append(entry)
        drain(into: &effects)
        return effects
    }

    /// Queues a reply that needs no store behind everything waiting; runs it now if nothing waits.
    public mutating func barrier(_ reply: @escaping () -> Void) -> Effects {
        var effects = Effects()
        entries.append(Entry(state: .barrier(reply), proposedAt: .distantPast))
        drain(into: &effects)
        return effects
    }

    /// Takes the store's results, in the order the submissions were made. Results for submissions that were
    /// superseded (failed or judged again since) are ignored, except for what they learnt of the store.
    public mutating func resolve(_ results: [(ticket: UInt64, result: StoreResult)], now: Date) -> Effects {
        var effects = Effects()
        for (ticket, result) in results {
            resolve(ticket: ticket, result, now: now, into: &effects)
            drain(into: &effects)
        }
        return effects
    }

    /// Takes events recorded by any instance (the cluster's feed): those not applied yet become committed,
    /// and every change waiting is judged again on top of them (its submission would lose the race anyway).
    /// A gap (events missing before these) asks the store for a catch-up read.
    public mutating func receive(replicated events: [ActivityEvent], now: Date) -> Effects {
        var effects = Effects()
        let (applied, gap) = committed.applyReplicated(events)
        if !applied.isEmpty {
            effects.steps.append(.publish(committed))
            effects.steps.append(.replicated(applied))
            rejudge(now: now, into: &effects)
        }
        if gap { effects.submissions.append(catchUpSubmission()) }
        drain(into: &effects)
        return effects
    }

    /// Asks the store for every event after ``committed`` (``resolve(_:now:)`` applies what it finds).
    public mutating func catchUp() -> Effects {
        var effects = Effects()
        effects.submissions.append(catchUpSubmission())
        return effects
    }

    // MARK: Internals

    private mutating func nextTicket() -> UInt64 {
        lastTicket += 1
        return lastTicket
    }

    private mutating func catchUpSubmission() -> Submission {
        Submission(ticket: nextTicket(), generation: generation, work: .catchUp(after: committed.sequence))
    }

    /// Runs `entry`'s judge on ``speculative``; on success updates it, the entry and the submissions.
    /// - Throws: what the judge throws (``speculative`` and the entry's verdict are then unchanged).
    private mutating func assess(_ entry: inout Entry, into effects: inout Effects) throws {
        var next = speculative
        let verdict = try entry.judge!(&next)
        speculative = next
        entry.verdict = verdict
        entry.after = next
        if verdict.needsStore {
            let ticket = nextTicket()
            entry.state = .judged(ticket: ticket)
            effects.submissions.append(Submission(ticket: ticket, generation: generation,
                                                  work: .record(events: verdict.events, shares: verdict.shares)))
        } else {
            entry.state = .judged(ticket: nil)
        }
    }

    private mutating func resolve(ticket: UInt64, _ result: StoreResult, now: Date, into effects: inout Effects) {
        guard let index = entries[head...].firstIndex(where: { $0.ticket == ticket }) else {
            // Superseded: its entry failed or was judged again. Still learn what the store had.
            switch result {
            case .conflict(let found), .caughtUp(let found):
                if absorb(found, into: &effects) { rejudge(now: now, into: &effects) }
            default:
                break
            }
            return
        }
        switch result {
        case .recorded:
            entries[index].state = .durable
        case .notSaved(let failure):
            entries[index].state = (entries[index].verdict?.events.isEmpty ?? true) ? .failed(failure) : .durable
        case .failed(let failure):
            failAll(failure, into: &effects)
        case .conflict(let found):
            if case .unavailable(let failure) = found {
                failAll(failure, into: &effects)
                return
            }
            _ = absorb(found, into: &effects)
            rejudge(now: now, into: &effects)
        case .caughtUp(let found):
            if absorb(found, into: &effects) {
                rejudge(now: now, into: &effects)
            } else if case .awaitingCatchUp(_, let refusal) = entries[index].state {
                entries[index].state = .failed(refusal)
            }
        }
    }

    /// Applies what a catch-up read found to ``committed``.
    /// - Returns: whether ``committed`` changed.
    private mutating func absorb(_ found: CatchUp, into effects: inout Effects) -> Bool {
        switch found {
        case .events(let events):
            let (applied, _) = committed.applyReplicated(events)
            guard !applied.isEmpty else { return false }
            effects.steps.append(.publish(committed))
            effects.steps.append(.replicated(applied))
            return true
        case .reload(let activities, let sequence):
            let retired = committed.retiredPushTokens
            committed = ActivityCenter(activities: activities, sequence: sequence, maximumLive: committed.maximumLive,
                                       kinds: committed.kinds)
            committed.retiredPushTokens = retired  // tokens dismissed before the reload stay 410 Unregistered
            effects.steps.append(.publish(committed))
            effects.steps.append(.reloaded)
            return true
        case .unavailable:
            return false
        }
    }

    /// Judges every waiting change again on ``committed``, in order, under a new generation (the store will
    /// refuse the old submissions). A change waiting longer than ``conflictPatience`` fails instead.
    private mutating func rejudge(now: Date, into effects: inout Effects) {
        // Changes already durable at the head commit first: they cannot be judged again.
        drain(into: &effects)
        speculative = committed
        guard !isIdle else { return }
        generation += 1
        for index in head..<entries.count {
            switch entries[index].state {
            case .barrier, .failed, .durable:
                // `durable` cannot be here: results come in submission order, so a durable change has no
                // unsettled change before it and was drained.
                continue
            case .judged, .awaitingCatchUp:
                if now.timeIntervalSince(entries[index].proposedAt) > conflictPatience {
                    entries[index].state = .failed(StoreConflict(sequence: committed.sequence))
                    continue
                }
                var entry = entries[index]
                do {
                    try assess(&entry, into: &effects)
                } catch {
                    entry.state = .failed(error)
                }
                entries[index] = entry
            }
        }
    }

    /// The store failed: every waiting change fails with `failure` (refusals and barriers answer as they
    /// would have), in order; ``speculative`` goes back to ``committed``; the generation goes up.
    private mutating func failAll(_ failure: StoreFailure, into effects: inout Effects) {
        drain(into: &effects)
        for index in head..<entries.count {
            switch entries[index].state {
            case .barrier, .failed: continue
            case .awaitingCatchUp(_, let refusal): entries[index].state = .failed(refusal)
            case .judged, .durable: entries[index].state = .failed(failure)
            }
        }
        generation += 1
        drain(into: &effects)
    }

    /// Settles entries from the head while they can be: barriers, refusals, failures, and changes that are
    /// durable or need no store (which then become committed).
    private mutating func drain(into effects: inout Effects) {
        while head < entries.count {
            let entry = entries[head]
            switch entry.state {
            case .barrier(let reply):
                effects.steps.append(.run(reply))
            case .judged(nil), .durable:
                committed = entry.after!
                effects.steps.append(.publish(committed))
                effects.steps.append(.run(entry.verdict!.onCommit))
            case .failed(let error):
                let onFailure = entry.onFailure!
                effects.steps.append(.run { onFailure(error) })
            case .judged, .awaitingCatchUp:
                return
            }
            head += 1
            if head == entries.count {
                entries.removeAll(keepingCapacity: true)
                head = 0
                speculative = committed
            } else if head >= 256 {
                entries.removeFirst(head)
                head = 0
            }
        }
    }
}

import Foundation
import LiveActivityCore

/// Performs what the timer's policy (``ServiceTiming``, a state machine in LiveActivityCore) returns:
/// applies deadlines through the ``ChangeCommitter`` (their events are published and broadcast once
/// durable), releases held ticks, sends the heartbeat and the whole-second tick through the
/// ``WebSocketSessions``, expires share links (``expireShares``, the Shares feature's), and schedules the
/// server's one timer (``scheduleTimer``, the lws adapter's). Observes committed changes to hold ticks while
/// events flow (``ServiceTiming/eventsBroadcast(at:)``).
///
/// Service thread only.
final class TimingDriver: ChangeObserver {
    /// The policy: the whole-second tick and its hold, the heartbeat, deadlines, the next firing.
    private(set) var timing: ServiceTiming
    /// Ends the share links that expired by the given time (the Shares feature); set by the composition root.
    var expireShares: (Date) -> Void = { _ in }
    /// Schedules the timer to fire once after the given seconds (the lws adapter); set by the composition root.
    var scheduleTimer: (TimeInterval) -> Void = { _ in }

    private let committer: ChangeCommitter
    private let sessions: WebSocketSessions
    private let clock: @Sendable () -> Date

    /// - Parameters:
    ///   - heartbeatInterval: seconds between heartbeats (`--heartbeat-seconds`).
    ///   - committer: applies deadlines; its speculative state says when the next one is due.
    ///   - sessions: send ticks and heartbeats, and hold ticks in the hub.
    ///   - clock: the server's clock.
    init(heartbeatInterval: TimeInterval, committer: ChangeCommitter, sessions: WebSocketSessions,
         clock: @escaping @Sendable () -> Date) {
        timing = ServiceTiming(heartbeatInterval: heartbeatInterval)
        self.committer = committer
        self.sessions = sessions
        self.clock = clock
    }

    /// The timer: performs what ``ServiceTiming`` finds due (deadlines, held ticks, and on whole seconds the
    /// heartbeat, share expiry and the tick), then schedules itself again. Called by the lws adapter when the
    /// timer fires, and once at start.
    func timerFired() {
        let now = clock()
        // Deadlines already applied by a change waiting for the store are not due again.
        for action in timing.timerFired(at: now, nextDeadline: committer.pipeline.speculative.nextDeadline) {
            perform(action, at: now)
        }
        scheduleTimer(now: now)
        // lws runs timers before it polls: a change made here (a deadline) would otherwise wait for the poll
        // to end, up to the next timer, before going to the store.
        committer.releaseHeldSubmissions()
    }

    /// Carries out one of the timing's actions at `now` (the server time of the timer pass).
    func perform(_ action: ServiceTiming.Action, at now: Date) {
        switch action {
        case .applyDeadlines:
            committer.change(judgedAt: now, { center in let events = center.advance(to: now); return (events, events) }) { _ in }
        case .releaseTicks:
            sessions.performHubActions(sessions.hub.releaseTicks())
        case .sendHeartbeat:
            sessions.broadcastHeartbeat(at: now)
        case .expireShares:
            expireShares(now)
        case .sendTick:
            guard let tick = committer.center.tick(at: now) else { return }
            sessions.broadcast(tick)
            // While events flow the hub holds ticks for the next broadcast; released ``ServiceTiming/tickHold`` later.
            guard sessions.hub.ticksHeld, let release = timing.ticksHeld(at: now) else { return }
            perform(release, at: now)
        case .schedule(let seconds):
            scheduleTimer(seconds)
        }
    }

    /// Schedules the timer for the next whole second, the next deadline (of the speculative state: a
    /// deadline a waiting change applied is not due again) or the release of held ticks, whichever comes
    /// first (``ServiceTiming/nextTimer(at:nextDeadline:)``).
    func scheduleTimer(now: Date) {
        perform(timing.nextTimer(at: now, nextDeadline: committer.pipeline.speculative.nextDeadline), at: now)
    }

    /// Events were broadcast: ticks are held for a while (``ServiceTiming/eventsBroadcast(at:)``).
    func committed(_ events: [ActivityEvent], at now: Date) {
        timing.eventsBroadcast(at: now)
    }
}

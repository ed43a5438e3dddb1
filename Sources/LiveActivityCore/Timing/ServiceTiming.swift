import Foundation

/// When the server's one timer does what: the whole-second tick and its hold while events flow, the
/// heartbeat every `--heartbeat-seconds`, the activities' deadlines, and when to fire next. A state machine
/// with no I/O and no clock of its own (the shape of Hummingbird's state machines): each mutating method
/// takes the current time and returns the ``Action``s the server performs, in order. Service thread only.
///
/// Times are seconds since 1970 (`TimeInterval`), as the server's clock reads them (whole milliseconds). A
/// pass that comes up to ``slack`` early counts as on time (lws's timer may fire a little before the
/// microsecond it was asked for).
public struct ServiceTiming: Sendable {
    /// What the server must do, in the order returned.
    public enum Action: Equatable, Sendable {
        /// Advance the activities to now: a deadline (a timer's end, a stale or dismissal date) is due.
        case applyDeadlines
        /// Write the ticks the hub holds (`Hub.releaseTicks()`): no broadcast carried them within the hold.
        case releaseTicks
        /// Send a heartbeat to every watching client (docs/PROTOCOL.md, `heartbeat`).
        case sendHeartbeat
        /// End the share links whose time is up (on each whole-second pass, before the tick).
        case expireShares
        /// Make this whole second's tick and hand it to the hub, then report it with ``ticksHeld(at:)``.
        case sendTick
        /// Schedule the timer to fire after this many seconds (at least 1 ms; the timer clamps it).
        case schedule(after: TimeInterval)
    }

    /// How long a tick waits for an event to carry it, in seconds, while events flow (one was broadcast in
    /// the last second): the next one usually follows within this, and each client then gets its tick and the
    /// event in one write, not one write each. Past it, the tick is written on its own, as made.
    public static let tickHold: TimeInterval = 0.1
    /// How early a pass may come and still count as due, in seconds (5 ms).
    public static let slack: TimeInterval = 0.005

    /// Seconds between heartbeats; 0: none.
    public let heartbeatInterval: TimeInterval
    /// Unix time (seconds) of the next whole-second tick; 0 before the first pass (due at once).
    public private(set) var tickDue: TimeInterval = 0
    /// When the ticks the hub holds are written if no broadcast carried them first (seconds since 1970);
    /// nil: none held.
    public private(set) var ticksReleaseDue: TimeInterval?
    /// When events were last broadcast (seconds since 1970): ticks wait for the next event only while events flow.
    public private(set) var lastEventBroadcast: TimeInterval = 0
    /// Unix time (seconds) of the next heartbeat; nil until the first whole-second pass (the server's start),
    /// from which the interval is counted.
    public private(set) var heartbeatDue: TimeInterval?

    /// Timing that has not run yet: the first ``timerFired(at:nextDeadline:)`` ticks and starts the heartbeat count.
    /// - Parameter heartbeatInterval: seconds between heartbeats (`--heartbeat-seconds`); 0 or less: none.
    public init(heartbeatInterval: TimeInterval) {
        self.heartbeatInterval = max(0, heartbeatInterval)
    }

    /// One pass of the timer at `now`: what is due, in the order to do it. Deadlines first (their events may
    /// go out before the tick, which then shows them), then held ticks whose hold is over, then, on a
    /// whole-second pass, the heartbeat if due, share expiry and the tick. Ask ``nextTimer(at:nextDeadline:)``
    /// once they are done.
    /// - Parameters:
    ///   - now: the server's time.
    ///   - nextDeadline: the activities' next deadline (of the speculative state: one a change waiting for the
    ///     store applied already is not due again); nil: none.
    /// - Returns: some of ``Action/applyDeadlines``, ``Action/releaseTicks``, ``Action/sendHeartbeat``,
    ///   ``Action/expireShares``, ``Action/sendTick``, in that order.
    public mutating func timerFired(at now: Date, nextDeadline: Date?) -> [Action] {
        var actions: [Action] = []
        if let nextDeadline, nextDeadline <= now { actions.append(.applyDeadlines) }
        let seconds = now.timeIntervalSince1970
        if let release = ticksReleaseDue, seconds + Self.slack >= release {
            ticksReleaseDue = nil
            actions.append(.releaseTicks)
        }
        if seconds + Self.slack >= tickDue {
            if heartbeatIsDue(at: seconds) { actions.append(.sendHeartbeat) }
            actions.append(.expireShares)
            actions.append(.sendTick)
            tickDue = (seconds + Self.slack).rounded(.down) + 1
        }
        return actions
    }

    /// The heartbeat rule: every interval counted from the first whole-second pass; a pass that comes late
    /// sends the one it covers, and the next is due one interval after the one it covered (or on the next
    /// whole second, if that is already past). Updates ``heartbeatDue``.
    private mutating func heartbeatIsDue(at seconds: TimeInterval) -> Bool {
        guard heartbeatInterval > 0 else { return false }
        guard let due = heartbeatDue else {
            heartbeatDue = seconds.rounded(.down) + heartbeatInterval
            return false
        }
        guard seconds + Self.slack >= due else { return false }
        heartbeatDue = max(due + heartbeatInterval, (seconds + Self.slack).rounded(.down) + 1)
        return true
    }

    /// Notes that events were broadcast at `now`: ticks made within the next second are held for the next event.
    public mutating func eventsBroadcast(at now: Date) {
        lastEventBroadcast = now.timeIntervalSince1970
    }

    /// The hub holds ticks made at `now` (a tick pass gave sessions a tick): while events flow (one went out
    /// in the last second) they wait up to ``tickHold`` for a broadcast to carry them; otherwise they go out at once.
    /// - Returns: ``Action/releaseTicks`` to write them now; nil: held (the release is due ``tickHold`` after
    ///   `now`, and ``nextTimer(at:nextDeadline:)`` counts it).
    public mutating func ticksHeld(at now: Date) -> Action? {
        let seconds = now.timeIntervalSince1970
        guard seconds - lastEventBroadcast < 1 else { return .releaseTicks }
        ticksReleaseDue = seconds + Self.tickHold
        return nil
    }

    /// When the timer fires next: the next whole-second tick, the release of held ticks or the next deadline,
    /// whichever comes first.
    /// - Parameters:
    ///   - now: the server's time.
    ///   - nextDeadline: the activities' next deadline (of the speculative state); nil: none.
    /// - Returns: ``Action/schedule(after:)`` with seconds from `now` (negative or zero: as soon as possible).
    public func nextTimer(at now: Date, nextDeadline: Date?) -> Action {
        var due = tickDue
        if let release = ticksReleaseDue { due = min(due, release) }
        if let deadline = nextDeadline?.timeIntervalSince1970 { due = min(due, deadline) }
        return .schedule(after: due - now.timeIntervalSince1970)
    }
}

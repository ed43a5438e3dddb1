import Foundation

/// The sessions, the broadcast and the slow-client policy, as a state machine with no I/O: each call
/// changes the state and returns the ``HubAction``s the transport must perform; ``nextWrite(for:)`` says what
/// to write when a client's socket is writable. Service thread only.
///
/// - Broadcast events are encoded once into a ``BroadcastRing``; every watching session reads it at its own
///   ``Session/cursor`` (no per-session work per event).
/// - A session's own replies (acks, errors, snapshots, catch-up) are written in order with the broadcast: a
///   reply queued when the ring's head was at `p` is written after the frames before `p` and before the
///   ones from `p` on.
/// - Ticks are replaced, never queued: a slow client gets only the newest, in its place among the
///   broadcast frames (after those made before it). They are held for the next broadcast to carry (one
///   write per client for both, see ``tick(_:scoped:)``) until ``releaseTicks()``.
/// - A session whose unwritten bytes (broadcast lag plus replies) pass ``maximumQueuedBytes`` is closed with
///   1013 (``CloseCode/tryAgainLater``); it may reconnect and resume with `since`.
package final class Hub {
    /// What the transport must do after a hub call.
    package enum Action: Equatable {
        /// Ask for a WRITEABLE callback on this session's connection.
        case requestWritable(Session)
        /// Every session may have something new to write (after a broadcast, or held ticks released): the lws
        /// adapter writes it to each one once the service loop's round is done (`writeBroadcast`), and leaves
        /// to WRITEABLE those it cannot write to now.
        case requestWritableForAll
        /// The session is closing: ask for WRITEABLE and kill the connection if it never becomes writable
        /// (5 s), so a client that reads nothing cannot hold it open.
        case closeSoon(Session)

        package static func == (a: Action, b: Action) -> Bool {
            switch (a, b) {
            case (.requestWritable(let x), .requestWritable(let y)), (.closeSoon(let x), .closeSoon(let y)): return x === y
            case (.requestWritableForAll, .requestWritableForAll): return true
            default: return false
            }
        }
    }

    /// What to do on a WRITEABLE callback.
    package enum Write {
        /// Write this frame (one `lws_write`); ask for WRITEABLE again if `more`.
        case frame(Frame, more: Bool)
        /// Everything is written: send a close frame with this code and reason, then close.
        case close(CloseCode, String)
        /// Nothing to write (a spurious callback).
        case idle
    }

    /// Most unwritten bytes a session may have before it is closed with 1013.
    package let maximumQueuedBytes: Int
    /// Frames appended between two full passes over the sessions (to drop frames every session has read).
    package let scanInterval: Int

    /// Every open session, by id.
    package private(set) var sessions: [UInt64: Session] = [:]
    /// The same sessions in the order they connected (a removed one's place is taken by the last): passes
    /// over every session (the broadcast's writes, ticks, scans) walk them in this order, which is the order
    /// their objects and sockets were made in, rather than in the dictionary's hash order. At 10,000 clients
    /// the hash order cost the kernel about a third more time per `send` (its socket structures, and ours,
    /// met in random order: cache and TLB misses).
    package private(set) var sessionsInOrder: [Session] = []
    /// The broadcast frames not yet read by every watching session.
    package private(set) var ring = BroadcastRing()
    /// Sessions that read the broadcast (with a cursor and not closing), for sizing and logs.
    package private(set) var watching = 0
    /// Of those, share viewers, by the one activity each sees.
    private var scopedWatching: [String: Int] = [:]
    /// A position no watching cursor is below (exact after each pass, possibly low in between).
    private var oldestCursor: UInt64 = 0
    private var appendedSinceScan = 0
    /// Sessions closed as too slow, since start.
    package private(set) var culled = 0
    /// Whether sessions have a tick for which no WRITEABLE was asked yet: the next ``broadcast(_:activityId:)``
    /// carries it, else ``releaseTicks()`` asks.
    package private(set) var ticksHeld = false
    /// The last reservation handed out (``reserve(for:)``).
    private var nextReservation: UInt64 = 0

    /// - Parameters:
    ///   - maximumQueuedBytes: most unwritten payload bytes per session, broadcast lag included.
    ///   - scanInterval: frames between full passes that drop read frames (bounded memory, amortised cost).
    package init(maximumQueuedBytes: Int, scanInterval: Int = 256) {
        self.maximumQueuedBytes = maximumQueuedBytes
        self.scanInterval = scanInterval
    }

    // MARK: Sessions

    /// Registers a new session (not watching yet).
    package func add(_ session: Session) {
        guard sessions.updateValue(session, forKey: session.id) == nil else { return }
        session.placeInOrder = sessionsInOrder.count
        sessionsInOrder.append(session)
    }

    /// Forgets a session whose connection has closed.
    package func remove(_ session: Session) {
        if sessions.removeValue(forKey: session.id) != nil {
            stopWatching(session)
            let place = session.placeInOrder
            let last = sessionsInOrder.removeLast()
            if last !== session {
                sessionsInOrder[place] = last
                last.placeInOrder = place
            }
        }
        session.cursor = nil
        session.replies = []
        session.replyHead = 0
        session.replyBytes = 0
        session.pendingReplies = 0
        session.pendingTick = nil
    }

    /// Starts sending `session` every broadcast from now on (after its snapshot, queued next).
    package func watch(_ session: Session) {
        guard session.cursor == nil, session.closing == nil else { return }
        session.cursor = ring.head
        watching += 1
        if let scope = session.scope { scopedWatching[scope, default: 0] += 1 }
    }

    /// Stops counting `session` among the watchers (it closes, or it is gone); its cursor stays as it is.
    private func stopWatching(_ session: Session) {
        guard session.cursor != nil, !session.uncounted else { return }
        session.uncounted = true
        watching -= 1
        if let scope = session.scope {
            scopedWatching[scope, default: 1] -= 1
            if scopedWatching[scope] == 0 { scopedWatching[scope] = nil }
        }
    }

    // MARK: Sending

    /// Queues a reply to one session, in order with the broadcast.
    /// - Returns: ask for WRITEABLE; or, when the session would lag by more than ``maximumQueuedBytes``,
    ///   close it with 1013; nothing when it is already closing.
    package func send(_ frame: Frame, to session: Session) -> [Action] {
        guard session.closing == nil, sessions[session.id] === session else { return [] }
        if lag(of: session) + frame.count > maximumQueuedBytes {
            return close(session, .tryAgainLater, Self.tooSlowReason)
        }
        session.replies.append(Session.Reply(position: ring.head, frame: frame))
        session.replyBytes += frame.count
        session.pendingReplies += 1
        return [.requestWritable(session)]
    }

    /// A place kept in one session's replies for an answer read off the service thread (resume, history):
    /// what the session would have got had the answer been made at once, it gets in the same order.
    package struct Reservation {
        package let session: Session
        package let id: UInt64
    }

    /// Keeps the place of `session`'s next reply for an answer that is still being read: nothing queued
    /// after it (broadcast frames from now on, later replies, ticks) is written until ``fill(_:with:)``.
    /// - Returns: the reservation; nil when the session is closing or gone (the answer is then not needed).
    package func reserve(for session: Session) -> Reservation? {
        guard session.closing == nil, sessions[session.id] === session else { return nil }
        nextReservation += 1
        session.replies.append(Session.Reply(position: ring.head, frame: nil, reservation: nextReservation))
        session.pendingReplies += 1
        return Reservation(session: session, id: nextReservation)
    }

    /// Puts the answer in its reserved place: `frames`, in order, where the reservation was made.
    /// - Returns: ask for WRITEABLE; or close the session with 1013 when it would then lag by more than
    ///   ``maximumQueuedBytes``; nothing when the session closed meanwhile (the answer is dropped).
    package func fill(_ reservation: Reservation, with frames: [Frame]) -> [Action] {
        let session = reservation.session
        guard sessions[session.id] === session,
              let index = session.replies[session.replyHead...].firstIndex(where: { $0.reservation == reservation.id }) else { return [] }
        let position = session.replies[index].position
        let bytes = frames.reduce(0) { $0 + $1.count }
        if session.closing == nil, lag(of: session) + bytes > maximumQueuedBytes {
            session.replies.remove(at: index)
            session.pendingReplies -= 1
            return close(session, .tryAgainLater, Self.tooSlowReason)
        }
        session.replies.replaceSubrange(index...index, with: frames.map { Session.Reply(position: position, frame: $0) })
        session.pendingReplies += frames.count - 1
        session.replyBytes += bytes
        return [.requestWritable(session)]
    }

    /// Appends one broadcast frame for every watching session (share viewers: only when `activityId` is theirs).
    /// - Returns: ``Action/requestWritableForAll``, plus the closes of sessions that fell too far behind.
    package func broadcast(_ frame: Frame, activityId: String?) -> [Action] {
        frame.isBroadcast = true
        ring.append(frame, activityId: activityId)
        appendedSinceScan += 1
        // Every session is written to now: held ticks go out with this frame.
        ticksHeld = false
        var actions: [Action] = [.requestWritableForAll]
        if appendedSinceScan >= scanInterval || ring.bytes(from: oldestCursor) > maximumQueuedBytes {
            actions += scan()
        }
        return actions
    }

    /// How many watching sessions a frame about `activityId` reaches (share viewers of other activities excluded).
    package func audience(activityId: String?) -> Int {
        guard let activityId else { return watching }
        return watching - scopedWatching.values.reduce(0, +) + (scopedWatching[activityId] ?? 0)
    }

    /// Replaces every watching session's pending tick: `frame` for those that see every activity, and
    /// `scoped(activityId)` (nil: no tick) for share viewers. Asks for no WRITEABLE: the ticks are held
    /// (``ticksHeld``) so that the next broadcast, usually due soon while countdowns run, writes each
    /// client's tick with its event in one write rather than one write each; ``releaseTicks()`` sends them
    /// when none comes.
    /// - Returns: the count of sessions given a tick.
    package func tick(_ frame: Frame, scoped: (String) -> Frame?) -> Int {
        frame.isBroadcast = true
        var delivered = 0
        var perScope: [String: Frame?] = [:]
        for session in sessionsInOrder where session.closing == nil && session.cursor != nil {
            if let scope = session.scope {
                if perScope[scope] == nil {
                    let own = scoped(scope)
                    own?.isBroadcast = true
                    perScope[scope] = .some(own)
                }
                guard let own = perScope[scope] ?? nil else { continue }
                session.pendingTick = own
            } else {
                session.pendingTick = frame
            }
            session.pendingTickPosition = ring.head
            delivered += 1
        }
        if delivered > 0 { ticksHeld = true }
        return delivered
    }

    /// Sends the held ticks that no broadcast carried (see ``tick(_:scoped:)``).
    /// - Returns: ``Action/requestWritableForAll``, or nothing when no tick is held.
    package func releaseTicks() -> [Action] {
        guard ticksHeld else { return [] }
        ticksHeld = false
        return [.requestWritableForAll]
    }

    // MARK: Closing

    /// Closes `session` with `code` once what it must still get is written.
    /// - Parameter keepingQueued: write what is already queued first (replies to requests it made, broadcast
    ///   frames up to now); otherwise drop it (a client too slow to take it, a protocol error).
    package func close(_ session: Session, _ code: CloseCode, _ reason: String, keepingQueued: Bool = false) -> [Action] {
        guard session.closing == nil else { return [] }
        session.lagAtClose = lag(of: session)
        session.closing = Session.Closing(code: code, reason: reason)
        session.pendingTick = nil
        stopWatching(session)
        if keepingQueued {
            session.cursorLimit = ring.head
        } else {
            session.replies = []
            session.replyHead = 0
            session.replyBytes = 0
            session.pendingReplies = 0
            session.cursor = nil
        }
        if code == .tryAgainLater { culled += 1 }
        return [.closeSoon(session)]
    }

    /// Closes every session with 1001 (server shutting down) after what is queued for it: its replies (the
    /// acks of the changes the store finished as the server stopped) and the broadcast up to now, so that a
    /// client learns of every change that was applied; nothing queued after this goes out. The service loop
    /// gives them its grace period (`ServerConfiguration.shutdownGracePeriod`) to be written.
    package func closeAll(reason: String) -> [Action] {
        sessionsInOrder.flatMap { close($0, .goingAway, reason, keepingQueued: true) }
    }

    // MARK: Writing

    /// What to write to `session` now: its next reply, tick or broadcast frame in order, else its pending
    /// tick, else its close frame once it is closing. Advances the session past what it returns.
    @inlinable
    package func nextWrite(for session: Session) -> Write {
        while true {
            if session.pendingReplies > 0 {
                let reply = session.replies[session.replyHead]
                if session.cursor.map({ reply.position <= $0 || $0 >= session.cursorLimit }) ?? true {
                    // A place kept for an answer still being read: nothing after it goes out before it.
                    guard let frame = reply.frame else { return .idle }
                    session.replyHead += 1
                    session.pendingReplies -= 1
                    session.replyBytes -= frame.count
                    if session.replyHead == session.replies.count {
                        session.replies.removeAll(keepingCapacity: true)
                        session.replyHead = 0
                    } else if session.replyHead >= 1024 {
                        session.replies.removeFirst(session.replyHead)
                        session.replyHead = 0
                    }
                    return .frame(frame, more: hasPending(session))
                }
            }
            if let cursor = session.cursor, cursor < min(ring.head, session.cursorLimit) {
                // A tick comes before the broadcast frames made after it (an event that follows within the
                // hold, say the activity's end, must not be followed by a tick that still lists it).
                if let tick = session.pendingTick, cursor >= session.pendingTickPosition {
                    session.pendingTick = nil
                    return .frame(tick, more: hasPending(session))
                }
                session.cursor = cursor + 1
                if let scope = session.scope, ring.isAbout(anotherActivityThan: scope, at: cursor) { continue }
                return .frame(ring.frame(at: cursor), more: hasPending(session))
            }
            break
        }
        if let tick = session.pendingTick {
            session.pendingTick = nil
            return .frame(tick, more: session.closing != nil)
        }
        if let closing = session.closing { return .close(closing.code, closing.reason) }
        return .idle
    }

    /// The broadcast positions `session` gets next with nothing of its own among them: no reply and no tick
    /// pending, no scope to filter by. ``nextWrite(for:)`` would return exactly these frames, in this order, so
    /// a writer may take them from ``ring`` directly and then set ``Session/cursor`` past the last it took
    /// (no per-frame call, no frame retained). Empty when anything else is pending.
    @inlinable @inline(__always)
    package func plainBroadcastRun(for session: Session) -> Range<UInt64> {
        guard session.pendingReplies == 0, session.pendingTick == nil, session.scope == nil,
              let cursor = session.cursor else { return 0..<0 }
        let end = min(ring.head, session.cursorLimit)
        return cursor < end ? cursor..<end : 0..<0
    }

    /// Calls `body` with the broadcast frame at `position`, borrowed from the ring (``BroadcastRing/unmanagedFrame(at:)``:
    /// no retain and release per client). `body` must not broadcast. - Precondition: `position` is in a
    /// session's ``plainBroadcastRun(for:)``.
    @inlinable @inline(__always)
    package func withBroadcastFrame<R>(at position: UInt64, _ body: (Frame) -> R) -> R {
        // The frame's reference is read before `body` runs: a call on `ring` around `body` kept a copy of the
        // ring (a retain and release of its storage, since `body` might change this class's `ring`) per frame
        // and client, 0.7 % of the fixed load's samples.
        ring.unmanagedFrame(at: position)._withUnsafeGuaranteedRef(body)
    }

    /// Whether anything is left to write to `session` (a close frame counts).
    @inlinable @inline(__always)
    package func hasPending(_ session: Session) -> Bool {
        session.pendingReplies > 0
            || session.cursor.map { $0 < min(ring.head, session.cursorLimit) } == true
            || session.pendingTick != nil || session.isClosing
    }

    /// Unwritten payload bytes of `session`: its replies and the broadcast frames it has not read.
    package func lag(of session: Session) -> Int {
        session.replyBytes + (session.cursor.map { ring.bytes(from: $0) } ?? 0)
    }

    // MARK: Policy

    package static let tooSlowReason = "client too slow; reconnect with ?since= to resume"

    /// One pass over the watching sessions: closes those lagging by more than ``maximumQueuedBytes`` (1013)
    /// and drops the frames every remaining one has read.
    private func scan() -> [Action] {
        appendedSinceScan = 0
        var actions: [Action] = []
        var oldest = ring.head
        for session in sessionsInOrder {
            guard let cursor = session.cursor else { continue }
            if session.closing == nil, lag(of: session) > maximumQueuedBytes {
                actions += close(session, .tryAgainLater, Self.tooSlowReason)
                continue
            }
            oldest = min(oldest, cursor)
        }
        oldestCursor = oldest
        ring.discard(before: oldest)
        return actions
    }
}

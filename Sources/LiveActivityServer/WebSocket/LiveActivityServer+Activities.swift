import Foundation
import LiveActivityCore

/// Requests, events, broadcasts and the clock. Service thread only.
extension LiveActivityServer {
    /// Answers one parsed client message: `ack` / `error` to the sender, events to everyone. A change is
    /// acknowledged (and broadcast) once it is durable; other replies wait for the changes before them
    /// (``waitsForTurn(_:from:)``), so each client gets its replies in the order of its requests.
    /// - Parameter inTurn: the message waited for its turn already.
    func handle(_ message: ClientMessage, from session: Session, inTurn: Bool = false) {
        if !inTurn, waitsForTurn(message, from: session) { return }
        var answeredLater = false
        defer { if !answeredLater { tellAnswered(message, answer: nil, from: session) } }
        let command: ClientMessage.Command
        switch message.command {
        case _ where session.scope != nil:
            send(.error(requestId: message.requestId, ProtocolError(.forbidden, field: nil, message: "a share link is read-only: it can only watch")), to: session)
            return
        case .failure(let error):
            send(.error(requestId: message.requestId, error), to: session)
            return
        case .success(.hello(let token)):
            hello(session, token: token, requestId: message.requestId)
            return
        case .success(let command) where session.role == .unauthenticated:
            send(.error(requestId: message.requestId, ProtocolError(.unauthorized, field: "token",
                 message: "token: present a token first with {\"type\":\"hello\",\"token\":…} (got \(command.name))")), to: session)
            return
        case .success(let command) where command.isControl && session.role < .controller:
            send(.error(requestId: message.requestId, ProtocolError(.forbidden, field: "type",
                 message: "type: \(command.name) needs the controller role; this connection is a \(session.role.rawValue) (present the controller token)")), to: session)
            return
        case .success(let command) where tables.commands.entry(for: command) != nil:
            // A command a feature registered (Features/CommandTable.swift).
            tables.commands.entry(for: command)!.handler(CommandCall(message: message, command: command, session: session))
            return
        case .success(.list):
            send(.snapshot(requestId: message.requestId, serverTime: clock(), sequence: center.sequence,
                           activities: center.ordered), to: session)
            return
        case .success(.catchUp(let since, let log)):
            resume(session, since: since, log: log, requestId: message.requestId)
            return
        case .success(.history(let query)):
            answerHistory(query, requestId: message.requestId, to: session)
            return
        case .success(let accepted):
            command = accepted
        }
        let now = clock()
        answeredLater = true
        let registry = push.channels
        change(at: now, { center in
            if case .start(let start) = command, let channel = start.channelId, registry.channels[channel] == nil {
                throw ProtocolError(.invalidField, field: "channelId",
                                    message: "channelId: \(channel) is not a registered channel (create one with POST /1/apps/{bundleId}/channels)")
            }
            let outcome = try center.apply(command, now: now, newID: { UUID().uuidString })
            return (outcome, outcome.events)
        }) { [self] result in
            let answer: Result<ActivityCenter.Outcome, ProtocolError>
            switch result {
            case .success(let outcome):
                answer = .success(outcome)
                sendIfOpen(.ack(requestId: message.requestId, activityId: outcome.activityId, activityIds: outcome.activityIds), to: session)
            case .failure(let error as ProtocolError):
                answer = .failure(error)
                sendIfOpen(.error(requestId: message.requestId, error), to: session)
            case .failure(let error):
                let refusal = storageUnavailable(error)
                answer = .failure(refusal)
                sendIfOpen(.error(requestId: message.requestId, refusal), to: session)
            }
            tellAnswered(message, answer: answer, from: session)
        }
    }

    /// Tells the request observers (the inspector) that a client message was answered.
    func tellAnswered(_ message: ClientMessage, answer: Result<ActivityCenter.Outcome, ProtocolError>?, from session: Session) {
        for observer in requestObservers { observer.messageAnswered(message, answer: answer, from: session) }
    }

    /// Answers `hello`: takes the role the token grants; a client that could not watch before now gets its
    /// snapshot.
    private func hello(_ session: Session, token: String, requestId: JSONValue?) {
        guard let role = configuration.access.role(presenting: token) else {
            send(.error(requestId: requestId, ProtocolError(.unauthorized, field: "token", message: "token: matches no role")), to: session)
            return
        }
        let before = session.role
        session.role = role
        send(.hello(requestId: requestId, role: role), to: session)
        if before == .unauthenticated, role != .unauthenticated {
            hub.watch(session)
            greet(session, since: session.resumeFrom)
        }
    }

    /// Proposes a change computed by `body` from the speculative state (the committed state plus the changes
    /// still waiting for the store), through ``ChangePipeline``; its events are recorded by the store thread,
    /// grouped with others. `body` may run again: when another instance recorded events first
    /// (``StoreConflict``), the change is judged again on top of them, for up to 2 seconds; in a cluster, a
    /// change `body` refuses with a ``ProtocolError`` is judged once more after reading the shared log, if it
    /// held events this instance had not applied yet (the reads happen on the store thread).
    /// - Parameter completion: called once, on the service thread, in the order changes were proposed:
    ///   `.success` with what `body` returned once its events are durable (the committed state then holds
    ///   them; at once for a store in memory); `.failure` with what `body` threw (nothing recorded), or with
    ///   the store's error (nothing changed; every change judged on top of this one fails too).
    /// - Parameter now: the server time the change is judged at, which its broadcast carries (default: now).
    ///   Once `completion` has run, the committed events are published (``publishCommitted(_:at:)``).
    func change<Value>(at now: Date? = nil, _ body: @escaping (inout ActivityCenter) throws -> (Value, [ActivityEvent]),
                       completion: @escaping (Result<Value, any Error>) -> Void) {
        let now = now ?? clock()
        carryOut(pipeline.propose({ [unowned self] center in
            let (value, events) = try body(&center)
            return ChangePipeline.Verdict(events: events, onCommit: { [unowned self] in
                completion(.success(value))
                publishCommitted(events, at: now)
            })
        }, catchUpOnRefusal: store is any ReplicatedStore, now: Date(), onFailure: { completion(.failure($0)) }))
    }

    /// The `storage_unavailable` error for a store failure. The store's own error text (file paths, SQLite
    /// or Redis messages) stays in the server's log, written here; the client learns only that nothing
    /// changed and that it may try again.
    func storageUnavailable(_ error: any Error) -> ProtocolError {
        logger.warning("storage unavailable; request refused", ["error": "\(error)"])
        return ProtocolError(.storageUnavailable, field: nil,
                             message: "the store is unavailable right now (the server's log has the cause); nothing was changed, try again")
    }

    /// Most events a resume (`since`, `catchUp`) replays; a client further behind gets a fresh snapshot
    /// (`reset: true`) instead, as when the log no longer reaches back that far. 10,000 events (about 6 MB of
    /// workout events) are read in well under a second, off the service thread.
    static let maximumResumeEvents = 10_000

    /// What the reader thread found for a resume.
    enum ResumeRead: Sendable {
        /// The events after `since`, encoded: replay them, then `caughtUp`.
        case replay([Frame])
        /// The log does not reach back that far, or the gap is too long to replay: a reset snapshot.
        case reset
        /// The store failed.
        case failed(StoreReadError)
    }

    /// Sends a client every event after `since`, then `caughtUp`; or, when the log no longer reaches back
    /// that far, the gap is longer than ``maximumResumeEvents`` or than half of `--max-queued-bytes`, `since`
    /// is ahead of the server, or `log` names another log, a snapshot with `reset: true`. The log is read on
    /// the reader thread (``StoreReader``); the answer takes the place it would have had if read at once
    /// (``Hub/reserve(for:)``): after the broadcast frames sent before the request, before those after it.
    func resume(_ session: Session, since: UInt64, log: String? = nil, requestId: JSONValue?) {
        let now = clock()
        let told = center
        let upTo = told.sequence
        let logID = self.logID
        let role = session.role
        func resetSnapshot() -> ServerMessage {
            .snapshot(requestId: requestId, serverTime: now, sequence: told.sequence, activities: told.ordered,
                      reset: true, role: role, logId: logID)
        }
        if since > upTo || (log != nil && log != logID) {
            send(resetSnapshot(), to: session)
            return
        }
        let caughtUp = ServerMessage.caughtUp(requestId: requestId, serverTime: now, sequence: upTo, role: role, logId: logID)
        if since == upTo {
            send(caughtUp, to: session)
            return
        }
        guard let reservation = hub.reserve(for: session) else { return }
        let allowance = configuration.maximumQueuedBytes / 2
        storeReader.read({ store -> ResumeRead in
            do {
                guard let events = try store.events(after: since, limit: Self.maximumResumeEvents) else { return .reset }
                var frames: [Frame] = []
                var bytes = 0
                for event in events where event.sequence <= upTo {
                    let frame = Frame(ServerMessage.activity(event, serverTime: now).encoded())
                    bytes += frame.count
                    if bytes > allowance { return .reset }
                    frames.append(frame)
                }
                return .replay(frames)
            } catch {
                return .failed(StoreReadError(error))
            }
        }) { [self] read in
            let frames: [Frame]
            switch read {
            case .replay(let events):
                frames = events + [frame(for: caughtUp)]
            case .reset:
                frames = [frame(for: resetSnapshot())]
            case .failed(let error):
                frames = [frame(for: .error(requestId: requestId, storageUnavailable(error)))]
            }
            perform(hub.fill(reservation, with: frames))
        }
    }

    /// Answers `history` from the reader thread (read and encoded there), in its place among the session's
    /// replies.
    func answerHistory(_ query: HistoryQuery, requestId: JSONValue?, to session: Session) {
        guard let reservation = hub.reserve(for: session) else { return }
        storeReader.read({ store -> Result<Frame, StoreReadError> in
            Result { try store.history(limit: query.limit, before: query.before, beforeId: query.beforeId) }
                .map { Frame(ServerMessage.history(requestId: requestId, entries: $0).encoded()) }
                .mapError { StoreReadError($0) }
        }) { [self] result in
            let answer: Frame
            switch result {
            case .success(let history): answer = history
            case .failure(let error): answer = frame(for: .error(requestId: requestId, storageUnavailable(error)))
            }
            perform(hub.fill(reservation, with: [answer]))
        }
    }

    /// Sends each event to every watching client: encoded once into the hub's ring, which every session reads.
    func broadcast(_ events: [ActivityEvent], at now: Date) {
        guard !events.isEmpty else { return }
        timing.eventsBroadcast(at: now)
        for event in events {
            let frame = Frame(ServerMessage.activity(event, serverTime: now).encoded())
            frame.acceptedAt = DispatchTime.now().uptimeNanoseconds
            let audience = hub.audience(activityId: event.activity.id)
            frame.writesLeft = audience
            metrics.broadcastEncodes += 1
            metrics.broadcastDeliveries += audience
            perform(hub.broadcast(frame, activityId: event.activity.id))
            logger.info("event", ["event.kind": event.kind.rawValue, "event.sequence": "\(event.sequence)",
                                  "activity.id": event.activity.id, "activity.state": event.activity.activityState.rawValue,
                                  "clients": "\(audience)"])
        }
    }

    /// Sends the tick to every client, replacing any tick a slow client has not taken yet. Share viewers get
    /// a tick of their own activity only, encoded once per shared activity. When no event was broadcast in
    /// the last second the ticks go out at once; otherwise with the next broadcast, or
    /// ``ServiceTiming/tickHold`` after `now` (``ServiceTiming/ticksHeld(at:)``).
    func broadcast(_ tick: Tick, at now: Date) {
        let frame = Frame(ServerMessage.tick(tick).encoded())
        metrics.broadcastEncodes += 1
        let delivered = hub.tick(frame) { scope in
            let timers = tick.timers.filter { $0.activityId == scope }
            return timers.isEmpty ? nil : Frame(ServerMessage.tick(Tick(serverTime: tick.serverTime, timers: timers)).encoded())
        }
        metrics.broadcastDeliveries += delivered
        guard hub.ticksHeld, let action = timing.ticksHeld(at: now) else { return }
        perform(action, at: now)
    }

    /// The timer: performs what ``ServiceTiming`` finds due (deadlines, held ticks, and on whole seconds the
    /// heartbeat, share expiry and the tick), then schedules itself again.
    func timerFired() {
        let now = clock()
        // Deadlines already applied by a change waiting for the store are not due again.
        for action in timing.timerFired(at: now, nextDeadline: pipeline.speculative.nextDeadline) {
            perform(action, at: now)
        }
        scheduleTimer(now: now)
        // lws runs timers before it polls: a change made here (a deadline) would otherwise wait for the poll
        // to end, up to the next timer, before going to the store.
        releaseHeldSubmissions()
    }

    /// Carries out one of the timing's actions at `now` (the server time of the timer pass).
    func perform(_ action: ServiceTiming.Action, at now: Date) {
        switch action {
        case .applyDeadlines:
            // Broadcast once committed, with the other observers (publishCommitted).
            change(at: now, { center in let events = center.advance(to: now); return (events, events) }) { _ in }
        case .releaseTicks:
            perform(hub.releaseTicks())
        case .sendHeartbeat:
            broadcastHeartbeat(at: now)
        case .expireShares:
            shares.expire(now: now)
        case .sendTick:
            if let tick = center.tick(at: now) { broadcast(tick, at: now) }
        case .schedule(let seconds):
            scheduleTimer(after: seconds)
        }
    }

    /// Schedules the timer for the next whole second, the next deadline (of the speculative state: a
    /// deadline a waiting change applied is not due again) or the release of held ticks, whichever comes
    /// first (``ServiceTiming/nextTimer(at:nextDeadline:)``).
    func scheduleTimer(now: Date) {
        perform(timing.nextTimer(at: now, nextDeadline: pipeline.speculative.nextDeadline), at: now)
    }
}

import Foundation
import LiveActivityCore

/// Requests, events, broadcasts and the clock. Service thread only.
extension LiveActivityServer {
    /// Answers one parsed client message: `ack` / `error` to the sender, events to everyone.
    func handle(_ message: ClientMessage, from session: Session) {
        var answer: MessageAnswer?
        defer { inspectMessage(message, answer: answer, from: session) }
        let command: ClientMessage.Command
        switch message.command {
        case _ where session.scope != nil:
            send(.error(requestId: nil, ProtocolError(.forbidden, field: nil, message: "a share link is read-only: it can only watch")), to: session)
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
        case .success(.push(let pushToken, let payload)):
            let result = applyPush(payload: payload, pushToken: pushToken, apnsId: UUID().uuidString, priority: message.pushPriority,
                                   transport: "websocket", requestId: message.requestId)
            send(.pushResult(requestId: message.requestId, result: result), to: session)
            return
        case .success(.share(let activityId, let expiresIn)):
            do {
                send(.shares(requestId: message.requestId, shares: [try createShare(activityId: activityId, expiresIn: expiresIn)]), to: session)
            } catch {
                send(.error(requestId: message.requestId, error), to: session)
            }
            return
        case .success(.unshare(let shareId)):
            do {
                let share = try revokeShare(id: shareId)
                send(.ack(requestId: message.requestId, activityId: share.activityId, activityIds: nil), to: session)
            } catch {
                send(.error(requestId: message.requestId, error), to: session)
            }
            return
        case .success(.shares(let activityId)):
            send(.shares(requestId: message.requestId, shares: shareSummaries(activityId: activityId)), to: session)
            return
        case .success(.list):
            send(.snapshot(requestId: message.requestId, serverTime: clock(), sequence: center.sequence,
                           activities: center.ordered), to: session)
            return
        case .success(.inspect(let since)):
            subscribeInspector(session, since: since, requestId: message.requestId)
            return
        case .success(.catchUp(let since, let log)):
            resume(session, since: since, log: log, requestId: message.requestId)
            return
        case .success(.history(let query)):
            do {
                send(.history(requestId: message.requestId, entries: try store.history(limit: query.limit, before: query.before, beforeId: query.beforeId)), to: session)
            } catch {
                send(.error(requestId: message.requestId, storageUnavailable(error)), to: session)
            }
            return
        case .success(let accepted):
            command = accepted
        }
        let now = clock()
        let outcome: ActivityCenter.Outcome
        do {
            outcome = try change { center in
                let outcome = try center.apply(command, now: now, newID: { UUID().uuidString })
                return (outcome, outcome.events)
            }
        } catch let error as ProtocolError {
            answer = .failure(error)
            send(.error(requestId: message.requestId, error), to: session)
            return
        } catch {
            answer = .failure(storageUnavailable(error))
            send(.error(requestId: message.requestId, storageUnavailable(error)), to: session)
            return
        }
        answer = .success(outcome)
        send(.ack(requestId: message.requestId, activityId: outcome.activityId, activityIds: outcome.activityIds), to: session)
        broadcast(outcome.events, at: now)
        requestThumbnails(for: outcome.events)
        scheduleTimer(now: now)
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

    /// Applies one APNs-shaped push: parsed, checked as APNs and iOS would, recorded, broadcast.
    /// - Parameters:
    ///   - payload: the JSON payload (`{"aps":{…}}`).
    ///   - pushToken: the token it is addressed to.
    ///   - apnsId: the `apns-id` to answer with.
    ///   - priority: the `apns-priority` (1, 5, 10; `nil` = 10), for the inspector's budget emulation.
    ///   - transport: `http` or `websocket`, and the WebSocket `requestId`, for the inspector.
    /// - Returns: what APNs would answer and what the device would do.
    func applyPush(payload: JSONValue, pushToken: String, apnsId: String, priority: Int? = nil,
                   transport: String = "http", requestId: JSONValue? = nil) -> PushResult {
        let now = clock()
        let result: PushResult
        var events: [ActivityEvent] = []
        do {
            let push = try APNsPush.parse(payload)
            let outcome = try change { center in
                let outcome = try center.applyPush(push, pushToken: pushToken, pushToStartToken: pushToStartToken, now: now,
                                                   newID: { UUID().uuidString })
                return (outcome, outcome.events)
            }
            broadcast(outcome.events, at: now)
            requestThumbnails(for: outcome.events)
            scheduleTimer(now: now)
            events = outcome.events
            result = PushResult(outcome, apnsId: apnsId)
        } catch let rejection as PushRejection {
            result = PushResult(rejection, apnsId: apnsId)
        } catch {
            result = PushResult(PushRejection(status: 503, reason: "ServiceUnavailable", detail: storageUnavailable(error).message), apnsId: apnsId)
        }
        inspectPush(payload, pushToken: pushToken, result: result, events: events, priority: priority, transport: transport,
                    requestId: requestId, at: now)
        return result
    }

    /// Computes a change from the current state with `body` and records its events; only then does the
    /// change become current. When another instance recorded events first (``StoreConflict``), catches up
    /// with them and computes the change again, for up to 2 seconds (with a short random pause between
    /// tries, so racing instances spread out). In a cluster, a change `body` refuses is judged once more
    /// after catching up, if the shared log held events this instance had not applied yet.
    /// - Returns: what `body` returned.
    /// - Throws: what `body` throws (nothing recorded), or the store's error (nothing changed).
    func change<Value>(_ body: (inout ActivityCenter) throws -> (Value, [ActivityEvent])) throws -> Value {
        let deadline = Date().addingTimeInterval(2)
        var caughtUpAfterRefusal = false
        while true {
            var next = center
            let value: Value
            let events: [ActivityEvent]
            do {
                (value, events) = try body(&next)
            } catch let refusal as ProtocolError where !caughtUpAfterRefusal && store is any ReplicatedStore {
                // In a cluster the refusal may come from not knowing yet what another instance just did (an
                // update for an activity started there a moment ago, before its event reached this one's
                // feed): read the shared log once, and judge again only if it held something new.
                caughtUpAfterRefusal = true
                let before = center.sequence
                catchUp()
                if center.sequence == before { throw refusal }
                continue
            }
            do {
                if !events.isEmpty { try store.record(events) }
                center = next
                return value
            } catch let conflict as StoreConflict {
                logger.debug("another instance changed first; catching up", ["store.sequence": "\(conflict.sequence)"])
                catchUp()
                if Date() >= deadline { throw conflict }
                usleep(useconds_t.random(in: 200...2000))
            } catch {
                logger.error("store failed; change refused", ["error": "\(error)"])
                throw error
            }
        }
    }

    /// Records events in the store, then makes `next` the current state; on a store failure nothing changes.
    /// - Returns: the store's error, or `nil` once the change is recorded and current.
    func commit(_ next: ActivityCenter, _ events: [ActivityEvent]) -> (any Error)? {
        if !events.isEmpty {
            do {
                try store.record(events)
            } catch {
                logger.error("store failed; change refused", ["error": "\(error)"])
                return error
            }
        }
        center = next
        return nil
    }

    /// The `storage_unavailable` error for a store failure. The store's own error text (file paths, SQLite
    /// or Redis messages) stays in the server's log, written here; the client learns only that nothing
    /// changed and that it may try again.
    func storageUnavailable(_ error: any Error) -> ProtocolError {
        logger.warning("storage unavailable; request refused", ["error": "\(error)"])
        return ProtocolError(.storageUnavailable, field: nil,
                             message: "the store is unavailable right now (the server's log has the cause); nothing was changed, try again")
    }

    /// Sends a client every event after `since`, then `caughtUp`; or, when the log no longer reaches back
    /// that far, `since` is ahead of the server, or `log` names another log, a snapshot with `reset: true`.
    func resume(_ session: Session, since: UInt64, log: String? = nil, requestId: JSONValue?) {
        let now = clock()
        let events: [ActivityEvent]?
        do {
            events = since > center.sequence || (log != nil && log != logID) ? nil : try store.events(after: since)
        } catch {
            send(.error(requestId: requestId, storageUnavailable(error)), to: session)
            return
        }
        guard let events else {
            send(.snapshot(requestId: requestId, serverTime: now, sequence: center.sequence, activities: center.ordered,
                           reset: true, role: session.role, logId: logID), to: session)
            return
        }
        for event in events where event.sequence <= center.sequence {
            enqueue(Frame(ServerMessage.activity(event, serverTime: now).encoded()), to: session)
        }
        send(.caughtUp(requestId: requestId, serverTime: now, sequence: center.sequence, role: session.role, logId: logID), to: session)
    }

    /// Sends each event to every watching client: encoded once into the hub's ring, which every session reads.
    func broadcast(_ events: [ActivityEvent], at now: Date) {
        guard !events.isEmpty else { return }
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
        expireShares(now: now, events: events)
    }

    /// Sends the tick to every client, replacing any tick a slow client has not taken yet. Share viewers get
    /// a tick of their own activity only, encoded once per shared activity.
    func broadcast(_ tick: Tick) {
        let frame = Frame(ServerMessage.tick(tick).encoded())
        metrics.broadcastEncodes += 1
        let (actions, delivered) = hub.tick(frame) { scope in
            let timers = tick.timers.filter { $0.activityId == scope }
            return timers.isEmpty ? nil : Frame(ServerMessage.tick(Tick(serverTime: tick.serverTime, timers: timers)).encoded())
        }
        metrics.broadcastDeliveries += delivered
        perform(actions)
    }

    /// The timer: applies due deadlines, sends the tick (and, every `--heartbeat-seconds`, the heartbeat) on
    /// whole seconds, and schedules itself again.
    func timerFired() {
        let now = clock()
        if let events = try? change({ center in let events = center.advance(to: now); return (events, events) }) {
            broadcast(events, at: now)
        }
        let seconds = now.timeIntervalSince1970
        if seconds + 0.005 >= tickDue {
            heartbeatIfDue(at: now)
            expireShares(now: now)
            if let tick = center.tick(at: now) { broadcast(tick) }
            tickDue = (seconds + 0.005).rounded(.down) + 1
        }
        scheduleTimer(now: now)
    }

    /// Schedules the timer for the next whole second or the next deadline, whichever comes first.
    func scheduleTimer(now: Date) {
        var due = tickDue
        if let deadline = center.nextDeadline?.timeIntervalSince1970 { due = min(due, deadline) }
        scheduleTimer(after: due - now.timeIntervalSince1970)
    }
}

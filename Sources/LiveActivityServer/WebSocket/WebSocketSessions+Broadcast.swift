import Foundation
import LiveActivityCore

/// The broadcast: committed events (the sessions are a ``ChangeObserver``), ticks and heartbeats, each
/// encoded once into the hub's ring, which every watching session reads. Service thread only.
extension WebSocketSessions {
    /// Sends each committed event to every watching client: encoded once into the hub's ring, which every
    /// session reads (``ChangeObserver``).
    /// - Parameter now: the server time the events carry as `serverTime`.
    func committed(_ events: [ActivityEvent], at now: Date) {
        for event in events {
            let frame = Frame(ServerMessage.activity(event, serverTime: now).encoded())
            frame.acceptedAt = DispatchTime.now().uptimeNanoseconds
            let audience = hub.audience(activityId: event.activity.id)
            frame.writesLeft = audience
            metrics.broadcastEncodes += 1
            metrics.broadcastDeliveries += audience
            performHubActions(hub.broadcast(frame, activityId: event.activity.id))
            logger.info("event", ["event.kind": event.kind.rawValue, "event.sequence": "\(event.sequence)",
                                  "activity.id": event.activity.id, "activity.state": event.activity.activityState.rawValue,
                                  "clients": "\(audience)"])
        }
    }

    /// Sends the tick to every client, replacing any tick a slow client has not taken yet. Share viewers get
    /// a tick of their own activity only, encoded once per shared activity. Whether it goes out at once or
    /// with the next broadcast is the timing's (``TimingDriver``).
    func broadcast(_ tick: Tick) {
        let frame = Frame(ServerMessage.tick(tick).encoded())
        metrics.broadcastEncodes += 1
        let delivered = hub.tick(frame) { scope in
            let timers = tick.timers.filter { $0.activityId == scope }
            return timers.isEmpty ? nil : Frame(ServerMessage.tick(Tick(serverTime: tick.serverTime, timers: timers)).encoded())
        }
        metrics.broadcastDeliveries += delivered
    }

    /// The heartbeat (docs/PROTOCOL.md, `heartbeat`): appends one to the broadcast ring, in order with the
    /// events, for every watching session (share viewers too), so that a page can tell a live connection
    /// from one that died without a close. Encoded once; not counted in the broadcast metrics, which measure
    /// changes. Nothing is sent while nobody watches.
    /// - Parameter now: the server time it carries as `serverTime`.
    func broadcastHeartbeat(at now: Date) {
        guard hub.watching > 0 else { return }
        let message = ServerMessage.heartbeat(serverTime: now, intervalSeconds: configuration.heartbeatSeconds)
        performHubActions(hub.broadcast(Frame(message.encoded()), activityId: nil))
    }
}

import Foundation
import LiveActivityCore

/// Several instances sharing one ``ReplicatedStore`` (Redis): each applies the others' events as they are
/// recorded, and catches up when its own change lost a race. Service thread only, except where noted.
extension LiveActivityServer {
    /// Starts receiving other instances' events, if the store is shared. Called once the server runs.
    func startReplication() {
        guard let shared = store as? any ReplicatedStore else { return }
        shared.follow(from: center.sequence) { [self] events in
            // The store's feed thread: hand the events to the service thread.
            perform { server in server.receiveReplicated(events) }
        }
    }

    /// Stops receiving other instances' events.
    func stopReplication() {
        (store as? any ReplicatedStore)?.stopFollowing()
    }

    /// Applies and broadcasts events recorded by any instance (our own are skipped: already applied).
    func receiveReplicated(_ events: [ActivityEvent]) {
        let (applied, gap) = center.applyReplicated(events)
        broadcast(applied, at: clock())
        if gap { catchUp() }
        scheduleTimer(now: clock())
    }

    /// Brings the state up to the store's: applies the events recorded since ours and broadcasts them;
    /// when the store's log no longer reaches back that far, reloads everything and sends every client a
    /// reset snapshot.
    func catchUp() {
        do {
            if let events = try store.events(after: center.sequence) {
                let (applied, _) = center.applyReplicated(events)
                broadcast(applied, at: clock())
                return
            }
            let (activities, sequence) = try store.load()
            center = ActivityCenter(activities: activities, sequence: sequence, maximumLive: configuration.maximumLiveActivities)
            for session in hub.sessions.values where session.cursor != nil { greet(session, since: nil) }
        } catch {
            logger.warning("could not catch up with the store", ["error": "\(error)"])
        }
    }
}

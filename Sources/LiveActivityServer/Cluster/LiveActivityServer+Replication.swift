import Foundation
import LiveActivityCore

/// Several instances sharing one ``ReplicatedStore`` (Redis): each applies the others' events as they are
/// recorded, and catches up when its own change lost a race (``ChangePipeline`` judges the changes waiting
/// for the store again on top of them). Service thread only, except where noted.
extension LiveActivityServer {
    /// Starts receiving other instances' events, if the store is shared. Called once the server runs.
    func startReplication() {
        guard let shared = store as? any ReplicatedStore else { return }
        shared.follow(from: center.sequence) { [self] events in
            // The store's feed thread: hand the events to the service thread, behind the results the store
            // thread has yet to report (this instance's own events, once recorded, arrive here too).
            storeWriter.relay { [self] in perform { server in server.receiveReplicated(events) } }
        }
    }

    /// Stops receiving other instances' events.
    func stopReplication() {
        (store as? any ReplicatedStore)?.stopFollowing()
    }

    /// Applies and broadcasts events recorded by any instance (our own are skipped: already committed);
    /// the changes waiting for the store are judged again on top of others' events. A gap catches up.
    func receiveReplicated(_ events: [ActivityEvent]) {
        carryOut(pipeline.receive(replicated: events, now: Date()))
    }

    /// Brings the state up to the store's: the store thread reads the events recorded since ours, which are
    /// then applied and broadcast; when the store's log no longer reaches back that far, everything is
    /// reloaded and every client gets a reset snapshot. Returns at once.
    func catchUp() {
        carryOut(pipeline.catchUp())
    }
}

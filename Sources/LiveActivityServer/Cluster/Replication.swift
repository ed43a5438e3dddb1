import Foundation
import LiveActivityCore

/// Several instances sharing one ``ReplicatedStore`` (Redis): each applies the others' events as they are
/// recorded, and catches up when its own change lost a race (``ChangePipeline`` judges the changes waiting
/// for the store again on top of them). Registers nothing; the composition root starts and stops it with
/// the service loop. Service thread only, except where noted.
final class Replication: ServerFeature {
    /// What replication sees of the server.
    struct Context {
        /// The shared store, or nil when the store is not shared (replication then does nothing).
        var store: (any ReplicatedStore)?
        /// The committed state's last sequence number (where following starts). Service thread.
        var sequence: () -> UInt64
        /// Hands a job to the service thread behind the results the store thread has yet to report
        /// (``StoreWriter/relay(_:)`` then the inbox); called on the store's feed thread.
        var relay: @Sendable (@escaping @Sendable () -> Void) -> Void
        /// Applies events recorded by any instance through the change pipeline (their observers are told).
        /// Service thread.
        var receive: ([ActivityEvent]) -> Void
        /// Brings the pipeline's state up to the store's (the store thread reads what was recorded since).
        /// Service thread.
        var catchUp: () -> Void
    }

    /// What it sees of the server.
    private let context: Context

    /// Replication through `context.store`.
    init(context: Context) {
        self.context = context
    }

    /// Nothing to register: replication has no routes and no commands.
    func register(in tables: inout FeatureTables) {}

    /// Starts receiving other instances' events, if the store is shared. Called once the server runs.
    func start() {
        guard let shared = context.store else { return }
        let relay = context.relay
        let me = ServiceThreadBox(value: self)
        shared.follow(from: context.sequence()) { events in
            // The store's feed thread: hand the events to the service thread, behind the results the store
            // thread has yet to report (this instance's own events, once recorded, arrive here too).
            relay { me.value.receive(events) }
        }
    }

    /// Stops receiving other instances' events.
    func stop() {
        context.store?.stopFollowing()
    }

    /// Applies and broadcasts events recorded by any instance (our own are skipped: already committed);
    /// the changes waiting for the store are judged again on top of others' events. A gap catches up.
    func receive(_ events: [ActivityEvent]) {
        context.receive(events)
    }

    /// Brings the state up to the store's: the store thread reads the events recorded since ours, which are
    /// then applied and broadcast; when the store's log no longer reaches back that far, everything is
    /// reloaded and every client gets a reset snapshot. Returns at once.
    func catchUp() {
        context.catchUp()
    }
}

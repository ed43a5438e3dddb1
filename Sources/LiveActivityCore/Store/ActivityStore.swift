import Foundation

/// Where activities and the event log are kept: the one interface between the engine and storage.
///
/// The server records every event before it acknowledges or broadcasts it, so a store that persists
/// (SQLite, Redis) makes every acknowledged change durable.
///
/// Threads: unless ``recordsInstantly``, the server records (``record(_:)``, ``save(_:)``, and the catch-up
/// reads of a cluster) on its own store thread, while its service thread reads (``events(after:)``,
/// ``history(limit:before:beforeId:)``) at the same time: such a store must allow one writer thread and one
/// reader thread at once (SQLite and Redis use a second connection for reads). A store that records
/// instantly is called from the service thread only.
public protocol ActivityStore: AnyObject {
    /// Whether recording costs nothing worth a thread hop (no disk, no network): the server then records
    /// on its service thread, at once. Default `false`.
    var recordsInstantly: Bool { get }

    /// Tells a store that reads stored activities back which kinds read their countdowns from their states
    /// (``StoredActivity/decode(_:kinds:)``). The server calls it before ``load()`` and after each reload of
    /// its kind folders. Thread-safe. Default: nothing (a store that keeps ``Activity`` values as they are).
    func useKinds(_ kinds: KindRegistry)

    /// The state to start from: every activity not dismissed, and the last sequence number handed out.
    /// - Throws: the store's own error when it cannot be read.
    func load() throws -> (activities: [Activity], sequence: UInt64)

    /// Records events, in order, with the activity state each leaves behind.
    /// - Throws: the store's own error; the server then refuses the request and changes nothing.
    func record(_ events: [ActivityEvent]) throws

    /// The events numbered after `sequence`, in order.
    /// - Returns: `nil` when the log no longer reaches back to `sequence` (the client needs a fresh snapshot).
    func events(after sequence: UInt64) throws -> [ActivityEvent]?

    /// At most `limit` events numbered after `sequence`, in order: a bounded ``events(after:)`` for readers
    /// that must not scan the whole log (a client resuming from far back gets a fresh snapshot instead).
    /// - Returns: `nil` when the log no longer reaches back to `sequence`, or when more than `limit` events
    ///   follow it.
    /// - Throws: the store's own error. Default: ``events(after:)``, then the count is checked.
    func events(after sequence: UInt64, limit: Int) throws -> [ActivityEvent]?

    /// The newest events of one activity, oldest first: at most `limit` of them, found among the `scanLimit`
    /// events of the log up to `newest` (a store with an index by activity may look further back). For the
    /// inspector's timeline and renderings of an instant (`at=`).
    /// - Parameter newest: the log's last sequence number as the caller knows it (the scan's upper end).
    /// - Throws: the store's own error. Default: the log's newest events, read in widening windows (2,000,
    ///   20,000, then `scanLimit`) until the activity's first event is among them.
    func events(ofActivity activityId: String, through newest: UInt64, limit: Int, scanLimit: Int) throws -> [ActivityEvent]

    /// The activities of the newest `limit` `dismissed` events the log still holds, oldest first: read once
    /// at start, so that their push tokens stay 410 `Unregistered` across a restart (``RetiredPushTokens``).
    /// - Throws: the store's own error. Default: none (a store that keeps no such record).
    func dismissedActivities(limit: Int) throws -> [Activity]

    /// Finished activities, newest end first (ties: greater id first).
    /// - Parameters:
    ///   - limit: most entries to return.
    ///   - before: only activities that ended before this instant (UTC), for paging; `nil` = no bound.
    ///   - beforeId: with `before`, the id of the last entry of the previous page: activities that ended at
    ///     exactly `before` with a smaller id are included too, so equal end dates never fall between pages.
    func history(limit: Int, before: Date?, beforeId: String?) throws -> [HistoryEntry]

    /// The server's push-to-start token (64 hex digits), made once and kept, so that a backend configured
    /// with it keeps working across restarts.
    /// - Throws: the store's own error.
    func pushToStartToken() throws -> String

    /// The event log's identity: made once per store and kept, so that a client resuming with `since` can
    /// tell whether its sequence numbers come from this log (or from one that was wiped or replaced).
    /// - Throws: the store's own error.
    func logID() throws -> String

    /// Every share link kept: live ones, and ended ones for ``Share/tombstoneLifetime``.
    /// - Throws: the store's own error.
    func shares() throws -> [Share]

    /// Keeps a share link, new or changed (ended).
    /// - Throws: the store's own error; a new link is then not handed out.
    func save(_ share: Share) throws

    /// Every broadcast channel kept (created and not deleted), so that channels survive a restart.
    /// - Throws: the store's own error.
    func channels() throws -> [BroadcastChannel]

    /// Keeps a new broadcast channel.
    /// - Throws: the store's own error; the channel is then not handed out.
    func save(_ channel: BroadcastChannel) throws

    /// Forgets a broadcast channel (deleted through the channel-management API). Forgetting one that is
    /// not kept does nothing.
    /// - Throws: the store's own error; the channel then stays.
    func deleteChannel(id: String) throws
}

extension ActivityStore {
    /// Stores do I/O unless they say otherwise (``ActivityStore/recordsInstantly``).
    public var recordsInstantly: Bool { false }

    /// Nothing: this store keeps ``Activity`` values, not their stored text (``ActivityStore/useKinds(_:)``).
    public func useKinds(_ kinds: KindRegistry) {}

    /// Finished activities, newest end first, ending before `before`.
    public func history(limit: Int, before: Date?) throws -> [HistoryEntry] {
        try history(limit: limit, before: before, beforeId: nil)
    }

    /// None: dismissed activities' tokens are not kept across restarts by this store.
    public func dismissedActivities(limit: Int) throws -> [Activity] { [] }

    /// ``ActivityStore/events(after:limit:)`` over ``ActivityStore/events(after:)``: the whole gap is read,
    /// then counted.
    public func events(after sequence: UInt64, limit: Int) throws -> [ActivityEvent]? {
        guard let events = try events(after: sequence), events.count <= limit else { return nil }
        return events
    }

    /// ``ActivityStore/events(ofActivity:limit:scanLimit:)`` over ``ActivityStore/events(after:)``: the log's
    /// newest 2,000 events, then 20,000, then `scanLimit`, until the activity's first event (`started` or
    /// `scheduled`) is among them or the log has no more.
    public func events(ofActivity activityId: String, through newest: UInt64, limit: Int, scanLimit: Int) throws -> [ActivityEvent] {
        let widest = UInt64(max(1, scanLimit))
        var best: [ActivityEvent] = []
        for back in [min(2_000, widest), min(20_000, widest), widest] {
            let from = newest > back ? newest - back : 0
            guard let events = try events(after: from, limit: Int(back) + 4_096) else { continue }
            let own = events.filter { $0.activity.id == activityId && $0.sequence <= newest }
            best = own
            if own.first.map({ $0.kind == .started || $0.kind == .scheduled }) == true || from == 0 || back == widest { break }
        }
        return Array(best.suffix(max(0, limit)))
    }
}

extension HistoryEntry {
    /// Whether this entry comes after the page cursor (`before`, `beforeId`) in newest-first order.
    public func isAfter(cursor before: Date?, id beforeId: String?) -> Bool {
        guard let before else { return true }
        if endDate < before { return true }
        if endDate == before, let beforeId { return id < beforeId }
        return false
    }
}

/// Thrown by ``ActivityStore/record(_:)`` when another server instance recorded events first: the
/// caller catches up with ``ActivityStore/events(after:)`` and tries again.
public struct StoreConflict: Error, Sendable, CustomStringConvertible {
    /// The last sequence number the store holds, ahead of the caller's.
    public let sequence: UInt64

    /// Creates a conflict at `sequence`.
    public init(sequence: UInt64) { self.sequence = sequence }

    /// A sentence naming the store's sequence.
    public var description: String { "another instance recorded events up to sequence \(sequence) first" }
}

/// A store shared by several server instances, which tells each of them of the others' events.
public protocol ReplicatedStore: ActivityStore {
    /// Starts delivering every event recorded after `sequence`, by any instance, in order, on a
    /// background thread; survives store outages (it reconnects and resumes where it stopped).
    /// - Parameter deliver: called with each batch, from the store's own thread.
    func follow(from sequence: UInt64, deliver: @escaping @Sendable ([ActivityEvent]) -> Void)

    /// Stops delivering.
    func stopFollowing()
}

/// An ``ActivityStore`` in memory: nothing survives a restart. Keeps the last `logCapacity` events.
public final class InMemoryActivityStore: ActivityStore {
    private var activities: [String: Activity] = [:]
    private var log: [ActivityEvent] = []
    private var sequence: UInt64 = 0
    private var finished: [HistoryEntry] = []
    private let startToken = PushToken.random()
    private let identity = UUID().uuidString.lowercased()
    private var links: [String: Share] = [:]
    private var broadcastChannels: [String: BroadcastChannel] = [:]
    /// How many events the log keeps.
    public let logCapacity: Int
    /// Memory only: recorded at once, on the service thread (``ActivityStore/recordsInstantly``).
    public var recordsInstantly: Bool { true }

    /// Creates an empty store keeping the last `logCapacity` events.
    public init(logCapacity: Int = 10_000) {
        self.logCapacity = logCapacity
    }

    /// Restores every activity not dismissed and the last sequence (``ActivityStore/load()``).
    public func load() -> (activities: [Activity], sequence: UInt64) {
        (Array(activities.values), sequence)
    }

    /// Records events, with the activities they leave, in one atomic step (``ActivityStore/record(_:)``).
    public func record(_ events: [ActivityEvent]) {
        for event in events {
            if event.kind == .dismissed {
                activities[event.activity.id] = nil
            } else {
                activities[event.activity.id] = event.activity
            }
            sequence = event.sequence
            if event.kind == .ended, let entry = HistoryEntry(event.activity) {
                // An ended activity's dismissal date moved (its `ended` event again): one entry still.
                finished.removeAll { $0.id == entry.id }
                finished.append(entry)
            }
        }
        log += events
        if log.count > logCapacity { log.removeFirst(log.count - logCapacity) }
    }

    /// The events after `sequence`, or nil when the log no longer reaches back (``ActivityStore/events(after:)``).
    public func events(after sequence: UInt64) -> [ActivityEvent]? {
        if sequence >= self.sequence { return [] }
        guard let first = log.first, first.sequence <= sequence + 1 else { return nil }
        return log.filter { $0.sequence > sequence }
    }

    /// The kept push-to-start token (``ActivityStore/pushToStartToken()``).
    public func pushToStartToken() -> String { startToken }

    /// The kept event-log identity (``ActivityStore/logID()``).
    public func logID() -> String { identity }

    /// Every kept share link, live or recently ended (``ActivityStore/shares()``).
    public func shares() -> [Share] { Array(links.values) }

    /// Keeps a share link, new or ended (``ActivityStore/save(_:)``).
    public func save(_ share: Share) { links[share.id] = share }

    /// Every kept broadcast channel (``ActivityStore/channels()``).
    public func channels() -> [BroadcastChannel] { Array(broadcastChannels.values) }

    /// Keeps a broadcast channel (``ActivityStore/save(_:)-(BroadcastChannel)``).
    public func save(_ channel: BroadcastChannel) { broadcastChannels[channel.id] = channel }

    /// Forgets a broadcast channel (``ActivityStore/deleteChannel(id:)``).
    public func deleteChannel(id: String) { broadcastChannels[id] = nil }

    /// Finished activities, newest end first, after the page cursor (``ActivityStore/history(limit:before:beforeId:)``).
    public func history(limit: Int, before: Date?, beforeId: String?) -> [HistoryEntry] {
        let ordered = finished.sorted { ($0.endDate, $0.id) > ($1.endDate, $1.id) }
        return Array(ordered.lazy.filter { $0.isAfter(cursor: before, id: beforeId) }.prefix(limit))
    }
}

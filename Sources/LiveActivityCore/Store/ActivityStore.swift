import Foundation

/// Where activities and the event log are kept: the one interface between the engine and storage.
///
/// The server records every event before it acknowledges or broadcasts it, so a store that persists
/// (SQLite, Redis) makes every acknowledged change durable. Implementations are called from one thread at
/// a time (the server's service thread).
public protocol ActivityStore: AnyObject {
    /// The state to start from: every activity not dismissed, and the last sequence number handed out.
    /// - Throws: the store's own error when it cannot be read.
    func load() throws -> (activities: [Activity], sequence: UInt64)

    /// Records events, in order, with the activity state each leaves behind.
    /// - Throws: the store's own error; the server then refuses the request and changes nothing.
    func record(_ events: [ActivityEvent]) throws

    /// The events numbered after `sequence`, in order.
    /// - Returns: `nil` when the log no longer reaches back to `sequence` (the client needs a fresh snapshot).
    func events(after sequence: UInt64) throws -> [ActivityEvent]?

    /// Finished activities, newest end first.
    /// - Parameters:
    ///   - limit: most entries to return.
    ///   - before: only activities that ended before this instant (UTC), for paging; `nil` = no bound.
    func history(limit: Int, before: Date?) throws -> [HistoryEntry]

    /// The server's push-to-start token (64 hex digits), made once and kept, so that a backend configured
    /// with it keeps working across restarts.
    /// - Throws: the store's own error.
    func pushToStartToken() throws -> String

    /// Every share link kept: live ones, and ended ones for ``Share/tombstoneLifetime``.
    /// - Throws: the store's own error.
    func shares() throws -> [Share]

    /// Keeps a share link, new or changed (ended).
    /// - Throws: the store's own error; a new link is then not handed out.
    func save(_ share: Share) throws
}

/// An ``ActivityStore`` in memory: nothing survives a restart. Keeps the last `logCapacity` events.
public final class InMemoryActivityStore: ActivityStore {
    private var activities: [String: Activity] = [:]
    private var log: [ActivityEvent] = []
    private var sequence: UInt64 = 0
    private var finished: [HistoryEntry] = []
    private let startToken = PushToken.random()
    private var links: [String: Share] = [:]
    /// How many events the log keeps.
    public let logCapacity: Int

    /// Creates an empty store keeping the last `logCapacity` events.
    public init(logCapacity: Int = 10_000) {
        self.logCapacity = logCapacity
    }

    public func load() -> (activities: [Activity], sequence: UInt64) {
        (Array(activities.values), sequence)
    }

    public func record(_ events: [ActivityEvent]) {
        for event in events {
            if event.kind == .dismissed {
                activities[event.activity.id] = nil
            } else {
                activities[event.activity.id] = event.activity
            }
            sequence = event.sequence
            if event.kind == .ended, let entry = HistoryEntry(event.activity) { finished.append(entry) }
        }
        log += events
        if log.count > logCapacity { log.removeFirst(log.count - logCapacity) }
    }

    public func events(after sequence: UInt64) -> [ActivityEvent]? {
        if sequence >= self.sequence { return [] }
        guard let first = log.first, first.sequence <= sequence + 1 else { return nil }
        return log.filter { $0.sequence > sequence }
    }

    public func pushToStartToken() -> String { startToken }

    public func shares() -> [Share] { Array(links.values) }

    public func save(_ share: Share) { links[share.id] = share }

    public func history(limit: Int, before: Date?) -> [HistoryEntry] {
        Array(finished.reversed().lazy.filter { before == nil || $0.endDate < before! }.prefix(limit))
    }
}

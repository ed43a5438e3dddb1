import CSQLite
import Foundation
import LiveActivityCore

/// The default ``ActivityStore``: one SQLite file in WAL mode (`<data-dir>/liveactivity.sqlite`).
///
/// Every ``record(_:)`` is one transaction: the events go into the event log and the activities they
/// leave are upserted (or deleted once dismissed; each activity's row once, as its last event of the group
/// leaves it), so a crash at any moment leaves either all of a change or none of it. The log keeps the newest
/// events within both retention bounds (by age and by count).
///
/// Thread-safe, with two connections: writes (``record(_:)``, ``save(_:)``, settings) go through one, reads
/// (``load()``, ``events(after:)``, ``history(limit:before:beforeId:)``) through a second, read-only one, each
/// behind its own lock; in WAL mode a reader never waits for the writer, so the server's service thread
/// reads while its store thread commits. (Were the read-only connection impossible to open, reads would
/// share the writer's connection and lock.)
public final class SQLiteActivityStore: ActivityStore, @unchecked Sendable {
    /// How long and how many events the log keeps; older ones are pruned.
    public struct Retention: Sendable {
        /// Oldest event kept, in seconds of age. Default 24 h.
        public var maximumAge: TimeInterval = 24 * 3600
        /// Most events kept. Default 100,000.
        public var maximumEvents: Int = 100_000
        /// The defaults: 24 hours or 100,000 events, whichever is smaller.
        public init() {}
    }

    /// How hard each commit is pushed to disk (SQLite `PRAGMA synchronous`).
    public enum Durability: String, Sendable {
        /// fsync on every commit: survives power loss (SQLite `FULL`). The default.
        case full
        /// fsync at checkpoints only: survives a process crash, may lose the newest commits on power loss.
        case normal
    }

    /// {writeLock} the read-write connection.
    private let database: Database
    private let writeLock = NSLock()
    /// The kinds that read stored countdowns (``useKinds(_:)``); none until the server says.
    private let kinds = Locked(KindRegistry([]))
    /// {readLock} the read-only connection; `nil` = reads use ``database`` under ``writeLock``.
    private let reader: Database?
    private let readLock = NSLock()
    private let retention: Retention
    private let clock: @Sendable () -> Date
    /// {writeLock} commits since the log was last pruned.
    private var recordsSincePrune = 0
    /// An exclusive `flock` on `<directory>/liveactivity.lock`, held while the store is open: a second
    /// server on the same data directory is refused (the kernel releases it when the process dies).
    private let lockDescriptor: Int32
    /// The file's path.
    public let path: String

    /// Opens or creates the store in `directory`.
    /// - Parameters:
    ///   - directory: the data directory; created if missing.
    ///   - retention: how much of the event log to keep.
    ///   - durability: `PRAGMA synchronous` level.
    ///   - clock: the current time (UTC), for pruning by age.
    /// - Throws: ``SQLiteError`` or a file-system error naming the directory when it cannot be created,
    ///   opened or written.
    public init(directory: URL, retention: Retention = Retention(), durability: Durability = .full,
                clock: @escaping @Sendable () -> Date = { Date() }) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        lockDescriptor = try Self.lock(directory)
        path = directory.appendingPathComponent("liveactivity.sqlite").path
        let database = try Database(path: path)
        self.database = database
        self.retention = retention
        self.clock = clock
        try database.execute("PRAGMA journal_mode=WAL")
        try database.execute("PRAGMA synchronous=\(durability.rawValue.uppercased())")
        try Schema.migrate(database)
        // Prove the file is writable now rather than at the first request.
        try database.transaction { try database.execute("UPDATE meta SET value = value WHERE key = 'schema'") }
        // Opened after the writer has created the file and switched it to WAL (which the file remembers).
        reader = try? Database(path: path, readOnly: true)
    }

    /// Runs `body` with the read connection, holding its lock.
    private func reading<T>(_ body: (Database) throws -> T) rethrows -> T {
        guard let reader else { return try writing(body) }
        readLock.lock()
        defer { readLock.unlock() }
        return try body(reader)
    }

    /// Runs `body` with the read-write connection, holding its lock.
    private func writing<T>(_ body: (Database) throws -> T) rethrows -> T {
        writeLock.lock()
        defer { writeLock.unlock() }
        return try body(database)
    }

    /// Keeps the kinds that read stored countdowns (``ActivityStore/useKinds(_:)``).
    public func useKinds(_ kinds: KindRegistry) {
        self.kinds.withLock { $0 = kinds }
    }

    /// Restores every activity not dismissed and the last sequence (``ActivityStore/load()``).
    public func load() throws -> (activities: [Activity], sequence: UInt64) {
        try reading { database in
            var activities: [Activity] = []
            // One read transaction, so that the activities and the sequence are the same commit's.
            try database.execute("BEGIN")
            defer { try? database.execute("COMMIT") }
            try database.statement("SELECT json FROM activities").query { row in
                activities.append(try StoredActivity.decode(row.text(0), kinds: kinds.withLock { $0 }))
            }
            return (activities, try Self.sequence(in: database))
        }
    }

    /// The last sequence recorded: the newest event's in the log, or, once pruning has emptied the log, the one
    /// `meta` keeps (``prune(now:lastSequence:)`` writes it there before it deletes; stores written before
    /// that wrote it at every commit, and the larger of the two is right for both).
    private static func sequence(in database: Database) throws -> UInt64 {
        var sequence: UInt64 = 0
        try database.statement("SELECT MAX((SELECT value FROM meta WHERE key = 'sequence'), COALESCE((SELECT MAX(sequence) FROM events), 0))")
            .query { row in sequence = UInt64(row.int(0)) }
        return sequence
    }

    /// Records events, with the activities they leave, in one atomic step (``ActivityStore/record(_:)``).
    public func record(_ events: [ActivityEvent]) throws {
        guard let last = events.last else { return }
        let now = clock().timeIntervalSince1970
        writeLock.lock()
        defer { writeLock.unlock() }
        // The activities table holds the state each activity is left in: only an activity's last event in the
        // group writes its row (a publisher's burst of 30 updates to one activity wrote the same row 30 times).
        // The event log keeps every event, and the transaction makes the group all or nothing either way.
        var lastEventOfActivity: [String: Int] = [:]
        if events.count > 1 {
            for (index, event) in events.enumerated() { lastEventOfActivity[event.activity.id] = index }
        }
        try database.transaction {
            for (index, event) in events.enumerated() {
                let activityText = StoredActivity.encode(event.activity)
                try database.statement("INSERT INTO events (sequence, kind, activity_id, recorded_at, json) VALUES (?, ?, ?, ?, ?)")
                    .bind(.int(Int64(event.sequence)), .text(event.kind.rawValue), .text(event.activity.id),
                          .double(now), .text(StoredActivity.encode(event, activityText: activityText)))
                    .run()
                // Only the activity's last event of the group leaves its row (every event still goes into the
                // log, and an `ended` one into the history, below).
                if events.count == 1 || lastEventOfActivity[event.activity.id] == index {
                    if event.kind == .dismissed {
                        try database.statement("DELETE FROM activities WHERE id = ?").bind(.text(event.activity.id)).run()
                    } else {
                        // An upsert rewrites the row where it is: `INSERT OR REPLACE` deleted it and inserted it
                        // under a new rowid, writing the table's page twice and its index's page too.
                        try database.statement("INSERT INTO activities (id, json) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET json = excluded.json")
                            .bind(.text(event.activity.id), .text(activityText)).run()
                    }
                }
                if event.kind == .ended, let entry = HistoryEntry(event.activity) {
                    try database.statement("INSERT OR REPLACE INTO history (id, end_date, json) VALUES (?, ?, ?)")
                        .bind(.text(entry.id), .double(entry.endDate.timeIntervalSince1970), .text(activityText))
                        .run()
                }
            }
            // The sequence is the newest event's (``sequence(in:)``): no page of `meta` to write each commit.
        }
        recordsSincePrune += 1
        if recordsSincePrune >= 100 {
            recordsSincePrune = 0
            try? prune(now: now, lastSequence: last.sequence)
        }
    }

    /// The events after `sequence`, or nil when the log no longer reaches back (``ActivityStore/events(after:)``).
    public func events(after sequence: UInt64) throws -> [ActivityEvent]? {
        try events(after: sequence, limit: Int.max)
    }

    /// At most `limit` events after `sequence`, or nil when the log no longer reaches back or more follow
    /// (``ActivityStore/events(after:limit:)``): reads `limit + 1` rows at most.
    public func events(after sequence: UInt64, limit: Int) throws -> [ActivityEvent]? {
        try reading { database in
            // One read transaction: the bounds and the rows are the same commit's.
            try database.execute("BEGIN")
            defer { try? database.execute("COMMIT") }
            var oldest: UInt64?
            var newest: UInt64 = 0
            try database.statement("SELECT MIN(sequence), MAX(sequence) FROM events").query { row in
                if !row.isNull(0) { oldest = UInt64(row.int(0)); newest = UInt64(row.int(1)) }
            }
            guard let oldest else { return sequence >= (try Self.sequence(in: database)) ? [] : nil }
            if sequence >= newest { return sequence == newest ? [] : nil }
            guard oldest <= sequence + 1 else { return nil }
            if limit < Int.max, newest - sequence > UInt64(max(0, limit)) { return nil }
            var events: [ActivityEvent] = []
            let registry = kinds.withLock { $0 }
            try database.statement("SELECT json FROM events WHERE sequence > ? ORDER BY sequence").bind(.int(Int64(sequence))).query { row in
                events.append(try StoredActivity.decodeEvent(row.text(0), kinds: registry))
            }
            return events
        }
    }

    /// The activities of the newest `limit` dismissals in the retained log, oldest first
    /// (``ActivityStore/dismissedActivities(limit:)``); read once, at start.
    public func dismissedActivities(limit: Int) throws -> [Activity] {
        try reading { database in
            var activities: [Activity] = []
            let registry = kinds.withLock { $0 }
            try database.statement("SELECT json FROM events WHERE kind = 'dismissed' ORDER BY sequence DESC LIMIT ?")
                .bind(.int(Int64(max(0, limit))))
                .query { row in activities.append(try StoredActivity.decodeEvent(row.text(0), kinds: registry).activity) }
            return activities.reversed()
        }
    }

    /// One activity's newest events up to `newest`, oldest first, through the index by activity
    /// (``ActivityStore/events(ofActivity:through:limit:scanLimit:)``): reads at most `limit` rows, however
    /// long the log; `scanLimit` is not needed.
    public func events(ofActivity activityId: String, through newest: UInt64, limit: Int, scanLimit: Int) throws -> [ActivityEvent] {
        try reading { database in
            var events: [ActivityEvent] = []
            let registry = kinds.withLock { $0 }
            try database.statement("SELECT json FROM events WHERE activity_id = ? AND sequence <= ? ORDER BY sequence DESC LIMIT ?")
                .bind(.text(activityId), .int(Int64(clamping: newest)), .int(Int64(max(0, limit))))
                .query { row in events.append(try StoredActivity.decodeEvent(row.text(0), kinds: registry)) }
            return events.reversed()
        }
    }

    /// Finished activities, newest end first, after the page cursor (``ActivityStore/history(limit:before:beforeId:)``).
    public func history(limit: Int, before: Date?, beforeId: String?) throws -> [HistoryEntry] {
        try reading { database in try history(limit: limit, before: before, beforeId: beforeId, in: database) }
    }

    private func history(limit: Int, before: Date?, beforeId: String?, in database: Database) throws -> [HistoryEntry] {
        var entries: [HistoryEntry] = []
        let bound = before?.timeIntervalSince1970 ?? .greatestFiniteMagnitude
        try database.statement("""
            SELECT json FROM history WHERE end_date < ? OR (end_date = ? AND id < ?)
            ORDER BY end_date DESC, id DESC LIMIT ?
            """)
            .bind(.double(bound), .double(bound), .text(beforeId ?? ""), .int(Int64(max(0, limit))))
            .query { row in
                if let entry = HistoryEntry(try StoredActivity.decode(row.text(0), kinds: kinds.withLock { $0 })) { entries.append(entry) }
            }
        return entries
    }

    /// The kept push-to-start token (``ActivityStore/pushToStartToken()``).
    public func pushToStartToken() throws -> String {
        try setting("pushToStartToken", orMake: PushToken.random)
    }

    /// The kept event-log identity (``ActivityStore/logID()``).
    public func logID() throws -> String {
        try setting("logId", orMake: { UUID().uuidString.lowercased() })
    }

    /// A text setting, made by `make` and kept the first time it is asked for.
    private func setting(_ key: String, orMake make: () -> String) throws -> String {
        try writing { database in try setting(key, orMake: make, in: database) }
    }

    private func setting(_ key: String, orMake make: () -> String, in database: Database) throws -> String {
        var value: String?
        try database.statement("SELECT text FROM settings WHERE key = ?").bind(.text(key)).query { row in value = row.text(0) }
        if let value { return value }
        let made = make()
        try database.transaction {
            try database.statement("INSERT OR IGNORE INTO settings (key, text) VALUES (?, ?)").bind(.text(key), .text(made)).run()
        }
        return try setting(key, orMake: make, in: database)
    }

    /// Every kept share link, live or recently ended (``ActivityStore/shares()``).
    public func shares() throws -> [Share] {
        let forgetBefore = clock().timeIntervalSince1970 - Share.tombstoneLifetime
        writeLock.lock()
        defer { writeLock.unlock() }
        try database.transaction {
            try database.statement("DELETE FROM shares WHERE MAX(expires_at, COALESCE(ended_at, 0)) < ?").bind(.double(forgetBefore)).run()
        }
        var shares: [Share] = []
        try database.statement("SELECT id, token_hash, activity_id, created_at, expires_at, ended_at FROM shares").query { row in
            shares.append(Share(id: row.text(0), tokenHash: row.text(1), activityId: row.text(2),
                                createdAt: Date(timeIntervalSince1970: row.double(3)), expiresAt: Date(timeIntervalSince1970: row.double(4)),
                                endedAt: row.isNull(5) ? nil : Date(timeIntervalSince1970: row.double(5))))
        }
        return shares
    }

    /// Keeps a share link, new or ended (``ActivityStore/save(_:)``).
    public func save(_ share: Share) throws {
        writeLock.lock()
        defer { writeLock.unlock() }
        try database.transaction {
            try database.statement("INSERT OR REPLACE INTO shares (id, token_hash, activity_id, created_at, expires_at, ended_at) VALUES (?, ?, ?, ?, ?, ?)")
                .bind(.text(share.id), .text(share.tokenHash), .text(share.activityId),
                      .double(share.createdAt.timeIntervalSince1970), .double(share.expiresAt.timeIntervalSince1970),
                      share.endedAt.map { .double($0.timeIntervalSince1970) } ?? .null)
                .run()
        }
    }

    /// Every kept broadcast channel (``ActivityStore/channels()``).
    public func channels() throws -> [BroadcastChannel] {
        try reading { database in
            var channels: [BroadcastChannel] = []
            try database.statement("SELECT id, bundle_id, storage_policy, created_at FROM channels").query { row in
                channels.append(BroadcastChannel(id: row.text(0), bundleId: row.text(1),
                                                 storagePolicy: BroadcastChannel.StoragePolicy(rawValue: Int(row.int(2))) ?? .noStorage,
                                                 createdAt: Date(timeIntervalSince1970: row.double(3))))
            }
            return channels
        }
    }

    /// Keeps a broadcast channel, in its own transaction (``ActivityStore/save(_:)-(BroadcastChannel)``).
    public func save(_ channel: BroadcastChannel) throws {
        try writing { database in
            try database.transaction {
                try database.statement("INSERT OR REPLACE INTO channels (id, bundle_id, storage_policy, created_at) VALUES (?, ?, ?, ?)")
                    .bind(.text(channel.id), .text(channel.bundleId), .int(Int64(channel.storagePolicy.rawValue)),
                          .double(channel.createdAt.timeIntervalSince1970))
                    .run()
            }
        }
    }

    /// Forgets a broadcast channel, in its own transaction (``ActivityStore/deleteChannel(id:)``).
    public func deleteChannel(id: String) throws {
        try writing { database in
            try database.transaction { try database.statement("DELETE FROM channels WHERE id = ?").bind(.text(id)).run() }
        }
    }

    deinit { close(lockDescriptor) }

    private static func lock(_ directory: URL) throws -> Int32 {
        let path = directory.appendingPathComponent("liveactivity.lock").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path]) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw SQLiteError(code: 5, connection: nil, sql: nil, message: "the data directory \(directory.path) is in use by another liveactivity server")
        }
        return descriptor
    }

    /// Deletes events older than the retention age or beyond the retention count. Holding ``writeLock``.
    private func prune(now: TimeInterval, lastSequence: UInt64) throws {
        let keepFrom = Int64(lastSequence) - Int64(retention.maximumEvents)
        try database.transaction {
            // The log may be left empty: `meta` then keeps the sequence (``sequence(in:)``).
            try database.statement("UPDATE meta SET value = ? WHERE key = 'sequence'").bind(.int(Int64(lastSequence))).run()
            try database.statement("DELETE FROM events WHERE sequence <= ? OR recorded_at < ?")
                .bind(.int(keepFrom), .double(now - retention.maximumAge)).run()
        }
    }
}

/// The database layout, created or upgraded at open.
enum Schema {
    static let version = 1

    static func migrate(_ database: Database) throws {
        try database.transaction {
            try database.execute("""
                CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
                INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', \(version)), ('sequence', 0);
                CREATE TABLE IF NOT EXISTS activities (id TEXT PRIMARY KEY, json TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS events (
                    sequence INTEGER PRIMARY KEY, kind TEXT NOT NULL, activity_id TEXT NOT NULL,
                    recorded_at REAL NOT NULL, json TEXT NOT NULL);
                CREATE INDEX IF NOT EXISTS events_by_activity ON events (activity_id, sequence);
                CREATE TABLE IF NOT EXISTS history (id TEXT PRIMARY KEY, end_date REAL NOT NULL, json TEXT NOT NULL);
                CREATE INDEX IF NOT EXISTS history_by_end ON history (end_date);
                CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, text TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS shares (
                    id TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, activity_id TEXT NOT NULL,
                    created_at REAL NOT NULL, expires_at REAL NOT NULL, ended_at REAL);
                CREATE TABLE IF NOT EXISTS channels (
                    id TEXT PRIMARY KEY, bundle_id TEXT NOT NULL, storage_policy INTEGER NOT NULL, created_at REAL NOT NULL);
                """)
        }
    }
}

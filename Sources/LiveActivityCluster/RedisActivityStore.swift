import Foundation
import LiveActivityCore

/// The ``ActivityStore`` for several instances behind a balancer: activities, the event log, history and
/// shares in Redis, shared by all of them.
///
/// Every ``record(_:)`` runs ``RecordScript`` (one atomic Lua call): it appends to the `events` stream with
/// entry id `<sequence>-0` only if the caller's sequence is current, else throws ``StoreConflict``; so
/// sequence numbers are global and each deadline is applied by exactly one instance. ``follow(from:deliver:)``
/// reads the stream on its own connection and thread (`XREAD BLOCK`), so every instance learns of the others'
/// events, reconnecting with back-off when Redis is away. Thread-safe: writes (``record(_:)``, ``save(_:)``,
/// the kept token and log id) go through one connection and reads (``load()``, ``events(after:)``,
/// ``history(limit:before:beforeId:)``, ``shares()``) through a second, each behind its own lock, so the
/// server's service thread reads while its store thread records; each call blocks at most ``timeout`` seconds.
public final class RedisActivityStore: ReplicatedStore, @unchecked Sendable {
    /// Where Redis is.
    public let endpoint: RedisEndpoint
    /// Longest one Redis call may block the caller, in seconds.
    public let timeout: TimeInterval
    /// Most events the stream keeps (approximately; `XADD MAXLEN ~`).
    public let logCapacity: Int
    private let keys: RedisKeys
    /// The kinds that read stored countdowns (``useKinds(_:)``), shared with the feed; none until the server says.
    private let kinds = Locked(KindRegistry([]))
    /// {writeLock} the connection for writes.
    private let connection: RedisConnection
    private let writeLock = NSLock()
    /// {readLock} the connection for reads (connects at its first use).
    private let reader: RedisConnection
    private let readLock = NSLock()
    /// {writeLock} the feed, once following.
    private var feed: ClusterFeed?

    /// Connects to Redis and checks it answers.
    /// - Parameters:
    ///   - endpoint: `redis://HOST:PORT[/DB]`.
    ///   - prefix: key prefix, so several clusters can share one Redis.
    ///   - logCapacity: most events kept for resuming clients.
    ///   - timeout: longest one call may block, in seconds.
    /// - Throws: ``ClusterError`` when Redis cannot be reached.
    public init(endpoint: RedisEndpoint, prefix: String = "liveactivity:", logCapacity: Int = 100_000, timeout: TimeInterval = 2) throws {
        self.endpoint = endpoint
        self.timeout = timeout
        self.logCapacity = logCapacity
        keys = RedisKeys(prefix: prefix)
        connection = RedisConnection(endpoint: endpoint, timeout: timeout)
        reader = RedisConnection(endpoint: endpoint, timeout: timeout)
        guard case .status("PONG") = try connection.command(["PING"]) else { throw ClusterError("Redis at \(endpoint) did not answer PING") }
    }

    deinit { feed?.stop() }

    /// Runs `body` with the read connection, holding its lock.
    private func reading<T>(_ body: (RedisConnection) throws -> T) rethrows -> T {
        readLock.lock()
        defer { readLock.unlock() }
        return try body(reader)
    }

    /// Runs `body` with the write connection, holding its lock.
    private func writing<T>(_ body: (RedisConnection) throws -> T) rethrows -> T {
        writeLock.lock()
        defer { writeLock.unlock() }
        return try body(connection)
    }

    // MARK: ActivityStore

    /// Restores every activity not dismissed and the last sequence (``ActivityStore/load()``).
    public func load() throws -> (activities: [Activity], sequence: UInt64) {
        try reading { connection in
            // Read the sequence first: activities read after it are at least that new, and the feed then
            // replays from this sequence, so nothing between the two reads is missed.
            let sequence = UInt64(try connection.command(["GET", keys.sequence]).text ?? "0") ?? 0
            let fields = try checked(try connection.command(["HGETALL", keys.activities])).elements
            var activities: [Activity] = []
            for index in stride(from: 1, to: fields.count, by: 2) {
                if let text = fields[index].text { activities.append(try StoredActivity.decode(text, kinds: kinds.withLock { $0 })) }
            }
            return (activities, sequence)
        }
    }

    /// Records events, with the activities they leave, in one atomic step (``ActivityStore/record(_:)``).
    public func record(_ events: [ActivityEvent]) throws {
        guard let first = events.first else { return }
        var arguments = ["EVAL", RecordScript.source, "5", keys.sequence, keys.events, keys.activities, keys.history,
                         keys.historyByEnd, String(first.sequence - 1), String(events.count), String(logCapacity)]
        for event in events {
            let ended = event.kind == .ended ? event.activity.endDate.map { String($0.timeIntervalSince1970) } ?? "" : ""
            let activityText = StoredActivity.encode(event.activity)
            arguments += [String(event.sequence), event.activity.id, event.kind.rawValue,
                          StoredActivity.encode(event, activityText: activityText), activityText, ended]
        }
        let reply = try writing { try $0.command(arguments) }
        if case .error(let message) = reply {
            if message.hasPrefix("CONFLICT "), let current = UInt64(message.dropFirst("CONFLICT ".count)) {
                throw StoreConflict(sequence: current)
            }
            throw ClusterError("Redis refused the change: \(message)")
        }
    }

    /// The events after `sequence`, or nil when the log no longer reaches back (``ActivityStore/events(after:)``).
    public func events(after sequence: UInt64) throws -> [ActivityEvent]? {
        try events(after: sequence, limit: Int.max)
    }

    /// At most `limit` events after `sequence`, or nil when the log no longer reaches back or more follow
    /// (``ActivityStore/events(after:limit:)``): the gap is measured before any entry is read.
    public func events(after sequence: UInt64, limit: Int) throws -> [ActivityEvent]? {
        try reading { connection in
            let current = UInt64(try connection.command(["GET", keys.sequence]).text ?? "0") ?? 0
            if sequence > current { return nil }
            if sequence == current { return [] }
            if limit < Int.max, current - sequence > UInt64(max(0, limit)) { return nil }
            let entries = try checked(try connection.command(["XRANGE", keys.events, "\(sequence + 1)-0", "+"])).elements
            let registry = kinds.withLock { $0 }
            let events = try entries.map { entry in try ClusterFeed.event(from: entry, kinds: registry) }
            guard events.first?.sequence == sequence + 1 else { return nil }
            return events
        }
    }

    /// Finished activities, newest end first, after the page cursor (``ActivityStore/history(limit:before:beforeId:)``).
    public func history(limit: Int, before: Date?, beforeId: String?) throws -> [HistoryEntry] {
        // Inclusive upper bound, then the cursor filter: ties at `before` are resolved by id. Fetch enough
        // extra entries to cover a page of ties.
        let upper = before.map { String($0.timeIntervalSince1970) } ?? "+inf"
        return try reading { connection in
            let ids = try checked(try connection.command(["ZREVRANGEBYSCORE", keys.historyByEnd, upper, "-inf", "LIMIT", "0", String(max(0, limit) + 500)]))
                .elements.compactMap(\.text)
            guard !ids.isEmpty else { return [] }
            let stored = try checked(try connection.command(["HMGET", keys.history] + ids)).elements
            let entries = try stored.compactMap { reply in try reply.text.flatMap { HistoryEntry(try StoredActivity.decode($0, kinds: kinds.withLock { $0 })) } }
            return Array(entries.sorted { ($0.endDate, $0.id) > ($1.endDate, $1.id) }
                .filter { $0.isAfter(cursor: before, id: beforeId) }.prefix(limit))
        }
    }

    /// The kept push-to-start token (``ActivityStore/pushToStartToken()``).
    public func pushToStartToken() throws -> String {
        try writing { connection in
            try checked(try connection.command(["SET", keys.pushToStartToken, PushToken.random(), "NX"]))
            guard let token = try connection.command(["GET", keys.pushToStartToken]).text else {
                throw ClusterError("Redis lost the push-to-start token")
            }
            return token
        }
    }

    /// The kept event-log identity (``ActivityStore/logID()``).
    public func logID() throws -> String {
        try writing { connection in
            try checked(try connection.command(["SET", keys.logID, UUID().uuidString.lowercased(), "NX"]))
            guard let id = try connection.command(["GET", keys.logID]).text else { throw ClusterError("Redis lost the log id") }
            return id
        }
    }

    /// Every kept share link, live or recently ended (``ActivityStore/shares()``).
    public func shares() throws -> [Share] {
        let fields = try checked(try reading { try $0.command(["HGETALL", keys.shares]) }).elements
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return stride(from: 1, to: fields.count, by: 2).compactMap { index in
            fields[index].text.flatMap { try? decoder.decode(Share.self, from: Data($0.utf8)) }
        }
    }

    /// Keeps a share link, new or ended (``ActivityStore/save(_:)``).
    public func save(_ share: Share) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let text = String(decoding: try encoder.encode(share), as: UTF8.self)
        try checked(try writing { try $0.command(["HSET", keys.shares, share.id, text]) })
    }

    /// Every kept broadcast channel (``ActivityStore/channels()``), from the hash shared by the cluster.
    public func channels() throws -> [BroadcastChannel] {
        let fields = try checked(try reading { try $0.command(["HGETALL", keys.channels]) }).elements
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return stride(from: 1, to: fields.count, by: 2).compactMap { index in
            fields[index].text.flatMap { try? decoder.decode(BroadcastChannel.self, from: Data($0.utf8)) }
        }
    }

    /// Keeps a broadcast channel (``ActivityStore/save(_:)-(BroadcastChannel)``).
    public func save(_ channel: BroadcastChannel) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let text = String(decoding: try encoder.encode(channel), as: UTF8.self)
        try checked(try writing { try $0.command(["HSET", keys.channels, channel.id, text]) })
    }

    /// Forgets a broadcast channel (``ActivityStore/deleteChannel(id:)``).
    public func deleteChannel(id: String) throws {
        try checked(try writing { try $0.command(["HDEL", keys.channels, id]) })
    }

    /// Keeps the kinds that read stored countdowns (``ActivityStore/useKinds(_:)``).
    public func useKinds(_ kinds: KindRegistry) {
        self.kinds.withLock { $0 = kinds }
    }

    // MARK: ReplicatedStore

    /// Delivers every event recorded after `sequence` by any instance, on the feed thread (``ReplicatedStore/follow(from:deliver:)``).
    public func follow(from sequence: UInt64, deliver: @escaping @Sendable ([ActivityEvent]) -> Void) {
        writeLock.lock()
        defer { writeLock.unlock() }
        feed?.stop()
        let feed = ClusterFeed(connection: RedisConnection(endpoint: endpoint, timeout: timeout + 5), stream: keys.events,
                               from: sequence, kinds: kinds, deliver: deliver)
        self.feed = feed
        feed.start()
    }

    /// Stops the feed (``ReplicatedStore/stopFollowing()``).
    public func stopFollowing() {
        writeLock.lock()
        defer { writeLock.unlock() }
        feed?.stop()
        feed = nil
    }

    @discardableResult
    private func checked(_ reply: RedisReply) throws -> RedisReply {
        if case .error(let message) = reply { throw ClusterError("Redis error: \(message)") }
        return reply
    }
}

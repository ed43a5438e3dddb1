import Foundation
import LiveActivityCore
import Synchronization

/// Reads the cluster's event stream on its own thread and connection (`XREAD BLOCK`), delivering every
/// event after a starting sequence, in order, exactly once; when Redis goes away it retries with back-off
/// (0.2 s doubling to 5 s) and resumes from the last event it delivered.
final class ClusterFeed: @unchecked Sendable {
    private let connection: RedisConnection
    private let stream: String
    /// Where events go; dropped by ``stop()``, so that a thread still blocked in its last read (up to 1 s)
    /// no longer holds the server's objects (LeakSanitizer saw a stopped server kept alive through it).
    private let deliver: Locked<(@Sendable ([ActivityEvent]) -> Void)?>
    /// The store's kinds, which read each event's countdown.
    private let kinds: Locked<KindRegistry>
    private let stopped = Atomic<Bool>(false)
    /// Only the feed's thread touches it: the last sequence delivered.
    private var last: UInt64

    init(connection: RedisConnection, stream: String, from sequence: UInt64, kinds: Locked<KindRegistry>,
         deliver: @escaping @Sendable ([ActivityEvent]) -> Void) {
        self.connection = connection
        self.kinds = kinds
        self.stream = stream
        self.deliver = Locked(deliver)
        last = sequence
    }

    func start() {
        let thread = Thread.named("cluster-feed") { [self] in run() }
        thread.start()
    }

    /// Stops after the current read (at most one block interval, 1 s), delivering nothing more from now on.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        deliver.withLock { $0 = nil }
    }

    private func run() {
        var backoff = 0.2
        while !stopped.load(ordering: .relaxed) {
            do {
                let reply = try connection.command(["XREAD", "COUNT", "1000", "BLOCK", "1000", "STREAMS", stream, "\(last)-0"])
                if case .error(let message) = reply { throw ClusterError("XREAD failed: \(message)") }
                backoff = 0.2
                // [[stream, [[id, [field, value]], …]]]
                guard let entries = reply.elements.first?.elements.dropFirst().first?.elements, !entries.isEmpty else { continue }
                let registry = kinds.withLock { $0 }
                let events = try entries.map { entry in try Self.event(from: entry, kinds: registry) }.filter { $0.sequence > last }
                guard let newest = events.last else { continue }
                last = newest.sequence
                guard let deliver = deliver.withLock({ $0 }) else { break }
                deliver(events)
            } catch {
                connection.disconnect()
                Thread.sleep(forTimeInterval: backoff)
                backoff = min(backoff * 2, 5)
            }
        }
        connection.disconnect()
    }

    /// Decodes one stream entry `[id, ["e", stored event]]`.
    static func event(from entry: RedisReply, kinds: KindRegistry) throws -> ActivityEvent {
        let parts = entry.elements
        guard parts.count == 2, let text = parts[1].elements.dropFirst().first?.text else {
            throw ClusterError("malformed event stream entry")
        }
        return try StoredActivity.decodeEvent(text, kinds: kinds)
    }
}

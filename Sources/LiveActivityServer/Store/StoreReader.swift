import Foundation
import LiveActivityCore

/// The store's reads, off the service thread: resume (`since`), history, the inspector's timeline and
/// renderings of an instant (`at=`). A read of a long log (tens of thousands of events, or a Redis round trip
/// under `--cluster`) takes as long as it takes on the reader's own thread, and every other client is served
/// meanwhile; the result comes back through the service inbox, where its continuation runs.
///
/// Each read's body runs on the reader thread with the store and returns a `Sendable` value; its
/// continuation stays on the service thread (it may hold sessions and responders) and is run there with
/// that value, in the order the reads finish (one reader thread: the order they were asked for). The
/// continuation places its answer itself, in order with what the client gets (``Hub/reserve(for:)``).
///
/// A store that ``ActivityStore/recordsInstantly`` (memory) is read at once on the caller's thread: it is
/// not thread-safe, and its reads cost no I/O. Thread-safe where noted; otherwise service thread only.
final class StoreReader: @unchecked Sendable {
    private let store: any ActivityStore
    /// Whether reads run at once on the caller's thread (a store in memory).
    let isSynchronous: Bool
    /// The reader thread: reads run one after another, in the order asked.
    private let queue = DispatchQueue(label: "liveactivity.store-reader", qos: .userInitiated)
    /// Hands a finished read back to the service thread (the server's inbox). Set once, before the first read.
    var handBack: @Sendable (UInt64, any Sendable) -> Void = { _, _ in }
    /// Service thread: continuations of reads in flight, by ticket.
    private var waiting: [UInt64: (any Sendable) -> Void] = [:]
    private var nextTicket: UInt64 = 1

    /// Reads in flight (service thread), for tests and `/metrics`.
    var inFlight: Int { waiting.count }

    /// - Parameter store: the store to read; its second (read-only) connection serves the reader thread.
    init(store: any ActivityStore) {
        self.store = store
        isSynchronous = store.recordsInstantly
    }

    /// Runs `body` with the store on the reader thread, then `then` with its result on the service thread.
    /// Service thread only.
    /// - Parameters:
    ///   - body: the read; it must not touch service-thread state (capture values, not sessions).
    ///   - then: what to do with the result; runs on the service thread, after `read` returned (or, for a
    ///     synchronous store, before it returns).
    func read<Result: Sendable>(_ body: @escaping @Sendable (any ActivityStore) -> Result, then: @escaping (Result) -> Void) {
        if isSynchronous {
            then(body(store))
            return
        }
        let ticket = nextTicket
        nextTicket += 1
        waiting[ticket] = { value in then(value as! Result) }
        // The reader (`@unchecked Sendable`) carries the store across: the store allows one reader thread
        // beside the writer's (``ActivityStore``), and this queue is that thread.
        queue.async { [self] in
            handBack(ticket, body(store))
        }
    }

    /// Runs `body` (work that needs no store: encoding a large answer) on a background thread, then `then`
    /// with its result on the service thread. Service thread only. A synchronous reader (a store in memory,
    /// tests) runs it at once.
    func offLoop<Result: Sendable>(_ body: @escaping @Sendable () -> Result, then: @escaping (Result) -> Void) {
        if isSynchronous {
            then(body())
            return
        }
        let ticket = nextTicket
        nextTicket += 1
        waiting[ticket] = { value in then(value as! Result) }
        DispatchQueue.global(qos: .userInitiated).async { [handBack] in
            handBack(ticket, body())
        }
    }

    /// Runs the continuation of a finished read. Service thread only (called from the inbox).
    func finish(_ ticket: UInt64, _ value: any Sendable) {
        waiting.removeValue(forKey: ticket)?(value)
    }

    /// Waits until every read asked so far has run on the reader thread (their continuations are then in the
    /// inbox). Any thread but the reader's; used at shutdown and by tests.
    func drain() {
        queue.sync {}
    }
}

/// A store's error, as text, carried back from the reader thread (store errors need not be `Sendable`).
struct StoreReadError: Error, Sendable, CustomStringConvertible {
    /// The store's own error text (for the server's log, never for clients).
    let description: String

    /// Wraps `error` by its description.
    init(_ error: any Error) {
        description = "\(error)"
    }
}

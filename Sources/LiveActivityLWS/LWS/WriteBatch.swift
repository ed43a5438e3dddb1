/// Whole WebSocket frames gathered for one `lws_write` (`LWS_WRITE_RAW`), so that a client with several
/// frames waiting gets them in one `send(2)` rather than one each (what uWebSockets calls corking). On
/// loopback most of a delivery's cost is the kernel's, per send, so a client that lags by k frames costs
/// about one send, not k. The bytes on the wire are the same frames in the same order.
///
/// One buffer, reused for every write; it grows for a batch that needs it (one large frame after another)
/// and shrinks back to ``limit`` at the next ``reset()``. Service thread only.
final class WriteBatch {
    /// Bytes after which no further frame is added (a batch may pass it by its last frame): 32 KiB, enough
    /// for about 50 events of 620 bytes, and under what a loopback socket's send buffer usually takes at once
    /// (what it does not take, lws copies to its `buflist_out` and sends first on the next POLLOUT).
    static let limit = 32 * 1024

    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    /// Bytes gathered.
    private(set) var count = 0

    init(capacity: Int = WriteBatch.limit) {
        self.capacity = capacity
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Whether another frame may be added (fewer than ``limit`` bytes gathered).
    var hasRoom: Bool { count < Self.limit }

    /// Empties the batch, keeping its buffer unless a large frame grew it past twice ``limit``.
    func reset() {
        count = 0
        guard capacity > 2 * Self.limit else { return }
        storage.deallocate()
        capacity = Self.limit
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    /// Appends one whole frame's bytes.
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if count + bytes.count > capacity {
            let grown = max(capacity * 2, count + bytes.count)
            let larger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
            larger.copyMemory(from: storage, byteCount: count)
            storage.deallocate()
            storage = larger
            capacity = grown
        }
        (storage + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// The gathered bytes, valid until the next ``append(_:)`` or ``reset()``.
    var bytes: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(start: storage, count: count) }
}

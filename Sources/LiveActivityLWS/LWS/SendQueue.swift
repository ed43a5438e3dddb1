import CSendRing
import Glibc

/// A broadcast pass's sends to many clients, handed to the kernel together: one `io_uring_enter(2)` for up to
/// ``capacity`` `send(2)`s (io_uring, through liburing) instead of one system call each. On loopback a delivery's
/// cost is mostly the kernel's: a pass of 1,000 single-frame sends costs about 10 % less CPU this way in a bare C
/// loop (Tests/bench/send_batch.c), and the server's fixed load 4–15 % less per delivery (BENCHMARKS.md, issue
/// 30). Each send is the same bytes on the same socket as the `send(2)` it replaces, and never waits: a socket
/// without room answers at once with a short count or `EAGAIN`, which the caller hands to lws as it would after a
/// short `send(2)`.
///
/// The queued bytes are borrowed: they must stay where they are, unchanged, until ``submit(_:)`` returns. One
/// write per connection may be queued (the caller's pass writes each client once), so a connection's bytes keep
/// their order. Service thread only.
final class SendQueue {
    /// A send waiting for ``submit(_:)``: the connection and the bytes (borrowed).
    struct Send {
        /// The connection's lws handle, for what the socket does not take.
        let wsi: OpaquePointer
        /// The bytes, whole frames.
        let bytes: UnsafeRawBufferPointer
    }

    /// Sends queued at most before ``submit(_:)`` must run (the ring's submission queue): 4,096.
    static let capacity = 4096

    private let ring: OpaquePointer
    private var queued: [Send] = []

    /// A queue on a new io_uring, or nil when the kernel refuses one (a kernel before 5.6, a seccomp filter,
    /// `kernel.io_uring_disabled`): the caller then sends each write itself.
    init?() {
        guard let ring = csendring_open(UInt32(Self.capacity)) else { return nil }
        self.ring = ring
        queued.reserveCapacity(Self.capacity)
    }

    deinit { csendring_close(ring) }

    /// Whether nothing waits for ``submit(_:)``.
    var isEmpty: Bool { queued.isEmpty }

    /// Whether ``capacity`` sends wait: ``submit(_:)`` must run before the next ``queue(_:on:of:)``.
    var isFull: Bool { queued.count == Self.capacity }

    /// Queues one send of `bytes` on `socket` (`wsi`'s). The queue must not be full (``isFull``) nor broken
    /// (``isBroken``).
    @inline(__always)
    func queue(_ bytes: UnsafeRawBufferPointer, on socket: Int32, of wsi: OpaquePointer) {
        _ = csendring_queue_send(ring, socket, bytes.baseAddress, bytes.count, UInt64(queued.count))
        queued.append(Send(wsi: wsi, bytes: bytes))
    }

    /// Sends everything queued, in one system call, and calls `completed` with each send and its result: the bytes
    /// the socket took (all, some, or 0 when it had no room), or `-errno` when the connection is broken (`EPIPE`,
    /// `ECONNRESET`). Should the kernel refuse the ring itself, each send without a result gets `-EIO` (its
    /// connection must close: whether its bytes went out is unknown) and the queue is never entered again
    /// (``isBroken``). The queue is empty after.
    func submit(_ completed: (Send, Int) -> Void) {
        guard !queued.isEmpty else { return }
        let count = queued.count
        if !isBroken, csendring_submit(ring) != 0 { isBroken = true }
        var answered = 0
        var tag: UInt64 = 0
        var result: Int32 = 0
        if isBroken {
            var hasResult = [Bool](repeating: false, count: count)
            while csendring_next_result(ring, 0, &tag, &result) == 1, Int(tag) < count {
                hasResult[Int(tag)] = true
                completed(queued[Int(tag)], Int(result))
            }
            for index in 0..<count where !hasResult[index] { completed(queued[index], -Int(EIO)) }
        } else {
            while answered < count, csendring_next_result(ring, 1, &tag, &result) == 1 {
                completed(queued[Int(tag)], Int(result))
                answered += 1
            }
        }
        queued.removeAll(keepingCapacity: true)
    }

    /// Whether the kernel refused the ring (``submit(_:)``): queued sends are then never submitted; the caller
    /// sends itself from then on.
    private(set) var isBroken = false
}

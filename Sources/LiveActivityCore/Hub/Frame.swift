import Synchronization

/// One outgoing WebSocket text message, encoded once and written to any number of clients.
///
/// The payload sits after ``headroom`` bytes (`LWS_PRE`), whose last bytes hold the frame's header: a server
/// frame is never masked (RFC 6455 §5.1), so the whole frame (``wire``) is the same for every client and is
/// written as it is (`LWS_WRITE_RAW`), with no copy and no framing per client. A client that negotiated
/// permessage-deflate gets instead, just as whole, its compressed form (RFC 7692 §7.2.1, RSV1 set), made once
/// per window size on first use and kept here for every other deflate client, or its stored form when
/// compressing does not pay (`deflatedWire(windowBits:using:)`, beside the compressor in LiveActivityLWS's
/// Compression/ folder, which keeps its results in ``deflated``, ``incompressibleWindows`` and ``stored``).
///
/// The payload is immutable after creation; the headroom, the compressed forms and the delivery counters
/// are touched by the service thread only.
package final class Frame: @unchecked Sendable {
    /// Bytes reserved before every new frame's payload for the frame header: `LWS_PRE`, which the lws adapter
    /// sets with ``useHeadroom(_:)`` before it serves (Core does not see libwebsockets). 16 until then, lws
    /// 4.1's value on 64-bit platforms. Thread-safe.
    package static var headroom: Int { configuredHeadroom.load(ordering: .relaxed) }
    private static let configuredHeadroom = Atomic<Int>(16)

    /// Sets the headroom of frames made from now on (``headroom``); frames made before keep theirs.
    /// - Parameter bytes: `LWS_PRE`; at least ``WebSocketFrameHeader/maximumLength`` (10). Thread-safe.
    package static func useHeadroom(_ bytes: Int) {
        precondition(bytes >= WebSocketFrameHeader.maximumLength, "LWS_PRE leaves no room for a frame header")
        configuredHeadroom.store(bytes, ordering: .relaxed)
    }

    /// Start of the payload (after the headroom), as `lws_write` wants it.
    package let payload: UnsafeMutablePointer<UInt8>
    /// Bytes before ``payload`` in this frame's allocation (``Frame/headroom`` when it was made).
    package let headroom: Int
    /// Payload length in bytes.
    package let count: Int
    /// Length of the header just before the payload: 2, 4 or 10 bytes (``WebSocketFrameHeader``).
    package let headerLength: Int
    /// For a broadcast event: when the change was accepted (monotonic ns), and how many clients have yet
    /// to take it; the last write records the change-to-wire time.
    package var acceptedAt: UInt64?
    package var writesLeft = 0
    /// Whether every watching session reads this frame (a broadcast event or a tick; set by the ``Hub``): it
    /// is then compressed whatever its size, since one compression serves every deflate client.
    package var isBroadcast = false

    /// Copies `bytes` once into a buffer with ``headroom`` bytes before it, the last of which are the header
    /// of one final, unmasked text frame of that payload (the rest are zero).
    package init(_ bytes: [UInt8]) {
        let headroom = Self.headroom
        self.headroom = headroom
        count = bytes.count
        headerLength = WebSocketFrameHeader.length(payloadLength: bytes.count)
        precondition(headroom >= headerLength, "LWS_PRE leaves no room for a frame header")
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: headroom + bytes.count)
        storage.initialize(repeating: 0, count: headroom)
        WebSocketFrameHeader.write(payloadLength: bytes.count, compressed: false, to: storage + headroom - headerLength)
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { (storage + headroom).initialize(from: base, count: source.count) }
        }
        payload = storage + headroom
    }

    /// The compressed frames, header included, by window size (index: bits - 9), made on first use; a
    /// frame whose compressed form is no smaller than stored is marked in ``incompressibleWindows`` instead.
    /// Each is an allocation of its own, freed with the frame, so that its address holds while the frame lives
    /// (a broadcast pass hands it to the kernel and submits later).
    package var deflated: [UnsafeRawBufferPointer?] = []
    /// Window sizes (bit `bits - 9`) for which compressing did not pay: those clients get ``stored``.
    package var incompressibleWindows: UInt8 = 0
    /// The frame as stored blocks, header included (RSV1 set), made on first use; an allocation of its own,
    /// freed with the frame, as ``deflated``'s.
    package var stored: UnsafeRawBufferPointer?

    deinit {
        (payload - headroom).deallocate()
        for wire in deflated { wire?.deallocate() }
        stored?.deallocate()
    }

    /// The whole frame as a client without permessage-deflate gets it: header, then payload
    /// (``headerLength`` + ``count`` bytes), for `LWS_WRITE_RAW`.
    @inlinable @inline(__always)
    package var wire: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: payload - headerLength, count: headerLength + count) }

    /// The payload's bytes (a copy), for tests and logs.
    package var bytes: [UInt8] { Array(UnsafeBufferPointer(start: payload, count: count)) }
}

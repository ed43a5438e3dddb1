/// One outgoing WebSocket text message, encoded once and written to any number of clients.
///
/// The payload sits after ``headroom`` bytes (`LWS_PRE`), whose last bytes hold the frame's header: a server
/// frame is never masked (RFC 6455 §5.1), so the whole frame (``wire``) is the same for every client and is
/// written as it is (`LWS_WRITE_RAW`), with no copy and no framing per client. A client that negotiated
/// permessage-deflate gets instead, just as whole, its compressed form (RFC 7692 §7.2.1, RSV1 set), made once
/// per window size on first use and kept here for every other deflate client, or its stored form when
/// compressing does not pay (``deflatedWire(windowBits:using:)``).
///
/// The payload is immutable after creation; the headroom, the compressed forms and the delivery counters
/// are touched by the service thread only.
final class Frame: @unchecked Sendable {
    /// Bytes reserved before every payload for the frame header: `LWS_PRE`, read once from the lws adapter.
    static let headroom = LWSConstants.headroom

    private let storage: UnsafeMutablePointer<UInt8>
    /// Payload length in bytes.
    let count: Int
    /// Length of the header just before the payload: 2, 4 or 10 bytes (``WebSocketFrameHeader``).
    let headerLength: Int
    /// For a broadcast event: when the change was accepted (monotonic ns), and how many clients have yet
    /// to take it; the last write records the change-to-wire time.
    var acceptedAt: UInt64?
    var writesLeft = 0
    /// Whether every watching session reads this frame (a broadcast event or a tick; set by the ``Hub``): it
    /// is then compressed whatever its size, since one compression serves every deflate client.
    var isBroadcast = false

    /// Copies `bytes` once into a buffer with ``headroom`` bytes before it, the last of which are the header
    /// of one final, unmasked text frame of that payload (the rest are zero).
    init(_ bytes: [UInt8]) {
        let headroom = Self.headroom
        count = bytes.count
        headerLength = WebSocketFrameHeader.length(payloadLength: bytes.count)
        precondition(headroom >= headerLength, "LWS_PRE leaves no room for a frame header")
        storage = .allocate(capacity: headroom + bytes.count)
        storage.initialize(repeating: 0, count: headroom)
        WebSocketFrameHeader.write(payloadLength: bytes.count, compressed: false, to: storage + headroom - headerLength)
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { (storage + headroom).initialize(from: base, count: source.count) }
        }
    }

    /// The compressed frames, header included, by window size (index: bits - 9), made on first use; a
    /// frame whose compressed form is no smaller than stored is marked in ``incompressibleWindows`` instead.
    private var deflated: [[UInt8]?] = []
    /// Window sizes (bit `bits - 9`) for which compressing did not pay: those clients get ``stored``.
    private var incompressibleWindows: UInt8 = 0
    /// The frame as stored blocks, header included (RSV1 set), made on first use.
    private var stored: [UInt8]?

    deinit { storage.deallocate() }

    /// Start of the payload (after the headroom), as `lws_write` wants it.
    var payload: UnsafeMutablePointer<UInt8> { storage + Self.headroom }

    /// The whole frame as a client without permessage-deflate gets it: header, then payload
    /// (``headerLength`` + ``count`` bytes), for `LWS_WRITE_RAW`.
    var wire: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: payload - headerLength, count: headerLength + count) }

    /// The payload's bytes (a copy), for tests and logs.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: payload, count: count)) }

    /// The whole frame for a permessage-deflate client (RSV1 set, for `LWS_WRITE_RAW`): compressed with a
    /// window of 2^`windowBits` bytes, made on the first call for that window and kept for the frame's life,
    /// or, when that does not pay (a reply to one client under ``Deflate/minimumBytes``, or a payload that
    /// does not shrink) or no window is allowed, the payload as stored blocks
    /// (``Deflate/writeStored(_:to:)``), made once for every window.
    /// - Parameters:
    ///   - windowBits: 9...15 (``PermessageDeflate/windowBits``); nil: never compress.
    ///   - deflate: the server's compressor.
    /// - Returns: the frame's bytes, header included, and whether they are compressed (else stored).
    func deflatedWire(windowBits: Int?, using deflate: Deflate) -> (wire: [UInt8], compressed: Bool) {
        if let windowBits, isBroadcast || count >= deflate.minimumBytes {
            let index = windowBits - Deflate.windowBitsRange.lowerBound
            if incompressibleWindows & (1 << index) == 0 {
                if index < deflated.count, let wire = deflated[index] { return (wire, true) }
                let storedLength = Deflate.storedLength(count)
                let made = deflate.compress(UnsafeRawBufferPointer(start: payload, count: count), windowBits: windowBits) { body in
                    body.count < storedLength ? Self.wire(payloadLength: body.count) { $0.copyMemory(from: body) } : nil
                }
                if let wire = made ?? nil {
                    if deflated.count <= index { deflated += repeatElement(nil, count: index + 1 - deflated.count) }
                    deflated[index] = wire
                    return (wire, true)
                }
                incompressibleWindows |= 1 << index
            }
        }
        if let stored { return (stored, false) }
        let message = UnsafeRawBufferPointer(start: payload, count: count)
        let wire = Self.wire(payloadLength: Deflate.storedLength(count)) { out in
            Deflate.writeStored(message, to: out.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        stored = wire
        return (wire, false)
    }

    /// One exactly sized allocation: the header for a compressed text frame of `payloadLength` bytes
    /// (RSV1 set), then the payload `fill` writes into the rest.
    private static func wire(payloadLength: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> [UInt8] {
        let headerLength = WebSocketFrameHeader.length(payloadLength: payloadLength)
        return [UInt8](unsafeUninitializedCapacity: headerLength + payloadLength) { buffer, initialized in
            WebSocketFrameHeader.write(payloadLength: payloadLength, compressed: true, to: buffer.baseAddress!)
            fill(UnsafeMutableRawBufferPointer(start: buffer.baseAddress! + headerLength, count: payloadLength))
            initialized = headerLength + payloadLength
        }
    }
}

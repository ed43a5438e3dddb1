/// One outgoing WebSocket text message, encoded once and written to any number of clients.
///
/// The payload sits after ``headroom`` bytes, where libwebsockets writes the frame header in place
/// (`LWS_PRE`), so the same bytes go to every client with no copy. For clients that negotiated
/// permessage-deflate the frame is written whole, header included, past lws's framing (`LWS_WRITE_RAW`): the
/// header RFC 6455 §5.2 gives it, RSV1 clear, in that same headroom (``plainWire()``), or its compressed form
/// (RFC 7692 §7.2.1, RSV1 set), made once per window size on first use and kept here
/// (``deflatedWire(windowBits:using:)``) for every other deflate client.
///
/// The payload is immutable after creation; the headroom, the compressed forms and the delivery counters
/// are touched by the service thread only.
final class Frame: @unchecked Sendable {
    /// Bytes reserved before every payload for the frame header: `LWS_PRE`, read once from the lws adapter.
    static let headroom = LWSConstants.headroom

    private let storage: UnsafeMutablePointer<UInt8>
    /// Payload length in bytes.
    let count: Int
    /// For a broadcast event: when the change was accepted (monotonic ns), and how many clients have yet
    /// to take it; the last write records the change-to-wire time.
    var acceptedAt: UInt64?
    var writesLeft = 0

    /// Copies `bytes` once into a buffer with ``headroom`` zeroed bytes before it.
    init(_ bytes: [UInt8]) {
        let headroom = Self.headroom
        count = bytes.count
        storage = .allocate(capacity: headroom + bytes.count)
        storage.initialize(repeating: 0, count: headroom)
        bytes.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { (storage + headroom).initialize(from: base, count: source.count) }
        }
    }

    /// The compressed frames, header included, by window size (index: bits - 9), made on first use; a
    /// frame whose compressed form is no smaller is marked in ``uncompressedWindows`` instead.
    private var deflated: [[UInt8]?] = []
    /// Window sizes (bit `bits - 9`) for which compressing did not pay: those clients get ``plainWire()``.
    private var uncompressedWindows: UInt8 = 0

    deinit { storage.deallocate() }

    /// Start of the payload (after the headroom), as `lws_write` wants it.
    var payload: UnsafeMutablePointer<UInt8> { storage + Self.headroom }

    /// The payload's bytes (a copy), for tests and logs.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: payload, count: count)) }

    /// The whole uncompressed frame for `LWS_WRITE_RAW`: the header (RSV1 clear) written into the headroom
    /// just before the payload, then the payload. The header is rewritten on every call: lws writes its own
    /// (the same bytes) in that headroom when the frame goes to a client without deflate.
    /// - Returns: where the frame starts, and its length in bytes (header and payload).
    func plainWire() -> (start: UnsafeMutablePointer<UInt8>, count: Int) {
        let headerLength = WebSocketFrameHeader.length(payloadLength: count)
        let start = payload - headerLength
        WebSocketFrameHeader.write(payloadLength: count, compressed: false, to: start)
        return (start, headerLength + count)
    }

    /// The whole compressed frame (header with RSV1 set, then the permessage-deflate payload) for a client
    /// that lets the server use a window of 2^`windowBits` bytes, compressed on the first call for that
    /// window and kept for the frame's life.
    /// - Parameters:
    ///   - windowBits: 9...15 (``PermessageDeflate/windowBits``).
    ///   - deflate: the server's compressor; payloads shorter than its ``Deflate/minimumBytes`` are not
    ///     compressed.
    /// - Returns: the frame's bytes; nil when it goes uncompressed instead (short, no smaller compressed, or
    ///   zlib failed): then write ``plainWire()``.
    func deflatedWire(windowBits: Int, using deflate: Deflate) -> [UInt8]? {
        guard count >= deflate.minimumBytes else { return nil }
        let index = windowBits - Deflate.windowBitsRange.lowerBound
        if uncompressedWindows & (1 << index) != 0 { return nil }
        if index < deflated.count, let wire = deflated[index] { return wire }
        guard let body = deflate.compress(UnsafeRawBufferPointer(start: payload, count: count), windowBits: windowBits),
              body.count + WebSocketFrameHeader.length(payloadLength: body.count) < count + WebSocketFrameHeader.length(payloadLength: count)
        else {
            uncompressedWindows |= 1 << index
            return nil
        }
        let wire = WebSocketFrameHeader.bytes(payloadLength: body.count, compressed: true) + body
        if deflated.count <= index { deflated += repeatElement(nil, count: index + 1 - deflated.count) }
        deflated[index] = wire
        return wire
    }
}

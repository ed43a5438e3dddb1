import CZlib

/// Compresses whole WebSocket messages for permessage-deflate (RFC 7692), each message on its own, so
/// that one compression serves every client.
///
/// A message is compressed by a compressor reset to its initial state (`deflateReset`: no history from
/// earlier messages), ended with a sync flush (`Z_SYNC_FLUSH`), and its trailing `00 00 ff ff` removed
/// (RFC 7692 §7.2.1). Such a payload refers to nothing before it, so the same bytes decode at a client that
/// keeps its LZ77 window between messages (context takeover) and at one that resets it after each message
/// (`server_no_context_takeover`, §7.1.1.1). Its window must not exceed the `server_max_window_bits` the
/// client asked for (§7.1.2.1), so there is one compressor per window size, 2^9 to 2^15 bytes, each made on
/// first use and reused.
///
/// Memory: one compressor at 2^15 bytes with `memLevel` 8 takes about 256 KiB (zlib: window 2 × 32 KiB,
/// chains 64 KiB, hash 64 KiB, pending 64 KiB); there are at most seven, for the whole server, none per
/// connection. Not thread-safe: service thread only.
final class Deflate {
    /// zlib's compression level, 1 (fastest) to 9 (smallest); each message is compressed once for every
    /// client, so the cost of a higher level is paid once per message, not once per delivery.
    let level: Int32
    /// Replies to one client shorter than this many bytes are not compressed but sent as stored blocks
    /// (``writeStored(_:to:)``): below it a JSON message saves a few bytes at best and costs a compression
    /// for that one client (BENCHMARKS.md, "Compress once"). Broadcast frames are compressed whatever their
    /// size: their one compression serves every client.
    let minimumBytes: Int

    /// The smallest and largest window, in bits, a compressor here uses. zlib's raw deflate takes 9 to 15;
    /// a client asking for 8 gets 9, which is safe: zlib never refers further back than the window less
    /// 262 bytes (250 bytes for 2^9), within a 256-byte window.
    static let windowBitsRange = 9...15

    /// zlib's default `memLevel`: 2^15-entry hash (64 KiB), the speed and ratio zlib is tuned for.
    private static let memoryLevel: Int32 = 8

    /// One `z_stream` per window size (index: bits - 9), nil until first used. Allocated, so their address
    /// never moves (zlib keeps a pointer back to the stream in its state).
    private var streams: [UnsafeMutablePointer<z_stream>?] = Array(repeating: nil, count: windowBitsRange.count)

    /// Messages compressed since start (one per message and window size).
    private(set) var compressions = 0
    /// Where zlib writes, reused between messages (its length is what zlib may fill).
    private var scratch: [UInt8] = []
    /// Largest scratch buffer kept after a message, in bytes (a 64 KiB message's bound, about).
    private static let scratchKept = 80 * 1024

    /// - Parameters:
    ///   - level: zlib level, 1...9. Default 6 (zlib's default: measured in BENCHMARKS.md).
    ///   - minimumBytes: payloads shorter than this are not compressed. Default 128.
    init(level: Int32 = 6, minimumBytes: Int = 128) {
        self.level = level
        self.minimumBytes = minimumBytes
    }

    deinit {
        for stream in streams {
            guard let stream else { continue }
            deflateEnd(stream)
            stream.deallocate()
        }
    }

    /// The window, in bits, a message for a client that allows `allowed` bits is compressed with: `allowed`
    /// clamped to ``windowBitsRange`` (8 → 9, see there).
    static func windowBits(allowing allowed: Int) -> Int {
        min(max(allowed, windowBitsRange.lowerBound), windowBitsRange.upperBound)
    }

    /// Compresses one message (RFC 7692 §7.2.1): raw deflate with a window of 2^`windowBits` bytes from a
    /// fresh state, sync flush, the trailing `00 00 ff ff` removed, into a scratch buffer reused from one
    /// message to the next (so the caller makes the one allocation it keeps).
    /// - Parameters:
    ///   - message: the uncompressed payload (a UTF-8 JSON text), any length.
    ///   - windowBits: the window, 9...15 (see ``windowBits(allowing:)``).
    ///   - body: takes the compressed payload, to be sent with RSV1 set; the bytes are valid only inside it.
    /// - Returns: what `body` returned; nil if zlib failed (out of memory), in which case the message goes
    ///   stored (``writeStored(_:to:)``).
    func compress<Result>(_ message: UnsafeRawBufferPointer, windowBits: Int,
                          _ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        precondition(Self.windowBitsRange.contains(windowBits), "window bits \(windowBits) outside 9...15")
        guard let stream = stream(windowBits: windowBits) else { return nil }
        guard deflateReset(stream) == Z_OK else { return nil }
        defer {
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
            stream.pointee.avail_in = 0
            stream.pointee.avail_out = 0
            // A huge message's scratch is not kept for the small ones that follow.
            if scratch.count > Self.scratchKept { scratch = [] }
        }
        // deflateBound covers a stream ended with Z_FINISH; a sync flush adds at most an empty stored block.
        let bound = Int(deflateBound(stream, UInt(message.count))) + 16
        if scratch.count < bound { scratch = [UInt8](repeating: 0, count: bound) }
        var produced = 0
        stream.pointee.next_in = UnsafeMutablePointer(mutating: message.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = UInt32(message.count)
        while true {
            if produced == scratch.count { scratch += repeatElement(0, count: max(64, scratch.count / 2)) }
            let status = scratch.withUnsafeMutableBufferPointer { out -> Int32 in
                stream.pointee.next_out = out.baseAddress! + produced
                stream.pointee.avail_out = UInt32(out.count - produced)
                let status = deflate(stream, Z_SYNC_FLUSH)
                produced = out.count - Int(stream.pointee.avail_out)
                return status
            }
            guard status == Z_OK || status == Z_BUF_ERROR else { return nil }
            // Done once zlib has taken every input byte and left room unused (zlib: call again while
            // avail_out is 0 after a flush).
            if stream.pointee.avail_in == 0, stream.pointee.avail_out > 0 { break }
        }
        // The sync flush ends with an empty stored block, 00 00 ff ff; the receiver puts it back (§7.2.2).
        guard produced >= 4, scratch[produced - 4] == 0, scratch[produced - 3] == 0,
              scratch[produced - 2] == 0xff, scratch[produced - 1] == 0xff else { return nil }
        compressions += 1
        return scratch.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[..<(produced - 4)])) }
    }

    /// Payload bytes of `length` message bytes as stored blocks (``writeStored(_:to:)``): 5 more per
    /// 65,535 bytes, and 1.
    static func storedLength(_ length: Int) -> Int {
        length + 5 * ((length + 65_534) / 65_535) + 1
    }

    /// Writes `message` as a permessage-deflate payload made of deflate *stored* blocks (RFC 1951 §3.2.4:
    /// a byte with BFINAL 0 and BTYPE 00, then LEN and its one's complement NLEN, little-endian, then up to
    /// 65,535 bytes as they are), the form for a message not worth compressing. It costs a copy and 5 bytes
    /// per block, refers to no earlier byte (so it decodes whatever window or context the client keeps), and
    /// is sent with RSV1 set like every compressed message: lws 4.1's own client loops on a message with RSV1
    /// clear once it negotiated permessage-deflate, though RFC 7692 §6 allows one. It ends with one byte
    /// 0x00, the header of the empty stored block that the receiver's `00 00 ff ff` completes (RFC 7692
    /// §7.2.2), as a sync flush's output does once its last 4 bytes are removed; without it a client that
    /// keeps its context would read the next message inside that block. An empty message is that byte
    /// alone (RFC 7692 §7.2.3.6).
    /// - Parameters:
    ///   - message: the payload, any length.
    ///   - out: room for ``storedLength(_:)`` bytes.
    /// - Returns: the bytes written.
    @discardableResult
    static func writeStored(_ message: UnsafeRawBufferPointer, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var written = 0, taken = 0
        while taken < message.count, let base = message.baseAddress {
            let length = min(65_535, message.count - taken)
            out[written] = 0
            out[written + 1] = UInt8(truncatingIfNeeded: length)
            out[written + 2] = UInt8(truncatingIfNeeded: length >> 8)
            out[written + 3] = ~UInt8(truncatingIfNeeded: length)
            out[written + 4] = ~UInt8(truncatingIfNeeded: length >> 8)
            (out + written + 5).initialize(from: (base + taken).assumingMemoryBound(to: UInt8.self), count: length)
            written += 5 + length
            taken += length
        }
        out[written] = 0
        return written + 1
    }

    /// ``compress(_:windowBits:_:)`` returning the compressed payload as an array (tests).
    func compress(_ message: UnsafeRawBufferPointer, windowBits: Int) -> [UInt8]? {
        compress(message, windowBits: windowBits) { Array($0) }
    }

    /// The compressor for `windowBits`, made on first use; nil if zlib could not allocate it.
    private func stream(windowBits: Int) -> UnsafeMutablePointer<z_stream>? {
        let index = windowBits - Self.windowBitsRange.lowerBound
        if let stream = streams[index] { return stream }
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard czlib_deflate_init2(stream, level, -Int32(windowBits), Self.memoryLevel) == Z_OK else {
            stream.deallocate()
            return nil
        }
        streams[index] = stream
        return stream
    }
}

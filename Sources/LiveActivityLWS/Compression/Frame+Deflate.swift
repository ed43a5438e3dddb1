import LiveActivityCore

/// A frame's permessage-deflate forms (RFC 7692), made with the server's compressor (zlib) and kept in the
/// frame (``Frame/deflated``, ``Frame/stored``) for every other deflate client. Service thread only.
extension Frame {
    /// The whole frame for a permessage-deflate client (RSV1 set, for `LWS_WRITE_RAW`): compressed with a
    /// window of 2^`windowBits` bytes, made on the first call for that window and kept for the frame's life,
    /// or, when that does not pay (a reply to one client under ``Deflate/minimumBytes``, or a payload that
    /// does not shrink) or no window is allowed, the payload as stored blocks
    /// (``Deflate/writeStored(_:to:)``), made once for every window.
    /// - Parameters:
    ///   - windowBits: 9...15 (``PermessageDeflate/windowBits``); nil: never compress.
    ///   - deflate: the server's compressor.
    /// - Returns: the frame's bytes, header included (kept by the frame: valid, unchanged, while it lives), and
    ///   whether they are compressed (else stored).
    func deflatedWire(windowBits: Int?, using deflate: Deflate) -> (wire: UnsafeRawBufferPointer, compressed: Bool) {
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

    /// One exactly sized allocation, which the frame frees (``Frame/deflated``, ``Frame/stored``): the header for
    /// a compressed text frame of `payloadLength` bytes (RSV1 set), then the payload `fill` writes into the rest.
    fileprivate static func wire(payloadLength: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> UnsafeRawBufferPointer {
        let headerLength = WebSocketFrameHeader.length(payloadLength: payloadLength)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: headerLength + payloadLength, alignment: 1)
        let start = buffer.baseAddress!.bindMemory(to: UInt8.self, capacity: headerLength + payloadLength)
        WebSocketFrameHeader.write(payloadLength: payloadLength, compressed: true, to: start)
        fill(UnsafeMutableRawBufferPointer(start: buffer.baseAddress! + headerLength, count: payloadLength))
        return UnsafeRawBufferPointer(buffer)
    }
}

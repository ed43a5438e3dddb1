/// The header of one whole WebSocket text frame sent by the server (RFC 6455 §5.2), for frames written past
/// libwebsockets' own framing (`LWS_WRITE_RAW`): FIN set (the message is one frame), RSV1 set when the payload
/// is compressed (RFC 7692 §6), RSV2 and RSV3 clear, opcode 1 (text), no mask (§5.1: a server never masks),
/// and the payload length in the shortest form: 7 bits (0...125), 16 bits after 126 (126...65,535), or
/// 64 bits after 127, most significant bit 0 (§5.2). Pure; any thread. In Core beside ``Frame``, which
/// writes one before every payload.
package enum WebSocketFrameHeader {
    /// FIN | opcode text (0x81).
    package static let finalText: UInt8 = 0x81
    /// RSV1: "per-message compressed" under permessage-deflate (RFC 7692 §6).
    package static let rsv1: UInt8 = 0x40
    /// The longest header: 2 bytes and a 64-bit length.
    package static let maximumLength = 10

    /// The header's length, in bytes, for a payload of `payloadLength` bytes: 2, 4 or 10.
    package static func length(payloadLength: Int) -> Int {
        payloadLength < 126 ? 2 : payloadLength <= 0xFFFF ? 4 : 10
    }

    /// Writes the header for a text frame of `payloadLength` bytes at `start`, which must have room for
    /// ``length(payloadLength:)`` bytes.
    /// - Parameter compressed: set RSV1 (the payload is a permessage-deflate message).
    /// - Returns: the number of bytes written.
    @discardableResult
    package static func write(payloadLength: Int, compressed: Bool, to start: UnsafeMutablePointer<UInt8>) -> Int {
        precondition(payloadLength >= 0)
        start[0] = finalText | (compressed ? rsv1 : 0)
        switch length(payloadLength: payloadLength) {
        case 2:
            start[1] = UInt8(payloadLength)
            return 2
        case 4:
            start[1] = 126
            start[2] = UInt8(truncatingIfNeeded: payloadLength >> 8)
            start[3] = UInt8(truncatingIfNeeded: payloadLength)
            return 4
        default:
            start[1] = 127
            let length = UInt64(payloadLength)
            for index in 0..<8 { start[2 + index] = UInt8(truncatingIfNeeded: length >> (56 - 8 * UInt64(index))) }
            return 10
        }
    }

    /// The header for a text frame of `payloadLength` bytes, as bytes (2, 4 or 10).
    package static func bytes(payloadLength: Int, compressed: Bool) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: length(payloadLength: payloadLength))
        header.withUnsafeMutableBufferPointer { _ = write(payloadLength: payloadLength, compressed: compressed, to: $0.baseAddress!) }
        return header
    }
}

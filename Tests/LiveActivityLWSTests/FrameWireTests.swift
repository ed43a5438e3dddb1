import Testing
import LiveActivityCore
@testable import LiveActivityLWS

/// A frame's plain wire form (its header in the headroom, RFC 6455 §5.2) and the batch that gathers several
/// whole frames into one write: parsed back with an independent reading of §5.2.
struct FrameWireTests {
    /// Splits `bytes` into whole server frames: (first byte, payload) each, or nil when they do not parse
    /// exactly (a mask bit, a length past the end, bytes left over).
    private func frames(_ bytes: [UInt8]) -> [(first: UInt8, payload: [UInt8])]? {
        var out: [(UInt8, [UInt8])] = []
        var at = 0
        while at < bytes.count {
            guard bytes.count - at >= 2, bytes[at + 1] & 0x80 == 0 else { return nil }
            var length = Int(bytes[at + 1]), offset = 2
            if length == 126 {
                guard bytes.count - at >= 4 else { return nil }
                length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]); offset = 4
            } else if length == 127 {
                guard bytes.count - at >= 10 else { return nil }
                length = bytes[(at + 2)..<(at + 10)].reduce(0) { $0 << 8 | Int($1) }; offset = 10
            }
            guard bytes.count - at - offset >= length else { return nil }
            out.append((bytes[at], Array(bytes[(at + offset)..<(at + offset + length)])))
            at += offset + length
        }
        return out
    }

    private func payload(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    @Test(arguments: [0, 1, 125, 126, 65_535, 65_536, 100_000])
    func aFramesWireIsOneFinalUnmaskedTextFrameOfItsPayload(count: Int) throws {
        let frame = Frame(payload(count))
        let parsed = try #require(frames(Array(frame.wire)), "the wire does not parse as one frame")
        #expect(parsed.count == 1)
        #expect(parsed[0].first == 0x81, "FIN, no RSV bits, opcode 1 (text)")
        #expect((parsed[0].payload == payload(count)) as Bool, "the payload follows the header")
        #expect(frame.wire.count == frame.headerLength + count)
        #expect((frame.bytes == payload(count)) as Bool, "the payload itself is untouched")
    }

    @Test func aBatchIsItsFramesWholeAndInOrderAndGrowsPastItsBuffer() throws {
        let batch = WriteBatch(capacity: 64)
        let sizes = [3, 200, 0, 130, 70_000]
        // The frames live as long as the batch's bytes are read (`wire` points into a frame's own buffer).
        let made = sizes.map { Frame(payload($0)) }
        for frame in made { batch.append(frame.wire) }
        let parsed = try #require(frames(Array(batch.bytes)), "the batch does not parse as whole frames")
        withExtendedLifetime(made) {}
        #expect(parsed.map(\.payload.count) == sizes)
        #expect(parsed.allSatisfy { $0.first == 0x81 })
        #expect(!batch.hasRoom, "past WriteBatch.limit no frame is added")
        batch.reset()
        #expect(batch.bytes.isEmpty && batch.hasRoom, "emptied, and shrunk back from the 70 KB frame")
        let five = Frame(payload(5))
        batch.append(five.wire)
        withExtendedLifetime(five) {}
        #expect(try #require(frames(Array(batch.bytes))).map(\.payload) == [payload(5)], "reused from the start")
    }
}

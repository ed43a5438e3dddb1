import CZlib
import Foundation
import Testing
import LiveActivityCore
@testable import LiveActivityLWS

/// permessage-deflate without sockets: the frame header builder (RFC 6455 §5.2), the compressor (RFC 7692
/// §7.2.1) checked by inflating what it makes as clients do (keeping their window between messages or not,
/// with the window sizes they allow), a frame's compressed forms made once, and the offer parser.
struct DeflateTests {
    /// A receiving client's inflater (RFC 7692 §7.2.2): raw inflate with a window of 2^`windowBits` bytes,
    /// `00 00 ff ff` appended to each message; with `takeover`, its window carries over between messages.
    /// It inflates 64 bytes at a time, so a match must come from the window, not from the output of the same
    /// call: zlib refuses a distance beyond the window then (it lets one within a larger output through).
    final class Inflater {
        private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        private let takeover: Bool

        init(windowBits: Int, takeover: Bool = true) {
            stream.initialize(to: z_stream())
            let status = czlib_inflate_init2(stream, -Int32(windowBits))
            precondition(status == Z_OK)
            self.takeover = takeover
        }

        deinit {
            inflateEnd(stream)
            stream.deallocate()
        }

        /// The message `payload` decodes to, or nil when zlib refuses it (e.g. a distance beyond the window).
        func message(_ payload: [UInt8]) -> [UInt8]? {
            defer { if !takeover { inflateReset(stream) } }
            var input = payload + [0, 0, 0xff, 0xff]
            var output: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64)
            return input.withUnsafeMutableBufferPointer { input -> [UInt8]? in
                stream.pointee.next_in = input.baseAddress
                stream.pointee.avail_in = UInt32(input.count)
                repeat {
                    let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                        stream.pointee.next_out = out.baseAddress
                        stream.pointee.avail_out = UInt32(out.count)
                        return inflate(stream, Z_SYNC_FLUSH)
                    }
                    guard status == Z_OK || status == Z_BUF_ERROR else { return nil }
                    output += chunk.prefix(chunk.count - Int(stream.pointee.avail_out))
                } while stream.pointee.avail_out == 0
                return stream.pointee.avail_in == 0 ? output : nil
            }
        }
    }

    /// JSON shaped like an `updated` event (repetitive keys, as ours are).
    private func event(_ seq: Int) -> [UInt8] {
        let alert = #"{"title":"bench","body":"{\"seq\":\#(seq),\"ts\":123456789}"}"#
        return Array(#"{"type":"activity","event":"updated","sequence":\#(seq),"activity":{"id":"A","attributesType":"workout","attributes":{"workout":"yoga"},"content":{"state":{"workoutTimer":{"start":"2026-12-01T13:00:00.000Z","end":"2026-12-01T18:00:00.000Z"}},"staleDate":null,"relevanceScore":0},"activityState":"active","startDate":"2026-12-01T13:00:00.000Z","endDate":null,"dismissalDate":null},"alert":\#(alert),"serverTime":"2026-12-01T13:00:01.000Z"}"#.utf8)
    }

    /// `count` bytes that do not compress (a fixed pseudo-random sequence).
    private func noise(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    private func compress(_ deflate: Deflate, _ message: [UInt8], windowBits: Int = 15) -> [UInt8]? {
        message.withUnsafeBytes { deflate.compress($0, windowBits: windowBits) }
    }

    // MARK: Frame header (RFC 6455 §5.2)

    @Test(arguments: [
        (0, false, [0x81, 0x00]),
        (125, false, [0x81, 125]),
        (125, true, [0xC1, 125]),
        (126, true, [0xC1, 126, 0x00, 126]),
        (65_535, false, [0x81, 126, 0xFF, 0xFF]),
        (65_536, true, [0xC1, 127, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00]),
        (0x1_2345_6789, false, [0x81, 127, 0, 0, 0, 0x01, 0x23, 0x45, 0x67, 0x89]),
    ] as [(Int, Bool, [UInt8])])
    func headerIsFinTextUnmaskedWithTheShortestLength(length: Int, compressed: Bool, expected: [UInt8]) {
        #expect(WebSocketFrameHeader.bytes(payloadLength: length, compressed: compressed) == expected)
        #expect(WebSocketFrameHeader.length(payloadLength: length) == expected.count)
    }

    // MARK: Compressor (RFC 7692 §7.2.1)

    @Test func aMessageRoundTripsAndEndsWithoutTheSyncFlushTrailer() throws {
        let deflate = Deflate()
        let message = event(1)
        let compressed = try #require(compress(deflate, message))
        #expect(compressed.count < message.count * 2 / 3)
        #expect(Array(compressed.suffix(4)) != [0, 0, 0xff, 0xff])
        #expect(Inflater(windowBits: 15).message(compressed) == message)
        #expect(deflate.compressions == 1)
    }

    @Test func eachMessageStandsAloneForClientsWithAndWithoutContextTakeover() throws {
        let deflate = Deflate()
        let messages = (1...5).map(event)
        let compressed = try messages.map { try #require(compress(deflate, $0)) }
        // Identical input gives identical output: no history carries over between messages.
        #expect(try #require(compress(deflate, messages[0])) == compressed[0])
        let keeping = Inflater(windowBits: 15, takeover: true)
        let resetting = Inflater(windowBits: 15, takeover: false)
        for (plain, packed) in zip(messages, compressed) {
            #expect(keeping.message(packed) == plain)
            #expect(resetting.message(packed) == plain)
            #expect(Inflater(windowBits: 15).message(packed) == plain)
        }
    }

    @Test func theWindowNeverExceedsWhatTheClientAllows() throws {
        let deflate = Deflate()
        // A 1,000-byte block repeated: a 2^15 window refers 1,000 bytes back, beyond a 2^9 (512-byte) window.
        let block = noise(1_000)
        let message = block + block + event(7)
        let wide = try #require(compress(deflate, message, windowBits: 15))
        #expect(Inflater(windowBits: 9).message(wide) == nil, "the test needs a message a 2^9 window cannot decode from a 2^15 one")
        for bits in Deflate.windowBitsRange {
            let packed = try #require(compress(deflate, message, windowBits: bits))
            #expect(Inflater(windowBits: bits).message(packed) == message, "window \(bits)")
            #expect(Inflater(windowBits: bits, takeover: false).message(packed) == message, "window \(bits)")
        }
        // A client asking for 8 gets 9, whose matches never reach more than 250 bytes back.
        #expect(Deflate.windowBits(allowing: 8) == 9)
        #expect(Deflate.windowBits(allowing: 15) == 15)
        let nine = try #require(compress(deflate, message, windowBits: Deflate.windowBits(allowing: 8)))
        #expect(Inflater(windowBits: 8).message(nine) == message)
    }

    @Test func emptyAndLargeMessagesRoundTrip() throws {
        let deflate = Deflate()
        let empty = try #require(compress(deflate, []))
        #expect(Inflater(windowBits: 15).message(empty) == [])
        let large = (0..<400).flatMap(event) + noise(100_000)
        let packed = try #require(compress(deflate, large))
        #expect(Inflater(windowBits: 15).message(packed) == large)
    }

    // MARK: A frame's compressed forms

    /// A server frame's first byte and payload (RFC 6455 §5.2), checking that the length is its whole rest.
    private func parse(_ wire: [UInt8]) -> (first: UInt8, payload: [UInt8])? {
        guard wire.count >= 2, wire[1] & 0x80 == 0 else { return nil }
        var length = Int(wire[1]), offset = 2
        if length == 126 { length = Int(wire[2]) << 8 | Int(wire[3]); offset = 4 }
        if length == 127 { length = wire[2..<10].reduce(0) { $0 << 8 | Int($1) }; offset = 10 }
        guard wire.count == offset + length else { return nil }
        return (wire[0], Array(wire[offset...]))
    }

    @Test func aFrameIsCompressedOncePerWindowAndTheSameBytesServeEveryClient() throws {
        let deflate = Deflate(minimumBytes: 128)
        let message = event(3)
        let frame = Frame(message)
        defer { withExtendedLifetime(frame) {} }  // it keeps the bytes `wire` points to
        let (wire, compressed) = frame.deflatedWire(windowBits: 15, using: deflate)
        #expect(compressed)
        #expect(frame.deflatedWire(windowBits: 15, using: deflate).wire.baseAddress == wire.baseAddress, "the same bytes, kept")
        #expect(deflate.compressions == 1)
        // FIN | RSV1 | text, the compressed length, the compressed payload.
        let (first, payload) = try #require(parse(Array(wire)))
        #expect(first == 0xC1)
        #expect(payload.count < message.count * 2 / 3)
        #expect(Inflater(windowBits: 15).message(payload) == message)
        // Another window is another compression, kept too.
        let narrow = frame.deflatedWire(windowBits: 9, using: deflate)
        #expect(narrow.compressed && frame.deflatedWire(windowBits: 9, using: deflate).wire.baseAddress == narrow.wire.baseAddress)
        #expect(deflate.compressions == 2)
        #expect(try Inflater(windowBits: 9).message(#require(parse(Array(narrow.wire))).payload) == message)
    }

    @Test func shortAndIncompressibleFramesGoStoredWithRSV1() throws {
        let deflate = Deflate(minimumBytes: 128)
        let short = Array(event(1).prefix(127))
        let shortFrame = Frame(short)
        defer { withExtendedLifetime(shortFrame) {} }
        let (wire, compressed) = shortFrame.deflatedWire(windowBits: 15, using: deflate)
        #expect(!compressed)
        #expect(deflate.compressions == 0, "a frame under the threshold is not even compressed")
        let (first, payload) = try #require(parse(Array(wire)))
        #expect(first == 0xC1, "stored is still a permessage-deflate message: RSV1 set")
        #expect(payload.count == short.count + 6)
        #expect(Inflater(windowBits: 15).message(payload) == short)

        let randomBytes = noise(2_000)
        let random = Frame(randomBytes)
        defer { withExtendedLifetime(random) {} }
        let stored = random.deflatedWire(windowBits: 15, using: deflate)
        #expect(!stored.compressed && !random.deflatedWire(windowBits: 15, using: deflate).compressed)
        #expect(deflate.compressions == 1, "the verdict is kept: compressed once, found no smaller")
        #expect(try Inflater(windowBits: 9).message(#require(parse(Array(stored.wire))).payload) == randomBytes)
        #expect(random.deflatedWire(windowBits: nil, using: deflate).wire.baseAddress == stored.wire.baseAddress, "stored once for every window")
        #expect(Frame(Array(event(1).prefix(128))).deflatedWire(windowBits: 15, using: deflate).compressed)
    }

    @Test func aShortBroadcastFrameIsCompressedAllTheSame() throws {
        let deflate = Deflate(minimumBytes: 128)
        let tick = Array(#"{"serverTime":"2026-12-01T13:43:58.001Z","timers":[{"activityId":"60BBDAC3-DA98-437B-A464-EDDD1C09C3A3","remainingSeconds":15362}],"type":"tick"}"#.utf8)
        let hub = Hub(maximumQueuedBytes: 1 << 20)
        let frame = Frame(Array(tick.prefix(100)))
        _ = hub.tick(frame) { _ in nil }
        defer { withExtendedLifetime(frame) {} }
        #expect(frame.isBroadcast)
        let (wire, compressed) = frame.deflatedWire(windowBits: 15, using: deflate)
        #expect(compressed, "one compression serves every client, whatever the size")
        #expect(try Inflater(windowBits: 15).message(#require(parse(Array(wire))).payload) == Array(tick.prefix(100)))
        #expect(!Frame(Array(tick.prefix(100))).deflatedWire(windowBits: 15, using: deflate).compressed, "a reply that short is stored")
    }


    @Test func storedBlocksDecodeWhateverTheWindowAndContext() {
        let keeping = Inflater(windowBits: 9, takeover: true)
        for message in [[], Array("x".utf8), event(1), noise(65_535), noise(65_536), noise(200_000)] as [[UInt8]] {
            var payload = [UInt8](repeating: 0xAA, count: Deflate.storedLength(message.count))
            let written = payload.withUnsafeMutableBufferPointer { out in
                message.withUnsafeBytes { Deflate.writeStored($0, to: out.baseAddress!) }
            }
            #expect(written == payload.count)
            #expect(Inflater(windowBits: 9, takeover: false).message(payload) == message, "\(message.count) bytes")
            #expect(keeping.message(payload) == message, "\(message.count) bytes, after the others")
        }
        #expect(Deflate.storedLength(0) == 1)
        #expect(Deflate.storedLength(65_535) == 65_541)
        #expect(Deflate.storedLength(65_536) == 65_547)
    }

    // MARK: The client's offer (RFC 7692 §5, §7.1.2.1)

    @Test(arguments: [
        ("permessage-deflate", 15, nil),
        ("permessage-deflate; client_max_window_bits", 15, nil),
        ("permessage-deflate; server_max_window_bits=10", 10, 10),
        ("permessage-deflate; server_max_window_bits=\"12\"; client_no_context_takeover", 12, 12),
        ("Permessage-Deflate ;Server_Max_Window_Bits = 8", 9, 8),
        ("x-webkit-deflate-frame, permessage-deflate; server_max_window_bits=13, permessage-deflate", 13, 13),
        ("permessage-deflate; server_max_window_bits=11, permessage-deflate; server_max_window_bits=14", 11, 11),
        ("permessage-deflate; server_max_window_bits=abc", nil, nil),
    ] as [(String, Int?, Int?)])
    func theWindowIsTheSmallestAnyOfferAllowsAndTheAnswerSaysWhatWasAsked(offer: String, bits: Int?, answered: Int?) throws {
        let negotiated = try #require(PermessageDeflate(offer: offer))
        #expect(negotiated.windowBits == bits)
        #expect(negotiated.answeredWindowBits == answered, "8 is answered as asked: a 2^9 zlib window never reaches past 256 bytes")
    }

    @Test func theClientResetsItsContextOnlyWhenEveryOfferSaysSo() throws {
        #expect(try #require(PermessageDeflate(offer: "permessage-deflate; client_no_context_takeover")).clientNoContextTakeover)
        #expect(try #require(PermessageDeflate(offer: "permessage-deflate; Client_No_Context_Takeover; server_max_window_bits=10"))
            .clientNoContextTakeover)
        #expect(try !#require(PermessageDeflate(offer: "permessage-deflate; server_no_context_takeover")).clientNoContextTakeover)
        #expect(try !#require(PermessageDeflate(offer: "permessage-deflate; client_no_context_takeover, permessage-deflate"))
            .clientNoContextTakeover)
    }

    @Test func aMalformedWindowMeansStoredOnlyAndNoOfferMeansNone() {
        for offer in ["permessage-deflate; server_max_window_bits", "permessage-deflate; server_max_window_bits=7",
                      "permessage-deflate; server_max_window_bits=16", "permessage-deflate; server_max_window_bits=09",
                      "permessage-deflate; server_max_window_bits=ten"] {
            #expect(PermessageDeflate(offer: offer)?.windowBits == .some(nil), "\(offer)")
        }
        #expect(PermessageDeflate(offer: "") == nil)
        #expect(PermessageDeflate(offer: "x-webkit-deflate-frame") == nil)
        #expect(PermessageDeflate(offer: "permessage-deflatex") == nil)
    }
}

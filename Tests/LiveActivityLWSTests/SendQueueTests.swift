import Glibc
import Testing
@testable import LiveActivityLWS

/// The broadcast pass's send queue (io_uring) on real sockets: every queued send reaches its socket whole and
/// in order, a full socket answers at once with what it took, a closed peer with `-EPIPE`, and a full queue says
/// so. Connected AF_UNIX stream pairs stand in for the clients' TCP connections (the same `send(2)` semantics:
/// short counts, `EAGAIN`, `EPIPE`).
struct SendQueueTests {
    /// A connected stream pair: (the server's end, the client's end).
    private func pair() throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        return (ends[0], ends[1])
    }

    /// Everything readable on `socket` now (it is made non-blocking).
    private func drain(_ socket: Int32) -> [UInt8] {
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let got = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if got <= 0 { return out }
            out += buffer[0..<got]
        }
    }

    /// A stand-in for a connection's lws handle (the queue only hands it back).
    private func handle(_ index: Int) -> OpaquePointer { OpaquePointer(bitPattern: 0x1000 + 16 * index)! }

    @Test func eachQueuedSendReachesItsSocketWholeWithOneSubmission() throws {
        let queue = try #require(SendQueue(), "io_uring refused on this machine")
        let sockets = try (0..<3).map { _ in try pair() }
        defer { for (a, b) in sockets { close(a); close(b) } }
        let messages: [[UInt8]] = [Array("first".utf8), Array(repeating: 0x61, count: 620), Array("third frame".utf8)]
        var results: [(OpaquePointer, Int)] = []
        try messages.enumerated().map { index, bytes in (index, bytes) }.forEach { index, bytes in
            try bytes.withUnsafeBytes { raw in
                queue.queue(raw, on: sockets[index].0, of: handle(index))
                #expect(!queue.isEmpty)
                if index == messages.count - 1 {
                    queue.submit { send, result in results.append((send.wsi, result)) }
                }
                _ = try #require(raw.baseAddress)
            }
        }
        #expect(queue.isEmpty)
        #expect(results.map { $0.1 } == messages.map(\.count))
        #expect(results.map { $0.0 } == (0..<3).map(handle))
        for (index, (_, client)) in sockets.enumerated() { #expect(drain(client) == messages[index]) }
    }

    @Test func aFullSocketAnswersAtOnceWithWhatItTook() throws {
        let queue = try #require(SendQueue())
        let (server, client) = try pair()
        defer { close(server); close(client) }
        let big = [UInt8](repeating: 0x62, count: 4 << 20)  // more than a stream socket's buffer
        var taken = -1
        big.withUnsafeBytes { raw in
            queue.queue(raw, on: server, of: handle(0))
            queue.submit { _, result in taken = result }
        }
        #expect(taken > 0 && taken < big.count, "took \(taken) of \(big.count)")
        // Full now: the next send takes nothing and says so (EAGAIN) rather than wait.
        var again = 0
        big.withUnsafeBytes { raw in
            queue.queue(raw, on: server, of: handle(0))
            queue.submit { _, result in again = result }
        }
        #expect(again == -Int(EAGAIN))
        #expect(drain(client).count == taken)
    }

    @Test func aClosedPeerIsBrokenPipeWithoutASignal() throws {
        let queue = try #require(SendQueue())
        let (server, client) = try pair()
        defer { close(server) }
        close(client)
        var result = 0
        let bytes: [UInt8] = Array("to nobody".utf8)
        bytes.withUnsafeBytes { raw in
            queue.queue(raw, on: server, of: handle(0))
            queue.submit { _, answer in result = answer }
        }
        #expect(result == -Int(EPIPE))
        #expect(!queue.isBroken)
    }

    @Test func aFullQueueSaysSoAndEachSubmissionKeepsEachSocketsOrder() throws {
        let queue = try #require(SendQueue())
        // Over 64 connections, so that none holds more small sends than its buffer takes.
        let width = 64
        let sockets = try (0..<width).map { _ in try pair() }
        defer { for (a, b) in sockets { close(a); close(b) } }
        let total = SendQueue.capacity + 904
        let alphabet: [UInt8] = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        var completed = 0, submissions = 0
        alphabet.withUnsafeBytes { raw in
            for index in 0..<total {
                if queue.isFull {
                    #expect(index == SendQueue.capacity)
                    queue.submit { _, result in if result == 1 { completed += 1 } }
                    submissions += 1
                }
                let letter = UnsafeRawBufferPointer(rebasing: raw[(index / width % 26)..<(index / width % 26 + 1)])
                queue.queue(letter, on: sockets[index % width].0, of: handle(index % width))
            }
            queue.submit { _, result in if result == 1 { completed += 1 } }
        }
        #expect(submissions == 1)
        #expect(completed == total)
        for (which, (_, client)) in sockets.enumerated() {
            let expected = (0..<total).filter { $0 % width == which }.map { alphabet[$0 / width % 26] }
            #expect(drain(client) == expected)
        }
    }
}

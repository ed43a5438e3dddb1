import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityServer

/// The APNs port's HTTP/2 session without sockets: bytes a real client (the `h2` library) sent, in; requests,
/// out; answers, in; bytes, out. The byte streams are the HTTP/2 fuzzer's seeds (Fuzz/corpus-http2/), whose
/// first byte is the fuzzer's flags; the connection preface goes before the rest.
struct HTTP2SessionTests {
    /// A seed's client bytes after its flag byte.
    static func seed(_ name: String) throws -> [UInt8] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/corpus-http2/\(name)")
        return Array(try Data(contentsOf: url).dropFirst())
    }

    final class Recorder {
        var requests: [(Int32, HTTPRequest)] = []
    }

    static func session(_ recorder: Recorder, bodyLimit: Int = 8192) -> HTTP2Session {
        HTTP2Session(limits: .init(maximumStreams: 4, maximumHeaderBytes: 2048, maximumBodyBytes: bodyLimit), secure: false,
                     logger: Logger(label: "test", level: .error), label: "t",
                     dispatch: { recorder.requests.append(($0, $1)) },
                     refusal: { HTTPResponse(status: HTTPStatus($0.status), body: Array($0.reason.utf8)) })
    }

    @Test func aClientsPushBecomesARequestAndItsAnswerGoesOut() throws {
        let recorder = Recorder()
        let session = Self.session(recorder)
        session.receive(HTTP2Session.preface + (try Self.seed("push.bin")))
        #expect(session.ending == nil && session.isEstablished)
        #expect(recorder.requests.count == 1)
        let (stream, request) = try #require(recorder.requests.first)
        #expect(request.method == .post && request.path == "/3/device/" + String(repeating: "a", count: 64))
        #expect(request.headers["apns-push-type"] == "liveactivity" && request.version == .http2)
        #expect(request.headers["apns-topic"] == "com.example.app.push-type.liveactivity")
        #expect(String(decoding: request.body, as: UTF8.self).contains("\"event\": \"update\""))
        #expect(session.inFlight == 1)
        let before = session.takeOutput()  // SETTINGS and their acknowledgement
        #expect(!before.isEmpty)
        session.respond(stream: stream, with: HTTPResponse(status: .ok, headers: [("apns-id", "X")]))
        #expect(session.inFlight == 0)
        let answer = session.takeOutput()
        #expect(answer.count > 9 && answer[3] == 0x01, "a HEADERS frame goes out")  // RFC 9113 §4.1: type at byte 3
        #expect(session.ending == nil)
    }

    @Test func threeStreamsAtOnceAreThreeRequests() throws {
        let recorder = Recorder()
        let session = Self.session(recorder)
        session.receive(HTTP2Session.preface + (try Self.seed("three-streams.bin")))
        #expect(recorder.requests.map(\.0) == [1, 3, 5])
    }

    @Test func aBodyOverTheLimitIsHandedOverAtOnceCut() throws {
        let recorder = Recorder()
        let session = Self.session(recorder, bodyLimit: 5120)
        session.receive(HTTP2Session.preface + (try Self.seed("big-body.bin")))
        #expect(recorder.requests.count == 1)
        #expect(recorder.requests.first?.1.body.count == 5121, "the limit plus one byte, so the route table answers 413")
    }

    @Test func anHTTP1RequestGetsA505AndTheSessionEnds() {
        let recorder = Recorder()
        let session = Self.session(recorder)
        session.receive(Array("POST /3/device/x HTTP/1.1\r\n".utf8))
        #expect(session.ending == .badPreface)
        let text = String(decoding: session.takeOutput(), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 505 HTTP Version Not Supported\r\n") && text.contains("--http2-prior-knowledge"))
        session.receive(Array("more".utf8))
        #expect(recorder.requests.isEmpty)
    }

    @Test func garbageEndsTheSessionSilently() {
        let session = Self.session(Recorder())
        session.receive([0x16, 0x03, 0x01, 0x00])  // a TLS ClientHello on the h2c port
        #expect(session.ending == .badPreface)
        #expect(session.takeOutput().isEmpty)
    }

    @Test func aPrefaceInPiecesIsStillAPreface() {
        let session = Self.session(Recorder())
        for byte in HTTP2Session.preface { session.receive([byte]) }
        #expect(session.isEstablished && session.ending == nil)
    }
}

// libFuzzer entry for the APNs port's HTTP/2 request parser (issue 18): libnghttp2's server session with our
// callbacks (`HTTP2Session`: preface check, header lists and their limit, bodies and their limit, flood
// counting, refusals) and the header list → `HTTPRequest` step (`HTTP2RequestHead`).
//
// Compiled together with Sources/LiveActivityCore and the HTTP value files of LiveActivityServer into one
// module, linked with libnghttp2 (see Fuzz/run-http2.sh). The first input byte chooses: bit 0 set = feed the
// bytes as they are (else the HTTP/2 preface goes first, so most inputs reach the frame parser); bits 1-7 = the
// chunk size the rest is fed in (1 + n × 7 bytes). Every request handed over is answered at once, with a body
// or without, as the service thread would answer it.
//
// Invariants (a broken one calls fatalError; libFuzzer writes the input as crash-<sha1>):
// - every request handed over is HTTP/2, has an absolute path, and a body of at most the limit + 1 bytes;
// - no more answers are outstanding than requests were handed over; none once every request was answered;
// - one call's output is bounded (a session never produces without limit);
// - once the session has ended it takes no more input and hands over no more requests.
import Foundation

private let limits = HTTP2Session.Limits(maximumStreams: 4, maximumHeaderBytes: 2048, maximumBodyBytes: 5120)
private let quiet = Logger(label: "fuzz", level: .error)

private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant: \(message())") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func http2SessionFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let flags = bytes.first else { return 0 }
    var input = Array(bytes.dropFirst())
    if flags & 1 == 0 { input = HTTP2Session.preface + input }
    let chunk = 1 + Int(flags >> 1) * 7
    var handed: [(Int32, HTTPRequest)] = []
    var answers = 0
    let session = HTTP2Session(limits: limits, secure: false, logger: quiet, label: "fuzz",
                               dispatch: { stream, request in handed.append((stream, request)) },
                               refusal: { refusal in HTTPResponse(status: HTTPStatus(refusal.status), body: Array(refusal.reason.utf8)) })
    var offset = 0
    while offset < input.count {
        let endedBefore = session.ending != nil
        session.receive(Array(input[offset..<min(input.count, offset + chunk)]))
        offset += chunk
        if endedBefore { check(handed.isEmpty, "a request was handed over after the session ended") }
        check(session.inFlight == handed.count, "in flight \(session.inFlight) != handed over \(handed.count)")
        for (stream, request) in handed {
            check(request.version == .http2, "not marked HTTP/2")
            check(request.path.hasPrefix("/"), "a relative path \(request.path)")
            check(request.body.count <= limits.maximumBodyBytes + 1, "a body of \(request.body.count) bytes kept")
            answers += 1
            let body: [UInt8] = answers % 2 == 0 ? Array(#"{"reason":"BadDeviceToken"}"#.utf8) : []
            session.respond(stream: stream, with: HTTPResponse(status: HTTPStatus(body.isEmpty ? 200 : 400),
                                                               headers: [("apns-id", "00000000-0000-4000-8000-000000000000")], body: body))
        }
        handed.removeAll()
        check(session.inFlight == 0, "answers outstanding after every request was answered")
        let output = session.takeOutput()
        check(output.count <= 8 << 20, "one call produced \(output.count) bytes")
        if session.ending != nil { break }
    }
    return 0
}

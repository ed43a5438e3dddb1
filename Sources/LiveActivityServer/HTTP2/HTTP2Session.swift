import CNghttp2
import Foundation
import LiveActivityCore

/// The HTTP/2 side of one APNs-port connection, with no socket and no TLS: bytes in, requests out; answers
/// in, bytes out. A libnghttp2 server session (RFC 9113) carrying many streams at once, each one request and
/// its response. ``HTTP2Connection`` moves the bytes; the fuzzer (Fuzz/HTTP2SessionFuzzer.swift) drives it
/// directly.
///
/// Received bytes are checked against the connection preface first (RFC 9113 §3.4: an HTTP/1.x request line
/// gets a plain `505 HTTP Version Not Supported` saying what the port speaks), then handed to
/// `nghttp2_session_mem_recv`, whose callbacks gather each stream's header list (``HTTP2RequestHead``) and
/// body; a complete request is handed to `dispatch`; its answer comes back through
/// ``respond(stream:with:)``; ``takeOutput()`` gives what to write (`nghttp2_session_mem_send`).
///
/// Bad input ends only this session: libnghttp2 answers protocol errors with GOAWAY; a header list over the
/// limit resets its stream; a flood of streams or of resets (CVE-2023-44487, "rapid reset") ends the session
/// with GOAWAY `ENHANCE_YOUR_CALM` (RFC 9113 §5.4.1); PING and SETTINGS floods are libnghttp2's
/// (`NGHTTP2_ERR_FLOODED`).
///
/// One thread only (the listener's): every method and every libnghttp2 callback.
final class HTTP2Session {
    /// Limits of one session.
    struct Limits: Sendable {
        /// Streams open at once (SETTINGS_MAX_CONCURRENT_STREAMS, RFC 9113 §6.5.2).
        var maximumStreams = 100
        /// Largest header list of one request, in bytes as RFC 9113 §6.5.2 counts them (SETTINGS_MAX_HEADER_LIST_SIZE).
        var maximumHeaderBytes = 16 * 1024
        /// Largest body kept, in bytes; a larger one is handed over at once with `maximumBodyBytes + 1` bytes (so
        /// the route table answers 413) and the rest of its stream is not wanted.
        var maximumBodyBytes = 8 * 1024
    }

    /// Why a session or its connection ends.
    enum Ending: String, Sendable {
        case badPreface = "not HTTP/2", protocolError = "HTTP/2 protocol error", flood = "flood", done = "done", shutdown = "shutdown"
        case peerClosed = "peer closed", ioError = "I/O error", tlsFailed = "TLS handshake failed", timeout = "handshake timeout"
    }

    /// What a stream has received, and its answer once it comes.
    final class Stream {
        /// The request's header fields.
        var head = HTTP2RequestHead()
        /// Whether the header list passed the limit (the stream is reset).
        var headersTooLarge = false
        /// The body received, at most the limit plus one byte.
        var body: [UInt8] = []
        /// Body bytes received in all (kept or not).
        var bodyBytes = 0
        /// Whether the client has ended its side (END_STREAM).
        var requestEnded = false
        /// Whether the request was handed over (or refused).
        var dispatched = false
        /// The answer's body, and how much of it libnghttp2 has taken.
        var responseBody: [UInt8] = []
        var responseOffset = 0
    }

    /// The connection preface every HTTP/2 client sends first (RFC 9113 §3.4), 24 bytes.
    static let preface: [UInt8] = Array(UnsafeRawBufferPointer(start: cnghttp2_client_magic(), count: cnghttp2_client_magic_length()))

    /// Set once the session is over (what is in ``takeOutput()`` still goes out).
    private(set) var ending: Ending?
    /// Open streams by id.
    private(set) var streams: [Int32: Stream] = [:]
    /// Requests handed over whose answers have not come back yet (streams reset meanwhile included).
    private(set) var inFlight = 0
    /// Whether the preface arrived and the libnghttp2 session runs.
    var isEstablished: Bool { session != nil }

    private let limits: Limits
    /// Whether the connection is TLS (for the wording of the 505).
    private let secure: Bool
    private let logger: Logger
    /// A label for log lines (the connection's number).
    private let label: String
    /// Takes a complete request: `(stream id, request)`.
    private let dispatch: (Int32, HTTPRequest) -> Void
    /// Words the answer to a request the route table cannot take (`DuplicateHeaders`, an unknown method).
    private let refusal: (HTTP2RequestHead.Refusal) -> HTTPResponse
    /// `nghttp2_session *`, once the preface matched.
    private var session: OpaquePointer?
    /// Bytes received before the preface was confirmed.
    private var prefix: [UInt8] = []
    /// Bytes produced but not taken yet (the 505).
    private var pending: [UInt8] = []
    /// Streams opened and resets received in the current one-second window, for flood detection.
    private var windowStart: TimeInterval = 0
    private var streamsInWindow = 0
    private var resetsInWindow = 0

    /// A session waiting for its preface.
    /// - Parameters:
    ///   - secure: whether the connection is TLS.
    ///   - dispatch: called with each complete request.
    ///   - refusal: words the answer to a request the route table cannot take.
    init(limits: Limits, secure: Bool, logger: Logger, label: String, dispatch: @escaping (Int32, HTTPRequest) -> Void,
         refusal: @escaping (HTTP2RequestHead.Refusal) -> HTTPResponse) {
        self.limits = limits
        self.secure = secure
        self.logger = logger
        self.label = label
        self.dispatch = dispatch
        self.refusal = refusal
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    // MARK: Bytes in

    /// Takes received bytes.
    func receive(_ bytes: [UInt8]) {
        guard ending == nil else { return }
        var input = bytes
        if session == nil {
            prefix += bytes
            let checked = min(prefix.count, Self.preface.count)
            guard prefix[..<checked].elementsEqual(Self.preface[..<checked]) else { return refuseNonHTTP2() }
            guard prefix.count >= Self.preface.count else { return }
            guard start() else {
                ending = .protocolError
                return
            }
            input = prefix
            prefix = []
        }
        guard let session else { return }
        let result = input.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
        if result < 0 {
            logger.debug("APNs port: HTTP/2 error; closing", ["connection": label, "error": String(cString: nghttp2_strerror(Int32(result)))])
            if ending == nil { ending = Int32(result) == NGHTTP2_ERR_FLOODED.rawValue ? .flood : .protocolError }
        }
    }

    /// Answers bytes that are not the HTTP/2 preface: an HTTP/1.x request line gets `505 HTTP Version Not
    /// Supported` naming what this port speaks; anything else gets nothing. The session is over either way.
    private func refuseNonHTTP2() {
        let line = prefix.prefix(16)
        if let space = line.firstIndex(of: 0x20), space > 0, line[..<space].allSatisfy({ (0x41...0x5a).contains($0) }) {
            let text = "this port speaks HTTP/2 only (APNs's provider API): use an APNs client, curl --http2"
                + (secure ? " over https://" : "-prior-knowledge over http://") + ", or the main port for HTTP/1.1\n"
            pending += HTTPResponse.plainText(HTTPStatus(505), text).http1Bytes(closing: true)
        }
        ending = .badPreface
    }

    // MARK: Bytes out

    /// What to write now, in order (at most about 4 MiB at a time). Sets ``ending`` to `.done` once the
    /// session has nothing more to read or write (after a GOAWAY exchange).
    func takeOutput() -> [UInt8] {
        var output = pending
        pending = []
        guard let session else { return output }
        while output.count < 4 << 20 {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            guard count > 0, let data else {
                if count < 0, ending == nil { ending = .protocolError }
                break
            }
            output.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
        }
        if ending == nil, nghttp2_session_want_read(session) == 0, nghttp2_session_want_write(session) == 0 { ending = .done }
        return output
    }

    /// Ends the session with GOAWAY NO_ERROR (shutdown); ``takeOutput()`` then has it.
    func goAway() {
        guard let session, ending == nil else { return }
        nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue)
        ending = .shutdown
    }

    // MARK: The libnghttp2 session

    /// Makes the libnghttp2 server session with this object's callbacks and limits, and queues the server's
    /// SETTINGS (MAX_CONCURRENT_STREAMS, MAX_HEADER_LIST_SIZE). - Returns: false when libnghttp2 could not.
    private func start() -> Bool {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return false }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            HTTP2Session.from(user).beginHeaders(frame!)
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            HTTP2Session.from(user).header(frame!, name: UnsafeBufferPointer(start: name, count: nameLength),
                                           value: UnsafeBufferPointer(start: value, count: valueLength))
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, user in
            HTTP2Session.from(user).data(streamID, UnsafeBufferPointer(start: data, count: length))
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            HTTP2Session.from(user).frameReceived(frame!)
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, user in
            HTTP2Session.from(user).frameSent(frame!)
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, _, user in
            HTTP2Session.from(user).streamClosed(streamID)
        }
        var option: OpaquePointer?
        guard nghttp2_option_new(&option) == 0, let option else { return false }
        defer { nghttp2_option_del(option) }
        // PING / SETTINGS floods: at most this many acknowledgements wait to be sent (else NGHTTP2_ERR_FLOODED).
        nghttp2_option_set_max_outbound_ack(option, 1000)
        nghttp2_option_set_max_settings(option, 32)
        var session: OpaquePointer?
        guard nghttp2_session_server_new2(&session, callbacks, Unmanaged.passUnretained(self).toOpaque(), option) == 0, let session else {
            return false
        }
        self.session = session
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: UInt32(limits.maximumStreams)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: UInt32(limits.maximumHeaderBytes)),
        ]
        return nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count) == 0
    }

    /// The session a callback's `user_data` points to (unretained: the libnghttp2 session lives inside it).
    private static func from(_ user: UnsafeMutableRawPointer?) -> HTTP2Session {
        Unmanaged<HTTP2Session>.fromOpaque(user!).takeUnretainedValue()
    }

    /// Counts a new stream or a received reset in the current second; a flood (more than 20 × the stream
    /// limit of new streams, or 4 × of resets, in one second) ends the session with GOAWAY
    /// `ENHANCE_YOUR_CALM`. - Returns: false when it did.
    private func count(stream: Bool) -> Bool {
        let now = ProcessInfo.processInfo.systemUptime
        if now - windowStart >= 1 {
            windowStart = now
            streamsInWindow = 0
            resetsInWindow = 0
        }
        if stream { streamsInWindow += 1 } else { resetsInWindow += 1 }
        guard streamsInWindow > 20 * limits.maximumStreams || resetsInWindow > 4 * limits.maximumStreams else { return true }
        if ending == nil {
            logger.info("APNs port: stream or reset flood; closing the connection", ["connection": label,
                        "streams": "\(streamsInWindow)", "resets": "\(resetsInWindow)"])
            ending = .flood
            if let session { nghttp2_session_terminate_session(session, NGHTTP2_ENHANCE_YOUR_CALM.rawValue) }
        }
        return false
    }

    private func beginHeaders(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        guard UInt32(frame.pointee.hd.type) == NGHTTP2_HEADERS.rawValue, frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
        guard count(stream: true) else { return Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        streams[frame.pointee.hd.stream_id] = Stream()
        return 0
    }

    private func header(_ frame: UnsafePointer<nghttp2_frame>, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Int32 {
        guard let stream = streams[frame.pointee.hd.stream_id], !stream.headersTooLarge, !stream.dispatched else { return 0 }
        if !stream.head.append(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self),
                               limit: limits.maximumHeaderBytes) {
            // Larger than the limit announced (SETTINGS_MAX_HEADER_LIST_SIZE): reset this stream only.
            stream.headersTooLarge = true
            return Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        return 0
    }

    private func data(_ streamID: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        guard let stream = streams[streamID], !stream.dispatched else { return 0 }
        stream.bodyBytes += bytes.count
        let room = limits.maximumBodyBytes + 1 - stream.body.count
        if room > 0 { stream.body.append(contentsOf: bytes.prefix(room)) }
        // Over the limit: answer now (413 from the route table), without waiting for the rest.
        if stream.bodyBytes > limits.maximumBodyBytes { hand(streamID, stream) }
        return 0
    }

    private func frameReceived(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        let type = UInt32(frame.pointee.hd.type)
        let streamID = frame.pointee.hd.stream_id
        if type == NGHTTP2_RST_STREAM.rawValue {
            return count(stream: false) ? 0 : Int32(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
        }
        guard type == NGHTTP2_HEADERS.rawValue || type == NGHTTP2_DATA.rawValue, let stream = streams[streamID] else { return 0 }
        if frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0 {
            stream.requestEnded = true
            if !stream.dispatched, !stream.headersTooLarge { hand(streamID, stream) }
        }
        return 0
    }

    private func frameSent(_ frame: UnsafePointer<nghttp2_frame>) -> Int32 {
        // An answer sent before the request ended (a body over the limit): the rest is not wanted (RFC 9113 §8.1).
        let streamID = frame.pointee.hd.stream_id
        guard frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0, let stream = streams[streamID],
              !stream.requestEnded, let session else { return 0 }
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_NO_ERROR.rawValue)
        return 0
    }

    private func streamClosed(_ streamID: Int32) -> Int32 {
        streams[streamID] = nil
        return 0
    }

    /// Turns a stream's request into an ``HTTPRequest`` and hands it over, or answers at once what the route
    /// table cannot take.
    private func hand(_ streamID: Int32, _ stream: Stream) {
        stream.dispatched = true
        do throws(HTTP2RequestHead.Refusal) {
            let request = try stream.head.request(body: stream.body)
            inFlight += 1
            dispatch(streamID, request)
        } catch {
            submit(streamID, refusal(error))
        }
    }

    // MARK: Answers

    /// The answer to a request handed over: queued on its stream if the stream is still open (a client may
    /// have reset it meanwhile); ``takeOutput()`` then has it.
    func respond(stream streamID: Int32, with response: HTTPResponse) {
        inFlight = max(0, inFlight - 1)
        submit(streamID, response)
    }

    /// Queues `:status`, `content-type` and `content-length` (when there is a body), the response's own fields,
    /// and the body (RFC 9113 §8.1; names lower-case, values of printable ASCII).
    private func submit(_ streamID: Int32, _ response: HTTPResponse) {
        guard let session, let stream = streams[streamID] else { return }
        var fields: [(String, String)] = [(":status", "\(response.status.code)")]
        if !response.body.isEmpty {
            fields.append(("content-type", response.contentType))
            fields.append(("content-length", "\(response.body.count)"))
        }
        for (name, value) in response.headers {
            fields.append((name.lowercased(), value.httpFieldValue))
        }
        stream.responseBody = response.body
        stream.responseOffset = 0
        // One buffer holds every name and value; libnghttp2 copies them (NGHTTP2_NV_FLAG_NONE) and the data
        // provider during the call.
        var bytes: [UInt8] = []
        var spans: [(name: Int, nameLength: Int, value: Int, valueLength: Int)] = []
        for (name, value) in fields {
            let nameStart = bytes.count
            bytes += name.utf8
            let valueStart = bytes.count
            bytes += value.utf8
            spans.append((nameStart, name.utf8.count, valueStart, value.utf8.count))
        }
        var provider = nghttp2_data_provider()
        provider.read_callback = { _, streamID, buffer, length, flags, _, user in
            HTTP2Session.from(user).readBody(streamID, into: buffer!, length: length, flags: flags!)
        }
        let hasBody = !response.body.isEmpty
        let result = bytes.withUnsafeMutableBufferPointer { base -> Int32 in
            let nv = spans.map { span in
                nghttp2_nv(name: base.baseAddress! + span.name, value: base.baseAddress! + span.value, namelen: span.nameLength,
                           valuelen: span.valueLength, flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
            }
            return nv.withUnsafeBufferPointer { nv in
                withUnsafePointer(to: &provider) { provider in
                    nghttp2_submit_response(session, streamID, nv.baseAddress, nv.count, hasBody ? provider : nil)
                }
            }
        }
        if result != 0 {
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_INTERNAL_ERROR.rawValue)
        }
    }

    /// libnghttp2's data source: copies the next part of a stream's answer body; EOF at its end.
    private func readBody(_ streamID: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int, flags: UnsafeMutablePointer<UInt32>) -> Int {
        guard let stream = streams[streamID] else {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            return 0
        }
        let count = min(length, stream.responseBody.count - stream.responseOffset)
        stream.responseBody.withUnsafeBufferPointer { body in
            if count > 0 { buffer.update(from: body.baseAddress! + stream.responseOffset, count: count) }
        }
        stream.responseOffset += count
        if stream.responseOffset == stream.responseBody.count { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return count
    }
}

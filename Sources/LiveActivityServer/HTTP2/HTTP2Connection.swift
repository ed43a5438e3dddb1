import CCrypto
import CNghttp2
import Foundation
import LiveActivityCore

/// One connection of the APNs listener: the socket, TLS when the server has a certificate, and a libnghttp2
/// server session (RFC 9113) carrying many streams at once, each one request and its response.
///
/// Bytes flow: socket → (OpenSSL) → the connection preface check → `nghttp2_session_mem_recv`, whose
/// callbacks gather each stream's header list and body; a stream whose request is complete is handed to the
/// listener (and from there to the service thread); its answer comes back through ``respond(stream:with:)``,
/// and `nghttp2_session_mem_send` gives the bytes to write (→ OpenSSL → socket).
///
/// Bad input costs only this connection: libnghttp2 answers protocol errors with GOAWAY; header lists over
/// the limit reset their stream; a flood of streams or resets (CVE-2023-44487's rapid reset) ends the
/// connection with GOAWAY `ENHANCE_YOUR_CALM`; a client that does not read its answers stops being read.
///
/// The listener's thread only: every method, and every libnghttp2 callback.
final class HTTP2Connection {
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
        /// Whether the request went to the listener's handler.
        var dispatched = false
        /// The answer's body, and how much of it libnghttp2 has taken.
        var responseBody: [UInt8] = []
        var responseOffset = 0
    }

    /// Why a connection is being closed (for the log).
    enum Ending: String {
        case peerClosed = "peer closed", ioError = "I/O error", tlsFailed = "TLS handshake failed", badPreface = "not HTTP/2"
        case protocolError = "HTTP/2 protocol error", flood = "flood", timeout = "handshake timeout", done = "done", shutdown = "shutdown"
    }

    /// The listener's number for it (replies find it by this).
    let id: UInt64
    /// The socket (non-blocking).
    let fd: Int32
    /// The TLS session (`SSL *`), or nil for h2c.
    private var ssl: OpaquePointer?
    /// Whether the TLS handshake is done (always true without TLS).
    private(set) var handshakeDone: Bool
    /// Whether the last TLS call wants the socket writable before it can go on.
    private var tlsWantsWrite = false
    /// The libnghttp2 session (`nghttp2_session *`), once the connection preface matched.
    private var session: OpaquePointer?
    /// Bytes received before the connection preface was confirmed.
    private var prefix: [UInt8] = []
    /// Bytes waiting to be written, in order.
    private(set) var outbound: [UInt8] = []
    /// Open streams by id.
    private(set) var streams: [Int32: Stream] = [:]
    /// Requests handed over whose answers have not come back yet (streams reset meanwhile included).
    private(set) var inFlight = 0
    /// Set once the connection is to be closed when ``outbound`` is written.
    private(set) var ending: Ending?
    /// When it was accepted (monotonic seconds), for the handshake timeout.
    let acceptedAt: TimeInterval
    /// Whether the preface has arrived (the handshake timeout no longer applies).
    var isEstablished: Bool { session != nil }

    private let limits: APNsSettings
    private let logger: Logger
    /// Hands a complete request to the listener: `(stream id, request)`.
    private let dispatch: (Int32, HTTPRequest) -> Void
    /// Streams opened and resets received in the current one-second window, for flood detection.
    private var windowStart: TimeInterval = 0
    private var streamsInWindow = 0
    private var resetsInWindow = 0

    /// The connection preface every HTTP/2 client sends first (RFC 9113 §3.4).
    static let preface: [UInt8] = Array(UnsafeRawBufferPointer(start: cnghttp2_client_magic(), count: cnghttp2_client_magic_length()))

    /// Wraps an accepted socket.
    /// - Parameters:
    ///   - tls: the server's TLS context, or nil for h2c (prior knowledge, RFC 9113 §3.3).
    ///   - dispatch: called with each complete request.
    init(id: UInt64, fd: Int32, tls: TLSServerContext?, limits: APNsSettings, logger: Logger, now: TimeInterval,
         dispatch: @escaping (Int32, HTTPRequest) -> Void) {
        self.id = id
        self.fd = fd
        self.limits = limits
        self.logger = logger
        self.dispatch = dispatch
        acceptedAt = now
        if let tls, let ssl = SSL_new(tls.context) {
            SSL_set_fd(ssl, fd)
            SSL_set_accept_state(ssl)
            self.ssl = ssl
            handshakeDone = false
        } else {
            handshakeDone = tls == nil
            if tls != nil { ending = .tlsFailed }
        }
    }

    deinit {
        if let session { nghttp2_session_del(session) }
        if let ssl { SSL_free(ssl) }
        close(fd)
    }

    // MARK: Polling

    /// The poll events it waits for: writable while bytes wait (or TLS wants to write); readable unless it
    /// is ending, or too many answers are outstanding, or too much waits to be written (a client that does
    /// not read is not read either).
    var pollEvents: Int16 {
        var events: Int16 = 0
        if !outbound.isEmpty || tlsWantsWrite { events |= Int16(POLLOUT) }
        if ending == nil, inFlight < 2 * limits.maximumStreams, outbound.count < 1 << 20 { events |= Int16(POLLIN) }
        return events
    }

    /// Whether it is to be closed now: ending, with what had to be said (GOAWAY, the 505) written; or at
    /// once for a peer gone, an I/O or TLS failure, a timeout.
    var isFinished: Bool {
        guard let ending else { return false }
        switch ending {
        case .done, .badPreface, .flood, .protocolError, .shutdown: return outbound.isEmpty
        case .peerClosed, .ioError, .tlsFailed, .timeout: return true
        }
    }

    /// Ends it at once (shutdown, timeout).
    func abort(_ why: Ending) {
        ending = why
        outbound = []
    }

    // MARK: Reading

    /// The socket is readable (or TLS wants to go on): runs the handshake, reads what is there (at most
    /// 256 KiB per call, so one client cannot hold the thread), feeds it on, writes what results.
    func readable() {
        if !handshakeDone {
            handshake()
            guard handshakeDone, ending == nil else { return flush() }
        }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<16 where ending == nil {
            let count = buffer.withUnsafeMutableBytes { receive(into: $0) }
            if count <= 0 { break }
            feed(Array(buffer.prefix(count)))
        }
        pump()
        flush()
    }

    /// The TLS handshake, as far as the socket allows; once done, the ALPN choice is checked ("h2" or none).
    private func handshake() {
        guard let ssl else { return }
        let result = SSL_accept(ssl)
        if result == 1 {
            handshakeDone = true
            tlsWantsWrite = false
            return
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: tlsWantsWrite = false
        case SSL_ERROR_WANT_WRITE: tlsWantsWrite = true
        default:
            logger.debug("APNs port: TLS handshake failed", ["connection": "\(id)", "error": TLSServerContext.lastError()])
            abort(.tlsFailed)
        }
    }

    /// Reads once into `buffer`. - Returns: the bytes read; 0 when none are there now; -1 once the
    /// connection is ending (closed by the peer, an error).
    private func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if let ssl {
            let count = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
            if count > 0 { return Int(count) }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ: tlsWantsWrite = false; return 0
            case SSL_ERROR_WANT_WRITE: tlsWantsWrite = true; return 0
            case SSL_ERROR_ZERO_RETURN: ending = ending ?? .peerClosed; return -1
            default: ERR_clear_error(); abort(.ioError); return -1
            }
        }
        let count = recv(fd, buffer.baseAddress, buffer.count, 0)
        if count > 0 { return count }
        if count == 0 { ending = ending ?? .peerClosed; return -1 }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return 0 }
        abort(.ioError)
        return -1
    }

    /// Takes received bytes: checks the connection preface first (an HTTP/1.1 request gets a plain 505 that
    /// says so), then hands everything to libnghttp2.
    func feed(_ bytes: [UInt8]) {
        guard ending == nil else { return }
        var input = bytes
        if session == nil {
            prefix += bytes
            let checked = min(prefix.count, Self.preface.count)
            guard prefix[..<checked].elementsEqual(Self.preface[..<checked]) else { return refuseNonHTTP2() }
            guard prefix.count >= Self.preface.count else { return }
            guard startSession() else { return abort(.ioError) }
            input = prefix
            prefix = []
        }
        guard let session else { return }
        let result = input.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
        if result < 0 {
            logger.debug("APNs port: HTTP/2 error; closing", ["connection": "\(id)", "error": String(cString: nghttp2_strerror(Int32(result)))])
            if ending == nil { ending = Int32(result) == NGHTTP2_ERR_FLOODED.rawValue ? .flood : .protocolError }
            pump()
        }
    }

    /// Answers bytes that are not the HTTP/2 preface: an HTTP/1.x request line gets `505 HTTP Version Not
    /// Supported` naming what this port speaks; anything else is closed.
    private func refuseNonHTTP2() {
        let line = prefix.prefix(16)
        if let space = line.firstIndex(of: 0x20), space > 0, line[..<space].allSatisfy({ (0x41...0x5a).contains($0) }) {
            let text = "this port speaks HTTP/2 only (APNs's provider API): use an APNs client, curl --http2"
                + (ssl == nil ? "-prior-knowledge over http://" : " over https://") + ", or the main port for HTTP/1.1\n"
            let head = "HTTP/1.1 505 HTTP Version Not Supported\r\ncontent-type: text/plain; charset=utf-8\r\n"
                + "content-length: \(text.utf8.count)\r\nconnection: close\r\n\r\n"
            outbound += Array((head + text).utf8)
        }
        ending = .badPreface
        flush()
    }

    // MARK: The session

    /// Makes the libnghttp2 server session with this connection's callbacks and limits, and queues the
    /// server's SETTINGS (RFC 9113 §6.5.2: MAX_CONCURRENT_STREAMS, MAX_HEADER_LIST_SIZE).
    /// - Returns: false when libnghttp2 could not.
    private func startSession() -> Bool {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else { return false }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            HTTP2Connection.from(user).beginHeaders(frame!)
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            HTTP2Connection.from(user).header(frame!, name: UnsafeBufferPointer(start: name, count: nameLength),
                                              value: UnsafeBufferPointer(start: value, count: valueLength))
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, user in
            HTTP2Connection.from(user).data(streamID, UnsafeBufferPointer(start: data, count: length))
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            HTTP2Connection.from(user).frameReceived(frame!)
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, user in
            HTTP2Connection.from(user).frameSent(frame!)
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, _, user in
            HTTP2Connection.from(user).streamClosed(streamID)
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

    /// The connection a callback's `user_data` points to (unretained: the session lives inside it).
    private static func from(_ user: UnsafeMutableRawPointer?) -> HTTP2Connection {
        Unmanaged<HTTP2Connection>.fromOpaque(user!).takeUnretainedValue()
    }

    /// Counts a new stream or a received reset in the current second; a flood ends the connection with
    /// GOAWAY `ENHANCE_YOUR_CALM` (RFC 9113 §5.4.1). - Returns: false when it did.
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
            logger.info("APNs port: stream or reset flood; closing the connection", ["connection": "\(id)",
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
        guard let stream = streams[frame.pointee.hd.stream_id], !stream.headersTooLarge else { return 0 }
        if !stream.head.append(name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self),
                               limit: limits.maximumHeaderBytes) {
            // Larger than the limit we announced (SETTINGS_MAX_HEADER_LIST_SIZE): reset this stream only.
            stream.headersTooLarge = true
            return Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        return 0
    }

    private func data(_ streamID: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        guard let stream = streams[streamID] else { return 0 }
        stream.bodyBytes += bytes.count
        let room = limits.maximumBodyBytes + 1 - stream.body.count
        if room > 0 { stream.body.append(contentsOf: bytes.prefix(room)) }
        // Over the limit: answer now (413 from the route table), without waiting for the rest.
        if stream.bodyBytes > limits.maximumBodyBytes, !stream.dispatched { hand(streamID, stream) }
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
            if !stream.dispatched { hand(streamID, stream) }
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
            let rejection = PushRejection(status: error.status, reason: error.reason, detail: error.detail)
            submit(streamID, APNsHeaderChecks.response(PushResult(rejection, apnsId: UUID().uuidString), uniqueID: nil))
        }
    }

    // MARK: Answering

    /// The answer to a request handed over: sent on its stream if the stream is still open (a client may
    /// have reset it meanwhile).
    func respond(stream streamID: Int32, with response: HTTPResponse) {
        inFlight = max(0, inFlight - 1)
        guard streams[streamID] != nil else { return }
        submit(streamID, response)
        pump()
        flush()
    }

    /// Queues `:status`, `content-type` and `content-length` (when there is a body), the response's own
    /// fields, and the body (RFC 9113 §8.1; names lower-case, values of printable ASCII).
    private func submit(_ streamID: Int32, _ response: HTTPResponse) {
        guard let session, let stream = streams[streamID] else { return }
        var fields: [(String, String)] = [(":status", "\(response.status.code)")]
        if !response.body.isEmpty {
            fields.append(("content-type", response.contentType))
            fields.append(("content-length", "\(response.body.count)"))
        }
        for (name, value) in response.headers {
            fields.append((name.lowercased(), String(decoding: value.utf8.filter { $0 >= 0x20 && $0 < 0x7f }.prefix(1024), as: UTF8.self)))
        }
        stream.responseBody = response.body
        stream.responseOffset = 0
        // One buffer holds every name and value; libnghttp2 copies them (NGHTTP2_NV_FLAG_NONE) and the
        // data provider during the call.
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
            HTTP2Connection.from(user).readBody(streamID, into: buffer!, length: length, flags: flags!)
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
            buffer.update(from: body.baseAddress! + stream.responseOffset, count: count)
        }
        stream.responseOffset += count
        if stream.responseOffset == stream.responseBody.count { flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
        return count
    }

    // MARK: Writing

    /// Moves what libnghttp2 has to send into ``outbound``.
    private func pump() {
        guard let session else { return }
        while outbound.count < 4 << 20 {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            guard count > 0, let data else {
                if count < 0, ending == nil { ending = .protocolError }
                break
            }
            outbound.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
        }
        if ending == nil, nghttp2_session_want_read(session) == 0, nghttp2_session_want_write(session) == 0 { ending = .done }
    }

    /// The socket is writable (or TLS wants to go on): writes what waits.
    func writable() {
        if !handshakeDone {
            handshake()
            if handshakeDone { readable() }
            return
        }
        pump()
        flush()
    }

    /// Writes as much of ``outbound`` as the socket takes now.
    private func flush() {
        while !outbound.isEmpty {
            let written: Int = outbound.withUnsafeBytes { bytes in
                if let ssl {
                    let count = SSL_write(ssl, bytes.baseAddress, Int32(min(bytes.count, Int(Int32.max))))
                    if count > 0 { return Int(count) }
                    switch SSL_get_error(ssl, count) {
                    case SSL_ERROR_WANT_WRITE: tlsWantsWrite = true; return 0
                    case SSL_ERROR_WANT_READ: return 0
                    default: ERR_clear_error(); return -1
                    }
                }
                let count = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
                if count >= 0 { return count }
                return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1
            }
            if written < 0 { return abort(.ioError) }
            if written == 0 { return }
            tlsWantsWrite = false
            outbound.removeFirst(written)
        }
    }

    /// Ends the session with GOAWAY NO_ERROR (shutdown) and writes it, as far as the socket takes it now.
    func goAway() {
        guard let session, ending == nil else { return }
        nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue)
        pump()
        flush()
        ending = .shutdown
    }
}

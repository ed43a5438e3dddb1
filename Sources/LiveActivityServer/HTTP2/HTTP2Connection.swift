import CCrypto
import Foundation
import LiveActivityCore

/// One connection of the APNs listener: the socket, TLS when the server has a certificate, and the
/// ``HTTP2Session`` the bytes go to and come from.
///
/// Reading: socket → (OpenSSL) → ``HTTP2Session/receive(_:)``. Writing: ``HTTP2Session/takeOutput()`` →
/// ``outbound`` → (OpenSSL) → socket, as far as the socket takes it; the rest waits for POLLOUT. A client that
/// does not read its answers (more than 1 MiB waits) or has too many answers outstanding (twice the stream
/// limit) is not read either.
///
/// The listener's thread only.
final class HTTP2Connection {
    /// The listener's number for it (replies find it by this).
    let id: UInt64
    /// The socket (non-blocking).
    let fd: Int32
    /// When it was accepted (monotonic seconds), for the handshake timeout.
    let acceptedAt: TimeInterval
    /// When it last received bytes or sent an answer (monotonic seconds), for the idle timeout.
    private(set) var lastActive: TimeInterval
    /// The HTTP/2 session.
    private(set) var session: HTTP2Session!
    /// The TLS session (`SSL *`), or nil for h2c.
    private var ssl: OpaquePointer?
    /// Whether the TLS handshake is done (always true without TLS).
    private var handshakeDone: Bool
    /// Whether the last TLS call wants the socket writable before it can go on.
    private var tlsWantsWrite = false
    /// Bytes waiting to be written, in order.
    private var outbound: [UInt8] = []
    /// Why the connection (not its session) ends: the peer left, I/O or TLS failed, the handshake timed out.
    private var transportEnding: HTTP2Session.Ending?
    private let maximumStreams: Int
    private let logger: Logger

    /// Why it is ending, if it is.
    var ending: HTTP2Session.Ending? { transportEnding ?? session.ending }
    /// Whether the HTTP/2 preface has arrived (the handshake timeout no longer applies).
    var isEstablished: Bool { session.isEstablished }
    /// Whether no stream is open and no answer is outstanding.
    var isIdle: Bool { session.streams.isEmpty && session.inFlight == 0 }

    /// Wraps an accepted socket.
    /// - Parameters:
    ///   - tls: the server's TLS context, or nil for h2c (prior knowledge, RFC 9113 §3.3).
    ///   - dispatch: called with each complete request: `(stream id, request)`.
    init(id: UInt64, fd: Int32, tls: TLSServerContext?, limits: APNsSettings, logger: Logger, now: TimeInterval,
         dispatch: @escaping (Int32, HTTPRequest) -> Void) {
        self.id = id
        self.fd = fd
        self.logger = logger
        maximumStreams = limits.maximumStreams
        acceptedAt = now
        lastActive = now
        handshakeDone = tls == nil
        if let tls {
            if let ssl = SSL_new(tls.context) {
                SSL_set_fd(ssl, fd)
                SSL_set_accept_state(ssl)
                self.ssl = ssl
            } else {
                transportEnding = .tlsFailed
            }
        }
        session = HTTP2Session(
            limits: HTTP2Session.Limits(maximumStreams: limits.maximumStreams, maximumHeaderBytes: limits.maximumHeaderBytes,
                                        maximumBodyBytes: limits.maximumBodyBytes),
            secure: tls != nil, logger: logger, label: "\(id)",
            dispatch: { [slot = ProviderTokenSlot()] streamID, request in
                // Every request of the connection carries its provider-token slot (429 TooManyProviderTokenUpdates).
                var request = request
                request.providerTokenSlot = slot
                dispatch(streamID, request)
            },
            refusal: { refusal in
                let rejection = PushRejection(status: refusal.status, reason: refusal.reason, detail: refusal.detail)
                return APNsHeaderChecks.response(PushResult(rejection, apnsId: UUID().uuidString), uniqueID: nil)
            })
    }

    deinit {
        if let ssl { SSL_free(ssl) }
        close(fd)
    }

    // MARK: Polling

    /// The poll events it waits for: writable while bytes wait (or TLS wants to write); readable unless it is
    /// ending, too many answers are outstanding, or too much waits to be written.
    var pollEvents: Int16 {
        var events: Int16 = 0
        if !outbound.isEmpty || tlsWantsWrite { events |= Int16(POLLOUT) }
        if ending == nil, session.inFlight < 2 * maximumStreams, outbound.count < 1 << 20 { events |= Int16(POLLIN) }
        return events
    }

    /// Whether it is to be closed now: the session is over and what it had to say (GOAWAY, the 505) is
    /// written; or at once when the peer left, I/O or TLS failed, or the handshake timed out.
    var isFinished: Bool {
        if transportEnding != nil { return true }
        return session.ending != nil && outbound.isEmpty
    }

    /// Ends it at once (timeout, shutdown).
    func abort(_ why: HTTP2Session.Ending) {
        transportEnding = transportEnding ?? why
        outbound = []
    }

    // MARK: Reading

    /// The socket is readable (or TLS wants to go on): runs the handshake, reads what is there (at most
    /// 256 KiB per call, so one client cannot hold the thread), feeds the session, writes what results.
    func readable() {
        if !handshakeDone {
            handshake()
            guard handshakeDone, ending == nil else { return flush() }
        }
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        for _ in 0..<16 where ending == nil {
            let count = buffer.withUnsafeMutableBytes { receive(into: $0) }
            if count <= 0 { break }
            lastActive = ProcessInfo.processInfo.systemUptime
            session.receive(Array(buffer.prefix(count)))
            flush()
        }
        flush()
    }

    /// The socket is writable (or TLS wants to go on): writes what waits.
    func writable() {
        if !handshakeDone {
            handshake()
            if handshakeDone { readable() }
            return
        }
        flush()
    }

    /// The answer to a request handed over, sent on its stream if it is still open.
    func respond(stream streamID: Int32, with response: HTTPResponse) {
        lastActive = ProcessInfo.processInfo.systemUptime
        session.respond(stream: streamID, with: response)
        flush()
    }

    /// Ends the session with GOAWAY NO_ERROR and writes it, as far as the socket takes it now (shutdown).
    func goAway() {
        session.goAway()
        flush()
    }

    /// The TLS handshake, as far as the socket allows.
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

    /// Reads once into `buffer`. - Returns: the bytes read; 0 when none are there now; -1 once the connection
    /// is ending (closed by the peer, an error).
    private func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if let ssl {
            let count = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
            if count > 0 { return Int(count) }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ: tlsWantsWrite = false; return 0
            case SSL_ERROR_WANT_WRITE: tlsWantsWrite = true; return 0
            case SSL_ERROR_ZERO_RETURN: transportEnding = transportEnding ?? .peerClosed; return -1
            default: ERR_clear_error(); abort(.ioError); return -1
            }
        }
        let count = recv(fd, buffer.baseAddress, buffer.count, 0)
        if count > 0 { return count }
        if count == 0 { transportEnding = transportEnding ?? .peerClosed; return -1 }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return 0 }
        abort(.ioError)
        return -1
    }

    // MARK: Writing

    /// Takes what the session has to send and writes as much as the socket takes now.
    private func flush() {
        // A peer that closed its side may still read: what the session has to say (GOAWAY, refusals) goes out.
        guard transportEnding == nil || transportEnding == .peerClosed else { return }
        if outbound.count < 1 << 20 { outbound += session.takeOutput() }
        while !outbound.isEmpty {
            let written: Int = outbound.withUnsafeBytes { bytes in
                if let ssl {
                    let count = SSL_write(ssl, bytes.baseAddress, Int32(min(bytes.count, 1 << 30)))
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
            if outbound.count < 1 << 20 { outbound += session.takeOutput() }
        }
    }
}

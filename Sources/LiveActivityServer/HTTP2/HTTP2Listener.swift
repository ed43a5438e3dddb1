import Foundation
import LiveActivityCore

/// The APNs listener (`serve --apns-port`): APNs's provider API over HTTP/2 (RFC 9113), for backends whose
/// APNs library speaks nothing else (aioapns, apns2, node-apn, Pushy, `curl --http2`). libwebsockets 4.1
/// cannot serve them: on HTTP/2 streams it drops header names it does not know, `apns-*` among them.
///
/// One thread of its own runs a `poll` loop over the listening socket, a wake-up pipe and the connections
/// (``HTTP2Connection``: TLS with ALPN `h2` when the server has a certificate — a client that negotiates no
/// ALPN is served too — else h2c with prior knowledge; many streams each). Each complete request becomes an
/// ``HTTPRequest`` handed to `handler`, which takes it to the service thread (the route table there is the
/// same push feature the main port uses); the answer comes back through the reply closure, which queues it
/// and wakes this thread, which sends it on its stream. This thread never touches server state.
///
/// Thread-safe: ``start()``, ``stop()`` and ``waitUntilStopped()`` from any thread; replies from any thread.
final class HTTP2Listener: @unchecked Sendable {
    /// Takes one request and a closure to call, once, from any thread, with its answer.
    typealias Handler = @Sendable (HTTPRequest, @escaping @Sendable (HTTPResponse) -> Void) -> Void

    /// The port it listens on (the kernel's pick when 0 was asked).
    let port: Int
    /// Whether it speaks TLS (`https://`) rather than h2c (`http://`).
    var usesTLS: Bool { tls != nil }

    private let listenFD: Int32
    /// The wake-up pipe: [read end, write end], both non-blocking.
    private let wakeFDs: [Int32]
    private let tls: TLSServerContext?
    private let limits: APNsSettings
    private let handler: Handler
    private let logger: Logger
    /// {lock} answers waiting for this thread, and whether to stop.
    private let shared = Locked<(replies: [(connection: UInt64, stream: Int32, response: HTTPResponse)], stopping: Bool)>(([], false))
    private let exited = DispatchSemaphore(value: 0)
    /// {lock} whether the thread was started.
    private let running = Locked(false)
    /// {lock} the thread, joined by ``waitUntilStopped()``.
    private let thread = Locked<JoinableThread?>(nil)

    // Listener thread only.
    private var connections: [UInt64: HTTP2Connection] = [:]
    private var nextConnectionID: UInt64 = 1

    /// Binds the listening socket (nothing is served until ``start()``).
    /// - Parameters:
    ///   - configuration: the host, TLS files and ``APNsSettings`` limits.
    ///   - port: the port to bind; 0 lets the kernel pick.
    ///   - handler: where requests go (called on this listener's thread).
    /// - Throws: ``ServerError`` naming `--apns-port` when the address cannot be bound, or the TLS file
    ///   OpenSSL refused.
    init(configuration: ServerConfiguration, port: Int, logger: Logger, handler: @escaping Handler) throws {
        signal(SIGPIPE, SIG_IGN)
        limits = configuration.apns
        self.handler = handler
        self.logger = logger
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsPrivateKeyPath {
            tls = try TLSServerContext(certificatePath: certificate, keyPath: key)
        } else {
            tls = nil
        }
        let host = configuration.listenAddress.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        (listenFD, self.port) = try Self.bind(host: host, port: port)
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else {
            close(listenFD)
            throw ServerError("--apns-port: cannot make a wake-up pipe (\(String(cString: strerror(errno))))")
        }
        for fd in pipeFDs { Self.setNonBlocking(fd) }
        wakeFDs = pipeFDs
    }

    deinit {
        close(listenFD)
        for fd in wakeFDs { close(fd) }
    }

    /// Starts the listener's thread.
    func start() {
        running.withLock { $0 = true }
        let thread = JoinableThread(name: "apns-http2") { [self] in run() }
        self.thread.withLock { $0 = thread }
        thread.start()
    }

    /// Asks the thread to send GOAWAY on every connection, close them and stop. Returns at once.
    func stop() {
        shared.withLock { $0.stopping = true }
        wake()
    }

    /// Blocks until the thread has stopped (at once if it never started).
    func waitUntilStopped() {
        guard running.withLock({ $0 }) else { return }
        exited.wait()
        exited.signal()
        // Joined, not only signalled: the thread's OpenSSL state must be freed before the process exits.
        thread.withLock { $0 }?.join()
    }

    /// Queues the answer for a stream and wakes the thread. Any thread.
    private func reply(connection: UInt64, stream: Int32, _ response: HTTPResponse) {
        shared.withLock { $0.replies.append((connection, stream, response)) }
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeFDs[1], &byte, 1)
    }

    // MARK: The thread

    private func run() {
        logger.info("APNs port listening", ["port": "\(port)", "tls": "\(usesTLS)"])
        var fds: [pollfd] = []
        var order: [HTTP2Connection] = []
        while true {
            let (replies, stopping) = shared.withLock { state in
                let taken = state.replies
                state.replies = []
                return (taken, state.stopping)
            }
            if stopping { break }
            for (connectionID, stream, response) in replies {
                connections[connectionID]?.respond(stream: stream, with: response)
            }
            reap()
            fds = [pollfd(fd: listenFD, events: connections.count < limits.maximumConnections ? Int16(POLLIN) : 0, revents: 0),
                   pollfd(fd: wakeFDs[0], events: Int16(POLLIN), revents: 0)]
            order = Array(connections.values)
            for connection in order { fds.append(pollfd(fd: connection.fd, events: connection.pollEvents, revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), 1000)
            if ready < 0, errno != EINTR {
                logger.error("APNs port: poll failed; stopping", ["error": String(cString: strerror(errno))])
                break
            }
            if fds[1].revents != 0 { drainWakeups() }
            if fds[0].revents & Int16(POLLIN) != 0 { acceptConnections() }
            for (index, connection) in order.enumerated() {
                let events = fds[index + 2].revents
                if events == 0 { continue }
                if events & Int16(POLLIN | POLLHUP | POLLERR) != 0 { connection.readable() }
                if events & Int16(POLLOUT) != 0 { connection.writable() }
            }
            let now = ProcessInfo.processInfo.systemUptime
            for connection in connections.values {
                if !connection.isEstablished, now - connection.acceptedAt > Double(limits.handshakeTimeoutSeconds) {
                    connection.abort(.timeout)
                } else if connection.isEstablished, connection.ending == nil, connection.isIdle,
                          now - connection.lastActive > Double(limits.idleTimeoutSeconds) {
                    connection.goAway()
                }
            }
            reap()
        }
        for connection in connections.values { connection.goAway() }
        connections.removeAll()
        logger.info("APNs port stopped")
        exited.signal()
    }

    /// Closes the connections that are finished.
    private func reap() {
        for (id, connection) in connections where connection.isFinished {
            logger.debug("APNs port: connection closed", ["connection": "\(id)", "why": connection.ending?.rawValue ?? ""])
            connections[id] = nil
        }
    }

    private func drainWakeups() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(wakeFDs[0], &buffer, buffer.count) > 0 {}
    }

    /// Accepts the connections waiting (at most 64 per round); over the connection limit, closes them.
    private func acceptConnections() {
        for _ in 0..<64 {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 { return }
            guard connections.count < limits.maximumConnections else {
                close(fd)
                logger.info("APNs port: connection refused, at the limit", ["limit": "\(limits.maximumConnections)"])
                continue
            }
            Self.setNonBlocking(fd)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let id = nextConnectionID
            nextConnectionID += 1
            let handler = handler
            // The reply holds the listener until it is answered (a stopped listener drops it).
            let listener = self
            connections[id] = HTTP2Connection(id: id, fd: fd, tls: tls, limits: limits, logger: logger,
                                              now: ProcessInfo.processInfo.systemUptime) { streamID, request in
                handler(request) { response in listener.reply(connection: id, stream: streamID, response) }
            }
        }
    }

    // MARK: Sockets

    private static func setNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    /// A listening TCP socket on `host:port`. - Returns: the socket and the port bound.
    private static func bind(host: String, port: Int) throws -> (Int32, Int) {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let address = list else {
            throw ServerError("--apns-port: \"\(host)\" is not an IP address to listen on")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
        guard fd >= 0 else { throw ServerError("--apns-port: cannot make a socket (\(String(cString: strerror(errno))))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if address.pointee.ai_family == AF_INET6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        guard Glibc.bind(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0, listen(fd, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ServerError("cannot listen on \(host):\(port) for --apns-port (\(reason))")
        }
        setNonBlocking(fd)
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let family = Int32(storage.ss_family)
        let bound: UInt16 = withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
        return (fd, Int(bound))
    }
}

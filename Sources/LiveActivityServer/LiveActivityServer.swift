import CLibWebSockets
import Foundation
import LiveActivityCore
import LiveActivityImages
import Synchronization

/// The live activity server: the dashboard over HTTP and the protocol over WebSocket at `/ws`, on one port.
///
/// Threading: one service thread runs `lws_service` and owns every lws object, the ``ActivityCenter``, the
/// store and the sessions. Other threads only call ``start()``, ``stop()`` and ``waitUntilStopped()``,
/// which hand over through atomics and `lws_cancel_service`.
public final class LiveActivityServer: @unchecked Sendable {
    /// The configuration it was created with.
    public let configuration: ServerConfiguration
    /// The token APNs-shaped `start` pushes are addressed to (`POST /3/device/{token}`), kept by the store.
    public let pushToStartToken: String
    /// The event log's identity (see ``ActivityStore/logID()``), sent with snapshots and `caughtUp`.
    public let logID: String
    let logger: Logger
    let clock: @Sendable () -> Date

    // MARK: Cross-thread state

    private let stopRequested = Atomic<Bool>(false)
    /// Jobs for the service thread from other threads.
    let inbox = ServiceInbox()
    /// {lock} the service thread, once it runs.
    private let serviceThread = Locked<pthread_t?>(nil)

    /// Whether the caller runs on the service thread (for preconditions and tests).
    var isOnServiceThread: Bool {
        serviceThread.withLock { thread in thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }
    /// {lock} the live context, for `lws_cancel_service` from other threads; nil before start and after stop.
    private let liveContext = Locked<ContextHandle?>(nil)
    private let startupResult = Locked<Result<Int, ServerError>?>(nil)
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    // MARK: Service-thread state

    var center: ActivityCenter
    let store: any ActivityStore
    var sessions: [UInt64: Session] = [:]
    /// Counters for `GET /metrics`.
    let metrics = ServerMetrics()
    /// Share links, live and recently ended (see Shares/ShareLinks.swift).
    let shareLinks: ShareLinks
    /// The HTTP side: the route table and the lws adapter that feeds it (see HTTP/ and LWS/HTTPAdapter.swift);
    /// set while the service thread runs.
    var http: HTTPAdapter?
    var nextSessionID: UInt64 = 1
    var context: OpaquePointer?
    var timer: ServiceTimer?
    /// Our WebSocket protocol's entry in the lws table.
    var webSocketProtocol: UnsafePointer<lws_protocols>?
    /// Unix time (seconds) of the next whole-second tick.
    var tickDue: TimeInterval = 0
    var shuttingDown = false
    /// The push inspector's records and watchers (see Inspector/).
    let inspector = Inspector()
    /// Fetches and caches thumbnails of activities' `image` URLs (see LiveActivityServer+Thumbnails.swift).
    lazy var thumbnails: ThumbnailService? = makeThumbnailService()

    /// Creates a server; nothing listens until ``start()``.
    /// - Parameters:
    ///   - configuration: where to listen, what to serve, limits.
    ///   - store: where activities and events are kept; loaded at start.
    ///   - logger: where diagnostics go.
    ///   - clock: the current time (UTC); tests may inject their own. Read to the millisecond.
    /// - Throws: the store's error when it cannot be loaded.
    public init(configuration: ServerConfiguration, store: any ActivityStore = InMemoryActivityStore(),
                logger: Logger = Logger(label: "liveactivity"), clock: @escaping @Sendable () -> Date = { Date() }) throws {
        self.configuration = configuration
        self.store = store
        self.logger = logger
        // Whole milliseconds, as dates are written on the wire and in the store: what clients see, what
        // is stored and what is compared are then the same instants.
        self.clock = { Date(timeIntervalSince1970: (clock().timeIntervalSince1970 * 1000).rounded() / 1000) }
        let (activities, sequence) = try store.load()
        pushToStartToken = try store.pushToStartToken()
        logID = try store.logID()
        shareLinks = ShareLinks(shares: try store.shares())
        center = ActivityCenter(activities: activities, sequence: sequence,
                                maximumLive: configuration.maximumLiveActivities)
    }

    /// Starts the service thread and returns once the server listens.
    /// - Returns: the TCP port it listens on (the kernel's pick when the configuration says 0).
    /// - Throws: ``ServerError`` when the configuration is unsafe or incomplete (see
    ///   ``ServerConfiguration/validate()``), the public folder is missing or the address cannot be bound.
    public func start() throws -> Int {
        try configuration.validate()
        let index = configuration.publicDirectory.appendingPathComponent("index.html").path
        guard FileManager.default.fileExists(atPath: index) else {
            throw ServerError.publicDirectory(configuration.publicDirectory.path)
        }
        let thread = Thread { [self] in serviceMain() }
        thread.name = "lws-service"
        thread.start()
        started.wait()
        return try startupResult.withLock { $0! }.get()
    }

    /// Asks the server to close every connection (close code 1001) and stop. Thread-safe; returns at once.
    public func stop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        liveContext.withLock { context in
            if let context { lws_cancel_service(context.pointer) }
        }
    }

    /// Runs `job` on the service thread, soon. Thread-safe; this is how other threads (image fetchers,
    /// stores) hand results to the thread that owns lws and the activities.
    func perform(_ job: @escaping ServiceInbox.Job) {
        guard inbox.post(job) else { return }
        liveContext.withLock { context in
            if let context { lws_cancel_service(context.pointer) }
        }
    }

    /// Runs the jobs other threads handed over. Service thread only.
    func runInbox() {
        for job in inbox.drain() { job(self) }
    }

    /// Blocks until the service thread has stopped and released every connection.
    public func waitUntilStopped() {
        finished.wait()
        finished.signal()
    }

    // MARK: Service thread

    private func serviceMain() {
        serviceThread.withLock { $0 = pthread_self() }
        lws_set_log_level(Int32(LLL_ERR | LLL_WARN), nil)
        let http = HTTPAdapter(router: makeRouter(), maximumBodyBytes: APNsPush.maximumBytes)
        self.http = http
        let resources = LWSContextResources(publicDirectory: configuration.publicDirectory.standardizedFileURL.path,
                                            dynamicMountpoints: http.router.mountpoints,
                                            pingAfter: configuration.pingIntervalSeconds,
                                            hangUpAfter: configuration.idleTimeoutSeconds)
        var info = lws_context_creation_info()
        info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS) | UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
            | UInt64(LWS_SERVER_OPTION_HTTP_HEADERS_SECURITY_BEST_PRACTICES_ENFORCE)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.uid = -1
        info.gid = -1
        if configuration.usesTLS { info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) }
        // lws 4.1 binds the IPv6 wildcard, every interface, when IPv6 is on, whatever IPv4 address it is
        // given (warmcat/libwebsockets#2290): an IPv4 host must turn IPv6 off to mean only that address.
        if ServerConfiguration.isIPv4(configuration.listenAddress) { info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
        guard let context = lws_create_context(&info) else {
            finishStartup(.failure(.context))
            return
        }
        self.context = context
        webSocketProtocol = UnsafePointer(resources.protocols)
        let host = resources.keep(configuration.listenAddress)
        info.port = Int32(configuration.port)
        info.iface = UnsafePointer(host)
        info.protocols = UnsafePointer(resources.protocols)
        info.extensions = UnsafePointer(resources.extensions)
        info.mounts = UnsafePointer(resources.mount)
        info.vhost_name = UnsafePointer(resources.keep("default"))
        info.retry_and_idle_policy = UnsafePointer(resources.idlePolicy)
        if let certificate = configuration.tlsCertificatePath, let key = configuration.tlsPrivateKeyPath {
            info.ssl_cert_filepath = UnsafePointer(resources.keep(certificate))
            info.ssl_private_key_filepath = UnsafePointer(resources.keep(key))
        }
        guard let vhost = lws_create_vhost(context, &info) else {
            lws_context_destroy(context)
            finishStartup(.failure(.listen(host: configuration.host, port: configuration.port)))
            return
        }
        let port = Int(lws_get_vhost_port(vhost))
        let timer = ServiceTimer(server: self)
        self.timer = timer
        liveContext.withLock { $0 = ContextHandle(pointer: context) }
        finishStartup(.success(port))
        startReplication()
        runInbox()
        logger.info("listening", ["host": configuration.host, "port": "\(port)",
                                  "public": configuration.publicDirectory.path])
        timerFired()

        var failures = 0
        while !stopRequested.load(ordering: .sequentiallyConsistent) {
            // lws_service fails only on a broken event loop; a few in a row are survivable (and logged),
            // a run of them means the loop is gone.
            if lws_service(context, 0) < 0 {
                failures += 1
                logger.warning("lws_service failed", ["failures": "\(failures)"])
                if failures >= 100 { logger.error("event loop broken; stopping"); break }
            } else {
                failures = 0
            }
        }
        stopReplication()
        closeAllSessions()
        let deadline = Date().addingTimeInterval(configuration.shutdownGracePeriod)
        while !sessions.isEmpty, Date() < deadline {
            if lws_service(context, 0) < 0 { break }
        }
        timer.cancel()
        liveContext.withLock { $0 = nil }
        lws_context_destroy(context)
        self.context = nil
        self.timer = nil
        webSocketProtocol = nil
        sessions.removeAll()
        self.http = nil
        withExtendedLifetime(resources) {}
        logger.info("stopped")
        finished.signal()
    }

    private func finishStartup(_ result: Result<Int, ServerError>) {
        startupResult.withLock { $0 = result }
        started.signal()
        if case .failure = result { finished.signal() }
    }

    /// Sends every client a close frame with 1001 (going away). Service thread only.
    private func closeAllSessions() {
        shuttingDown = true
        for session in sessions.values {
            session.closing = (LWS_CLOSE_STATUS_GOINGAWAY, "server shutting down")
            lws_callback_on_writable(session.wsi)
        }
    }
}

/// An lws context pointer that may cross threads, for `lws_cancel_service` only (the one lws call that is
/// safe from any thread).
private struct ContextHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

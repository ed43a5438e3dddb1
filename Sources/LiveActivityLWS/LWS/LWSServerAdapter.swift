import CLibWebSockets
import Foundation
import LiveActivityCore
import Synchronization

/// What the adapter needs to know to listen: the values of the server's configuration that lws sees.
/// Thread-safe (a value).
package struct LWSServerSettings: Sendable {
    /// The address to bind (`127.0.0.1`, `::`, an interface name); `localhost` already read as `127.0.0.1`.
    package var listenAddress: String
    /// The host as configured, for the error message when the address cannot be bound.
    package var host: String
    /// The TCP port; 0 lets the kernel pick one.
    package var port: Int
    /// Whether ``listenAddress`` is an IPv4 address (lws then turns IPv6 off, see ``LWSServerAdapter/run()``).
    package var listensOnIPv4Only: Bool
    /// Absolute path of the folder lws serves at `/` (static files).
    package var publicDirectory: String
    /// Whether the port speaks TLS (https/wss): lws's global TLS set-up is made.
    package var usesTLS: Bool
    /// PEM certificate chain for https/wss on the same port; nil: plain http/ws.
    package var tlsCertificatePath: String?
    /// The private key matching ``tlsCertificatePath``.
    package var tlsPrivateKeyPath: String?
    /// Seconds of silence before lws pings a WebSocket client.
    package var pingIntervalSeconds: Int
    /// Seconds of silence after which lws drops a connection.
    package var idleTimeoutSeconds: Int
    /// Whether WebSocket clients may negotiate permessage-deflate (RFC 7692).
    package var permessageDeflate: Bool
    /// Seconds the service thread waits at shutdown for clients to take their close frames.
    package var shutdownGracePeriod: TimeInterval
    /// Largest HTTP request body handed to the route table's handlers, in bytes.
    package var maximumBodyBytes: Int

    /// Settings with every value given (see each property).
    package init(listenAddress: String, host: String, port: Int, listensOnIPv4Only: Bool, publicDirectory: String,
                 usesTLS: Bool, tlsCertificatePath: String?, tlsPrivateKeyPath: String?, pingIntervalSeconds: Int, idleTimeoutSeconds: Int,
                 permessageDeflate: Bool, shutdownGracePeriod: TimeInterval, maximumBodyBytes: Int) {
        self.listenAddress = listenAddress
        self.host = host
        self.port = port
        self.listensOnIPv4Only = listensOnIPv4Only
        self.publicDirectory = publicDirectory
        self.usesTLS = usesTLS
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsPrivateKeyPath = tlsPrivateKeyPath
        self.pingIntervalSeconds = pingIntervalSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.permessageDeflate = permessageDeflate
        self.shutdownGracePeriod = shutdownGracePeriod
        self.maximumBodyBytes = maximumBodyBytes
    }
}

/// Why the service loop could not start listening.
package enum LWSStartError: Error, Sendable, Equatable {
    /// `lws_create_context` failed.
    case context
    /// `lws_create_vhost` failed: the address is in use, not local, or not permitted.
    case listen
}

/// The libwebsockets context while the service thread runs: the context and the timer. Service thread only.
final class LWSRuntime {
    let context: OpaquePointer
    /// The server's one timer.
    let timer: ServiceTimer

    init(context: OpaquePointer, timer: ServiceTimer) {
        self.context = context
        self.timer = timer
    }
}

/// An lws context pointer that may cross threads, for `lws_cancel_service` only (the one lws call that is
/// safe from any thread).
struct ContextHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// The server's edge to libwebsockets: owns the lws context, its vhost and timer, the per-session pointers,
/// the write batch, the HTTP adapter and the permessage-deflate compressor; runs the service loop; turns
/// lws's callbacks into values and calls on its ``LWSApplication``, and performs the hub's actions
/// (``perform(_:)``), writing frames straight from the ``Hub`` (LWS/WebSocketAdapter.swift).
///
/// Threading: ``run()`` is the service thread's whole life; every other method is service thread only,
/// except ``wake()``, ``requestStop()`` and ``isStopRequested``, which are thread-safe.
package final class LWSServerAdapter {
    /// `LWS_PRE`: bytes lws needs before every payload it writes, which every ``Frame`` leaves
    /// (``Frame/useHeadroom(_:)``; the server sets it once, before it makes a frame).
    package static var frameHeadroom: Int { LWSConstants.headroom }

    /// What lws sees of the configuration.
    let settings: LWSServerSettings
    /// The sessions and the broadcast; the write path reads it directly. Service thread only.
    let hub: Hub
    /// Counters for `GET /metrics`, written on the write path. Service thread only.
    let metrics: ServerMetrics
    /// Where the adapter's and lws's own log lines go.
    let logger: Logger
    /// The server's side, set once before ``run()`` (``attach(_:)``). Service thread only.
    private(set) var application: (any LWSApplication)!

    /// Set by ``requestStop()``; the service loop then shuts down.
    private let stopRequested = Atomic<Bool>(false)
    /// {lock} the live context, for `lws_cancel_service` from other threads; nil before start and after stop.
    private let liveContext = Locked<ContextHandle?>(nil)

    // MARK: Service-thread state

    /// The libwebsockets context and the timer, while the service thread runs.
    var runtime: LWSRuntime?
    /// The HTTP side: the route table and the lws adapter that feeds it; set while the service thread runs.
    var http: HTTPAdapter?
    /// Sessions whose reference a connection's per-session data holds (retained), to release each exactly once.
    var liveSessionPointers: Set<UnsafeMutableRawPointer> = []
    /// Whether this round of the service loop broadcast something that ``writeBroadcast()`` must still write
    /// (the hub returned ``Hub/Action/requestWritableForAll``).
    var broadcastWritesDue = false
    /// The buffer that gathers a client's waiting frames into one write (LWS/WriteBatch.swift).
    let outgoingBatch = WriteBatch()
    /// Compresses each message once for every client that negotiated permessage-deflate (Compression/).
    let deflate = Deflate()
    /// Set once the service loop has left its main loop: clients are being closed, handshakes refused.
    package private(set) var isShuttingDown = false

    /// An adapter that will listen with `settings` and serve `hub`'s sessions; nothing happens until ``run()``.
    /// - Parameters:
    ///   - settings: address, port, files, TLS, timeouts, limits.
    ///   - hub: the sessions and the broadcast (service thread only once ``run()`` starts).
    ///   - metrics: the counters the write path adds to.
    ///   - logger: where diagnostics go (lws's own lines too, labelled `libwebsockets`).
    package init(settings: LWSServerSettings, hub: Hub, metrics: ServerMetrics, logger: Logger) {
        self.settings = settings
        self.hub = hub
        self.metrics = metrics
        self.logger = logger
    }

    /// Sets the application the adapter calls; once, before ``run()``. It is held strongly: it must not hold
    /// the adapter strongly in return (the server's bridge holds the server unowned).
    package func attach(_ application: any LWSApplication) {
        precondition(self.application == nil, "LWSServerAdapter.attach(_:) called twice")
        self.application = application
    }

    /// Wakes the service thread (`lws_cancel_service`, safe from any thread), which then asks the application
    /// to drain its inbox (``LWSApplication/serviceWoken()``) and checks for a stop request. Does nothing
    /// before start and after stop. Thread-safe.
    package func wake() {
        liveContext.withLock { context in
            if let context { lws_cancel_service(context.pointer) }
        }
    }

    /// Asks the service loop to shut down (close every client, destroy the context) and wakes it.
    /// Thread-safe; returns at once.
    package func requestStop() {
        stopRequested.store(true, ordering: .sequentiallyConsistent)
        wake()
    }

    /// Whether ``requestStop()`` was called. Thread-safe.
    package var isStopRequested: Bool { stopRequested.load(ordering: .sequentiallyConsistent) }

    /// Schedules the timer to fire once after `seconds` (at least 1 ms), replacing any earlier schedule; it
    /// then calls ``LWSApplication/timerFired()`` and writes what that broadcast. Does nothing while the
    /// service loop does not run. Service thread only.
    package func scheduleTimer(after seconds: TimeInterval) {
        guard let runtime else { return }
        runtime.timer.schedule(in: runtime.context, after: seconds)
    }

    // MARK: Service thread

    /// The service thread's body: creates the lws context and vhost, reports the port (or the failure) to
    /// the application, runs `lws_service` until ``requestStop()``, then closes every client (1001, waiting
    /// at most ``LWSServerSettings/shutdownGracePeriod``), destroys the context and releases every session.
    /// Returns once everything lws held is freed. Call once, on the thread that is to be the service thread.
    package func run() {
        let application = self.application!
        application.serviceThreadStarted()
        lws_set_log_level(Int32(LLL_ERR | LLL_WARN), LibraryLogBridge.emitter(for: logger))
        // Broadcast payloads may be 5 KB; device pushes 4 KB (the push endpoint checks its own limit).
        let http = HTTPAdapter(router: application.makeRouter(), maximumBodyBytes: settings.maximumBodyBytes)
        self.http = http
        let resources = LWSContextResources(publicDirectory: settings.publicDirectory,
                                            dynamicMountpoints: http.router.mountpoints,
                                            pingAfter: settings.pingIntervalSeconds,
                                            hangUpAfter: settings.idleTimeoutSeconds,
                                            permessageDeflate: settings.permessageDeflate)
        var info = lws_context_creation_info()
        info.options = UInt64(LWS_SERVER_OPTION_EXPLICIT_VHOSTS) | UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
            | UInt64(LWS_SERVER_OPTION_HTTP_HEADERS_SECURITY_BEST_PRACTICES_ENFORCE)
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.uid = -1
        info.gid = -1
        if settings.usesTLS { info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT) }
        // A request line or header block over lws's header buffer (4 KiB by default) made lws 4.1 close the
        // connection without a word. Each header (the request target too) is now cut at its limit, the buffer
        // has room for several such, and HTTPAdapter answers 414 / 431 (LWS_CALLBACK_FILTER_HTTP_CONNECTION).
        info.max_http_header_data = UInt16(HTTPAdapter.headerBufferBytes)
        info.token_limits = UnsafePointer(resources.tokenLimits)
        // lws 4.1 binds the IPv6 wildcard, every interface, when IPv6 is on, whatever IPv4 address it is
        // given (warmcat/libwebsockets#2290): an IPv4 host must turn IPv6 off to mean only that address.
        if settings.listensOnIPv4Only { info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
        guard let context = lws_create_context(&info) else {
            self.http = nil
            application.serviceFailedToStart(.context)
            return
        }
        let host = resources.keep(settings.listenAddress)
        info.port = Int32(settings.port)
        info.iface = UnsafePointer(host)
        info.protocols = UnsafePointer(resources.protocols)
        info.extensions = resources.extensions.map { UnsafePointer($0) }
        info.mounts = UnsafePointer(resources.mount)
        info.vhost_name = UnsafePointer(resources.keep("default"))
        info.retry_and_idle_policy = UnsafePointer(resources.idlePolicy)
        if let certificate = settings.tlsCertificatePath, let key = settings.tlsPrivateKeyPath {
            info.ssl_cert_filepath = UnsafePointer(resources.keep(certificate))
            info.ssl_private_key_filepath = UnsafePointer(resources.keep(key))
            // ALPN offers HTTP/1.1 only: over HTTP/2, lws 4.1 drops header names it does not know, so an APNs
            // client that negotiated h2 here (curl does by default) lost its apns-* headers and every push was
            // refused. HTTP/2 pushes go to --apns-port (libnghttp2), which reads every header.
            info.alpn = UnsafePointer(resources.keep("http/1.1"))
        }
        guard let vhost = lws_create_vhost(context, &info) else {
            lws_context_destroy(context)
            self.http = nil
            application.serviceFailedToStart(.listen)
            return
        }
        let port = Int(lws_get_vhost_port(vhost))
        let timer = ServiceTimer(adapter: self)
        runtime = LWSRuntime(context: context, timer: timer)
        liveContext.withLock { $0 = ContextHandle(pointer: context) }
        application.serviceStarted(port: port)

        var failures = 0
        while !isStopRequested {
            // lws_service fails only on a broken event loop; a few in a row are survivable (and logged),
            // a run of them means the loop is gone.
            let serviced = lws_service(context, 0)
            finishRound()
            if serviced < 0 {
                failures += 1
                logger.warning("lws_service failed", ["failures": "\(failures)"])
                if failures >= 100 { logger.error("event loop broken; stopping"); break }
            } else {
                failures = 0
            }
        }
        application.serviceWillShutDown()
        isShuttingDown = true
        perform(hub.closeAll(reason: "server shutting down"))
        let deadline = Date().addingTimeInterval(settings.shutdownGracePeriod)
        while !hub.sessions.isEmpty, Date() < deadline {
            let serviced = lws_service(context, 0)
            finishRound()
            if serviced < 0 { break }
        }
        timer.cancel()
        liveContext.withLock { $0 = nil }
        lws_context_destroy(context)
        runtime = nil
        for pointer in liveSessionPointers { Unmanaged<Session>.fromOpaque(pointer).release() }
        liveSessionPointers.removeAll()
        self.http = nil
        withExtendedLifetime(resources) {}
        application.serviceDidStop()
    }

    /// After each `lws_service`: what the round accepted goes to the store as one group, and what it
    /// broadcast is written to every client (``writeBroadcast()``).
    private func finishRound() {
        application.releaseHeldSubmissions()
        writeBroadcast()
    }
}

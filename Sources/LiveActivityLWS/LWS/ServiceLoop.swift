import CLibWebSockets
import Foundation
import LiveActivityCore

/// The libwebsockets context while the service thread runs: the context and the timers. Service thread only.
final class LWSRuntime {
    let context: OpaquePointer
    /// The server's timer (``LWSServerAdapter/scheduleTimer(after:)``).
    let timer: ServiceTimer
    /// Writes a held broadcast when the hold has lasted its longest (``BroadcastHold``).
    let holdTimer: ServiceTimer

    init(context: OpaquePointer, timer: ServiceTimer, holdTimer: ServiceTimer) {
        self.context = context
        self.timer = timer
        self.holdTimer = holdTimer
    }
}

/// An lws context pointer that may cross threads, for `lws_cancel_service` only (the one lws call that is
/// safe from any thread).
struct ContextHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// The service thread: creates the lws context and vhost, runs `lws_service` until asked to stop, closes
/// every client and destroys the context.
extension LWSServerAdapter {
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
        info.pt_serv_buf_size = UInt32(LWSContextResources.serviceBufferBytes)
        info.token_limits = UnsafePointer(resources.tokenLimits)
        // lws 4.1 binds the IPv6 wildcard, every interface, when IPv6 is on, whatever IPv4 address it is
        // given (warmcat/libwebsockets#2290): an IPv4 host must turn IPv6 off to mean only that address.
        if settings.listensOnIPv4Only { info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
        guard let (context, loop) = ServiceEventLoop.makeContext(&info, wanted: settings.eventLoop, logger: logger) else {
            self.http = nil
            application.serviceFailedToStart(.context)
            return
        }
        eventLoop = loop.kind
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
            loop.destroy()
            self.http = nil
            application.serviceFailedToStart(.listen)
            return
        }
        let port = Int(lws_get_vhost_port(vhost))
        let timer = ServiceTimer(adapter: self, fired: serviceTimerFired)
        let holdTimer = ServiceTimer(adapter: self, fired: broadcastHoldEnded)
        runtime = LWSRuntime(context: context, timer: timer, holdTimer: holdTimer)
        liveContext.withLock { $0 = ContextHandle(pointer: context) }
        application.serviceStarted(port: port)

        var failures = 0
        while !isStopRequested {
            // A turn (lws_service with poll) fails only on a broken event loop; a few in a row are survivable (and logged),
            // a run of them means the loop is gone.
            let serviced = loop.turn(context)
            readArrivedInput(loop)
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
            let serviced = loop.turn(context)
            finishRound()
            if serviced < 0 { break }
        }
        timer.cancel()
        holdTimer.cancel()
        liveContext.withLock { $0 = nil }
        lws_context_destroy(context)
        loop.destroy()
        runtime = nil
        for pointer in liveSessionPointers { Unmanaged<Session>.fromOpaque(pointer).release() }
        liveSessionPointers.removeAll()
        self.http = nil
        withExtendedLifetime(resources) {}
        application.serviceDidStop()
    }

    /// Before a round's broadcast is written: while the last turn broadcast something (a store in memory commits
    /// on the spot), turns again without waiting, so that what arrived meanwhile is read and goes out in the same
    /// pass. A publisher that sends its next updates as their acks arrive sends them back to back; the loop woke
    /// at the first, and without this each pass carried a part of them (6.8 frames a write at N = 1,000 with 32
    /// in flight, against 12.8 for the durable store, whose commit lets the rest arrive). At most 8 turns or
    /// 1 ms, each taken only when the one before read something: a lone update is written at once.
    private func readArrivedInput(_ loop: ServiceEventLoop) {
        guard broadcastWritesDue, loop.kind == .epoll else { return }
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<8 {
            let head = hub.ring.head
            loop.turnWithoutWaiting()
            if hub.ring.head == head || DispatchTime.now().uptimeNanoseconds - start > 1_000_000 { return }
        }
    }

    /// After each `lws_service`: what the round accepted goes to the store as one group, and what it
    /// broadcast is written to every client (``writeBroadcast()``), unless the store is recording changes
    /// whose events would join it shortly: the broadcast then waits for them, at most 1 ms
    /// (``BroadcastHold``; their report wakes the loop, the hold's timer ends a longer wait).
    private func finishRound() {
        application.releaseHeldSubmissions()
        if broadcastWritesDue, let runtime {
            switch broadcastHold.decide(storeIsRecording: application.storeIsRecording,
                                        now: DispatchTime.now().uptimeNanoseconds) {
            case .write:
                break
            case .hold(let delay):
                if let delay { runtime.holdTimer.schedule(in: runtime.context, after: Double(delay) / 1e9) }
                return
            }
        }
        writeBroadcast()
    }
}

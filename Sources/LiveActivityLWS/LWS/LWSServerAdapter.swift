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
    /// Which system call waits for the sockets (``LWSEventLoop``); default epoll.
    package var eventLoop: LWSEventLoop
    /// Whether a broadcast pass hands its sends to the kernel together through io_uring (``SendQueue``); default
    /// on. Off, or when the kernel refuses io_uring, each write is its own `send(2)`.
    package var sendsThroughIoUring: Bool

    /// Settings with every value given (see each property).
    package init(listenAddress: String, host: String, port: Int, listensOnIPv4Only: Bool, publicDirectory: String,
                 usesTLS: Bool, tlsCertificatePath: String?, tlsPrivateKeyPath: String?, pingIntervalSeconds: Int, idleTimeoutSeconds: Int,
                 permessageDeflate: Bool, shutdownGracePeriod: TimeInterval, maximumBodyBytes: Int,
                 eventLoop: LWSEventLoop = .epoll, sendsThroughIoUring: Bool = true) {
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
        self.eventLoop = eventLoop
        self.sendsThroughIoUring = sendsThroughIoUring
    }
}

/// Why the service loop could not start listening.
package enum LWSStartError: Error, Sendable, Equatable {
    /// `lws_create_context` failed.
    case context
    /// `lws_create_vhost` failed: the address is in use, not local, or not permitted.
    case listen
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
    let stopRequested = Atomic<Bool>(false)
    /// {lock} the live context, for `lws_cancel_service` from other threads; nil before start and after stop.
    let liveContext = Locked<ContextHandle?>(nil)

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
    /// Whether the broadcast due waits for the changes the store is recording (ServiceLoop.swift's
    /// `finishRound`; ``writeBroadcast()`` ends the hold).
    var broadcastHold = BroadcastHold()
    /// The positions in the hub's session order that a broadcast pass found ready to write, reused from pass
    /// to pass (``writeBroadcast()``).
    var readyToWrite: [Int] = []
    /// The ready sessions with replies waiting, written first in a pass (``writeBroadcast()``); reused too.
    var answeringFirst: [Int] = []
    /// The broadcast pass's sends, handed to the kernel together (LWS/SendQueue.swift); nil when io_uring is
    /// turned off or the kernel refuses it: each write is then its own `send(2)`.
    var sendQueue: SendQueue?
    /// The buffer that gathers a client's waiting frames into one write (LWS/WriteBatch.swift).
    let outgoingBatch = WriteBatch()
    /// Compresses each message once for every client that negotiated permessage-deflate (Compression/).
    let deflate = Deflate()
    /// Set once the service loop has left its main loop: clients are being closed, handshakes refused.
    package internal(set) var isShuttingDown = false
    /// How a broadcast pass sends: `io_uring` (one system call for the pass's sends, ``SendQueue``) or `send` (one
    /// `send(2)` per write: turned off, or refused by the kernel, then or later).
    package var sends: String { sendQueue == nil ? "send" : "io_uring" }
    /// The loop the running context waits on (``LWSEventLoop/poll`` when epoll was asked for and could not
    /// be had); set before the application hears `serviceStarted`.
    package internal(set) var eventLoop: LWSEventLoop?

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
        sendQueue = settings.sendsThroughIoUring ? SendQueue() : nil
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
        waker()
    }

    /// ``wake()`` as a value other threads may keep (it holds the live context's lock, not the adapter).
    package var waker: @Sendable () -> Void {
        let liveContext = self.liveContext
        return {
            liveContext.withLock { context in
                if let context { lws_cancel_service(context.pointer) }
            }
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
}

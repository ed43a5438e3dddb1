import Foundation
import LiveActivityCore
import LiveActivityImages
import LiveActivityLWS
import LiveActivityRendering
import Synchronization

/// The live activity server: the dashboard over HTTP and the protocol over WebSocket at `/ws`, on one port.
///
/// Threading: one service thread runs the lws adapter's loop (``LWSServerAdapter``, LiveActivityLWS) and owns
/// every lws object, the ``ActivityCenter``s, the store's reads and the sessions; the store thread
/// (``StoreWriter``) records changes and hands the results back through the inbox. Other threads only call
/// ``start()``, ``stop()`` and ``waitUntilStopped()``, which hand over through atomics and the adapter's
/// thread-safe wake-up.
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

    /// Jobs for the service thread from other threads.
    let inbox = ServiceInbox()
    /// {lock} the service thread, once it runs.
    let serviceThread = Locked<pthread_t?>(nil)
    /// {lock} the service thread's handle, joined by ``waitUntilStopped()``.
    let serviceThreadHandle = Locked<JoinableThread?>(nil)

    /// Whether the caller runs on the service thread (for preconditions and tests).
    var isOnServiceThread: Bool {
        serviceThread.withLock { thread in thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }
    let startupResult = Locked<Result<Int, ServerError>?>(nil)
    let started = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)

    // MARK: Service-thread state

    /// The committed and speculative activities, and the changes waiting for the store between them
    /// (Store/LiveActivityServer+Store.swift).
    var pipeline: ChangePipeline {
        get { boundPipeline.value }
        _modify { yield &boundPipeline.value }
    }
    /// The pipeline, checked to be touched on the service thread only (debug builds).
    let boundPipeline: ServiceBound<ChangePipeline>
    /// What clients have been told: the pipeline's committed state as of the step being carried out, so
    /// that a reply or tick run between two settled changes shows the first and not yet the second. Reads,
    /// snapshots, ticks, broadcasts.
    var center: ActivityCenter { storeStage.told ?? pipeline.committed }
    let store: any ActivityStore
    /// The WebSocket sessions and the broadcast (see ``Hub``), checked to be touched on the service thread only.
    let boundHub: ServiceBound<Hub>
    /// The hub. Service thread only (checked in debug builds).
    var hub: Hub { boundHub.value }
    /// The edge to libwebsockets (LiveActivityLWS): the context, the per-session pointers, the write batch, the
    /// HTTP adapter, the compressor and the service loop. It calls back through ``ServerLWSApplication``.
    let adapter: LWSServerAdapter
    /// Records changes on the store thread, many at a time (or at once, for a store in memory).
    let storeWriter: StoreWriter
    /// Reads the store off the service thread: resume, history, timelines, renderings of an instant.
    let storeReader: StoreReader
    /// The rest of the pipeline's service-thread state: deferred replies and HTTP answers.
    let storeStage = StoreStage()
    /// Counters for `GET /metrics`.
    let metrics = ServerMetrics()
    /// Share links, live and recently ended (see Shares/ShareLinks.swift).
    let shareLinks: ShareLinks
    /// What share links see of the server (Shares/LiveActivityServer+Shares.swift), made once.
    lazy var shareLinksContext: ShareLinks.Context = makeShareLinksContext()
    /// Who may send APNs-shaped requests (provider tokens, checked with `--apns-key`).
    let providerAuthority: ProviderAuthority
    /// The broadcast channels, as the store keeps them (Push/LiveActivityServer+Channels.swift).
    var channels: ChannelRegistry
    /// The APNs listener (HTTP/2, `--apns-port`), while it runs; started by ``start()``, stopped by the
    /// service thread at shutdown. {lock}
    let apnsListener = Locked<HTTP2Listener?>(nil)
    /// {lock} the APNs listener's port once it listens.
    private let apnsBoundPort = Locked<Int?>(nil)

    /// The TCP port of the APNs listener (HTTP/2), once ``start()`` returned; nil when there is none.
    /// Thread-safe.
    public var apnsPort: Int? { apnsBoundPort.withLock { $0 } }
    /// The APNs listener's route table, made on the service thread at its first request.
    var apnsRouter: Router?
    var nextSessionID: UInt64 = 1
    /// The timer's policy: the whole-second tick and its hold, the heartbeat, deadlines, the next firing
    /// (``ServiceTiming``, performed by WebSocket/LiveActivityServer+Activities.swift). Service thread only.
    var timing: ServiceTiming
    /// The push inspector's records and watchers (see Inspector/).
    let inspector = Inspector()
    /// The activity kinds and their folders (Kinds/), loaded at start; swap with ``replaceKinds(_:templates:)``.
    /// Service thread only once the server runs.
    private(set) var kindCatalog: KindCatalog
    /// The catalog's templates, parsed when it was loaded (a kind whose template fails to parse is drawn with
    /// the default layout). Service thread only once the server runs.
    private(set) var kindTemplates: KindTemplates
    /// Reloads the kinds when a `--kinds` folder changes on disk; started by ``start()`` when there is one.
    let kindWatcher = Locked<KindFolderWatcher?>(nil)
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
        // Frames (Core) leave lws's LWS_PRE before every payload.
        Frame.useHeadroom(LWSServerAdapter.frameHeadroom)
        timing = ServiceTiming(heartbeatInterval: TimeInterval(configuration.heartbeatSeconds))
        storeWriter = StoreWriter(store: store, logger: logger)
        storeReader = StoreReader(store: store)
        // Whole milliseconds, as dates are written on the wire and in the store: what clients see, what
        // is stored and what is compared are then the same instants.
        self.clock = { Date(timeIntervalSince1970: (clock().timeIntervalSince1970 * 1000).rounded() / 1000) }
        let (catalog, kindErrors, _) = KindLoader.load(configuration.allKindsDirectories)
        for error in kindErrors {
            logger.error("kind folder skipped", ["error": error.description])
        }
        for warning in catalog.nameWarnings { logger.warning("kind names", ["warning": warning]) }
        logger.debug("kinds loaded", ["kinds": catalog.registry.names.joined(separator: ",")])
        kindCatalog = catalog
        kindTemplates = Self.parseTemplates(catalog, logger: logger)
        store.useKinds(catalog.registry)
        let (activities, sequence) = try store.load()
        pushToStartToken = try store.pushToStartToken()
        logID = try store.logID()
        shareLinks = ShareLinks(shares: try store.shares())
        channels = ChannelRegistry(try store.channels())
        providerAuthority = ProviderAuthority(access: configuration.access, key: try configuration.apns.keyPath.map { try ES256Key(file: $0) })
        let serviceThread = self.serviceThread
        let onServiceThread: @Sendable () -> Bool = {
            serviceThread.withLock { thread in thread.map { pthread_equal($0, pthread_self()) != 0 } ?? true }
        }
        var start = ActivityCenter(activities: activities, sequence: sequence, maximumLive: configuration.maximumLiveActivities,
                                   kinds: catalog.registry)
        // Tokens of activities dismissed before the restart stay 410 Unregistered (as far as the log reaches).
        start.rememberDismissed((try? store.dismissedActivities(limit: RetiredPushTokens.capacity)) ?? [])
        boundPipeline = ServiceBound(ChangePipeline(start), owner: onServiceThread)
        let hub = Hub(maximumQueuedBytes: configuration.maximumQueuedBytes)
        boundHub = ServiceBound(hub, owner: onServiceThread)
        adapter = LWSServerAdapter(settings: Self.lwsSettings(configuration), hub: hub, metrics: metrics, logger: logger)
        connectStoreWriter()
        connectStoreReader()
        // The inspector's diffs start from the stored contents (never from a read of the event log).
        for activity in activities { inspector.contents[activity.id] = activity.content.jsonValue }
        adapter.attach(ServerLWSApplication(server: self))
    }

    /// Reads the kind folders again (SIGHUP) and swaps the result in on the service thread. The files are read
    /// on the calling thread; a bad folder is skipped and logged, as at start, and a kind loaded before whose
    /// folder no longer reads keeps its last good version (``KindCatalog/keeping(_:whereFolderFailed:)``).
    /// Thread-safe.
    public func reloadKinds() {
        let (catalog, errors, failed) = KindLoader.load(configuration.allKindsDirectories)
        for error in errors {
            logger.error("kind folder skipped", ["error": error.description])
        }
        let templates = Self.parseTemplates(catalog, logger: logger)
        perform { server in
            let (merged, kept) = catalog.keeping(server.kindCatalog, whereFolderFailed: failed)
            // Kept kinds' templates are parsed again with the rest (a few small files, and only when one was kept).
            server.replaceKinds(merged, templates: kept.isEmpty ? templates : Self.parseTemplates(merged, logger: server.logger))
            for warning in merged.nameWarnings { server.logger.warning("kind names", ["warning": warning]) }
            var fields = ["kinds": merged.registry.names.joined(separator: ",")]
            if !kept.isEmpty { fields["kept"] = kept.joined(separator: ",") }
            server.logger.info("kinds reloaded", fields)
        }
    }

    /// Swaps in newly loaded kinds: validation, listings and renderings use them from the next request on;
    /// activities keep their state and find their kind again by `attributesType`; those that no longer validate
    /// are kept and marked with ``Activity/kindProblem``; when a mark changes, watching clients get a fresh
    /// snapshot (as after a store reload). Service thread only.
    func replaceKinds(_ catalog: KindCatalog, templates: KindTemplates? = nil) {
        let marksBefore = center.activities.mapValues(\.kindProblem)
        kindCatalog = catalog
        store.useKinds(catalog.registry)
        kindTemplates = templates ?? Self.parseTemplates(catalog, logger: logger)
        pipeline.replaceKinds(catalog.registry)
        // What clients were last told (reads and snapshots) is marked too (``Activity/kindProblem``).
        storeStage.told?.replaceKinds(catalog.registry)
        guard center.activities.mapValues(\.kindProblem) != marksBefore else { return }
        for session in hub.sessions.values where session.cursor != nil { greet(session, since: nil) }
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
        let thread = JoinableThread(name: "lws-service") { [self] in adapter.run() }
        serviceThreadHandle.withLock { $0 = thread }
        guard thread.start() else { throw ServerError("cannot start the service thread") }
        started.wait()
        let port = try startupResult.withLock { $0! }.get()
        if let apnsPort = configuration.apns.port {
            do {
                let listener = try HTTP2Listener(configuration: configuration, port: apnsPort, logger: logger) { [weak self] request, reply in
                    // The HTTP/2 thread hands each request to the service thread, and the answer back.
                    self?.perform { server in server.answerAPNsRequest(request, reply: reply) }
                }
                apnsListener.withLock { $0 = listener }
                apnsBoundPort.withLock { $0 = listener.port }
                listener.start()
            } catch {
                stop()
                waitUntilStopped()
                throw error
            }
        }
        if !configuration.extraKindsDirectories.isEmpty {
            let watcher = KindFolderWatcher(directories: configuration.extraKindsDirectories) { [weak self] in
                self?.logger.info("kind folder changed on disk; reloading")
                self?.reloadKinds()
            }
            kindWatcher.withLock { $0 = watcher }
            watcher.start()
        }
        return port
    }

    /// Answers one request of the APNs listener through its route table; `reply` hands the answer back to
    /// the HTTP/2 thread. Service thread only.
    func answerAPNsRequest(_ request: HTTPRequest, reply: @escaping @Sendable (HTTPResponse) -> Void) {
        if apnsRouter == nil { apnsRouter = makeAPNsRouter() }
        apnsRouter!.dispatch(request, HTTPResponder { response in reply(response) })
    }

    /// Asks the server to close every connection (close code 1001) and stop. Thread-safe; returns at once.
    public func stop() {
        apnsListener.withLock { $0 }?.stop()
        kindWatcher.withLock { $0 }?.stop()
        adapter.requestStop()
    }

    /// Wakes the service thread, which then drains the inbox and checks for a stop request. Thread-safe.
    func wakeServiceThread() {
        adapter.wake()
    }

    /// Performs the hub's actions on the connections (``LWSServerAdapter/perform(_:)``). Service thread only.
    func perform(_ actions: [Hub.Action]) {
        adapter.perform(actions)
    }

    /// Schedules the timer to fire once after `seconds` (``LWSServerAdapter/scheduleTimer(after:)``); it then
    /// calls ``timerFired()``. Service thread only.
    func scheduleTimer(after seconds: TimeInterval) {
        adapter.scheduleTimer(after: seconds)
    }

    /// What the lws adapter sees of `configuration`: where to listen, what to serve, timeouts, limits.
    static func lwsSettings(_ configuration: ServerConfiguration) -> LWSServerSettings {
        LWSServerSettings(listenAddress: configuration.listenAddress, host: configuration.host, port: configuration.port,
                          listensOnIPv4Only: ServerConfiguration.isIPv4(configuration.listenAddress),
                          publicDirectory: configuration.publicDirectory.standardizedFileURL.path,
                          usesTLS: configuration.usesTLS, tlsCertificatePath: configuration.tlsCertificatePath,
                          tlsPrivateKeyPath: configuration.tlsPrivateKeyPath,
                          pingIntervalSeconds: configuration.pingIntervalSeconds, idleTimeoutSeconds: configuration.idleTimeoutSeconds,
                          permessageDeflate: configuration.permessageDeflate, shutdownGracePeriod: configuration.shutdownGracePeriod,
                          // Broadcast payloads may be 5 KB; device pushes 4 KB (the push endpoint checks its own limit).
                          maximumBodyBytes: APNsPush.maximumBroadcastBytes)
    }

    /// Runs `job` on the service thread, soon. Thread-safe; this is how other threads (image fetchers,
    /// stores) hand results to the thread that owns lws and the activities.
    func perform(_ job: @escaping ServiceInbox.Job) {
        guard inbox.post(job) else { return }
        wakeServiceThread()
    }

    /// Runs the jobs other threads handed over. Service thread only.
    func runInbox() {
        for job in inbox.drain() { job(self) }
    }

    /// Blocks until the service thread has stopped and released every connection.
    public func waitUntilStopped() {
        finished.wait()
        finished.signal()
        // Joined, not only signalled: the thread's OpenSSL state must be freed before the process exits.
        serviceThreadHandle.withLock { $0 }?.join()
        apnsListener.withLock { $0 }?.waitUntilStopped()
    }
}

import Foundation
import LiveActivityCore
import LiveActivityLWS
import LiveActivityRendering
import Synchronization

/// The live activity server: the dashboard over HTTP and the protocol over WebSocket at `/ws`, on one port.
///
/// The composition root: builds the store's committer (``ChangeCommitter``: the change pipeline, the store
/// writer and reader), the WebSocket sessions and their hub (``WebSocketSessions``), the timing
/// (``TimingDriver``) and the features, fills the tables they register in (``FeatureTables``), and wires
/// the observers of committed changes and answered requests, and the lws adapter (``LWSServerAdapter``,
/// LiveActivityLWS) that calls back through ``ServerLWSApplication``. It holds no feature's state.
///
/// Threading: one service thread runs the lws adapter's loop and owns every lws object, the committer, the
/// sessions and the features; the store thread (``StoreWriter``) records changes and hands the results back
/// through the inbox. Other threads only call ``start()``, ``stop()``, ``waitUntilStopped()`` and
/// ``reloadKinds()``, which hand over through the inbox and the adapter's thread-safe wake-up.
public final class LiveActivityServer: @unchecked Sendable {
    /// The configuration it was created with.
    public let configuration: ServerConfiguration
    /// The token APNs-shaped `start` pushes are addressed to (`POST /3/device/{token}`), kept by the store.
    public let pushToStartToken: String
    /// The event log's identity (see ``ActivityStore/logID()``), sent with snapshots and `caughtUp`.
    public let logID: String
    /// Where diagnostics go.
    let logger: Logger
    /// The current time, to the millisecond (as dates are written on the wire and in the store).
    let clock: @Sendable () -> Date

    // MARK: Cross-thread state

    /// Jobs for the service thread from other threads.
    let inbox = ServiceInbox()
    /// {lock} the service thread, once it runs.
    let serviceThread = Locked<pthread_t?>(nil)
    /// {lock} the service thread's handle, joined by ``waitUntilStopped()``.
    let serviceThreadHandle = Locked<JoinableThread?>(nil)
    /// {lock} how startup went (the port, or why not); `started` signals it, `finished` the end of the loop.
    let startupResult = Locked<Result<Int, ServerError>?>(nil)
    let started = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
    /// Whether the caller runs on the service thread (for preconditions and tests).
    var isOnServiceThread: Bool {
        serviceThread.withLock { thread in thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    // MARK: The kernel and the features (service thread)

    /// Everything the service thread owns, reached through one checked value (``state``).
    struct ServiceState {
        /// Judges, records and publishes changes; owns the store's writer and reader.
        let committer: ChangeCommitter
        /// The WebSocket connections, their hub and the broadcast.
        let sessions: WebSocketSessions
        /// The timer's policy, performed: deadlines, ticks, heartbeats, share expiry.
        let timing: TimingDriver
        /// The features (Features/ServerFeatures.swift).
        let features: ServerFeatures
        /// The route tables and the WebSocket command table the features filled (``makeRouter()``, when the
        /// service loop starts).
        var tables = FeatureTables()
    }
    /// The service thread's state, as one value: in debug builds (every test runs one) any access from
    /// another thread traps (``ServiceBound``); before the service thread starts, `init` may wire it.
    private let state: ServiceBound<ServiceState>
    /// Judges, records and publishes changes. Service thread only (checked).
    var committer: ChangeCommitter { state.value.committer }
    /// The WebSocket connections and their hub. Service thread only (checked).
    var sessions: WebSocketSessions { state.value.sessions }
    /// The timing. Service thread only (checked).
    var timing: TimingDriver { state.value.timing }
    /// The features. Service thread only (checked).
    var features: ServerFeatures { state.value.features }
    /// The tables the features filled. Service thread only (checked).
    var tables: FeatureTables { state.value.tables }
    /// Counters for `GET /metrics`.
    let metrics = ServerMetrics()
    /// The activity kinds and their folders, as the renderings feature holds them.
    var kindCatalog: KindCatalog { features.renderings.catalog }

    /// The edge to libwebsockets (LiveActivityLWS): the context, the per-session pointers, the write batch, the
    /// HTTP adapter, the compressor and the service loop. It calls back through ``ServerLWSApplication``.
    let adapter: LWSServerAdapter

    /// The APNs listener (HTTP/2, `--apns-port`), while it runs. {lock}
    let apnsListener = Locked<HTTP2Listener?>(nil)
    /// {lock} the APNs listener's port once it listens.
    private let apnsBoundPort = Locked<Int?>(nil)
    /// Reloads the kinds when a `--kinds` folder changes on disk; started by ``start()`` when there is one.
    let kindWatcher = Locked<KindFolderWatcher?>(nil)

    /// The TCP port of the APNs listener (HTTP/2), once ``start()`` returned; nil when there is none.
    /// Thread-safe.
    public var apnsPort: Int? { apnsBoundPort.withLock { $0 } }

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
        self.logger = logger
        // Frames (Core) leave lws's LWS_PRE before every payload.
        Frame.useHeadroom(LWSServerAdapter.frameHeadroom)
        // Whole milliseconds, as dates are written on the wire and in the store: what clients see, what
        // is stored and what is compared are then the same instants.
        let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: (clock().timeIntervalSince1970 * 1000).rounded() / 1000) }
        self.clock = clock
        let (catalog, kindErrors, _) = KindLoader.load(configuration.allKindsDirectories)
        for error in kindErrors { logger.error("kind folder skipped", ["error": error.description]) }
        for warning in catalog.nameWarnings { logger.warning("kind names", ["warning": warning]) }
        logger.debug("kinds loaded", ["kinds": catalog.registry.names.joined(separator: ",")])
        store.useKinds(catalog.registry)
        let (activities, sequence) = try store.load()
        pushToStartToken = try store.pushToStartToken()
        logID = try store.logID()
        let shares = try store.shares(), channels = ChannelRegistry(try store.channels())
        let authority = ProviderAuthority(access: configuration.access, key: try configuration.apns.keyPath.map { try ES256Key(file: $0) })
        let serviceThread = self.serviceThread
        let onServiceThread: @Sendable () -> Bool = {
            serviceThread.withLock { thread in thread.map { pthread_equal($0, pthread_self()) != 0 } ?? true }
        }
        var start = ActivityCenter(activities: activities, sequence: sequence, maximumLive: configuration.maximumLiveActivities,
                                   kinds: catalog.registry)
        // Tokens of activities dismissed before the restart stay 410 Unregistered (as far as the log reaches).
        start.rememberDismissed((try? store.dismissedActivities(limit: RetiredPushTokens.capacity)) ?? [])
        let committer = ChangeCommitter(store: store, start: ChangePipeline(start), onServiceThread: onServiceThread,
                                        metrics: metrics, logger: logger, clock: clock)
        let hub = Hub(maximumQueuedBytes: configuration.maximumQueuedBytes)
        let sessions = WebSocketSessions(configuration: configuration, hub: hub, committer: committer, onServiceThread: onServiceThread,
                                         metrics: metrics, logger: logger, clock: clock, logID: logID)
        adapter = LWSServerAdapter(settings: Self.lwsSettings(configuration), hub: hub, metrics: metrics, logger: logger)
        let timing = TimingDriver(heartbeatInterval: TimeInterval(configuration.heartbeatSeconds), committer: committer,
                                  sessions: sessions, clock: clock)
        let inbox = self.inbox, wake = adapter.waker
        let features = ServerFeatures(ServerFeatures.Start(
            configuration: configuration, shares: shares, channels: channels, activities: activities, catalog: catalog,
            templates: RenderingsFeature.parseTemplates(catalog, logger: logger), authority: authority,
            pushToStartToken: pushToStartToken, metrics: metrics, logger: logger, clock: clock,
            hop: { job in if inbox.post({ _ in job() }) { wake() } }), committer: committer, sessions: sessions)
        state = ServiceBound(ServiceState(committer: committer, sessions: sessions, timing: timing, features: features),
                             owner: onServiceThread)
        wire()
        adapter.attach(ServerLWSApplication(server: self))
    }

    /// Connects the kernel and the features: the committer's hand-over to the inbox and its observers (the
    /// timing's hold, then the broadcast, then the features' effects), the sessions' context and request
    /// observers, the timing's share expiry and timer. Called once, at the end of `init`.
    private func wire() {
        committer.connect(handOver: { [unowned self] job in perform { _ in job() } })
        committer.observers = [timing, sessions] + features.changeObservers
        committer.onReloaded = { [unowned self] in sessions.greetAgain() }
        committer.onCarriedOut = { [unowned self] in timing.scheduleTimer(now: clock()) }
        sessions.requestObservers = features.requestObservers
        sessions.performHubActions = { [unowned self] actions in adapter.perform(actions) }
        sessions.isShuttingDown = { [unowned self] in adapter.isShuttingDown }
        sessions.context = WebSocketSessions.Context(
            kinds: { [unowned self] in kindCatalog.registry },
            share: { [unowned self] token in features.shares.share(forToken: token) },
            forget: { [unowned self] session in features.inspector.unsubscribe(session.id) })
        timing.expireShares = { [unowned self] now in features.shares.expire(now: now) }
        timing.scheduleTimer = { [unowned self] seconds in adapter.scheduleTimer(after: seconds) }
    }

    /// Fills the feature tables (routes, APNs routes, commands) and returns the main port's route table. Called
    /// once, on the service thread, when the service loop starts (before the first request is read).
    func makeRouter() -> Router {
        var tables = FeatureTables()
        sessions.register(in: &tables)
        for feature in features.all { feature.register(in: &tables) }
        state.value.tables = tables
        sessions.commands = tables.commands
        return tables.routes
    }

    /// Reads the kind folders again (SIGHUP) and swaps the result in on the service thread. The files are read
    /// on the calling thread; a bad folder is skipped and logged, as at start, and a kind loaded before whose
    /// folder no longer reads keeps its last good version (``KindCatalog/keeping(_:whereFolderFailed:)``).
    /// Thread-safe.
    public func reloadKinds() {
        let (catalog, errors, failed) = KindLoader.load(configuration.allKindsDirectories)
        for error in errors { logger.error("kind folder skipped", ["error": error.description]) }
        let templates = RenderingsFeature.parseTemplates(catalog, logger: logger)
        perform { server in
            let (merged, kept) = catalog.keeping(server.kindCatalog, whereFolderFailed: failed)
            // Kept kinds' templates are parsed again with the rest (a few small files, and only when one was kept).
            server.replaceKinds(merged, templates: kept.isEmpty ? templates : RenderingsFeature.parseTemplates(merged, logger: server.logger))
            for warning in merged.nameWarnings { server.logger.warning("kind names", ["warning": warning]) }
            var fields = ["kinds": merged.registry.names.joined(separator: ",")]
            if !kept.isEmpty { fields["kept"] = kept.joined(separator: ",") }
            server.logger.info("kinds reloaded", fields)
        }
    }

    /// Swaps in newly loaded kinds: validation, listings and renderings use them from the next request on;
    /// activities that no longer validate are kept and marked with ``Activity/kindProblem``; when a mark
    /// changes, watching clients get a fresh snapshot (as after a store reload). Service thread only.
    func replaceKinds(_ catalog: KindCatalog, templates: KindTemplates? = nil) {
        let marksBefore = committer.center.activities.mapValues(\.kindProblem)
        committer.store.useKinds(catalog.registry)
        features.renderings.replaceKinds(catalog, templates: templates)
        committer.replaceKinds(catalog.registry)
        guard committer.center.activities.mapValues(\.kindProblem) != marksBefore else { return }
        sessions.greetAgain()
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
        tables.apnsRoutes.dispatch(request, HTTPResponder { response in reply(response) })
    }

    /// Asks the server to close every connection (close code 1001) and stop. Thread-safe; returns at once.
    public func stop() {
        apnsListener.withLock { $0 }?.stop()
        kindWatcher.withLock { $0 }?.stop()
        adapter.requestStop()
    }

    /// Runs `job` on the service thread, soon. Thread-safe; this is how other threads (image fetchers,
    /// stores) hand results to the thread that owns lws and the activities.
    func perform(_ job: @escaping ServiceInbox.Job) {
        guard inbox.post(job) else { return }
        adapter.wake()
    }

    /// Runs the jobs other threads handed over, and returns how many. Service thread only.
    @discardableResult func runInbox() -> Int {
        let jobs = inbox.drain()
        for job in jobs { job(self) }
        return jobs.count
    }

    /// Lets the store finish (``ChangeCommitter/finishStoreWork(runInbox:)``): at start-up and at shutdown.
    func finishStoreWork() { committer.finishStoreWork(runInbox: { runInbox() }) }

    /// Blocks until the service thread has stopped and released every connection.
    public func waitUntilStopped() {
        finished.wait()
        finished.signal()
        // Joined, not only signalled: the thread's OpenSSL state must be freed before the process exits.
        serviceThreadHandle.withLock { $0 }?.join()
        apnsListener.withLock { $0 }?.waitUntilStopped()
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
                          maximumBodyBytes: APNsPush.maximumBroadcastBytes,
                          eventLoop: configuration.eventLoop == .poll ? .poll : .epoll,
                          sendsThroughIoUring: configuration.ioUring)
    }
}

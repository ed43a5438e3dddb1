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
    /// Who may send APNs-shaped requests (provider tokens, checked with `--apns-key`).
    let providerAuthority: ProviderAuthority
    /// The APNs listener (HTTP/2, `--apns-port`), while it runs; started by ``start()``, stopped by the
    /// service thread at shutdown. {lock}
    let apnsListener = Locked<HTTP2Listener?>(nil)
    /// {lock} the APNs listener's port once it listens.
    private let apnsBoundPort = Locked<Int?>(nil)

    /// The TCP port of the APNs listener (HTTP/2), once ``start()`` returned; nil when there is none.
    /// Thread-safe.
    public var apnsPort: Int? { apnsBoundPort.withLock { $0 } }
    var nextSessionID: UInt64 = 1
    /// The timer's policy: the whole-second tick and its hold, the heartbeat, deadlines, the next firing
    /// (``ServiceTiming``, performed by WebSocket/LiveActivityServer+Activities.swift). Service thread only.
    var timing: ServiceTiming
    /// Reloads the kinds when a `--kinds` folder changes on disk; started by ``start()`` when there is one.
    let kindWatcher = Locked<KindFolderWatcher?>(nil)

    // MARK: Features (built by makeFeatures() at the end of init; see Features/)

    /// APNs's APIs: pushes, channels and broadcasts (Push/).
    private(set) var push: Push!
    /// Share links (Shares/).
    private(set) var shares: Shares!
    /// The push inspector (Inspector/).
    private(set) var inspector: InspectorFeature!
    /// Kinds, templates and renderings (Rendering/).
    private(set) var renderings: RenderingsFeature!
    /// Thumbnails of activities' images (Images/).
    private(set) var thumbnails: Thumbnails!
    /// Other instances' events (Cluster/).
    private(set) var replication: Replication!
    /// Every feature, in the order they register their routes.
    private(set) var features: [any ServerFeature] = []
    /// Told of every committed change, after the sessions broadcast it, in this order.
    private(set) var changeObservers: [any ChangeObserver] = []
    /// Told of every answered request (the inspector).
    private(set) var requestObservers: [any RequestObserver] = []
    /// The route tables and the WebSocket command table the features filled (``makeRouter()``, when the
    /// service loop starts). Service thread only.
    private(set) var tables = FeatureTables()
    /// The activity kinds and their folders (Kinds/), as the renderings feature holds them.
    var kindCatalog: KindCatalog { renderings.catalog }

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
        let templates = RenderingsFeature.parseTemplates(catalog, logger: logger)
        store.useKinds(catalog.registry)
        let (activities, sequence) = try store.load()
        pushToStartToken = try store.pushToStartToken()
        logID = try store.logID()
        let shares = try store.shares()
        let channels = ChannelRegistry(try store.channels())
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
        makeFeatures(shares: shares, channels: channels, activities: activities, catalog: catalog, templates: templates)
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
    /// activities keep their state and find their kind again by `attributesType`; those that no longer validate
    /// are kept and marked with ``Activity/kindProblem``; when a mark changes, watching clients get a fresh
    /// snapshot (as after a store reload). Service thread only.
    func replaceKinds(_ catalog: KindCatalog, templates: KindTemplates? = nil) {
        let marksBefore = center.activities.mapValues(\.kindProblem)
        store.useKinds(catalog.registry)
        renderings.replaceKinds(catalog, templates: templates)
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
        tables.apnsRoutes.dispatch(request, HTTPResponder { response in reply(response) })
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

    // MARK: Features

    /// Builds the features, each with only what it needs (closures called on the service thread unless they
    /// say otherwise), and the observers of committed changes and answered requests. Called once, at the end
    /// of `init`.
    private func makeFeatures(shares storedShares: [Share], channels: ChannelRegistry, activities: [Activity],
                              catalog: KindCatalog, templates: KindTemplates) {
        let proposer = ChangeProposer { [unowned self] now, body, completion in change(at: now, body, completion: completion) }
        let hop: ServiceThreadHop = { [unowned self] job in perform { _ in job() } }
        let now: () -> Date = { [unowned self] in clock() }
        let readAPI = ReadRoutes(context: ReadAPI.Context(
            now: now,
            access: configuration.access,
            center: { [unowned self] in center },
            connectionCount: { [unowned self] in hub.sessions.count },
            metrics: { [unowned self] in
                let connections = Dictionary(grouping: hub.sessions.values, by: \.role).mapValues(\.count)
                let activities = Dictionary(grouping: center.activities.values, by: \.activityState).mapValues(\.count)
                return metrics.exposition(connections: connections, activities: activities)
            },
            pushToStartToken: pushToStartToken,
            history: { [unowned self] limit, before, beforeId, then in
                storeReader.read({ store in
                    Result { try store.history(limit: limit, before: before, beforeId: beforeId) }
                        .map { ServerMessage.history(requestId: nil, entries: $0).encoded() }
                        .mapError { StoreReadError($0) }
                }, then: then)
            },
            storageUnavailable: { [unowned self] error in storageUnavailable(error) },
            logger: logger))
        push = Push(channels: channels, context: Push.Context(
            authority: providerAuthority,
            now: now,
            pushToStartToken: pushToStartToken,
            change: proposer,
            recordChannel: { [unowned self] change, done in
                let box = ServiceThreadBox(value: done)
                let synchronous = storeWriter.isSynchronous
                storeWriter.change(change) { error in
                    let failed = error.map { ServiceThreadBox(value: $0) }
                    if synchronous { box.value(failed?.value) } else { hop { box.value(failed?.value) } }
                }
            },
            storageUnavailable: { [unowned self] error in storageUnavailable(error) },
            pushAnswered: { [unowned self] answered in for observer in requestObservers { observer.pushAnswered(answered) } },
            sendIfOpen: { [unowned self] message, session in sendIfOpen(message, to: session) }))
        inspector = InspectorFeature(activities: activities, context: InspectorFeature.Context(
            now: now,
            center: { [unowned self] in center },
            access: configuration.access,
            publicDirectory: configuration.publicDirectory,
            budget: configuration.budget,
            maximumLiveActivities: configuration.maximumLiveActivities,
            openSession: { [unowned self] id in hub.sessions[id].flatMap { $0.closing == nil ? $0 : nil } },
            enqueue: { [unowned self] frame, session in enqueue(frame, to: session) },
            send: { [unowned self] message, session in send(message, to: session) },
            readEvents: { [unowned self] body, then in storeReader.read(body, then: then) },
            offLoop: { [unowned self] body, then in storeReader.offLoop(body, then: then) }))
        thumbnails = Thumbnails(context: Thumbnails.Context(
            settings: configuration.images, now: now, center: { [unowned self] in center }, change: proposer,
            onServiceThread: hop, logger: logger))
        renderings = RenderingsFeature(catalog: catalog, templates: templates, context: RenderingsFeature.Context(
            publicDirectory: configuration.publicDirectory,
            routes: Renderings.Context(
                now: now,
                access: configuration.access,
                activity: { [unowned self] id in center.activities[id] },
                recentHistory: { [unowned self] then in
                    storeReader.read({ store in (try? store.history(limit: 500, before: nil)) ?? [] }, then: then)
                },
                activityAsOf: { [unowned self] id, instant, then in inspector.activity(id, asOf: instant, then: then) },
                newNonce: { Digest.randomToken(bytes: 18) }),
            thumbnailCache: { [unowned self] in thumbnails.cache },
            logger: logger))
        shares = Shares(shares: storedShares, context: Shares.Context(
            links: ShareLinks.Context(
                now: now,
                access: configuration.access,
                activity: { [unowned self] id in center.activities[id] },
                keep: { [unowned self] share, done in keep(share, completion: done) },
                saveEnded: { [unowned self] share in storeWriter.save([share]) },
                viewers: { [unowned self] shareId in hub.sessions.values.count { $0.shareId == shareId } },
                closeViewers: { [unowned self] shareId, reason in
                    for session in hub.sessions.values where session.shareId == shareId {
                        closeSoon(session, .policyViolation, reason, keepingQueued: true)
                    }
                },
                storageUnavailable: { [unowned self] error in storageUnavailable(error) },
                logger: logger),
            send: { [unowned self] message, session in send(message, to: session) },
            sendIfOpen: { [unowned self] message, session in sendIfOpen(message, to: session) },
            sharePage: { [unowned self] activity, token, request in renderings.sharePage(activity, token: token, request: request) }))
        replication = Replication(context: Replication.Context(
            store: store as? any ReplicatedStore,
            sequence: { [unowned self] in center.sequence },
            relay: { [storeWriter] job in storeWriter.relay { hop(job) } },
            receive: { [unowned self] events in carryOut(pipeline.receive(replicated: events, now: Date())) },
            catchUp: { [unowned self] in carryOut(pipeline.catchUp()) }))
        features = [readAPI, push, renderings, shares, inspector, thumbnails, replication]
        changeObservers = [shares, thumbnails, inspector]
        requestObservers = [inspector]
    }

    /// Fills the feature tables (routes, APNs routes, commands) and returns the main port's route table. Called
    /// once, on the service thread, when the service loop starts (before the first request is read).
    func makeRouter() -> Router {
        var tables = FeatureTables()
        for feature in features { feature.register(in: &tables) }
        self.tables = tables
        return tables.routes
    }

    /// Keeps a new share through the change pipeline: judged on the speculative state (its activity may
    /// still wait for the store), kept by the store thread in turn with the changes before it.
    private func keep(_ share: Share, completion: @escaping (ProtocolError?) -> Void) {
        carryOut(pipeline.propose({ center in
            guard center.activities[share.activityId] != nil else {
                throw ProtocolError(.unknownActivity, field: "activityId", message: "activityId: no activity with id \"\(share.activityId.prefix(128))\"")
            }
            return ChangePipeline.Verdict(shares: [share], onCommit: { completion(nil) })
        }, now: Date(), onFailure: { [self] error in completion(error as? ProtocolError ?? storageUnavailable(error)) }))
    }

    /// Starts receiving other instances' events (the service loop, once it runs).
    func startReplication() { replication.start() }

    /// Stops receiving other instances' events (the service loop, at shutdown).
    func stopReplication() { replication.stop() }
}

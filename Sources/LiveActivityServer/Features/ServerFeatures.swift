import Foundation
import LiveActivityCore
import LiveActivityRendering

/// The features the server is made of, each built with only what it needs of the kernel (the
/// ``ChangeCommitter`` and the ``WebSocketSessions``) as closures of its `Context`, in an order that lets
/// each see the features it depends on (thumbnails and the inspector before renderings, renderings before
/// shares). Also lists them as they register (``all``) and observe (``changeObservers``,
/// ``requestObservers``). Built once by the composition root; service thread only afterwards.
struct ServerFeatures {
    /// The read API: `/api/activities`, `/api/history`, `/metrics` and the misses nobody else words.
    let readAPI: ReadRoutes
    /// The WebSocket activity commands: start, update, end, pause, resume, extend.
    let activityCommands: ActivityCommands
    /// APNs's APIs: pushes, channels and broadcasts (Push/).
    let push: Push
    /// The push inspector (Inspector/).
    let inspector: InspectorFeature
    /// Thumbnails of activities' images (Images/).
    let thumbnails: Thumbnails
    /// Kinds, templates and renderings (Rendering/).
    let renderings: RenderingsFeature
    /// Share links (Shares/).
    let shares: Shares
    /// Other instances' events (Cluster/).
    let replication: Replication

    /// What the features are built from: the store's contents at start and the server's settings.
    struct Start {
        /// Where to listen, limits, access, the public folder, images, the budget emulation.
        var configuration: ServerConfiguration
        /// The share links the store kept.
        var shares: [Share]
        /// The broadcast channels the store kept.
        var channels: ChannelRegistry
        /// The activities loaded (the inspector's diffs start from their contents).
        var activities: [Activity]
        /// The kinds and their parsed templates.
        var catalog: KindCatalog
        var templates: KindTemplates
        /// Who may send APNs-shaped requests.
        var authority: ProviderAuthority
        /// The token APNs-shaped `start` pushes are addressed to.
        var pushToStartToken: String
        /// The server's counters (the read API exposes them).
        var metrics: ServerMetrics
        var logger: Logger
        /// The server's clock (whole milliseconds).
        var clock: @Sendable () -> Date
        /// Runs a job on the service thread soon, from any thread (the inbox).
        var hop: ServiceThreadHop
    }

    /// Builds every feature over `committer` and `sessions`, which outlive them (captured unowned).
    init(_ start: Start, committer: ChangeCommitter, sessions: WebSocketSessions) {
        let configuration = start.configuration, hop = start.hop, metrics = start.metrics
        let now: () -> Date = start.clock
        let proposer = ChangeProposer { [unowned committer] now, body, completion in
            committer.change(judgedAt: now, body, completion: completion)
        }
        let center: () -> ActivityCenter = { [unowned committer] in committer.center }
        let storageUnavailable: (any Error) -> ProtocolError = { [unowned committer] error in committer.storageUnavailable(error) }
        let reader = committer.reader, writer = committer.writer
        readAPI = ReadRoutes(context: ReadAPI.Context(
            now: now,
            access: configuration.access,
            center: center,
            connectionCount: { [unowned sessions] in sessions.hub.sessions.count },
            metrics: { [unowned sessions] in
                let connections = Dictionary(grouping: sessions.hub.sessions.values, by: \.role).mapValues(\.count)
                let activities = Dictionary(grouping: center().activities.values, by: \.activityState).mapValues(\.count)
                return metrics.exposition(connections: connections, activities: activities,
                                          slowClientsClosed: sessions.hub.culled)
            },
            pushToStartToken: start.pushToStartToken,
            history: { limit, before, beforeId, then in
                reader.read({ store in
                    Result { try store.history(limit: limit, before: before, beforeId: beforeId) }
                        .map { ServerMessage.history(requestId: nil, entries: $0).encoded() }
                        .mapError { StoreReadError($0) }
                }, then: then)
            },
            storageUnavailable: storageUnavailable,
            logger: start.logger))
        let inspector = InspectorFeature(activities: start.activities, context: InspectorFeature.Context(
            now: now,
            center: center,
            access: configuration.access,
            publicDirectory: configuration.publicDirectory,
            budget: configuration.budget,
            maximumLiveActivities: configuration.maximumLiveActivities,
            openSession: { [unowned sessions] id in sessions.hub.sessions[id].flatMap { $0.closing == nil ? $0 : nil } },
            enqueue: { [unowned sessions] frame, session in sessions.enqueue(frame, to: session) },
            send: { [unowned sessions] message, session in sessions.send(message, to: session) },
            readEvents: { body, then in reader.read(body, then: then) },
            offLoop: { body, then in reader.offLoop(body, then: then) }))
        self.inspector = inspector
        let push = Push(channels: start.channels, context: Push.Context(
            authority: start.authority,
            now: now,
            pushToStartToken: start.pushToStartToken,
            change: proposer,
            recordChannel: { change, done in
                let box = ServiceThreadBox(value: done)
                let synchronous = writer.isSynchronous
                writer.change(change) { error in
                    let failed = error.map { ServiceThreadBox(value: $0) }
                    if synchronous { box.value(failed?.value) } else { hop { box.value(failed?.value) } }
                }
            },
            storageUnavailable: storageUnavailable,
            pushAnswered: { [unowned inspector] answered in inspector.pushAnswered(answered) },
            sendIfOpen: { [unowned sessions] message, session in sessions.sendIfOpen(message, to: session) }))
        self.push = push
        activityCommands = ActivityCommands(committer: committer, context: ActivityCommands.Context(
            now: now,
            channels: { [unowned push] in let registry = push.channels; return { registry.channels[$0] != nil } },
            reply: { [unowned sessions] message, session in sessions.sendIfOpen(message, to: session) },
            requestObservers: { [unowned sessions] in sessions.requestObservers }))
        let thumbnails = Thumbnails(context: Thumbnails.Context(
            settings: configuration.images, now: now, center: center, change: proposer, onServiceThread: hop, logger: start.logger))
        self.thumbnails = thumbnails
        let renderings = RenderingsFeature(catalog: start.catalog, templates: start.templates, context: RenderingsFeature.Context(
            publicDirectory: configuration.publicDirectory,
            routes: Renderings.Context(
                now: now,
                access: configuration.access,
                activity: { id in center().activities[id] },
                recentHistory: { then in reader.read({ store in (try? store.history(limit: 500, before: nil)) ?? [] }, then: then) },
                activityAsOf: { [unowned inspector] id, instant, then in inspector.activity(id, asOf: instant, then: then) },
                newNonce: { Digest.randomToken(bytes: 18) }),
            thumbnailCache: { [unowned thumbnails] in thumbnails.cache },
            logger: start.logger))
        self.renderings = renderings
        shares = Shares(shares: start.shares, context: Shares.Context(
            links: ShareLinks.Context(
                now: now,
                access: configuration.access,
                activity: { id in center().activities[id] },
                keep: { [unowned committer] share, done in Self.keep(share, through: committer, completion: done) },
                saveEnded: { share in writer.save([share]) },
                viewers: { [unowned sessions] shareId in sessions.hub.sessions.values.count { $0.shareId == shareId } },
                closeViewers: { [unowned sessions] shareId, reason in
                    for session in sessions.hub.sessions.values where session.shareId == shareId {
                        sessions.closeSoon(session, .policyViolation, reason, keepingQueued: true)
                    }
                },
                storageUnavailable: storageUnavailable,
                logger: start.logger),
            send: { [unowned sessions] message, session in sessions.send(message, to: session) },
            sendIfOpen: { [unowned sessions] message, session in sessions.sendIfOpen(message, to: session) },
            sharePage: { [unowned renderings] activity, token, request in renderings.sharePage(activity, token: token, request: request) }))
        replication = Replication(context: Replication.Context(
            store: committer.store as? any ReplicatedStore,
            sequence: { center().sequence },
            relay: { job in writer.relay { hop(job) } },
            receive: { [unowned committer] events in committer.carryOut(committer.pipeline.receive(replicated: events, now: Date())) },
            catchUp: { [unowned committer] in committer.carryOut(committer.pipeline.catchUp()) }))
    }

    /// Every feature but the sessions, in the order they register their routes and commands.
    var all: [any ServerFeature] { [readAPI, activityCommands, push, renderings, shares, inspector, thumbnails, replication] }
    /// Told of every committed change after the sessions broadcast it, in this order.
    var changeObservers: [any ChangeObserver] { [shares, thumbnails, inspector] }
    /// Told of every answered request.
    var requestObservers: [any RequestObserver] { [inspector] }

    /// Keeps a new share through the change pipeline: judged on the speculative state (its activity may still
    /// wait for the store), kept by the store thread in turn with the changes before it.
    private static func keep(_ share: Share, through committer: ChangeCommitter, completion: @escaping (ProtocolError?) -> Void) {
        committer.propose({ center in
            guard center.activities[share.activityId] != nil else {
                throw ProtocolError(.unknownActivity, field: "activityId", message: "activityId: no activity with id \"\(share.activityId.clipped(to: 128))\"")
            }
            return ChangePipeline.Verdict(shares: [share], onCommit: { completion(nil) })
        }, onFailure: { [unowned committer] error in completion(error as? ProtocolError ?? committer.storageUnavailable(error)) })
    }
}

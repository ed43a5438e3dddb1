import Foundation
import LiveActivityCore
import LiveActivityRendering

/// The route table: the HTTP features the server is made of, each given a narrow context of what it may
/// see and do. Service thread only.
extension LiveActivityServer {
    /// Builds the route table from the features: the read API (which also words misses nobody else words),
    /// the APNs-shaped push endpoint, share links, renderings and the gallery, the inspector, thumbnails.
    /// Reads the renderings' stylesheet and icons once, here.
    func makeRouter() -> Router {
        var router = Router()
        ReadAPI().register(on: &router, context: ReadAPI.Context(
            now: { [unowned self] in clock() },
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
        PushEndpoint().register(on: &router, context: pushEndpointContext)
        ChannelEndpoint().register(on: &router, context: channelEndpointContext)
        KindsRoute(catalog: { [unowned self] in kindCatalog }).register(on: &router)
        TemplatesRoute(catalog: { [unowned self] in kindCatalog }, templates: { [unowned self] in kindTemplates }).register(on: &router)
        let thumbnailCache = thumbnails?.cache
        let renderings = Renderings(assets: Renderings.loadAssets(from: configuration.publicDirectory),
                                    kinds: { [unowned self] in kindCatalog.registry },
                                    templates: { [unowned self] in kindTemplates },
                                    thumbnailPNG: { name in thumbnailCache?.read(fileName: name) })
        let renderingsContext = Renderings.Context(
            now: { [unowned self] in clock() },
            access: configuration.access,
            activity: { [unowned self] id in center.activities[id] },
            recentHistory: { [unowned self] then in
                storeReader.read({ store in (try? store.history(limit: 500, before: nil)) ?? [] }, then: then)
            },
            activityAsOf: { [unowned self] id, instant, then in activity(id, asOf: instant, then: then) },
            newNonce: { Digest.randomToken(bytes: 18) })
        renderings.register(on: &router, context: renderingsContext)
        shareLinks.register(on: &router, context: shareLinksContext) { activity, token, request in
            renderings.sharePage(activity, token: token, request: request, context: renderingsContext)
        }
        InspectorRoutes(publicDirectory: configuration.publicDirectory).register(on: &router, context: InspectorRoutes.Context(
            now: { [unowned self] in clock() },
            access: configuration.access,
            records: { [unowned self] since in Array(inspector.records(after: since)) },
            budgetEmulation: configuration.budget.enabled,
            timeline: { [unowned self] id, then in timeline(of: id, then: then) }))
        ThumbnailRoutes().register(on: &router, context: ThumbnailRoutes.Context(
            thumbnail: { [unowned self] name in thumbnails?.cache.read(fileName: name) }))
        return router
    }

    /// The route table of the APNs listener (`--apns-port`, HTTP/2): APNs's APIs only — device pushes,
    /// channel management, broadcasts — through the same features and contexts as the main port; any other
    /// path is APNs's 404 `BadPath`.
    func makeAPNsRouter() -> Router {
        var router = Router()
        PushEndpoint().register(on: &router, context: pushEndpointContext)
        ChannelEndpoint().register(on: &router, context: channelEndpointContext)
        router.onMiss(under: "/") { request, miss in
            PushEndpoint.miss(request, miss, idHeader: "apns-id", path: "/3/device/{pushToken}, /1/apps/{bundleId}/channels or /4/broadcasts/apps/{bundleId}",
                              newId: { UUID().uuidString })
        }
        return router
    }
}

import Foundation
import LiveActivityCore

/// APNs's broadcast API (iOS 18), served as APNs serves it so a backend can be pointed here: channel
/// management under `/1/apps/{bundleId}` and broadcast pushes under `/4/broadcasts/apps/{bundleId}`.
/// On the main port over HTTP/1.1 and on the APNs port over HTTP/2. Handlers run on the service thread.
///
/// - `POST /1/apps/{bundleId}/channels` with `{"message-storage-policy": 0 | 1, "push-type": "LiveActivity"}`:
///   201, the new channel's ID in `apns-channel-id`.
/// - `GET /1/apps/{bundleId}/channels` with `apns-channel-id`: 200 `{"message-storage-policy", "push-type"}`.
/// - `GET /1/apps/{bundleId}/all-channels`: 200 `{"channels": [id, …]}`.
/// - `DELETE /1/apps/{bundleId}/channels` with `apns-channel-id`: 204.
/// - `POST /4/broadcasts/apps/{bundleId}` with `apns-channel-id`, `apns-push-type: liveactivity`: the payload
///   (at most 5 KB; `apns-expiration: 0` on a channel that stores nothing) goes to every activity subscribed
///   to the channel; 200 with our `liveactivity-verdict` and `liveactivity-activity-ids` (the activities it
///   reached).
/// Every answer carries `apns-request-id` (the request's UUID, or a new one); a refusal is
/// `{"reason": …, "detail": …}` with APNs's reason (`MissingChannelId`, `BadChannelId`,
/// `ChannelNotRegistered`, `BadMessageStoragePolicy`, `InvalidPushType`, `BadExpirationDate`, the provider
/// token's…). Sources: "Sending channel management requests to APNs", "Sending broadcast push notification
/// requests to APNs".
struct ChannelEndpoint {
    /// What the channel endpoints see of the server. Closures are called on the service thread.
    struct Context {
        /// Who may manage channels and broadcast.
        var authority: ProviderAuthority
        /// The current time.
        var now: () -> Date
        /// The registered channels.
        var registry: () -> ChannelRegistry
        /// Keeps a new channel (durably) and registers it; completes with nil, or the refusal.
        var create: (BroadcastChannel, @escaping (PushRejection?) -> Void) -> Void
        /// Forgets a channel (durably); completes with nil, or the refusal.
        var delete: (BroadcastChannel, @escaping (PushRejection?) -> Void) -> Void
        /// Applies a broadcast push to the channel's subscribers; completes with what APNs would answer.
        var applyBroadcast: (Broadcast, @escaping (PushResult) -> Void) -> Void
        /// Records a broadcast refused before it had a payload, with its body as `text`.
        var inspectRefusal: (_ text: String, Broadcast, PushResult) -> Void
        /// A new UUID for `apns-request-id` and `apns-unique-id`.
        var newRequestId: () -> String
    }

    /// One broadcast push as the server applies it.
    struct Broadcast {
        /// The JSON payload (`{"aps":{…}}`).
        var payload: JSONValue
        /// The channel it goes to.
        var channelId: String
        /// The `apns-request-id` to answer with.
        var requestId: String
        /// `apns-priority` (1, 5, 10; nil = 10).
        var priority: Int?
        /// `http` or `http2`, for the inspector.
        var transport: String
    }

    /// Registers the channel-management and broadcast routes, and APNs-shaped 404 / 405 under `/1` and `/4`.
    func register(on router: inout Router, context: Context) {
        router.add([.post], "/1/apps/{bundle}/channels") { request, responder in create(request, context, responder) }
        router.add([.get], "/1/apps/{bundle}/channels", respond: { request in read(request, context) })
        router.add([.delete], "/1/apps/{bundle}/channels") { request, responder in delete(request, context, responder) }
        router.add([.get], "/1/apps/{bundle}/all-channels", respond: { request in all(request, context) })
        router.add([.post], "/4/broadcasts/apps/{bundle}") { request, responder in broadcast(request, context, responder) }
        router.onMiss(under: "/1") { request, miss in
            PushEndpoint.miss(request, miss, idHeader: "apns-request-id", path: "/1/apps/{bundleId}/channels or /1/apps/{bundleId}/all-channels",
                              newId: context.newRequestId)
        }
        router.onMiss(under: "/4") { request, miss in
            PushEndpoint.miss(request, miss, idHeader: "apns-request-id", path: "/4/broadcasts/apps/{bundleId}", newId: context.newRequestId)
        }
    }

    // MARK: Checks

    /// The checks every channel and broadcast request passes: no APNs field sent twice, `apns-request-id` a UUID, the bundle ID's shape,
    /// the provider.
    /// - Returns: the request id to answer with and the bundle ID.
    private func common(_ request: HTTPRequest, _ context: Context) throws(PushRejection) -> (requestId: String, bundleId: String) {
        try APNsHeaderChecks.singleFields(request)
        _ = try APNsHeaderChecks.messageID(request, header: "apns-request-id")
        let bundle = request.parameters["bundle"] ?? ""
        guard BroadcastChannel.isWellFormedBundleID(bundle) else {
            throw PushRejection(status: 404, reason: "BadPath", detail: "the path's bundle ID \"\(bundle.clipped(to: 64))\" is not a bundle ID (com.example.app)")
        }
        _ = try context.authority.authorize(request, now: context.now())
        return (requestID(request, context), bundle)
    }

    /// The request's `apns-request-id` when it is a UUID, else a new one.
    private func requestID(_ request: HTTPRequest, _ context: Context) -> String {
        request.headers["apns-request-id"].flatMap { APNsHeaderChecks.isUUID($0) ? $0 : nil } ?? context.newRequestId()
    }

    private func refusal(_ rejection: PushRejection, _ request: HTTPRequest, _ context: Context) -> HTTPResponse {
        APNsHeaderChecks.response(PushResult(rejection, apnsId: requestID(request, context)), idHeader: "apns-request-id", uniqueID: nil)
    }

    private func success(_ status: HTTPStatus, requestId: String, headers: [(name: String, value: String)] = [], body: JSONValue? = nil) -> HTTPResponse {
        let bytes = body.map { Array((try? APNsHeaderChecks.bodyEncoder.encode($0)) ?? Data()) } ?? []
        return .json(status, bytes, headers: [("apns-request-id", requestId)] + headers)
    }

    // MARK: Channel management

    /// `POST /1/apps/{bundleId}/channels`: 201 with `apns-channel-id` once the channel is kept.
    private func create(_ request: HTTPRequest, _ context: Context, _ responder: HTTPResponder) {
        do throws(PushRejection) {
            let (requestId, bundle) = try common(request, context)
            try context.registry().checkRoom(bundleId: bundle)
            let policy = try ChannelRegistry.storagePolicy(fromCreationBody: request.body)
            let channel = BroadcastChannel(id: BroadcastChannel.newID(), bundleId: bundle, storagePolicy: policy, createdAt: context.now())
            context.create(channel) { rejection in
                if let rejection { return responder.respond(refusal(rejection, request, context)) }
                responder.respond(success(.created, requestId: requestId, headers: [("apns-channel-id", channel.id)]))
            }
        } catch {
            responder.respond(refusal(error, request, context))
        }
    }

    /// `GET /1/apps/{bundleId}/channels`: the channel's settings.
    private func read(_ request: HTTPRequest, _ context: Context) -> HTTPResponse {
        do throws(PushRejection) {
            let (requestId, bundle) = try common(request, context)
            let channel = try context.registry().channel(request.headers["apns-channel-id"], bundleId: bundle)
            return success(.ok, requestId: requestId, body: .object([
                "message-storage-policy": .number(Double(channel.storagePolicy.rawValue)), "push-type": .string("LiveActivity")]))
        } catch {
            return refusal(error, request, context)
        }
    }

    /// `GET /1/apps/{bundleId}/all-channels`: every channel ID of the app.
    private func all(_ request: HTTPRequest, _ context: Context) -> HTTPResponse {
        do throws(PushRejection) {
            let (requestId, bundle) = try common(request, context)
            return success(.ok, requestId: requestId, body: .object(["channels": .array(context.registry().ids(bundleId: bundle).map(JSONValue.string))]))
        } catch {
            return refusal(error, request, context)
        }
    }

    /// `DELETE /1/apps/{bundleId}/channels`: 204 once the channel is forgotten.
    private func delete(_ request: HTTPRequest, _ context: Context, _ responder: HTTPResponder) {
        do throws(PushRejection) {
            let (requestId, bundle) = try common(request, context)
            let channel = try context.registry().channel(request.headers["apns-channel-id"], bundleId: bundle)
            context.delete(channel) { rejection in
                if let rejection { return responder.respond(refusal(rejection, request, context)) }
                responder.respond(success(.noContent, requestId: requestId))
            }
        } catch {
            responder.respond(refusal(error, request, context))
        }
    }

    // MARK: Broadcast

    /// `POST /4/broadcasts/apps/{bundleId}`: checks the headers, the channel and the body, then applies the
    /// payload to the channel's subscribers.
    private func broadcast(_ request: HTTPRequest, _ context: Context, _ responder: HTTPResponder) {
        let uniqueID = context.newRequestId().lowercased()
        var broadcast = Broadcast(payload: .null, channelId: request.headers["apns-channel-id"] ?? "", requestId: requestID(request, context),
                                  priority: nil, transport: request.version.transport)
        func answer(_ result: PushResult) {
            responder.respond(APNsHeaderChecks.response(result, idHeader: "apns-request-id", uniqueID: uniqueID,
                                                         extraHeaders: result.status == 200 ? [("apns-channel-id", broadcast.channelId)] : []))
        }
        do throws(PushRejection) {
            try APNsHeaderChecks.singleFields(request)
            try APNsHeaderChecks.pushType(request)
            let (_, bundle) = try common(request, context)
            let channel = try context.registry().channel(request.headers["apns-channel-id"], bundleId: bundle)
            broadcast.priority = try APNsHeaderChecks.priority(request)
            let expiration = try APNsHeaderChecks.expiration(request)
            if channel.storagePolicy == .noStorage, expiration != 0 {
                throw PushRejection(status: 400, reason: "BadExpirationDate",
                                    detail: "apns-expiration: channel \(channel.id) stores no messages (message-storage-policy 0): send apns-expiration: 0",
                                    field: "apns-expiration")
            }
            try APNsHeaderChecks.collapseID(request)
        } catch {
            return answer(PushResult(error, apnsId: broadcast.requestId))
        }
        let body = request.body
        let rejection: PushRejection
        if body.isEmpty {
            rejection = PushRejection(status: 400, reason: "PayloadEmpty", detail: "the request has no body")
        } else if body.count > APNsPush.maximumBroadcastBytes {
            rejection = PushRejection(status: 413, reason: "PayloadTooLarge",
                                      detail: "broadcast payloads may be at most \(APNsPush.maximumBroadcastBytes) bytes")
        } else {
            do {
                broadcast.payload = try JSONValue.parse(body)
                context.applyBroadcast(broadcast) { result in answer(result) }
                return
            } catch {
                rejection = PushRejection(status: 400, reason: "BadPayload", detail: error.message)
            }
        }
        let result = PushResult(rejection, apnsId: broadcast.requestId)
        let text = body.count > APNsPush.maximumBroadcastBytes ? "(more than \(APNsPush.maximumBroadcastBytes) bytes)" : String(decoding: body, as: UTF8.self)
        context.inspectRefusal(text, broadcast, result)
        answer(result)
    }
}

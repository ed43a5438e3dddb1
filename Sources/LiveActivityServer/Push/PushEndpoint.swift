import Foundation
import LiveActivityCore

/// `POST /3/device/{pushToken}`: APNs's provider API, as a backend written for APNs calls it, so it can be
/// pointed at this server to preview its Live Activities — over HTTP/1.1 on the main port, and over HTTP/2
/// on the APNs port (`serve --apns-port`, see HTTP2/), both through this one type. Handlers run on the
/// service thread.
///
/// Checks, in this order, each refusal answered as APNs answers it (status, `apns-id`, `{"reason"}`):
/// `apns-push-type: liveactivity` (`InvalidPushType`), `apns-id` a UUID (`BadMessageId`), the provider token
/// or controller token (``ProviderAuthority``: `MissingProviderToken`, `InvalidProviderToken`,
/// `ExpiredProviderToken`), `apns-topic` (`MissingTopic`, `TopicDisallowed`), `apns-priority` (`BadPriority`),
/// `apns-expiration` (`BadExpirationDate`), `apns-collapse-id` (`BadCollapseId`), then the body
/// (`PayloadEmpty`, `PayloadTooLarge`, `BadPayload`) and the device token (`BadDeviceToken`).
/// A 200 has an empty body, `apns-id` (the request's, or a new UUID), `apns-unique-id`, and our headers
/// `liveactivity-verdict` (`applied`, `ignored`, `dropped`) and `liveactivity-detail`, so scripts can tell
/// "APNs would accept, the phone would drop" from a real success; a refusal adds our `detail` to the body.
/// Source: https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns
/// and https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns
struct PushEndpoint {
    /// One push as the server applies it.
    struct Push {
        /// The JSON payload (`{"aps":{…}}`).
        var payload: JSONValue
        /// The device (or push-to-start) token of the path.
        var pushToken: String
        /// The `apns-id` to answer with.
        var apnsId: String
        /// `apns-priority` (1, 5, 10; nil = 10).
        var priority: Int?
        /// How it came: `http` (HTTP/1.1) or `http2`, for the inspector.
        var transport: String
    }

    /// What the push endpoint sees of the server. Closures are called on the service thread.
    struct Context {
        /// Who may push.
        var authority: ProviderAuthority
        /// The current time (for provider tokens' age).
        var now: () -> Date
        /// Applies a push. Calls its completion with what APNs would answer on the service thread — at once,
        /// or later when the change waits for the store.
        var applyPush: (Push, @escaping (PushResult) -> Void) -> Void
        /// Records a push refused before it had a payload, with its body as `text`.
        var inspectRefusal: (_ text: String, Push, PushResult) -> Void
        /// A new UUID (upper-case, as APNs makes) for a request that sent no `apns-id`, and for `apns-unique-id`.
        var newApnsId: () -> String
    }

    /// Largest payload accepted, in bytes (APNs's limit for Live Activities).
    let maximumBytes: Int

    /// An endpoint accepting payloads up to `maximumBytes` (APNs: 4,096).
    init(maximumBytes: Int = APNsPush.maximumBytes) {
        self.maximumBytes = maximumBytes
    }

    /// Registers `POST /3/device/{token}` and APNs-shaped 404 / 405 for everything under `/3`.
    func register(on router: inout Router, context: Context) {
        router.add([.post], "/3/device/{token}") { request, responder in push(request, context: context, responder: responder) }
        router.onMiss(under: "/3") { request, miss in
            Self.miss(request, miss, idHeader: "apns-id", path: "/3/device/{pushToken}", newId: context.newApnsId)
        }
    }

    /// The APNs-shaped 404 `BadPath` / 405 `MethodNotAllowed` for a path under one of APNs's prefixes.
    static func miss(_ request: HTTPRequest, _ miss: Router.Miss, idHeader: String, path: String, newId: () -> String) -> HTTPResponse {
        let id = request.headers[idHeader].flatMap { APNsHeaderChecks.isUUID($0) ? $0 : nil } ?? newId()
        let rejection: PushRejection
        switch miss {
        case .notFound:
            rejection = PushRejection(status: 404, reason: "BadPath", detail: "the path is \(path)")
        case .methodNotAllowed(let allowed):
            rejection = PushRejection(status: 405, reason: "MethodNotAllowed", detail: "use \(HTTPMethod.list(allowed.subtracting([.head])))")
        }
        return APNsHeaderChecks.response(PushResult(rejection, apnsId: id), idHeader: idHeader, uniqueID: nil)
    }

    /// Answers one push: checks the headers and the provider, then the body, then applies it.
    /// - Parameters:
    ///   - request: a POST whose `parameters["token"]` is the device (or push-to-start) token.
    ///   - context: the server's side.
    ///   - responder: answered at once for refusals, when `applyPush` completes otherwise.
    func push(_ request: HTTPRequest, context: Context, responder: HTTPResponder) {
        let uniqueID = context.newApnsId().lowercased()
        var push = Push(payload: .null, pushToken: request.parameters["token"] ?? "",
                        apnsId: request.headers["apns-id"].flatMap { APNsHeaderChecks.isUUID($0) ? $0 : nil } ?? context.newApnsId(),
                        priority: nil, transport: request.version.transport)
        func answer(_ result: PushResult) {
            responder.respond(APNsHeaderChecks.response(result, uniqueID: uniqueID))
        }
        do throws(PushRejection) {
            try APNsHeaderChecks.singleFields(request)
            try APNsHeaderChecks.pushType(request)
            _ = try APNsHeaderChecks.messageID(request)
            let grant = try context.authority.authorize(request, now: context.now())
            _ = try APNsHeaderChecks.topic(request, grant: grant)
            push.priority = try APNsHeaderChecks.priority(request)
            _ = try APNsHeaderChecks.expiration(request)
            try APNsHeaderChecks.collapseID(request)
        } catch {
            return answer(PushResult(error, apnsId: push.apnsId))
        }
        let body = request.body
        let rejection: PushRejection
        if body.isEmpty {
            rejection = PushRejection(status: 400, reason: "PayloadEmpty", detail: "the request has no body")
        } else if body.count > maximumBytes {
            rejection = PushRejection(status: 413, reason: "PayloadTooLarge",
                                      detail: "Live Activity payloads may be at most \(maximumBytes) bytes")
        } else {
            do {
                push.payload = try JSONValue.parse(body)
                context.applyPush(push) { result in answer(result) }
                return
            } catch {
                rejection = PushRejection(status: 400, reason: "BadPayload", detail: error.message)
            }
        }
        // Refused before there is a payload: the inspector shows the body as text.
        let result = PushResult(rejection, apnsId: push.apnsId)
        let text = body.count > maximumBytes ? "(more than \(maximumBytes) bytes)" : String(decoding: body, as: UTF8.self)
        context.inspectRefusal(text, push, result)
        answer(result)
    }
}

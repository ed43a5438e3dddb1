import Foundation
import LiveActivityCore

/// `POST /3/device/{pushToken}`: APNs's HTTP/2 provider API, as a backend written for APNs calls it, so it can
/// be pointed at this server to preview its Live Activities. Handlers run on the service thread.
///
/// Requires the header `apns-push-type: liveactivity`; answers as APNs does — 200 with `apns-id` (empty
/// body), or 400 / 403 / 404 / 405 / 413 with `{"reason": …}` — plus our `detail`, and for 200 the headers
/// `liveactivity-verdict` (`applied`, `ignored`, `dropped`) and `liveactivity-detail`, so scripts can tell
/// "APNs would accept, the phone would drop" from a real success. The answer echoes the request's `apns-id`,
/// or carries a new UUID.
/// Source: https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns
/// and https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns
struct PushEndpoint {
    /// What the push endpoint sees of the server. Closures are called on the service thread.
    struct Context {
        /// Who may push (the controller token).
        var access: AccessPolicy
        /// Applies a push: `(payload, pushToken, apnsId, priority, completion)`. Calls `completion` with what
        /// APNs would answer on the service thread — at once, or later when the change waits for the store.
        var applyPush: (JSONValue, String, String, Int?, @escaping (PushResult) -> Void) -> Void
        /// Records a push refused before it had a payload, with its body as `text`:
        /// `(text, pushToken, result, priority)`.
        var inspectRefusal: (String, String, PushResult, Int?) -> Void
        /// A new `apns-id` for a request that sent none (an upper-case UUID, as APNs makes).
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
            let apnsId = request.headers["apns-id"] ?? context.newApnsId()
            let rejection = miss == .notFound
                ? PushRejection(status: 404, reason: "BadPath", detail: "the path is /3/device/{pushToken}")
                : PushRejection(status: 405, reason: "MethodNotAllowed", detail: "use POST")
            return Self.response(PushResult(rejection, apnsId: apnsId))
        }
    }

    /// Answers one push: checks the headers and the role, then the body, then applies it.
    /// - Parameters:
    ///   - request: a POST whose `parameters["token"]` is the device (or push-to-start) token.
    ///   - context: the server's side.
    ///   - responder: answered at once for refusals, when `applyPush` completes otherwise.
    func push(_ request: HTTPRequest, context: Context, responder: HTTPResponder) {
        let apnsId = request.headers["apns-id"] ?? context.newApnsId()
        let pushToken = request.parameters["token"] ?? ""
        func refuse(_ status: Int, _ reason: String, _ detail: String) {
            responder.respond(Self.response(PushResult(PushRejection(status: status, reason: reason, detail: detail), apnsId: apnsId)))
        }
        guard request.headers["apns-push-type"] == "liveactivity" else {
            return refuse(400, "InvalidPushType", "this server previews Live Activities: send apns-push-type: liveactivity")
        }
        guard context.access.role(presenting: request.presentedToken) == .controller else {
            return refuse(403, "InvalidProviderToken", "send the controller token as authorization: bearer …")
        }
        let priorityText = request.headers["apns-priority"]
        let priority = priorityText.flatMap { Int($0) }
        if priorityText != nil, ![1, 5, 10].contains(priority ?? 0) {
            return refuse(400, "BadPriority", "apns-priority must be 1, 5 or 10")
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
                let payload = try JSONValue.parse(body)
                context.applyPush(payload, pushToken, apnsId, priority) { result in responder.respond(Self.response(result)) }
                return
            } catch {
                rejection = PushRejection(status: 400, reason: "BadPayload", detail: error.message)
            }
        }
        // Refused before there is a payload: the inspector shows the body as text.
        let result = PushResult(rejection, apnsId: apnsId)
        let text = body.count > maximumBytes ? "(more than \(maximumBytes) bytes)" : String(decoding: body, as: UTF8.self)
        context.inspectRefusal(text, pushToken, result, priority)
        responder.respond(Self.response(result))
    }

    /// A push answer the way APNs writes it: the status, `apns-id`, our `liveactivity-*` headers, and for a
    /// refusal `{"reason": …, "detail": …}`.
    static func response(_ result: PushResult) -> HTTPResponse {
        var headers: [(name: String, value: String)] = [("apns-id", result.apnsId)]
        if let verdict = result.verdict { headers.append(("liveactivity-verdict", verdict)) }
        if let detail = result.detail { headers.append(("liveactivity-detail", detail)) }
        if let activityId = result.activityId { headers.append(("liveactivity-activity-id", activityId)) }
        if let cause = result.cause { headers.append(("liveactivity-cause", cause)) }
        if let warning = result.warning { headers.append(("liveactivity-warning", warning)) }
        var body: [UInt8] = []
        if result.status != 200 {
            var object: [String: JSONValue] = ["reason": .string(result.reason ?? "BadRequest")]
            if let detail = result.detail { object["detail"] = .string(detail) }
            body = Array((try? Self.bodyEncoder.encode(JSONValue.object(object))) ?? Data())
        }
        return .json(HTTPStatus(result.status), body, headers: headers)
    }

    /// Encodes refusal bodies with sorted keys (`{"detail":…,"reason":…}`), so the same refusal always reads
    /// the same (a dictionary's own order changes from run to run).
    private static let bodyEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
}

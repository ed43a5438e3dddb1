import CLibWebSockets
import Foundation
import LiveActivityCore

/// `POST /3/device/{pushToken}`: APNs's HTTP/2 provider API, as a backend written for APNs calls it, so it can
/// be pointed at this server to preview its Live Activities. Service thread only.
///
/// Requires the header `apns-push-type: liveactivity`; answers as APNs does — 200 with `apns-id` (empty
/// body), or 400 / 403 / 405 / 413 with `{"reason": …}` — plus our `detail`, and for 200 the headers
/// `liveactivity-verdict` (`applied`, `ignored`, `dropped`) and `liveactivity-detail`, so scripts can tell
/// "APNs would accept, the phone would drop" from a real success.
/// Source: https://developer.apple.com/documentation/usernotifications/sending-notification-requests-to-apns
extension LiveActivityServer {
    /// Starts answering a push request: checks method, path, headers and role, then waits for the body.
    /// - Returns: nonzero to close the connection.
    func pushRequest(_ wsi: OpaquePointer, id: UInt64, path: String) -> Int32 {
        let apnsId = customHeader(wsi, "apns-id") ?? UUID().uuidString
        let prefix = "/3/device/"
        guard path.hasPrefix(prefix), path.count > prefix.count else {
            return refuse(wsi, id: id, PushResult(PushRejection(status: 404, reason: "BadPath", detail: "the path is /3/device/{pushToken}"), apnsId: apnsId))
        }
        guard header(wsi, WSI_TOKEN_POST_URI) != nil else {
            return refuse(wsi, id: id, PushResult(PushRejection(status: 405, reason: "MethodNotAllowed", detail: "use POST"), apnsId: apnsId))
        }
        guard customHeader(wsi, "apns-push-type") == "liveactivity" else {
            return refuse(wsi, id: id, PushResult(PushRejection(status: 400, reason: "InvalidPushType",
                detail: "this server previews Live Activities: send apns-push-type: liveactivity"), apnsId: apnsId))
        }
        guard configuration.access.role(presenting: presentedToken(wsi)) == .controller else {
            return refuse(wsi, id: id, PushResult(PushRejection(status: 403, reason: "InvalidProviderToken",
                detail: "send the controller token as authorization: bearer …"), apnsId: apnsId))
        }
        let priorityText = customHeader(wsi, "apns-priority")
        let priority = priorityText.flatMap { Int($0) }
        if priorityText != nil, ![1, 5, 10].contains(priority ?? 0) {
            return refuse(wsi, id: id, PushResult(PushRejection(status: 400, reason: "BadPriority",
                detail: "apns-priority must be 1, 5 or 10"), apnsId: apnsId))
        }
        httpBodies[id] = []
        bodyTargets[id] = .push(pushToken: String(path.dropFirst(prefix.count)), apnsId: apnsId, priority: priority)
        return 0
    }

    /// Whether a request body is being received on connection `id`.
    func isReceivingBody(_ id: UInt64) -> Bool { httpBodies[id] != nil }

    /// Collects a chunk of a request body, keeping at most one byte more than APNs allows.
    func receivedBody(_ bytes: UnsafeRawBufferPointer, id: UInt64) {
        guard var body = httpBodies[id], body.count <= APNsPush.maximumBytes else { return }
        body.append(contentsOf: bytes.prefix(APNsPush.maximumBytes + 1 - body.count))
        httpBodies[id] = body
    }

    /// Handles a whole request body: a push, or a share request.
    /// - Returns: nonzero to close the connection.
    func bodyComplete(_ wsi: OpaquePointer, id: UInt64) -> Int32 {
        let body = httpBodies.removeValue(forKey: id) ?? []
        switch bodyTargets.removeValue(forKey: id) {
        case .push(let pushToken, let apnsId, let priority)?:
            return pushBodyComplete(wsi, id: id, body: body, pushToken: pushToken, apnsId: apnsId, priority: priority)
        case .share(let activityId)?: return shareBodyComplete(wsi, id: id, body: body, activityId: activityId)
        case .refused(let status, let answer, let headers)?: return respond(wsi, id: id, status: status, body: answer, headers: headers)
        case nil: return -1
        }
    }

    private func pushBodyComplete(_ wsi: OpaquePointer, id: UInt64, body: [UInt8], pushToken: String, apnsId: String, priority: Int?) -> Int32 {
        let refusal: PushRejection
        if body.isEmpty {
            refusal = PushRejection(status: 400, reason: "PayloadEmpty", detail: "the request has no body")
        } else if body.count > APNsPush.maximumBytes {
            refusal = PushRejection(status: 413, reason: "PayloadTooLarge",
                                    detail: "Live Activity payloads may be at most \(APNsPush.maximumBytes) bytes")
        } else {
            do {
                let payload = try JSONValue.parse(body)
                return answerWhenReady(wsi, id: id) { [self] reply in
                    applyPush(payload: payload, pushToken: pushToken, apnsId: apnsId, priority: priority) { result in
                        let (headers, body) = Self.encode(result)
                        reply(HTTPAnswer(status: UInt32(result.status), body: body, headers: headers))
                    }
                }
            } catch {
                refusal = PushRejection(status: 400, reason: "BadPayload", detail: error.message)
            }
        }
        // Refused before there is a payload: the inspector shows the body as text.
        let result = PushResult(refusal, apnsId: apnsId)
        let text = body.count > APNsPush.maximumBytes ? "(more than \(APNsPush.maximumBytes) bytes)" : String(decoding: body, as: UTF8.self)
        inspectPush(.string(text), pushToken: pushToken, result: result, events: [], priority: priority, transport: "http",
                    requestId: nil, at: clock())
        return answer(wsi, id: id, result)
    }

    /// Writes a push answer the way APNs does.
    private func answer(_ wsi: OpaquePointer, id: UInt64, _ result: PushResult) -> Int32 {
        let (headers, body) = Self.encode(result)
        return respond(wsi, id: id, status: UInt32(result.status), body: body, headers: headers)
    }

    /// Refuses a push before its body is read: at once for a GET, after reading the body for a POST.
    private func refuse(_ wsi: OpaquePointer, id: UInt64, _ result: PushResult) -> Int32 {
        guard header(wsi, WSI_TOKEN_POST_URI) != nil else { return answer(wsi, id: id, result) }
        let (headers, body) = Self.encode(result)
        return refuseAfterBody(id: id, status: UInt32(result.status), body: body, headers: headers)
    }

    /// Reads and drops the request body, then answers with `status` and `body`.
    /// - Returns: 0 (keep reading).
    func refuseAfterBody(id: UInt64, status: UInt32, body: [UInt8], headers: [(String, String)] = []) -> Int32 {
        httpBodies[id] = []
        bodyTargets[id] = .refused(status: status, body: body, headers: headers)
        return 0
    }

    private static func encode(_ result: PushResult) -> ([(String, String)], [UInt8]) {
        var headers = [("apns-id", result.apnsId)]
        if let verdict = result.verdict { headers.append(("liveactivity-verdict", verdict)) }
        if let detail = result.detail { headers.append(("liveactivity-detail", detail)) }
        if let activityId = result.activityId { headers.append(("liveactivity-activity-id", activityId)) }
        if let cause = result.cause { headers.append(("liveactivity-cause", cause)) }
        if let warning = result.warning { headers.append(("liveactivity-warning", warning)) }
        var body: [UInt8] = []
        if result.status != 200 {
            var object: [String: JSONValue] = ["reason": .string(result.reason ?? "BadRequest")]
            if let detail = result.detail { object["detail"] = .string(detail) }
            body = Array((try? JSONEncoder().encode(JSONValue.object(object))) ?? Data())
        }
        return (headers, body)
    }

    /// A request header lws does not know by name (`apns-push-type`, `apns-id`), or nil.
    func customHeader(_ wsi: OpaquePointer, _ name: String) -> String? {
        let key = name + ":"
        let length = Int(lws_hdr_custom_length(wsi, key, Int32(key.utf8.count)))
        guard length > 0, length < 1024 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_custom_copy(wsi, &buffer, Int32(buffer.count), key, Int32(key.utf8.count)) >= 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }
}

import CLibWebSockets
import Foundation
import LiveActivityCore

/// The read API under `/api` (JSON over HTTP), `/metrics` and `/healthz`, next to the static files.
/// Service thread only.
///
/// - `GET /healthz`: `{"status":"ok",…}` (no token needed).
/// - `GET /metrics`: Prometheus text format.
/// - `GET /api/activities`: the same object as the WebSocket `snapshot`.
/// - `GET /api/activities/{id}`: the protocol's activity object, 404 when unknown.
/// - `GET /api/history?limit=&before=&beforeId=`: finished activities, newest first (`limit` 1…500,
///   default 50; `before` an ISO-8601 date and `beforeId` an id, the last entry of the previous page), as the
///   WebSocket `history` reply.
/// Errors are `{"type":"error","code","field","message"}` with status 400, 401 (a token is needed: give
/// `Authorization: Bearer …` or `?token=`), 404 or 503.
extension LiveActivityServer {
    /// Whether the request is for a dynamic path (`/api…`, `/metrics`, `/healthz`, `/3/device/…`), not a file.
    func isAPIRequest(_ wsi: OpaquePointer) -> Bool {
        guard let path = requestPath(wsi) else { return false }
        return LWSContextResources.dynamicMountpoints.contains { path == $0 || path.hasPrefix($0 + "/") }
    }

    /// The request's path, whatever its method.
    func requestPath(_ wsi: OpaquePointer) -> String? {
        header(wsi, WSI_TOKEN_GET_URI) ?? header(wsi, WSI_TOKEN_POST_URI)
    }

    /// Whether connection `id` is one of ours (an API request), as opposed to a static file.
    func isAPIConnection(_ id: UInt64) -> Bool {
        httpResponses[id] != nil || httpBodies[id] != nil || awaitsAnswer(id)
    }

    /// Answers one API request: writes the headers now and queues the body for HTTP_WRITEABLE.
    /// - Returns: nonzero to close the connection.
    func httpRequest(_ wsi: OpaquePointer, sessionData: UnsafeMutableRawPointer) -> Int32 {
        let id = nextSessionID
        nextSessionID += 1
        sessionData.storeBytes(of: id, as: UInt64.self)
        let path = requestPath(wsi) ?? ""
        if let rendered = renderRequest(wsi, id: id, path: path) { return rendered }
        if let inspected = inspectorRequest(wsi, id: id, path: path) { return inspected }
        if path == "/3" || path.hasPrefix("/3/") { return pushRequest(wsi, id: id, path: path) }
        if path.hasPrefix(ActivityThumbnail.pathPrefix) { return imageRequest(wsi, id: id, path: path) }
        if path.hasPrefix(Self.sharePath) { return sharePage(wsi, id: id, path: path) }
        if path.hasPrefix("/api/activities/"), path.hasSuffix("/shares"), header(wsi, WSI_TOKEN_POST_URI) != nil {
            return shareRequest(wsi, id: id, path: path)
        }
        guard header(wsi, WSI_TOKEN_GET_URI) != nil else {
            return respond(wsi, id: id, status: 405, body: Array(#"{"code":"invalid_field","field":"method","message":"method: only GET is allowed here","type":"error"}"#.utf8))
        }
        if path == "/healthz" {
            let body = #"{"status":"ok","activities":\#(center.activities.count),"connections":\#(hub.sessions.count),"sequence":\#(center.sequence)}"#
            return respond(wsi, id: id, status: 200, body: Array(body.utf8))
        }
        let role = configuration.access.role(presenting: presentedToken(wsi))
        guard let role, role != .unauthenticated else {
            return respond(wsi, id: id, status: 401, body: ServerMessage.error(requestId: nil, ProtocolError(.unauthorized, field: "token",
                message: "token: this API needs a viewer or controller token (Authorization: Bearer … or ?token=)")).encoded())
        }
        if path == "/metrics" {
            let connections = Dictionary(grouping: hub.sessions.values, by: \.role).mapValues(\.count)
            let activities = Dictionary(grouping: center.activities.values, by: \.activityState).mapValues(\.count)
            let text = metrics.exposition(connections: connections, activities: activities)
            return respond(wsi, id: id, status: 200, body: Array(text.utf8), contentType: "text/plain; version=0.0.4")
        }
        if path.hasPrefix("/api/activities/"), let activity = center.activities[String(path.dropFirst("/api/activities/".count))] {
            return respond(wsi, id: id, status: 200, body: activity.encodedJSON())
        }
        let (status, message) = route(path, wsi)
        return respond(wsi, id: id, status: status, body: message.encoded())
    }

    private func route(_ path: String, _ wsi: OpaquePointer) -> (UInt32, ServerMessage) {
        let now = clock()
        switch path {
        case "/api/push-to-start-token":
            return (200, .pushToStartToken(pushToStartToken))
        case "/api/activities":
            return (200, .snapshot(requestId: nil, serverTime: now, sequence: center.sequence, activities: center.ordered))
        case "/api/history":
            do {
                let limitText = queryArgument(wsi, "limit")
                let limit = try HistoryQuery.limit(try limitText.map { text throws(ProtocolError) in
                    guard let number = Double(text) else { throw .invalid("limit", "expected a whole number, got \"\(text.prefix(20))\"") }
                    return number
                }, field: "limit")
                var before: Date?
                if let text = queryArgument(wsi, "before") {
                    switch ISODate.read(text) {
                    case .success(let date): before = date
                    case .failure(.impossible(let reason)):
                        throw ProtocolError.invalid("before", "\"\(text.prefix(40))\" is not a real date and time: \(reason)")
                    case .failure(.notISO8601):
                        throw ProtocolError.invalid("before", "expected an ISO-8601 date such as 2026-11-29T17:00:00Z, got \"\(text.prefix(40))\"")
                    }
                }
                do {
                    return (200, .history(requestId: nil, entries: try store.history(limit: limit, before: before, beforeId: queryArgument(wsi, "beforeId"))))
                } catch {
                    return (503, .error(requestId: nil, storageUnavailable(error)))
                }
            } catch let error as ProtocolError {
                return (400, .error(requestId: nil, error))
            } catch {
                // Only ProtocolError is thrown above; never send an error's own description (Swift internals).
                logger.error("history request failed", ["error": "\(error)"])
                return (500, .error(requestId: nil, ProtocolError(.invalidField, field: nil, message: "the history request could not be answered")))
            }
        case let path where path.hasPrefix("/api/activities/"):
            let id = String(path.dropFirst("/api/activities/".count))
            return (404, .error(requestId: nil, ProtocolError(.unknownActivity, field: "id",
                    message: "id: no activity with id \"\(id.prefix(128))\" (never started, or already dismissed)")))
        default:
            return (404, .error(requestId: nil, ProtocolError(.unknownType, field: "path",
                     message: "path: no API at \(path.prefix(80)); try /api/activities or /api/history")))
        }
    }

    /// Writes status and headers, and queues `body` for the next HTTP_WRITEABLE.
    /// - Parameters:
    ///   - contentType: the `content-type` value.
    ///   - cacheControl: the `cache-control` value; `no-store` unless the body can never change.
    ///   - headers: extra response headers (names without the colon; values ASCII, printable characters
    ///     only, at most 1,024 bytes each).
    ///   - ownStatusLine: write the status line, type and length here instead of with
    ///     `lws_add_http_common_headers`, which also adds lws's best-practice security headers (these forbid
    ///     inline styles and framing, which the renderings need; they send their own policy in `headers`).
    /// - Returns: nonzero to close the connection.
    func respond(_ wsi: OpaquePointer, id: UInt64, status: UInt32, body: [UInt8], contentType: String = "application/json",
                 cacheControl: String = "no-store", headers: [(String, String)] = [], ownStatusLine: Bool = false) -> Int32 {
        let headroom = clws_pre()
        var buffer = [UInt8](repeating: 0, count: headroom + 4096)
        let failed = buffer.withUnsafeMutableBufferPointer { buffer -> Bool in
            let start = buffer.baseAddress! + headroom
            let end = buffer.baseAddress! + buffer.count
            var position: UnsafeMutablePointer<UInt8>? = start
            func add(_ name: String, _ value: String) -> Bool {
                let nameBytes = Array((name + ":").utf8) + [0]
                let valueBytes = Array(value.utf8.filter { $0 >= 0x20 && $0 < 0x7f }.prefix(1024))
                return lws_add_http_header_by_name(wsi, nameBytes, valueBytes, Int32(valueBytes.count), &position, end) == 0
            }
            if ownStatusLine {
                // HTTP/2 requests carry the :path pseudo-header; there the status is the :status pseudo-header.
                if lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_COLON_PATH) > 0 {
                    let code = Array("\(status)".utf8)
                    if lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_COLON_STATUS, code, Int32(code.count), &position, end) != 0 { return true }
                } else {
                    let line = Array("HTTP/1.1 \(status) \(Self.reasonPhrases[status] ?? "Error")".utf8)
                    if lws_add_http_header_by_name(wsi, nil, line, Int32(line.count), &position, end) != 0 { return true }
                }
                guard add("content-type", contentType) else { return true }
                if lws_add_http_header_content_length(wsi, lws_filepos_t(body.count), &position, end) != 0 { return true }
            } else if lws_add_http_common_headers(wsi, status, contentType, lws_filepos_t(body.count), &position, end) != 0 {
                return true
            }
            guard add("cache-control", cacheControl) else { return true }
            for (name, value) in headers {
                guard add(name, value) else { return true }
            }
            return lws_finalize_write_http_header(wsi, start, &position, end) != 0
        }
        if failed { return 1 }
        // With no body (a push's 200) the response is whole once its head is written, and a keep-alive client
        // sends its next request at once: complete the transaction now. Waiting for WRITEABLE let that
        // request arrive mid-transaction, and lws 4.1 then spun in `lws_service_do_ripe_rxflow` (the service
        // thread at 100 %, every client stalled).
        if body.isEmpty { return lws_http_transaction_completed(wsi) != 0 ? -1 : 0 }
        httpResponses[id] = Frame(body)
        lws_callback_on_writable(wsi)
        return 0
    }

    /// Reason phrases for the status lines ``respond(_:id:status:body:contentType:cacheControl:headers:ownStatusLine:)`` writes itself.
    static let reasonPhrases: [UInt32: String] = [200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
                                                   405: "Method Not Allowed", 410: "Gone"]

    /// Whether an API response body is waiting for connection `id`.
    func hasHTTPResponse(_ id: UInt64) -> Bool { httpResponses[id] != nil || hasReadyAnswer(id) }

    /// Writes the queued body and completes the transaction.
    /// - Returns: nonzero to close the connection.
    func httpWritable(_ wsi: OpaquePointer, id: UInt64) -> Int32 {
        if let written = writeReadyAnswer(wsi, id: id) { return written }
        guard let body = httpResponses.removeValue(forKey: id) else { return 0 }
        if lws_write(wsi, body.payload, body.count, LWS_WRITE_HTTP_FINAL) < body.count { return -1 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }

    /// Forgets an API connection.
    func httpClosed(_ id: UInt64) {
        httpResponses[id] = nil
        httpBodies[id] = nil
        bodyTargets[id] = nil
        forgetAnswer(id)
    }
}

import Foundation
import LiveActivityCore

/// The read API under `/api` (JSON over HTTP), `/metrics` and `/healthz`, next to the static files; and the
/// wording of 404 / 405 for every path no other feature words. Handlers run on the service thread.
///
/// - `GET /healthz`: `{"status":"ok",…}` (no token needed).
/// - `GET /metrics`: Prometheus text format.
/// - `GET /api/activities`: the same object as the WebSocket `snapshot`.
/// - `GET /api/activities/{id}`: the protocol's activity object, 404 when unknown.
/// - `GET /api/history?limit=&before=&beforeId=`: finished activities, newest first (`limit` 1…500,
///   default 50; `before` an ISO-8601 date and `beforeId` an id, the last entry of the previous page), as the
///   WebSocket `history` reply.
/// - `GET /api/push-to-start-token`: `{"type":"pushToStartToken",…}`.
/// Errors are `{"type":"error","code","field","message"}` with status 400, 401 (a token is needed: give
/// `Authorization: Bearer …` or `?token=`), 404, 405 or 503.
struct ReadAPI {
    /// What the read API sees of the server. Closures are called on the service thread.
    struct Context {
        /// The current time (the server's clock, whole milliseconds).
        var now: () -> Date
        /// Who may read.
        var access: AccessPolicy
        /// The activities as they are now (read only).
        var center: () -> ActivityCenter
        /// Open WebSocket connections.
        var connectionCount: () -> Int
        /// The `/metrics` exposition text (Prometheus text format 0.0.4).
        var metrics: () -> String
        /// The token `start` pushes are addressed to.
        var pushToStartToken: String
        /// Reads the store's finished activities, `(limit, before, beforeId)`, newest first, and encodes them
        /// as the `history` message, off the service thread; hands the JSON to the continuation, which runs on
        /// the service thread.
        var history: (Int, Date?, String?, @escaping (Result<[UInt8], StoreReadError>) -> Void) -> Void
        /// The `storage_unavailable` error for a store failure (the cause goes to the log, not the client).
        var storageUnavailable: (any Error) -> ProtocolError
        /// Where unexpected failures are logged.
        var logger: Logger
    }

    /// Registers the read routes and the default wording of misses (everything no other feature words).
    func register(on router: inout Router, context: Context) {
        router.add([.get], "/healthz") { _ in healthz(context) }
        router.add([.get], "/metrics") { request in authorized(request, context) { _ in
            HTTPResponse(status: .ok, contentType: "text/plain; version=0.0.4", body: Array(context.metrics().utf8))
        } }
        router.add([.get], "/api/activities") { request in authorized(request, context) { _ in
            let center = context.center()
            return .message(.ok, .snapshot(requestId: nil, serverTime: context.now(), sequence: center.sequence,
                                           activities: center.ordered))
        } }
        // The rest of the path is the id, slashes and all (`/api/activities/` asks for ""): any such path is
        // an activity that may not exist (404 `unknown_activity`), unless a longer route names the path (a timeline;
        // shares, which only POST takes: GET there is a 405).
        router.add([.get], "/api/activities/**") { request in authorized(request, context) { request in
            activity(request.parameters["**"] ?? "", context)
        } }
        router.add([.get], "/api/history") { request, responder in
            guard context.access.mayRead(request) else { return responder.respond(.readTokenNeeded) }
            history(request, context, responder: responder)
        }
        router.add([.get], "/api/push-to-start-token") { request in authorized(request, context) { _ in
            .message(.ok, .pushToStartToken(context.pushToStartToken))
        } }
        router.onMiss(under: "/") { request, miss in Self.miss(request, miss, context) }
    }

    /// `GET /healthz`: activities, connections and the event sequence; no token needed.
    func healthz(_ context: Context) -> HTTPResponse {
        let center = context.center()
        let body = #"{"status":"ok","activities":\#(center.activities.count),"connections":\#(context.connectionCount()),"sequence":\#(center.sequence)}"#
        return .json(.ok, Array(body.utf8))
    }

    /// Answers with `body` when the request's token grants a viewer or controller role, else 401.
    private func authorized(_ request: HTTPRequest, _ context: Context, _ body: (HTTPRequest) -> HTTPResponse) -> HTTPResponse {
        guard context.access.mayRead(request) else { return .readTokenNeeded }
        return body(request)
    }

    /// `GET /api/activities/{id}`: the activity, or 404 `unknown_activity`.
    private func activity(_ id: String, _ context: Context) -> HTTPResponse {
        if let activity = context.center().activities[id] { return .json(.ok, activity.encodedJSON()) }
        return .error(.notFound, ProtocolError(.unknownActivity, field: "id",
                      message: "id: no activity with id \"\(id.clipped(to: 128))\" (never started, or already dismissed)"))
    }

    /// `GET /api/history`: 200, 400 for a bad `limit` or `before`, 503 when the store fails. Answers once the
    /// store is read (off the service thread).
    private func history(_ request: HTTPRequest, _ context: Context, responder: HTTPResponder) {
        do {
            let limitText = request.query("limit")
            let limit = try HistoryQuery.limit(try limitText.map { text throws(ProtocolError) in
                guard let number = Double(text) else { throw .invalid("limit", "expected a whole number, got \"\(text.clipped(to: 20))\"") }
                return number
            }, field: "limit")
            var before: Date?
            if let text = request.query("before") {
                switch ISODate.read(text) {
                case .success(let date): before = date
                case .failure(.impossible(let reason)):
                    throw ProtocolError.invalid("before", "\"\(text.clipped(to: 40))\" is not a real date and time: \(reason)")
                case .failure(.notISO8601):
                    throw ProtocolError.invalid("before", "expected an ISO-8601 date such as 2026-11-29T17:00:00Z, got \"\(text.clipped(to: 40))\"")
                }
            }
            context.history(limit, before, request.query("beforeId")) { result in
                switch result {
                case .success(let body): responder.respond(.json(.ok, body))
                case .failure(let error): responder.respond(.error(.serviceUnavailable, context.storageUnavailable(error)))
                }
            }
        } catch let error as ProtocolError {
            responder.respond(.error(.badRequest, error))
        } catch {
            // Only ProtocolError is thrown above; never send an error's own description (Swift internals).
            context.logger.error("history request failed", ["error": "\(error)"])
            responder.respond(.error(.internalServerError, ProtocolError(.invalidField, field: nil, message: "the history request could not be answered")))
        }
    }

    /// The default 404 / 405: 405 names the methods allowed; 404 needs a token first (so that it reveals
    /// nothing to strangers), then says there is no API at the path.
    static func miss(_ request: HTTPRequest, _ miss: Router.Miss, _ context: Context) -> HTTPResponse {
        if case .methodNotAllowed(let allowed) = miss { return .methodNotAllowed(allowed) }
        guard context.access.mayRead(request) else { return .readTokenNeeded }
        return .error(.notFound, ProtocolError(.unknownType, field: "path",
                      message: "path: no API at \(request.path.clipped(to: 80)); try /api/activities or /api/history"))
    }
}

import Foundation
import LiveActivityCore

/// The push inspector over HTTP: the page `/inspector`, `GET /api/inspections` and
/// `GET /api/activities/{id}/timeline`. The records themselves are ``Inspector``'s. Handlers run on the
/// service thread.
///
/// - `GET /inspector` (or `/inspector/`): Public/inspector.html, read at request time, with a policy that lets
///   it frame the renderings (same origin). No token needed: it holds no data, its script asks for it.
/// - `GET /api/inspections?since=&activityId=`: `{"type":"inspections","serverTime","budgetEmulation",
///   "inspections":[…]}`, the records after `since` (a record id), of one activity if asked. Viewer token.
/// - `GET /api/activities/{id}/timeline`: one activity's life on a time axis, 404 when the event log and the
///   inspector know nothing of it. Viewer token.
struct InspectorRoutes {
    /// What the inspector's routes see of the server. Closures are called on the service thread.
    struct Context {
        /// The current time (the server's clock).
        var now: () -> Date
        /// Who may read.
        var access: AccessPolicy
        /// The inspector's records after a record id (all kept when nil), oldest first.
        var records: (UInt64?) -> [Inspection]
        /// Whether budget emulation marks the records (`--emulate-budget`).
        var budgetEmulation: Bool
        /// Reads the timeline of the activity with this id and encodes it as JSON (off the service thread),
        /// and hands it, or nil when unknown, to the continuation, which runs on the service thread.
        var timeline: (String, @escaping ([UInt8]?) -> Void) -> Void
    }

    /// The folder served at `/`, which holds inspector.html.
    let publicDirectory: URL

    /// Registers the page and the two API routes.
    func register(on router: inout Router, context: Context) {
        for path in ["/inspector", "/inspector/"] {
            router.add([.get], path) { _ in page() }
        }
        router.add([.get], "/api/inspections") { request in inspections(request, context: context) }
        router.add([.get], "/api/activities/{id}/timeline") { request, responder in timeline(request, context: context, responder: responder) }
    }

    /// `/inspector`: Public/inspector.html with a policy that lets it frame the renderings (same origin); a
    /// plain 404 when the file is missing.
    func page() -> HTTPResponse {
        guard let html = try? String(contentsOf: publicDirectory.appendingPathComponent("inspector.html"), encoding: .utf8) else {
            return HTTPResponse(status: .notFound, contentType: "text/plain", body: Array("no inspector.html in the public folder\n".utf8))
        }
        return .document(.ok, html: html, contentSecurityPolicy:
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ws: wss:; "
            + "frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
    }

    /// `GET /api/inspections`: 200, 400 for a bad `since`, 401 without a viewer token.
    func inspections(_ request: HTTPRequest, context: Context) -> HTTPResponse {
        guard context.access.mayRead(request) else { return .readTokenNeeded }
        var since: UInt64?
        if let text = request.query("since") {
            guard let number = UInt64(text) else {
                return .error(.badRequest, ProtocolError.invalid("since", "expected a whole number from 0 up, got \"\(text.clipped(to: 20))\""))
            }
            since = number
        }
        var records = context.records(since)
        if let activity = request.query("activityId") { records = records.filter { $0.activityId == activity } }
        /// `{"type":"inspections",…}`.
        struct Body: Encodable {
            let type = "inspections"
            let serverTime: Date
            let budgetEmulation: Bool
            let inspections: [Inspection]
        }
        let body = (try? MessageEncoder.encoder.encode(Body(serverTime: context.now(), budgetEmulation: context.budgetEmulation,
                                                            inspections: records))) ?? Data()
        return .json(.ok, Array(body))
    }

    /// `GET /api/activities/{id}/timeline`: 200, 401 without a viewer token, 404 for an unknown activity.
    /// Answers once the event log is read (off the service thread).
    func timeline(_ request: HTTPRequest, context: Context, responder: HTTPResponder) {
        guard context.access.mayRead(request) else { return responder.respond(.readTokenNeeded) }
        let activityId = request.parameters["id"] ?? ""
        context.timeline(activityId) { timeline in
            guard let timeline else {
                return responder.respond(.error(.notFound, ProtocolError(.unknownActivity, field: "id",
                                                message: "id: no activity with id \"\(activityId.clipped(to: 128))\" in the event log")))
            }
            responder.respond(.json(.ok, timeline))
        }
    }
}

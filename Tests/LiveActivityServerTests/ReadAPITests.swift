import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityServer
import KindFixtures

/// The read API and the default 404 / 405, through the route table with a fake context.
struct ReadAPITests {
    struct StoreDown: Error {}

    private func router(viewerToken: String? = "v", historyFails: Bool = false) -> Router {
        var router = Router()
        ReadAPI().register(on: &router, context: ReadAPI.Context(
            now: { Date(timeIntervalSince1970: 1_800_000_000) },
            access: AccessPolicy(controllerToken: "c", viewerToken: viewerToken),
            center: { ActivityCenter(kinds: .builtIn) },
            connectionCount: { 3 },
            metrics: { "# metrics\n" },
            pushToStartToken: "start-token",
            history: { _, _, _, then in then(historyFails ? .failure(StoreReadError(StoreDown())) : .success([])) },
            storageUnavailable: { _ in ProtocolError(.storageUnavailable, field: nil, message: "store down") },
            logger: Logger(label: "test", level: .error)))
        return router
    }

    private func get(_ router: Router, _ target: String, token: String? = nil, method: HTTPMethod = .get) -> (HTTPStatus?, String, HTTPResponse?) {
        let parts = target.split(separator: "?", maxSplits: 1)
        let fragments = parts.count > 1 ? parts[1].split(separator: "&").map(String.init) : []
        var headers = HTTPHeaders()
        headers["authorization"] = token.map { "Bearer \($0)" }
        var answer: HTTPResponse?
        router.dispatch(HTTPRequest(method: method, path: String(parts[0]), query: HTTPRequest.queryFields(fromFragments: fragments),
                                    headers: headers), HTTPResponder { answer = $0 })
        return (answer?.status, String(decoding: answer?.body ?? [], as: UTF8.self), answer)
    }

    @Test func healthNeedsNoToken() {
        let (status, body, _) = get(router(), "/healthz")
        #expect(status == .ok)
        #expect(body == #"{"status":"ok","activities":0,"connections":3,"sequence":0}"#)
    }

    @Test func aTokenComesBeforeSayingWhatExists() {
        let router = router()
        #expect(get(router, "/api/nope").0 == .unauthorized)
        #expect(get(router, "/api/activities").0 == .unauthorized)
        #expect(get(router, "/api/activities?token=v").0 == .ok)
        #expect(get(router, "/api/nope", token: "wrong").0 == .unauthorized)
        let (status, body, _) = get(router, "/api/nope", token: "v")
        #expect(status == .notFound)
        #expect(body.contains("no API at /api/nope"))
    }

    @Test func anyPathUnderActivitiesIsAnActivityId() {
        let router = router()
        for (path, id) in [("/api/activities/x", "x"), ("/api/activities/x/shares", "x/shares"), ("/api/activities/", "")] {
            let (status, body, _) = get(router, path, token: "v")
            #expect(status == .notFound)
            #expect(body.contains(#"no activity with id \"\#(id)\""#), "\(path): \(body)")
        }
    }

    @Test func otherMethodsAre405BeforeAnyToken() {
        let (status, body, response) = get(router(), "/api/activities", method: .delete)
        #expect(status == .methodNotAllowed)
        #expect(body.contains("method: only GET is allowed here"))
        #expect(response?.header("allow") == "GET, HEAD")
    }

    @Test func historyChecksItsQueryAndTheStore() {
        #expect(get(router(), "/api/history?limit=abc", token: "v").0 == .badRequest)
        #expect(get(router(), "/api/history?before=yesterday", token: "v").0 == .badRequest)
        #expect(get(router(), "/api/history?limit=2", token: "v").0 == .ok)
        #expect(get(router(historyFails: true), "/api/history", token: "v").0 == .serviceUnavailable)
    }

    @Test func metricsArePlainText() {
        let (status, body, response) = get(router(viewerToken: nil), "/metrics")
        #expect(status == .ok)
        #expect(body == "# metrics\n")
        #expect(response?.contentType == "text/plain; version=0.0.4")
    }
}

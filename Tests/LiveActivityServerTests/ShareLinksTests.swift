import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityServer

/// Share links driven through a fake context: an injected clock, a dictionary of activities, a recording
/// store and recorded viewer closes. No sockets, no sleeps: time moves when the test says so.
struct ShareLinksTests {
    /// The fake server side: mutable state the closures read and write.
    final class FakeServer {
        var now = Date(timeIntervalSince1970: 1_800_000_000)
        var activities: [String: Activity] = [:]
        var saved: [Share] = []
        var failSaves = false
        var viewers: [String: Int] = [:]
        var closed: [(shareId: String, reason: String)] = []

        func context(access: AccessPolicy = AccessPolicy()) -> ShareLinks.Context {
            ShareLinks.Context(
                now: { self.now },
                access: access,
                activity: { self.activities[$0] },
                keep: { share, done in
                    if self.activities[share.activityId] == nil {
                        done(ProtocolError(.unknownActivity, field: "activityId", message: "activityId: unknown"))
                    } else if self.failSaves {
                        done(ProtocolError(.storageUnavailable, field: nil, message: "store down"))
                    } else {
                        self.saved.append(share)
                        done(nil)
                    }
                },
                saveEnded: { share in if !self.failSaves { self.saved.append(share) } },
                viewers: { self.viewers[$0] ?? 0 },
                closeViewers: { self.closed.append(($0, $1)) },
                storageUnavailable: { _ in ProtocolError(.storageUnavailable, field: nil, message: "store down") },
                logger: Logger(label: "test", level: .error))
        }

        func addActivity(_ id: String) {
            activities[id] = Activity(id: id, attributesType: "workout", attributes: .object(["workout": .string("yoga")]),
                                      content: ActivityContent(state: .object([:]), staleDate: nil), timer: nil, startDate: now)
        }
    }

    private func token(of summary: ShareSummary) -> String {
        String((summary.url ?? "").dropFirst(ShareLinks.path.count))
    }

    @Test func aLinkOpensItsActivityUntilItExpires() throws {
        let server = FakeServer()
        server.addActivity("a1")
        let links = ShareLinks(shares: [])
        let summary = try links.createNow(activityId: "a1", expiresIn: 60, context: server.context())
        let token = token(of: summary)
        #expect(token.count >= 32, "192 random bits, base64url")
        #expect(summary.expiresAt == server.now.addingTimeInterval(60))
        #expect(links.share(forToken: token)?.activityId == "a1")
        #expect(server.saved.map(\.id) == [summary.id])
        #expect(server.saved.first?.tokenHash != token, "only the token's hash is kept")
        server.viewers[summary.id] = 2
        #expect(links.summaries(activityId: nil, context: server.context()).map(\.viewers) == [2])

        server.now = server.now.addingTimeInterval(59)
        links.expire(now: server.now, context: server.context())
        #expect(server.closed.isEmpty)
        server.now = server.now.addingTimeInterval(1)
        links.expire(now: server.now, context: server.context())
        #expect(server.closed.map(\.shareId) == [summary.id])
        #expect(server.closed.map(\.reason) == ["share expired"])
        #expect(links.summaries(activityId: "a1", context: server.context()).isEmpty)
        #expect(links.share(forToken: token)?.endedAt == server.now, "remembered as ended, to answer 410")
    }

    @Test func revokingEndsTheLinkAndClosesItsViewers() throws {
        let server = FakeServer()
        server.addActivity("a1")
        let links = ShareLinks(shares: [])
        let summary = try links.createNow(activityId: "a1", expiresIn: nil, context: server.context())
        #expect(summary.expiresAt == server.now.addingTimeInterval(Share.maximumLifetime))
        let revoked = try links.revoke(id: summary.id, context: server.context())
        #expect(revoked.id == summary.id)
        #expect(server.closed.map(\.reason) == ["share revoked"])
        #expect(server.saved.last?.endedAt == server.now)
        #expect(throws: ProtocolError.self) { try links.revoke(id: summary.id, context: server.context()) }
    }

    @Test func dismissingTheActivityEndsItsLinksOnly() throws {
        let server = FakeServer()
        server.addActivity("a1")
        server.addActivity("a2")
        let links = ShareLinks(shares: [])
        let first = try links.createNow(activityId: "a1", expiresIn: nil, context: server.context())
        _ = try links.createNow(activityId: "a2", expiresIn: nil, context: server.context())
        let dismissed = ActivityEvent(kind: .dismissed, sequence: 9, activity: server.activities["a1"]!)
        links.expire(now: server.now, events: [dismissed], context: server.context())
        #expect(server.closed.map(\.shareId) == [first.id])
        #expect(server.closed.map(\.reason) == ["activity dismissed"])
        #expect(links.summaries(activityId: nil, context: server.context()).map(\.activityId) == ["a2"])
    }

    @Test func refusals() {
        let server = FakeServer()
        let links = ShareLinks(shares: [])
        #expect(throws: ProtocolError.self) { try links.createNow(activityId: "nope", expiresIn: nil, context: server.context()) }
        server.addActivity("a1")
        server.failSaves = true
        do {
            _ = try links.createNow(activityId: "a1", expiresIn: nil, context: server.context())
            Issue.record("a failed save must refuse the link")
        } catch {
            #expect(error.code == .storageUnavailable)
        }
        #expect(links.share(forToken: "") == nil)
        #expect(links.share(forToken: String(repeating: "x", count: 129)) == nil)
    }

    @Test func linksKeptByTheStoreStillOpen() throws {
        let server = FakeServer()
        server.addActivity("a1")
        let first = ShareLinks(shares: [])
        let token = token(of: try first.createNow(activityId: "a1", expiresIn: nil, context: server.context()))
        let restarted = ShareLinks(shares: server.saved)
        #expect(restarted.share(forToken: token)?.activityId == "a1")
    }

    // MARK: HTTP

    /// A router with the share routes and a stub page.
    private func router(_ links: ShareLinks, _ server: FakeServer, access: AccessPolicy = AccessPolicy()) -> Router {
        var router = Router()
        links.register(on: &router, context: server.context(access: access)) { activity, token, _ in
            HTTPResponse.document(.ok, html: "page of \(activity.id) for \(token)")
        }
        return router
    }

    private func answer(_ router: Router, _ request: HTTPRequest) -> HTTPResponse? {
        var answer: HTTPResponse?
        router.dispatch(request, HTTPResponder { answer = $0 })
        return answer
    }

    @Test func theSharePageIs200Then410AndUnknownTokensAre404() throws {
        let server = FakeServer()
        server.addActivity("a1")
        let links = ShareLinks(shares: [])
        let router = router(links, server)
        let summary = try links.createNow(activityId: "a1", expiresIn: 60, context: server.context())
        let path = summary.url ?? ""
        let page = answer(router, HTTPRequest(method: .get, path: path))
        #expect(page?.status == .ok)
        #expect(String(decoding: page?.body ?? [], as: UTF8.self) == "page of a1 for \(token(of: summary))")
        #expect(answer(router, HTTPRequest(method: .get, path: "/s/guess"))?.status == .notFound)
        #expect(answer(router, HTTPRequest(method: .get, path: "/s/"))?.status == .notFound)
        let posted = answer(router, HTTPRequest(method: .post, path: path))
        #expect(posted?.status == .methodNotAllowed)
        #expect(posted?.header("allow") == "GET, HEAD")
        server.now = server.now.addingTimeInterval(60)
        #expect(answer(router, HTTPRequest(method: .get, path: path))?.status == .gone)
    }

    @Test func makingALinkOverHTTPNeedsTheControllerToken() {
        let server = FakeServer()
        server.addActivity("a1")
        let links = ShareLinks(shares: [])
        let router = router(links, server, access: AccessPolicy(controllerToken: "ctl"))
        func post(_ path: String, token: String?, body: String = "") -> HTTPResponse? {
            var headers = HTTPHeaders()
            headers["authorization"] = token.map { "Bearer \($0)" }
            return answer(router, HTTPRequest(method: .post, path: path, headers: headers, body: Array(body.utf8)))
        }
        #expect(post("/api/activities/a1/shares", token: nil)?.status == .forbidden)
        #expect(post("/api/activities/a1/shares", token: "wrong")?.status == .forbidden)
        #expect(post("/api/activities/a1/shares", token: "ctl", body: "{\"expiresIn\":0}")?.status == .badRequest)
        #expect(post("/api/activities/a1/shares", token: "ctl", body: "not json")?.status == .badRequest)
        #expect(post("/api/activities/nope/shares", token: "ctl")?.status == .notFound)
        let made = post("/api/activities/a1/shares", token: "ctl", body: "{\"expiresIn\":30}")
        #expect(made?.status == .created)
        let text = String(decoding: made?.body ?? [], as: UTF8.self)
        #expect(text.contains("\"url\":\"/s/"))
        #expect(links.summaries(activityId: "a1", context: server.context()).count == 1)
    }
}

extension ShareLinks {
    /// ``create(activityId:expiresIn:context:completion:)`` with a context that answers at once (the fake
    /// server's): the summary, or the refusal thrown.
    func createNow(activityId: String, expiresIn: TimeInterval?, context: Context) throws(ProtocolError) -> ShareSummary {
        var result: Result<ShareSummary, ProtocolError>?
        create(activityId: activityId, expiresIn: expiresIn, context: context) { result = $0 }
        guard let result else { throw ProtocolError(.storageUnavailable, field: nil, message: "no answer") }
        return try result.get()
    }
}

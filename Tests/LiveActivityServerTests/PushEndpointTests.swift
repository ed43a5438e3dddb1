import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityServer

/// The APNs-shaped push endpoint driven through the route table with a fake context: header checks in APNs's
/// order, body limits, and an answer that comes later.
struct PushEndpointTests {
    /// Records what the endpoint asked of the server.
    final class FakeServer {
        var applied: [(payload: JSONValue, token: String, apnsId: String, priority: Int?)] = []
        var refusalsInspected: [(text: String, status: Int)] = []
        /// When set, pushes are answered only when the test calls it (as when the store answers later).
        var holdAnswers = false
        var held: [(PushResult) -> Void] = []

        func context() -> PushEndpoint.Context {
            PushEndpoint.Context(
                authority: ProviderAuthority(access: AccessPolicy(controllerToken: "ctl"), key: nil),
                now: { Date() },
                applyPush: { push, completion in
                    self.applied.append((push.payload, push.pushToken, push.apnsId, push.priority))
                    let apnsId = push.apnsId
                    var result = PushResult(PushRejection(status: 200, reason: "", detail: "applied"), apnsId: apnsId)
                    result.reason = nil
                    result.verdict = "applied"
                    if self.holdAnswers { self.held.append { _ in completion(result) } } else { completion(result) }
                },
                inspectRefusal: { text, _, result in self.refusalsInspected.append((text, result.status)) },
                newApnsId: { "NEW-ID" })
        }
    }

    private func router(_ server: FakeServer) -> Router {
        var router = Router()
        PushEndpoint().register(on: &router, context: server.context())
        return router
    }

    private func push(_ router: Router, path: String = "/3/device/tok", method: HTTPMethod = .post, headers: HTTPHeaders,
                      body: String = #"{"aps":{}}"#) -> HTTPResponse? {
        var answer: HTTPResponse?
        router.dispatch(HTTPRequest(method: method, path: path, headers: headers, body: Array(body.utf8)), HTTPResponder { answer = $0 })
        return answer
    }

    private func reason(_ response: HTTPResponse?) -> String? {
        guard let body = response?.body, case .object(let object)? = try? JSONValue.parse(body),
              case .string(let reason)? = object["reason"] else { return nil }
        return reason
    }

    private let good: HTTPHeaders = ["apns-push-type": "liveactivity", "authorization": "bearer ctl", "apns-id": Self.id1]
    private static let id1 = "0C0FFEE0-1234-4ABC-8DEF-0123456789AB"

    @Test func headersAreCheckedInAPNsOrder() {
        let server = FakeServer()
        let router = router(server)
        var headers: HTTPHeaders = ["apns-push-type": "alert", "apns-id": Self.id1]
        var answer = push(router, headers: headers)
        #expect((answer?.status, reason(answer), answer?.header("apns-id")) == (.badRequest, "InvalidPushType", Self.id1))
        headers["apns-push-type"] = "liveactivity"
        headers["apns-id"] = "not-a-uuid"
        answer = push(router, headers: headers)
        #expect((answer?.status, reason(answer)) == (.badRequest, "BadMessageId"))
        headers["apns-id"] = Self.id1
        answer = push(router, headers: headers)
        #expect((answer?.status, reason(answer)) == (.forbidden, "MissingProviderToken"))
        headers["authorization"] = "bearer wrong"
        answer = push(router, headers: headers)
        #expect((answer?.status, reason(answer)) == (.forbidden, "InvalidProviderToken"))
        headers["authorization"] = "Bearer ctl"
        headers["apns-priority"] = "7"
        answer = push(router, headers: headers)
        #expect((answer?.status, reason(answer)) == (.badRequest, "BadPriority"))
        #expect(server.applied.isEmpty && server.refusalsInspected.isEmpty, "refused before the payload: nothing applied or recorded")
    }

    @Test func bodiesAreCheckedAndRefusalsRecorded() {
        let server = FakeServer()
        let router = router(server)
        var answer = push(router, headers: good, body: "")
        #expect((answer?.status, reason(answer)) == (.badRequest, "PayloadEmpty"))
        answer = push(router, headers: good, body: String(repeating: "x", count: APNsPush.maximumBytes + 1))
        #expect((answer?.status, reason(answer)) == (.contentTooLarge, "PayloadTooLarge"))
        answer = push(router, headers: good, body: "{nope")
        #expect((answer?.status, reason(answer)) == (.badRequest, "BadPayload"))
        #expect(server.refusalsInspected.map(\.text) == ["", "(more than 4096 bytes)", "{nope"])
        #expect(server.refusalsInspected.map(\.status) == [400, 413, 400])
    }

    @Test func anAcceptedPushIsAppliedAndAnsweredAsAPNsDoes() {
        let server = FakeServer()
        let router = router(server)
        var headers = good
        headers["apns-priority"] = "5"
        let answer = push(router, headers: headers)
        #expect(answer?.status == .ok)
        #expect(answer?.body.isEmpty == true)
        #expect(answer?.header("apns-id") == Self.id1)
        #expect(answer?.header("liveactivity-verdict") == "applied")
        #expect(server.applied.map(\.token) == ["tok"])
        #expect(server.applied.map(\.priority) == [5])
    }

    @Test func anAnswerMayComeLater() {
        let server = FakeServer()
        server.holdAnswers = true
        let router = router(server)
        var answer: HTTPResponse?
        router.dispatch(HTTPRequest(method: .post, path: "/3/device/tok", headers: good, body: Array(#"{"aps":{}}"#.utf8)),
                        HTTPResponder { answer = $0 })
        #expect(answer == nil)
        #expect(server.held.count == 1)
        server.held.first?(PushResult(PushRejection(status: 500, reason: "", detail: ""), apnsId: ""))
        #expect(answer?.status == .ok)
    }

    @Test func pathsAndMethodsAreRefusedAsAPNsDoes() {
        let server = FakeServer()
        let router = router(server)
        var answer = push(router, path: "/3/device/", headers: good)
        #expect((answer?.status, reason(answer), answer?.header("apns-id")) == (.notFound, "BadPath", Self.id1))
        answer = push(router, path: "/3", headers: [:])
        #expect((answer?.status, reason(answer), answer?.header("apns-id")) == (.notFound, "BadPath", "NEW-ID"))
        answer = push(router, method: .get, headers: good)
        #expect((answer?.status, reason(answer)) == (.methodNotAllowed, "MethodNotAllowed"))
        #expect(answer?.header("allow") == "POST")
    }
}

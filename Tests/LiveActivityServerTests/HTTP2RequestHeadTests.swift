import Foundation
import Testing
import LiveActivityCore
@testable import LiveActivityServer

/// HTTP/2 header lists (as libnghttp2 hands them over) turned into the same ``HTTPRequest`` values the
/// HTTP/1.1 adapter makes. No sockets.
struct HTTP2RequestHeadTests {
    private func makeHead(_ fields: [(String, String)], limit: Int = 16384) -> HTTP2RequestHead? {
        var head = HTTP2RequestHead()
        for (name, value) in fields where !head.append(name: name, value: value, limit: limit) { return nil }
        return head
    }

    @Test func pseudoHeadersPathQueryAndFieldsBecomeARequest() throws {
        let head = try #require(makeHead([(":method", "POST"), (":scheme", "https"), (":authority", "api.push.apple.com"),
                                      (":path", "/3/device/ab%20cd?token=x%2By&live&a=b+c"), ("apns-push-type", "liveactivity"),
                                      ("accept", "a"), ("accept", "b")]))
        let request = try head.request(body: [1, 2])
        #expect(request.method == .post)
        #expect(request.path == "/3/device/ab cd")
        #expect(request.query == [.init(name: "token", value: "x+y"), .init(name: "a", value: "b c")])
        #expect(request.headers["host"] == "api.push.apple.com")
        #expect(request.headers["APNS-PUSH-TYPE"] == "liveactivity")
        #expect(request.headers["accept"] == "a, b")
        #expect(request.body == [1, 2])
        #expect(request.version == .http2)
    }

    @Test func headerListsOverTheLimitAreRefused() {
        #expect(makeHead([(":method", "POST"), ("x", String(repeating: "v", count: 100))], limit: 120) == nil)
        #expect(makeHead([(":method", "POST")], limit: 120)?.size == ":method".count + 4 + 32)
    }

    @Test func whatTheRouteTableCannotTakeIsRefusedAsAPNsDoes() throws {
        func refusal(_ fields: [(String, String)]) -> String? {
            do { _ = try makeHead(fields)!.request(body: []); return nil } catch { return "\(error.status) \(error.reason)" }
        }
        #expect(refusal([(":method", "BREW"), (":path", "/3/device/x")]) == "405 MethodNotAllowed")
        #expect(refusal([(":path", "/3/device/x")]) == "405 MethodNotAllowed")
        #expect(refusal([(":method", "POST")]) == "404 BadPath")
        #expect(refusal([(":method", "OPTIONS"), (":path", "*")]) == "404 BadPath")
        #expect(refusal([(":method", "POST"), (":path", "/3/device/x"), ("apns-id", "a"), ("apns-id", "b")]) == "400 DuplicateHeaders")
        #expect(refusal([(":method", "POST"), (":path", "/3/device/x")]) == nil)
    }
}

import Foundation
import Testing
@testable import LiveActivityCore

/// Roles from tokens, constant-time comparison and the message rate limit.
struct SecurityTests {
    @Test func openServerMakesEveryoneAController() {
        let policy = AccessPolicy()
        #expect(policy.role(presenting: nil) == .controller)
        #expect(policy.role(presenting: "anything") == .controller)
    }

    @Test func controllerTokenOnly() {
        let policy = AccessPolicy(controllerToken: "c-secret")
        #expect(policy.role(presenting: nil) == .viewer)
        #expect(policy.role(presenting: "c-secret") == .controller)
        #expect(policy.role(presenting: "c-secreT") == nil, "a wrong token is refused, not downgraded")
    }

    @Test func viewerTokenTooMeansWatchingNeedsAToken() {
        let policy = AccessPolicy(controllerToken: "c", viewerToken: "v")
        #expect(policy.role(presenting: nil) == .unauthenticated)
        #expect(policy.role(presenting: "v") == .viewer)
        #expect(policy.role(presenting: "c") == .controller)
        #expect(policy.role(presenting: "") == .unauthenticated)
    }

    @Test(arguments: [("abc", "abc", true), ("abc", "abd", false), ("abc", "ab", false), ("", "", true), ("ab", "abc", false)])
    func constantTimeEquality(a: String, b: String, equal: Bool) {
        #expect(AccessPolicy.constantTimeEquals(a, b) == equal)
    }

    @Test(arguments: [("127.0.0.1", true), ("127.1.2.3", true), ("::1", true), ("[::1]", true), ("localhost", true),
                      ("0.0.0.0", false), ("192.168.1.2", false), ("::", false), ("example.com", false)])
    func loopbackAddresses(host: String, loopback: Bool) {
        #expect(AccessPolicy.isLoopback(host) == loopback)
    }

    @Test func tokenBucketAllowsABurstThenTheRate() {
        var bucket = TokenBucket(capacity: 3, rate: 2)
        func take(_ at: Date) -> Bool { bucket.take(at: at) }
        for _ in 0..<3 { #expect(take(t0)) }
        #expect(!take(t0))
        #expect(take(t0 + 0.5))
        #expect(!take(t0 + 0.5))
        for _ in 0..<3 { #expect(take(t0 + 100)) }
        #expect(!take(t0 + 100), "refills only up to capacity")
    }

    @Test func controlMessagesAreClassified() throws {
        #expect(try command(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":5}"#).isControl)
        #expect(try command(#"{"type":"pause","activityId":"a"}"#).isControl)
        #expect(try !command(#"{"type":"list"}"#).isControl)
        #expect(try !command(#"{"type":"history"}"#).isControl)
        #expect(try !command(#"{"type":"hello","token":"x"}"#).isControl)
    }
}

import Foundation
import Testing
@testable import LiveActivityCore

/// The dismissed tokens remembered for APNs's 410 `Unregistered` (issue 29 item 1).
struct RetiredPushTokensTests {
    @Test func remembersWhenEachTokenStoppedBeingValid() {
        var tokens = RetiredPushTokens()
        tokens.retire("a", at: Date(timeIntervalSince1970: 10))
        tokens.retire("a", at: Date(timeIntervalSince1970: 20))  // the first date stays
        #expect(tokens.retiredDate(of: "a") == Date(timeIntervalSince1970: 10))
        #expect(tokens.retiredDate(of: "b") == nil)
    }

    @Test func forgetsTheOldestBeyondItsCapacity() {
        var tokens = RetiredPushTokens()
        for index in 0...RetiredPushTokens.capacity { tokens.retire("t\(index)", at: Date(timeIntervalSince1970: Double(index))) }
        #expect(tokens.count == RetiredPushTokens.capacity)
        #expect(tokens.retiredDate(of: "t0") == nil)
        #expect(tokens.retiredDate(of: "t1") != nil)
        #expect(tokens.retiredDate(of: "t\(RetiredPushTokens.capacity)") != nil)
    }
}

import Foundation
import Testing
@testable import LiveActivityClient

/// `watch`'s dead-connection rule: 2.5 silent heartbeat intervals, once the interval is known.
struct ConnectionLivenessTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func message(_ json: String, at seconds: TimeInterval) -> IncomingMessage {
        IncomingMessage(bytes: Array(json.utf8), receivedAt: start.addingTimeInterval(seconds))
    }

    @Test func silenceProvesNothingBeforeTheFirstHeartbeat() {
        var liveness = ConnectionLiveness(openedAt: start)
        liveness.heard(message(#"{"type":"snapshot","sequence":1,"activities":[]}"#, at: 0.1))
        #expect(liveness.intervalSeconds == nil)
        #expect(liveness.deadSilence(at: start.addingTimeInterval(3600)) == nil)
    }

    @Test func deadAfterTwoAndAHalfSilentIntervals() {
        var liveness = ConnectionLiveness(openedAt: start)
        liveness.heard(message(#"{"type":"heartbeat","serverTime":"2027-01-15T08:00:00.000Z","intervalSeconds":2}"#, at: 1))
        #expect(liveness.intervalSeconds == 2)
        #expect(liveness.deadAfterSeconds == 5)
        #expect(liveness.deadSilence(at: start.addingTimeInterval(5.9)) == nil)
        #expect(liveness.deadSilence(at: start.addingTimeInterval(6.5)) == 5.5)
        // Any message counts as a sign of life, not only heartbeats.
        liveness.heard(message(#"{"type":"tick","timers":[]}"#, at: 6))
        #expect(liveness.deadSilence(at: start.addingTimeInterval(10.9)) == nil)
    }

    @Test func aLaterConnectionKeepsTheIntervalItWasGiven() {
        let liveness = ConnectionLiveness(openedAt: start, intervalSeconds: 15)
        #expect(liveness.deadSilence(at: start.addingTimeInterval(37)) == nil)
        #expect(liveness.deadSilence(at: start.addingTimeInterval(38)) == 38)
    }
}

/// The interval from a connection's first message (issue 29 item 3).
struct FirstMessageIntervalTests {
    @Test(arguments: ["snapshot", "caughtUp", "hello"])
    func theFirstMessageGivesTheInterval(_ type: String) {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var liveness = ConnectionLiveness(openedAt: start)
        liveness.heard(IncomingMessage(bytes: Array(#"{"type":"\#(type)","heartbeatSeconds":4}"#.utf8), receivedAt: start))
        #expect(liveness.intervalSeconds == 4)
        #expect(liveness.deadSilence(at: start.addingTimeInterval(10)) == nil)
        #expect(liveness.deadSilence(at: start.addingTimeInterval(10.5)) == 10.5)
    }

    @Test func otherMessagesSayNoInterval() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var liveness = ConnectionLiveness(openedAt: start)
        liveness.heard(IncomingMessage(bytes: Array(#"{"type":"ack","heartbeatSeconds":4}"#.utf8), receivedAt: start))
        #expect(liveness.intervalSeconds == nil)
    }
}

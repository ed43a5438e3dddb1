import Testing
@testable import LiveActivityCore

/// The broadcast hold: a due broadcast waits for the changes the store is recording, at most 1 ms
/// (monotonic nanoseconds passed in; no clock, no sockets).
struct BroadcastHoldTests {
    @Test func aBroadcastIsWrittenAtOnceWhenTheStoreRecordsNothing() {
        var hold = BroadcastHold()
        let decision = hold.decide(storeIsRecording: false, now: 5_000)
        #expect(decision == .write)
        #expect(hold.heldSince == nil)
        let wasHeld = hold.end()
        #expect(!wasHeld)
    }

    @Test func theFirstHoldArmsTheTimerOnceAndLastsAtMostOneMillisecond() {
        var hold = BroadcastHold()
        var decisions: [BroadcastHold.Decision] = []
        decisions.append(hold.decide(storeIsRecording: true, now: 10_000))
        #expect(hold.heldSince == 10_000)
        // Rounds woken by something else while the commit goes on: still held, the timer already armed.
        decisions.append(hold.decide(storeIsRecording: true, now: 600_000))
        decisions.append(hold.decide(storeIsRecording: true, now: 1_009_999))
        // A store still recording 1 ms on (a slow disk, a new group): written without it.
        decisions.append(hold.decide(storeIsRecording: true, now: 1_010_000))
        #expect(decisions == [.hold(armTimerAfter: 1_000_000), .hold(armTimerAfter: nil), .hold(armTimerAfter: nil), .write])
    }

    @Test func theStoreReportingEndsTheHoldAndTheNextOneStartsAfresh() {
        var hold = BroadcastHold()
        let first = hold.decide(storeIsRecording: true, now: 0)
        // The report came: the round writes both groups in one pass, which ends the hold.
        let afterReport = hold.decide(storeIsRecording: false, now: 200_000)
        let ended = hold.end()
        let endedAgain = hold.end()
        let next = hold.decide(storeIsRecording: true, now: 5_000_000)
        #expect(first == .hold(armTimerAfter: 1_000_000))
        #expect(afterReport == .write)
        #expect(ended && !endedAgain)
        #expect(next == .hold(armTimerAfter: 1_000_000))
        #expect(hold.heldSince == 5_000_000)
    }
}

import Foundation
import LiveActivityCore
import Testing

/// A clock the test moves by hand: no sleeps, no sockets.
private struct FakeClock {
    var now: Date
    init(_ seconds: TimeInterval) { now = Date(timeIntervalSince1970: seconds) }
    mutating func advance(to seconds: TimeInterval) { now = Date(timeIntervalSince1970: seconds) }
    var seconds: TimeInterval { now.timeIntervalSince1970 }
}

/// The seconds of a ``ServiceTiming/Action/schedule(after:)``, else nil.
private func delay(_ action: ServiceTiming.Action) -> TimeInterval? {
    if case .schedule(let seconds) = action { return seconds }
    return nil
}

private func at(_ seconds: TimeInterval) -> Date { Date(timeIntervalSince1970: seconds) }

/// Whether two times agree to the microsecond (lws's timer resolution; `Date` keeps seconds since 2001, so
/// seconds since 1970 come back a few ulps off).
private func same(_ a: TimeInterval?, _ b: TimeInterval) -> Bool { a.map { abs($0 - b) < 1e-6 } ?? false }

@Suite struct ServiceTimingTests {
    // MARK: Ticks on whole seconds

    @Test func theFirstPassTicksAtOnceAndTheNextTickIsOnTheNextWholeSecond() throws {
        var timing = ServiceTiming(heartbeatInterval: 0)
        let clock = FakeClock(1_000.3)
        #expect(timing.timerFired(at: clock.now, nextDeadline: nil) == [.expireShares, .sendTick])
        #expect(timing.tickDue == 1_001)
        let after = try #require(delay(timing.nextTimer(at: clock.now, nextDeadline: nil)))
        #expect(abs(after - 0.7) < 1e-6)
    }

    @Test func aPassBeforeTheSecondDoesNothingAndOneUpTo5msEarlyTicks() {
        var timing = ServiceTiming(heartbeatInterval: 0)
        var clock = FakeClock(1_000.3)
        _ = timing.timerFired(at: clock.now, nextDeadline: nil)
        clock.advance(to: 1_000.9)
        #expect(timing.timerFired(at: clock.now, nextDeadline: nil) == [])
        clock.advance(to: 1_000.994)
        #expect(timing.timerFired(at: clock.now, nextDeadline: nil) == [])
        clock.advance(to: 1_000.996)
        #expect(timing.timerFired(at: clock.now, nextDeadline: nil) == [.expireShares, .sendTick])
        // The early pass stands for 1001: the next tick is 1002, not 1001 again.
        #expect(timing.tickDue == 1_002)
    }

    @Test func aLatePassTicksOnceAndTheNextTickStaysOnAWholeSecond() {
        var timing = ServiceTiming(heartbeatInterval: 0)
        var clock = FakeClock(1_000)
        _ = timing.timerFired(at: clock.now, nextDeadline: nil)
        clock.advance(to: 1_003.42)
        #expect(timing.timerFired(at: clock.now, nextDeadline: nil) == [.expireShares, .sendTick])
        #expect(timing.tickDue == 1_004)
    }

    // MARK: The tick hold

    @Test func ticksAreHeldWhileEventsFlowedInTheLastSecond() throws {
        var timing = ServiceTiming(heartbeatInterval: 0)
        var clock = FakeClock(1_000.0)
        _ = timing.timerFired(at: clock.now, nextDeadline: nil)
        clock.advance(to: 1_000.5)
        timing.eventsBroadcast(at: clock.now)
        clock.advance(to: 1_001.0)
        #expect(timing.timerFired(at: clock.now, nextDeadline: nil) == [.expireShares, .sendTick])
        #expect(timing.ticksHeld(at: clock.now) == nil)
        #expect(same(timing.ticksReleaseDue, 1_001.1))
        // The timer comes back for the release, before the next whole second.
        let after = try #require(delay(timing.nextTimer(at: clock.now, nextDeadline: nil)))
        #expect(abs(after - ServiceTiming.tickHold) < 1e-6)
    }

    @Test func heldTicksAreReleasedAfter100ms() {
        var timing = ServiceTiming(heartbeatInterval: 0)
        var clock = FakeClock(1_001.0)
        timing.eventsBroadcast(at: at(1_000.9))
        _ = timing.timerFired(at: clock.now, nextDeadline: nil)
        #expect(timing.ticksHeld(at: clock.now) == nil)
        clock.advance(to: 1_001.05)
        #expect(timing.timerFired(at: clock.now, nextDeadline: nil) == [])
        clock.advance(to: 1_001.096)  // within the 5 ms slack
        #expect(timing.timerFired(at: clock.now, nextDeadline: nil) == [.releaseTicks])
        #expect(timing.ticksReleaseDue == nil)
        clock.advance(to: 1_001.2)
        #expect(timing.timerFired(at: clock.now, nextDeadline: nil) == [])
    }

    @Test func ticksGoOutAtOnceWhenNoEventWentOutInTheLastSecond() {
        var timing = ServiceTiming(heartbeatInterval: 0)
        // Never an event.
        #expect(timing.ticksHeld(at: at(1_000)) == .releaseTicks)
        // An event exactly one second before: no longer flowing.
        timing.eventsBroadcast(at: at(1_000))
        #expect(timing.ticksHeld(at: at(1_001)) == .releaseTicks)
        #expect(timing.ticksReleaseDue == nil)
        // 999 ms before: flowing.
        #expect(timing.ticksHeld(at: at(1_000.999)) == nil)
    }

    // MARK: Heartbeats

    @Test func theHeartbeatIsCountedFromTheFirstPass() {
        var timing = ServiceTiming(heartbeatInterval: 15)
        var clock = FakeClock(1_000.3)
        #expect(timing.timerFired(at: clock.now, nextDeadline: nil) == [.expireShares, .sendTick])
        #expect(timing.heartbeatDue == 1_015)
        for second in 1_001..<1_015 {
            clock.advance(to: TimeInterval(second))
            #expect(!timing.timerFired(at: clock.now, nextDeadline: nil).contains(.sendHeartbeat))
        }
        clock.advance(to: 1_015)
        #expect(timing.timerFired(at: clock.now, nextDeadline: nil) == [.sendHeartbeat, .expireShares, .sendTick])
        #expect(timing.heartbeatDue == 1_030)
    }

    @Test func aLatePassSendsTheHeartbeatItCoversAndTheNextStaysOnSchedule() {
        var timing = ServiceTiming(heartbeatInterval: 15)
        _ = timing.timerFired(at: at(1_000), nextDeadline: nil)
        // 2.4 s late: sent now, the next one still at 1030.
        #expect(timing.timerFired(at: at(1_017.4), nextDeadline: nil) == [.sendHeartbeat, .expireShares, .sendTick])
        #expect(timing.heartbeatDue == 1_030)
        // Later than a whole interval: one heartbeat (not two), the next on the next whole second.
        #expect(timing.timerFired(at: at(1_047.2), nextDeadline: nil) == [.sendHeartbeat, .expireShares, .sendTick])
        #expect(timing.heartbeatDue == 1_048)
        #expect(timing.timerFired(at: at(1_048), nextDeadline: nil) == [.sendHeartbeat, .expireShares, .sendTick])
        #expect(timing.heartbeatDue == 1_063)
    }

    @Test func noHeartbeatWhenTheIntervalIsZero() {
        var timing = ServiceTiming(heartbeatInterval: 0)
        for second in 1_000...1_100 {
            #expect(!timing.timerFired(at: at(TimeInterval(second)), nextDeadline: nil).contains(.sendHeartbeat))
        }
        #expect(timing.heartbeatDue == nil)
    }

    // MARK: Deadlines and the next timer

    @Test func aDueDeadlineIsAppliedFirst() {
        var timing = ServiceTiming(heartbeatInterval: 0)
        _ = timing.timerFired(at: at(1_000), nextDeadline: nil)
        #expect(timing.timerFired(at: at(1_000.4), nextDeadline: at(1_000.4)) == [.applyDeadlines])
        #expect(timing.timerFired(at: at(1_000.5), nextDeadline: at(1_000.6)) == [])
        #expect(timing.timerFired(at: at(1_001), nextDeadline: at(999)) == [.applyDeadlines, .expireShares, .sendTick])
    }

    @Test func everythingDueInOnePassComesInOrder() {
        var timing = ServiceTiming(heartbeatInterval: 1)
        _ = timing.timerFired(at: at(1_000), nextDeadline: nil)
        timing.eventsBroadcast(at: at(1_000.95))
        #expect(timing.ticksHeld(at: at(1_000.95)) == nil)  // release due 1001.05
        #expect(timing.timerFired(at: at(1_001.2), nextDeadline: at(1_001.1))
                == [.applyDeadlines, .releaseTicks, .sendHeartbeat, .expireShares, .sendTick])
    }

    @Test func theNextTimerIsTheEarliestOfTickReleaseAndDeadline() throws {
        var timing = ServiceTiming(heartbeatInterval: 0)
        let now = at(1_000.3)
        _ = timing.timerFired(at: now, nextDeadline: nil)  // tick due 1001
        func after(_ deadline: Date?) throws -> TimeInterval { try #require(delay(timing.nextTimer(at: now, nextDeadline: deadline))) }
        #expect(abs(try after(nil) - 0.7) < 1e-6)
        #expect(abs(try after(at(1_000.5)) - 0.2) < 1e-6)
        #expect(abs(try after(at(1_005)) - 0.7) < 1e-6)
        timing.eventsBroadcast(at: now)
        #expect(timing.ticksHeld(at: now) == nil)  // release due 1000.4
        #expect(abs(try after(at(1_000.5)) - 0.1) < 1e-6)
        #expect(abs(try after(at(1_000.35)) - 0.05) < 1e-6)
        // A deadline already past: as soon as possible.
        #expect(try after(at(999)) < 0)
    }
}

@Suite struct MessageRateLimitTests {
    private func limit(burst: Double = 2, rate: Double = 1, closeAfter: Int = 3) -> MessageRateLimit {
        MessageRateLimit(bucket: TokenBucket(capacity: burst, rate: rate), closeAfter: closeAfter)
    }

    @Test func aBurstIsAdmittedThenMessagesAreRefused() {
        var limit = limit(closeAfter: 100)
        let now = at(1_000)
        #expect(limit.admit(at: now) == .admit)
        #expect(limit.admit(at: now) == .admit)
        #expect(limit.admit(at: now) == .refuse)
        #expect(limit.refusals == 1)
        // Refilled at the rate: one token a second.
        #expect(limit.admit(at: at(1_001)) == .admit)
        #expect(limit.admit(at: at(1_001)) == .refuse)
    }

    @Test func theNthRefusalInTheWindowClosesTheClient() {
        var limit = limit(burst: 1, rate: 0.001, closeAfter: 3)
        #expect(limit.admit(at: at(1_000)) == .admit)
        #expect(limit.admit(at: at(1_000)) == .refuse)
        #expect(limit.admit(at: at(1_001)) == .refuse)
        #expect(limit.admit(at: at(1_002)) == .closeFlooding)
    }

    @Test func anAdmittedMessageDoesNotForgiveRefusals() {
        // The bucket lets one through now and then: refusals are counted over the window, not in a row.
        var limit = limit(burst: 1, rate: 1, closeAfter: 3)
        #expect(limit.admit(at: at(1_000)) == .admit)
        #expect(limit.admit(at: at(1_000)) == .refuse)
        #expect(limit.admit(at: at(1_001)) == .admit)
        #expect(limit.admit(at: at(1_001)) == .refuse)
        #expect(limit.admit(at: at(1_002)) == .admit)
        #expect(limit.admit(at: at(1_002)) == .closeFlooding)
    }

    @Test func theWindowResetsTenSecondsAfterItsFirstRefusal() {
        var limit = limit(burst: 1, rate: 0.001, closeAfter: 3)
        _ = limit.admit(at: at(1_000))
        #expect(limit.admit(at: at(1_000)) == .refuse)
        #expect(limit.admit(at: at(1_005)) == .refuse)
        #expect(limit.windowStart == at(1_000))
        // More than 10 s after the window began: a new window, counted from one.
        #expect(limit.admit(at: at(1_010.5)) == .refuse)
        #expect(limit.refusals == 1)
        #expect(limit.windowStart == at(1_010.5))
        #expect(limit.admit(at: at(1_011)) == .refuse)
        #expect(limit.admit(at: at(1_012)) == .closeFlooding)
    }

    @Test func exactlyTenSecondsIsStillTheSameWindow() {
        var limit = limit(burst: 1, rate: 0.001, closeAfter: 3)
        _ = limit.admit(at: at(1_000))
        #expect(limit.admit(at: at(1_000)) == .refuse)
        #expect(limit.admit(at: at(1_001)) == .refuse)
        #expect(MessageRateLimit.window == 10)
        #expect(limit.admit(at: at(1_010)) == .closeFlooding)
    }
}

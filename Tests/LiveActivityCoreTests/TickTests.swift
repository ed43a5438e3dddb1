import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// Countdown arithmetic and the once-per-second tick.
struct TickTests {
    @Test func remainingSecondsRoundUpAndNeverGoNegative() {
        let timer = TimerRange(start: t0, end: t0 + 70)
        #expect(timer.remainingSeconds(at: t0) == 70)
        #expect(timer.remainingSeconds(at: t0 + 0.2) == 70)
        #expect(timer.remainingSeconds(at: t0 + 1) == 69)
        #expect(timer.remainingSeconds(at: t0 + 69.5) == 1)
        #expect(timer.remainingSeconds(at: t0 + 70) == 0)
        #expect(timer.remainingSeconds(at: t0 + 500) == 0)
    }

    @Test func tickListsOnlyRunningCountdownsInOrder() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":5}"#, at: t0, ids: &ids)
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"jogging"},"durationSeconds":70,"relevanceScore":9}"#, at: t0, ids: &ids)
        let tick = try #require(center.tick(at: t0 + 3))
        #expect(tick.timers == [Tick.Timer(activityId: "a2", remainingSeconds: 67), Tick.Timer(activityId: "a1", remainingSeconds: 2)])
        _ = center.advance(to: t0 + 5)
        #expect(center.tick(at: t0 + 6)?.timers.map(\.activityId) == ["a2"])
        _ = try center.apply(#"{"type":"end","activityId":"a2"}"#, at: t0 + 7, ids: &ids)
        #expect(center.tick(at: t0 + 8) == nil)
    }

    @Test func timerFinishedFiresOnceAndNextDeadlineFollowsIt() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"content":{"state":{"workoutTimer":{"start":"2026-11-29T17:00:00Z","end":"2026-11-29T17:00:30Z"}},"staleDate":"2026-11-29T17:01:00Z"}}"#, at: t0, ids: &ids)
        #expect(center.nextDeadline == t0 + 30)
        #expect(center.advance(to: t0 + 30).map(\.kind) == [.timerFinished])
        #expect(center.advance(to: t0 + 31).isEmpty)
        #expect(center.nextDeadline == t0 + 60)
        #expect(center.advance(to: t0 + 60).map(\.kind) == [.stale])
    }
}

import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// Pause, resume, extend and scheduled starts, with an injected clock.
struct TimerControlTests {
    private func started(_ seconds: Int = 70) throws -> (ActivityCenter, IDs) {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"jogging"},"durationSeconds":\#(seconds)}"#, at: t0, ids: &ids)
        return (center, ids)
    }

    @Test func pauseAtFortyWaitThirtyResumeLeavesForty() throws {
        var (center, ids) = try started()
        let pause = try center.apply(#"{"type":"pause","activityId":"a1"}"#, at: t0 + 30, ids: &ids)
        #expect(pause.events.map(\.kind) == [.paused])
        #expect(center.activities["a1"]?.timer?.pausedAt == t0 + 30)
        #expect(center.activities["a1"]?.content.state == .object([
            "workoutTimer": .object(["start": .string("2026-11-29T17:00:00.000Z"), "end": .string("2026-11-29T17:01:10.000Z")]),
            "pausedAt": .string("2026-11-29T17:00:30.000Z"),
        ]))
        // Frozen: ticks report 40 s and paused, no timerFinished past the old end, stale date still applies.
        #expect(center.tick(at: t0 + 55)?.timers.first == Tick.Timer(activityId: "a1", remainingSeconds: 40, paused: true))
        #expect(center.advance(to: t0 + 60).isEmpty)
        #expect(center.advance(to: t0 + 70).map(\.kind) == [.stale])

        let resume = try center.apply(#"{"type":"resume","activityId":"a1"}"#, at: t0 + 60, ids: &ids)
        #expect(resume.events.map(\.kind) == [.resumed])
        let timer = try #require(center.activities["a1"]?.timer)
        #expect(timer.pausedAt == nil)
        #expect(timer.end == t0 + 100)
        #expect(timer.remainingSeconds(at: t0 + 60) == 40)
        #expect(center.activities["a1"]?.content.staleDate == t0 + 100, "a stale date tied to the end moves with it")
        #expect(center.activities["a1"]?.activityState == .active)
    }

    /// A range that has not begun shows its whole length, so the time paused before its start counts for
    /// nothing: resumed before it, nothing moves; resumed 20 s after it, the end moves 20 s, and 15:00 still
    /// shows. It moved by the whole pause, and 15:00 became 15:05. From the new-user trial.
    @Test func pausedBeforeTheRangeBeginsNoTimeIsGained() throws {
        for (resumeAt, end) in [(t0 + 60, t0 + 1200), (t0 + 320, t0 + 1220)] {
            var center = ActivityCenter(kinds: .builtIn)
            var ids = IDs()
            let window = #"{"start":"\#(ISODate.format(t0 + 300))","end":"\#(ISODate.format(t0 + 1200))"}"#
            _ = try center.apply(#"{"type":"start","attributes":{"workout":"jogging"},"content":{"state":{"workoutTimer":\#(window)}}}"#, at: t0, ids: &ids)
            _ = try center.apply(#"{"type":"pause","activityId":"a1"}"#, at: t0 + 10, ids: &ids)
            _ = try center.apply(#"{"type":"resume","activityId":"a1"}"#, at: resumeAt, ids: &ids)
            let activity = try #require(center.activities["a1"])
            #expect(activity.timer?.start == t0 + 300 && activity.timer?.end == end, "resumed at +\(resumeAt.timeIntervalSince(t0))")
            let shown = try #require(activity.timer).end.timeIntervalSince(max(resumeAt, t0 + 300))  // as the renderings count
            #expect(shown == 900)
        }
    }

    /// A range that has not begun ticks its whole length, as the renderings show it (the tick said 899 where
    /// the Lock Screen showed 10:00), and counts down from its start. From the new-user trial.
    @Test func aRangeThatHasNotBegunTicksItsWholeLength() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        let window = #"{"start":"\#(ISODate.format(t0 + 300))","end":"\#(ISODate.format(t0 + 900))"}"#
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"jogging"},"content":{"state":{"workoutTimer":\#(window)}}}"#, at: t0, ids: &ids)
        #expect(center.tick(at: t0 + 1)?.timers.first?.remainingSeconds == 600)
        #expect(center.tick(at: t0 + 360)?.timers.first?.remainingSeconds == 540)
        let timer = try #require(center.activities["a1"]?.timer)
        #expect(TimerRange.remainingSeconds(until: timer.end, pausedAt: nil, at: t0 + 1) == 899, "knowing only the end")
    }

    @Test func pausingTwiceOrResumingARunningTimerIsAnError() throws {
        var (center, ids) = try started()
        #expect(throws: ProtocolError.self) { _ = try center.apply(#"{"type":"resume","activityId":"a1"}"#, at: t0 + 1, ids: &ids) }
        _ = try center.apply(#"{"type":"pause","activityId":"a1"}"#, at: t0 + 1, ids: &ids)
        do {
            _ = try center.apply(#"{"type":"pause","activityId":"a1"}"#, at: t0 + 2, ids: &ids)
            Issue.record("paused twice")
        } catch let error as ProtocolError {
            #expect(error.code == .invalidState)
        }
        #expect(center.sequence == 2)
    }

    @Test func extendMovesTheEndAndNeverBelowNow() throws {
        var (center, ids) = try started()
        _ = try center.apply(#"{"type":"extend","activityId":"a1","seconds":60}"#, at: t0 + 10, ids: &ids)
        #expect(center.activities["a1"]?.timer?.end == t0 + 130)
        _ = try center.apply(#"{"type":"extend","activityId":"a1","seconds":-600}"#, at: t0 + 20, ids: &ids)
        #expect(center.activities["a1"]?.timer?.end == t0 + 20)
        // Reaching zero by shortening fires timerFinished at once.
        #expect(center.activities["a1"]?.timerFinished == true)
    }

    /// An extension is held to what `durationSeconds` allows: at most 8 hours left to count down (the new-user
    /// trial's `extend` by 28,800 s on a 1-hour countdown was acked and left 9 hours).
    @Test func extendLeavesAtMostEightHoursToCountDown() throws {
        var (center, ids) = try started(3600)
        do {
            _ = try center.apply(#"{"type":"extend","activityId":"a1","seconds":28800}"#, at: t0, ids: &ids)
            Issue.record("extended past 8 hours")
        } catch let error as ProtocolError {
            #expect(error.code == .invalidField && error.field == "seconds")
            #expect(error.message.contains("32400") && error.message.contains("at most 25200 more"), "\(error.message)")
        }
        #expect(center.activities["a1"]?.timer?.end == t0 + 3600 && center.sequence == 1, "nothing changed")
        // Up to the bound is fine, counted from now: an hour later, another hour fits.
        _ = try center.apply(#"{"type":"extend","activityId":"a1","seconds":25200}"#, at: t0, ids: &ids)
        #expect(center.activities["a1"]?.timer?.end == t0 + 28800)
        _ = try center.apply(#"{"type":"extend","activityId":"a1","seconds":3600}"#, at: t0 + 3600, ids: &ids)
        #expect(center.activities["a1"]?.timer?.end == t0 + 32400)
        // While paused, from the pause instant.
        _ = try center.apply(#"{"type":"pause","activityId":"a1"}"#, at: t0 + 7200, ids: &ids)
        #expect(throws: ProtocolError.self) { _ = try center.apply(#"{"type":"extend","activityId":"a1","seconds":7201}"#, at: t0 + 9000, ids: &ids) }
        _ = try center.apply(#"{"type":"extend","activityId":"a1","seconds":3600}"#, at: t0 + 9000, ids: &ids)
        #expect(center.activities["a1"]?.timer?.end == t0 + 36000)
        // A countdown a content state set further out can always be shortened.
        _ = try center.apply(#"{"type":"resume","activityId":"a1"}"#, at: t0 + 9000, ids: &ids)
        _ = try center.apply(#"{"type":"update","activityId":"a1","content":{"state":{"workoutTimer":{"start":"2026-11-29T17:00:00.000Z","end":"2026-11-30T05:00:00.000Z"}},"staleDate":null,"relevanceScore":0}}"#, at: t0 + 9000, ids: &ids)
        _ = try center.apply(#"{"type":"extend","activityId":"a1","seconds":-60}"#, at: t0 + 9000, ids: &ids)
        #expect(center.activities["a1"]?.timer?.end == t0 + 43140)
    }

    @Test func extendWhilePausedKeepsItPaused() throws {
        var (center, ids) = try started()
        _ = try center.apply(#"{"type":"pause","activityId":"a1"}"#, at: t0 + 30, ids: &ids)
        _ = try center.apply(#"{"type":"extend","activityId":"a1","seconds":60}"#, at: t0 + 40, ids: &ids)
        #expect(center.tick(at: t0 + 50)?.timers.first?.remainingSeconds == 100)
        #expect(center.activities["a1"]?.timer?.isPaused == true)
        _ = try center.apply(#"{"type":"resume","activityId":"a1"}"#, at: t0 + 50, ids: &ids)
        #expect(center.activities["a1"]?.timer?.remainingSeconds(at: t0 + 50) == 100)
    }

    @Test func pauseThenEnd() throws {
        var (center, ids) = try started()
        _ = try center.apply(#"{"type":"pause","activityId":"a1"}"#, at: t0 + 5, ids: &ids)
        let end = try center.apply(#"{"type":"end","activityId":"a1"}"#, at: t0 + 6, ids: &ids)
        #expect(end.events.map(\.kind) == [.ended])
        #expect(center.tick(at: t0 + 7) == nil)
        #expect(throws: ProtocolError.self) { _ = try center.apply(#"{"type":"resume","activityId":"a1"}"#, at: t0 + 8, ids: &ids) }
    }

    @Test func scheduledStartIsPendingThenStarts() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        let outcome = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60,"startDate":"2026-11-29T17:05:00Z"}"#, at: t0, ids: &ids)
        #expect(outcome.events.map(\.kind) == [.scheduled])
        let pending = try #require(center.activities["a1"])
        #expect(pending.activityState == .pending)
        #expect(pending.timer == TimerRange(start: t0 + 300, end: t0 + 360), "the timer begins at the start date")
        #expect(center.tick(at: t0 + 100)?.timers.first?.startsInSeconds == 200)
        #expect(center.nextDeadline == t0 + 300)
        #expect(throws: ProtocolError.self) { _ = try center.apply(#"{"type":"pause","activityId":"a1"}"#, at: t0 + 1, ids: &ids) }
        _ = try center.apply(#"{"type":"update","activityId":"a1","durationSeconds":120}"#, at: t0 + 1, ids: &ids)
        #expect(center.activities["a1"]?.activityState == .pending)
        #expect(center.activities["a1"]?.timer == TimerRange(start: t0 + 300, end: t0 + 420))
        #expect(center.advance(to: t0 + 310).map(\.kind) == [.started])
        #expect(center.activities["a1"]?.activityState == .active)
        #expect(center.tick(at: t0 + 310)?.timers.first == Tick.Timer(activityId: "a1", remainingSeconds: 110))
    }

    @Test func aStartMissedWhileTheServerWasDownHappensAtTheFirstAdvance() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60,"startDate":"2026-11-29T17:05:00Z"}"#, at: t0, ids: &ids)
        let restored = ActivityCenter(activities: Array(center.activities.values), sequence: center.sequence, kinds: .builtIn)
        var later = restored
        #expect(later.advance(to: t0 + 1000).map(\.kind) == [.started, .timerFinished, .stale])
    }

    @Test func pendingEndedIsDismissedAndPastStartDateStartsAtOnce() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60,"startDate":"2026-11-29T18:00:00Z"}"#, at: t0, ids: &ids)
        let end = try center.apply(#"{"type":"end","activityId":"a1","dismissalPolicy":"default"}"#, at: t0 + 1, ids: &ids)
        #expect(end.events.map(\.kind) == [.ended, .dismissed])
        let past = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60,"startDate":"2026-11-29T16:00:00Z"}"#, at: t0, ids: &ids)
        #expect(past.events.map(\.kind) == [.started])
        #expect(center.activities["a2"]?.startDate == t0)
    }
}

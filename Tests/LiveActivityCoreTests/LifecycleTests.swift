import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// The ActivityKit lifecycle, driven by an injected clock (no sleeping).
struct LifecycleTests {
    @Test func startCreatesAnActiveWorkoutWithTimerAndStaleDate() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        let outcome = try center.apply(#"{"type":"start","attributes":{"workout":"jogging"},"durationSeconds":70}"#, at: t0, ids: &ids)
        #expect(outcome.activityId == "a1")
        #expect(outcome.events.map(\.kind) == [.started])
        #expect(outcome.events[0].sequence == 1)
        let activity = try #require(center.activities["a1"])
        #expect(activity.activityState == .active)
        #expect(activity.attributes == .object(["workout": .string("jogging")]))
        #expect(activity.timer == TimerRange(start: t0, end: t0 + 70))
        #expect(activity.content.staleDate == t0 + 70)
    }

    @Test(arguments: [(0, "jogging"), (1, "aerobics"), (2, "yoga")])
    func integerRawValuesAreAccepted(raw: Int, name: String) throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":\#(raw)},"durationSeconds":5}"#, at: t0, ids: &ids)
        #expect(center.activities["a1"]?.attributes == .object(["workout": .string(name)]))
    }

    @Test func staleDateMakesTheActivityStaleOnceAndAnUpdateRevivesIt() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":10}"#, at: t0, ids: &ids)
        #expect(center.advance(to: t0 + 9.9).isEmpty)
        let events = center.advance(to: t0 + 10)
        #expect(events.map(\.kind) == [.timerFinished, .stale])
        #expect(events.map(\.sequence) == [2, 3])
        #expect(center.activities["a1"]?.activityState == .stale)
        #expect(center.advance(to: t0 + 20).isEmpty)

        let update = try center.apply(#"{"type":"update","activityId":"a1","durationSeconds":30}"#, at: t0 + 20, ids: &ids)
        #expect(update.events.map(\.kind) == [.updated])
        #expect(center.activities["a1"]?.activityState == .active)
        #expect(center.activities["a1"]?.timerFinished == false)
        #expect(center.nextDeadline == t0 + 50)
    }

    @Test func updateCarriesTheAlert() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":10}"#, at: t0, ids: &ids)
        let outcome = try center.apply(#"{"type":"update","activityId":"a1","durationSeconds":5,"alert":{"title":"Halfway","body":"Keep going"}}"#, at: t0 + 1, ids: &ids)
        #expect(outcome.events.first?.alert == AlertConfiguration(title: "Halfway", body: "Keep going"))
    }

    @Test func endImmediateDismissesAtOnce() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, ids: &ids)
        let outcome = try center.apply(#"{"type":"end","activityId":"a1","dismissalPolicy":"immediate"}"#, at: t0 + 5, ids: &ids)
        #expect(outcome.events.map(\.kind) == [.ended, .dismissed])
        #expect(outcome.events.map(\.sequence) == [2, 3])
        #expect(outcome.events[1].activity.activityState == .dismissed)
        #expect(center.activities.isEmpty)
    }

    @Test func endDefaultStaysVisibleForFourHours() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, ids: &ids)
        let outcome = try center.apply(#"{"type":"stop","activityId":"a1"}"#, at: t0 + 5, ids: &ids)
        #expect(outcome.events.map(\.kind) == [.ended])
        let ended = try #require(center.activities["a1"])
        #expect(ended.activityState == .ended)
        #expect(ended.endDate == t0 + 5)
        #expect(ended.dismissalDate == t0 + 5 + 4 * 3600)
        // An ended activity's countdown neither ticks nor finishes.
        #expect(center.tick(at: t0 + 10) == nil)
        #expect(center.advance(to: t0 + 4 * 3600).isEmpty)
        #expect(center.advance(to: t0 + 5 + 4 * 3600).map(\.kind) == [.dismissed])
        #expect(center.activities.isEmpty)
    }

    @Test func endAfterIsCappedAtFourHoursAndAPastDateDismissesAtOnce() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, ids: &ids)
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"jogging"},"durationSeconds":60}"#, at: t0, ids: &ids)
        _ = try center.apply(#"{"type":"end","activityId":"a1","dismissalPolicy":{"after":"2026-11-30T17:00:00Z"}}"#, at: t0, ids: &ids)
        #expect(center.activities["a1"]?.dismissalDate == t0 + 4 * 3600)
        let past = try center.apply(#"{"type":"end","activityId":"a2","dismissalPolicy":{"after":"2026-11-29T16:00:00Z"}}"#, at: t0, ids: &ids)
        #expect(past.events.map(\.kind) == [.ended, .dismissed])
        let soon = try center.apply(#"{"type":"end","activityId":"a1","dismissalPolicy":{"after":"2026-11-29T17:30:00+00:00"}}"#, at: t0 + 1, ids: &ids)
        // Re-ending moves the dismissal date, and says so with `ended` again (same end date): the store and the
        // watchers learn the new date (it was applied but never stored, so a restart put the old one back).
        #expect(soon.events.map(\.kind) == [.ended], "re-ending moves the dismissal date")
        #expect(soon.events.first?.activity.dismissalDate == t0 + 1800)
        #expect(soon.events.first?.activity.endDate == t0)
        #expect(center.activities["a1"]?.dismissalDate == t0 + 1800)
        let same = try center.apply(#"{"type":"end","activityId":"a1","dismissalPolicy":{"after":"2026-11-29T17:30:00+00:00"}}"#, at: t0 + 2, ids: &ids)
        #expect(same.events.isEmpty, "the same date again changes nothing")
    }

    @Test func eightHourCapEndsTheActivityWithDefaultDismissal() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"content":{"state":{"workoutTimer":{"start":"2026-11-29T17:00:00Z","end":"2026-11-29T17:00:00Z"}},"staleDate":null}}"#, at: t0, ids: &ids)
        _ = center.advance(to: t0 + 1)
        let events = center.advance(to: t0 + 8 * 3600)
        #expect(events.map(\.kind) == [.ended])
        #expect(center.activities["a1"]?.dismissalDate == t0 + 12 * 3600)
    }

    @Test func updatesToEndedActivitiesAreRefusedAndChangeNothing() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, ids: &ids)
        _ = try center.apply(#"{"type":"end","activityId":"a1"}"#, at: t0 + 1, ids: &ids)
        let before = center.sequence
        #expect(throws: ProtocolError.self) {
            _ = try center.apply(#"{"type":"update","activityId":"a1","durationSeconds":5}"#, at: t0 + 2, ids: &ids)
        }
        do {
            _ = try center.apply(#"{"type":"update","activityId":"a1","durationSeconds":5}"#, at: t0 + 2, ids: &ids)
        } catch let error as ProtocolError {
            #expect(error.code == .activityEnded)
        }
        #expect(center.sequence == before)
    }

    @Test func endAllEndsEveryActivityInPresentationOrder() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60,"relevanceScore":1}"#, at: t0, ids: &ids)
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"jogging"},"durationSeconds":60,"relevanceScore":5}"#, at: t0, ids: &ids)
        let outcome = try center.apply(#"{"type":"end","all":true,"dismissalPolicy":"immediate"}"#, at: t0 + 1, ids: &ids)
        #expect(outcome.activityIds == ["a2", "a1"])
        #expect(outcome.events.map(\.kind) == [.ended, .dismissed, .ended, .dismissed])
        #expect(outcome.events.map(\.sequence) == [3, 4, 5, 6])
        #expect(center.activities.isEmpty)
    }

    @Test func orderingIsByRelevanceThenNewest() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60,"relevanceScore":10}"#, at: t0, ids: &ids)
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"jogging"},"durationSeconds":60}"#, at: t0 + 1, ids: &ids)
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"aerobics"},"durationSeconds":60}"#, at: t0 + 2, ids: &ids)
        #expect(center.ordered.map(\.id) == ["a1", "a3", "a2"])
    }

    @Test func runningCapRefusesOneMore() throws {
        var center = ActivityCenter(maximumLive: 2, kinds: .builtIn)
        var ids = IDs()
        for _ in 0..<2 {
            _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, ids: &ids)
        }
        #expect(throws: ProtocolError.self) {
            _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":60}"#, at: t0, ids: &ids)
        }
        #expect(center.activities.count == 2)
    }
}

import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityClient

/// `list` and `watch` show the time left for any kind with a `{"start","end"}` or `Date` countdown, not only workouts.
struct ActivitySummaryTests {
    private func summary(_ json: String) throws -> ActivitySummary {
        try #require(ActivitySummary(try JSONValue.parse(Array(json.utf8))))
    }

    @Test func aWorkoutsCountdownIsItsWorkoutTimer() throws {
        let activity = try summary(#"{"id":"a","attributesType":"workout","attributes":{"workout":"yoga"},"activityState":"active","content":{"state":{"workoutTimer":{"start":"2026-12-01T10:00:00Z","end":"2026-12-01T10:10:00Z"}},"relevanceScore":0}}"#)
        #expect(activity.title == "yoga")
        #expect(activity.remainingSeconds(at: ISODate.parse("2026-12-01T10:09:00Z")!) == 60)
    }

    @Test func aDeclaredKindsRangeIsItsCountdown() throws {
        let activity = try summary(#"{"id":"d","attributesType":"delivery","attributes":{},"activityState":"active","content":{"state":{"status":"cooking","eta":{"start":"2026-12-01T10:00:00Z","end":"2026-12-01T10:30:00Z"},"driver":null},"relevanceScore":0}}"#)
        #expect(activity.title == "delivery")
        #expect(activity.remainingSeconds(at: ISODate.parse("2026-12-01T10:29:30Z")!) == 30)
        // Before the range begins, its whole length, as the renderings and the ticks show it (it read 40:00).
        #expect(activity.remainingSeconds(at: ISODate.parse("2026-12-01T09:50:00Z")!) == 1_800)
    }

    @Test func aDeclaredKindsPlainDateIsItsCountdown() throws {
        // examples/kinds/delivery: `countdown` is `estimatedDeliveryTime`, a `Date` (the server's ticks count it).
        let activity = try summary(#"{"id":"d","attributesType":"delivery","attributes":{},"activityState":"active","content":{"state":{"status":"cooking","estimatedDeliveryTime":"2026-12-01T10:30:00Z","courierName":"Bo"},"relevanceScore":0}}"#)
        #expect(activity.remainingSeconds(at: ISODate.parse("2026-12-01T10:28:00Z")!) == 120)
    }

    @Test func aDeclaredKindWithSeveralDatesCountsFromTheTick() throws {
        let activity = try summary(#"{"id":"d","attributesType":"delivery","attributes":{},"activityState":"active","content":{"state":{"placed":"2026-12-01T10:00:00Z","eta":"2026-12-01T10:30:00Z"},"relevanceScore":0}}"#)
        #expect(activity.remainingSeconds(at: ISODate.parse("2026-12-01T10:28:00Z")!) == nil)
        let ticked = activity.counting(to: ISODate.parse("2026-12-01T10:30:00Z")!, tickedAt: ISODate.parse("2026-12-01T10:27:00Z")!)
        #expect(ticked.remainingSeconds(at: ISODate.parse("2026-12-01T10:28:00Z")!) == 120)
    }

    @Test func aPausedWorkoutsCountdownStaysFrozenAtItsPause() throws {
        // The server adds `pausedAt` to the state on `pause` (its ticks then say `paused` and hold the count).
        let activity = try summary(#"{"id":"p","attributesType":"workout","attributes":{"workout":"yoga"},"activityState":"active","content":{"state":{"workoutTimer":{"start":"2026-12-01T10:00:00Z","end":"2026-12-01T10:30:00Z"},"pausedAt":"2026-12-01T10:00:00Z"},"relevanceScore":0}}"#)
        #expect(activity.remainingSeconds(at: ISODate.parse("2026-12-01T10:00:00Z")!) == 1_800)
        #expect(activity.remainingSeconds(at: ISODate.parse("2026-12-01T10:03:00Z")!) == 1_800)
        #expect(activity.remainingSeconds(at: ISODate.parse("2026-12-01T11:00:00Z")!) == 1_800)
    }

    @Test func aPausedCountdownTakenFromTheTicksStaysFrozenToo() throws {
        let activity = try summary(#"{"id":"d","attributesType":"delivery","attributes":{},"activityState":"active","content":{"state":{"placed":"2026-12-01T10:00:00Z","eta":"2026-12-01T10:30:00Z","pausedAt":"2026-12-01T10:05:00Z"},"relevanceScore":0}}"#)
        // A tick at 10:20 said 25 minutes were left (frozen since 10:05): its end is 10:45, from 10:20.
        let ticked = activity.counting(to: ISODate.parse("2026-12-01T10:45:00Z")!, tickedAt: ISODate.parse("2026-12-01T10:20:00Z")!)
        #expect(ticked.remainingSeconds(at: ISODate.parse("2026-12-01T10:20:00Z")!) == 1_500)
        #expect(ticked.remainingSeconds(at: ISODate.parse("2026-12-01T10:40:00Z")!) == 1_500)
    }

    @Test func aStateWithoutARangeHasNoCountdown() throws {
        let activity = try summary(#"{"id":"e","attributesType":"emoji","attributes":{"name":"Tea"},"activityState":"active","content":{"state":{"emoji":"🍵"},"relevanceScore":0}}"#)
        #expect(activity.remainingSeconds(at: Date()) == nil)
    }
}

/// A marked activity (`kindProblem`) keeps its reason for `list` and `watch` (issue 29 item 6).
struct MarkedActivitySummaryTests {
    @Test func aMarkedActivityKeepsItsReason() throws {
        let activity = try #require(ActivitySummary(try JSONValue.parse(Array(#"{"id":"m","attributesType":"interval","activityState":"active","kindProblem":"content.state.note: missing","content":{"state":{},"relevanceScore":0}}"#.utf8))))
        #expect(activity.kindProblem == "content.state.note: missing")
    }
}

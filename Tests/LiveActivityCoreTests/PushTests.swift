import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// APNs Live Activity payloads, decoded and applied as iOS would, compared with the native messages.
struct PushTests {
    let startToken = String(repeating: "ab", count: 32)
    /// `t0` as Swift's default `Date` coding writes it: seconds since 2001-01-01.
    var t0Reference: Double { t0.timeIntervalSinceReferenceDate }
    var t0Unix: Double { t0.timeIntervalSince1970 }

    private func push(_ json: String) throws -> APNsPush {
        try APNsPush.parse(try JSONValue.parse(Array(json.utf8)))
    }

    private func startPayload(timestamp: Double? = nil, alert: Bool = true) -> String {
        let alertJSON = alert ? #","alert":{"title":"Go","body":{"loc-key":"WORKOUT_STARTED"}}"# : ""
        return #"{"aps":{"timestamp":\#(timestamp ?? t0Unix),"event":"start","content-state":{"workoutTimer":[\#(t0Reference),\#(t0Reference + 70)]},"stale-date":\#(t0Unix + 70),"relevance-score":75,"attributes-type":"WorkoutWidgetAttributes","attributes":{"workout":2}\#(alertJSON)}}"#
    }

    @Test func startPushEqualsTheNativeStart() throws {
        var pushed = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        let outcome = try pushed.applyPush(try push(startPayload()), pushToken: startToken, pushToStartToken: startToken, now: t0,
                                           newID: { ids.make() })
        #expect(outcome.verdict == .applied)
        var native = ActivityCenter(kinds: .builtIn)
        var nativeIDs = IDs()
        _ = try native.apply(#"{"type":"start","attributes":{"workout":"yoga"},"content":{"state":{"workoutTimer":{"start":"2026-11-29T17:00:00Z","end":"2026-11-29T17:01:10Z"}},"staleDate":"2026-11-29T17:01:10Z","relevanceScore":75}}"#, at: t0, ids: &nativeIDs)
        var a = try #require(pushed.activities["a1"])
        var b = try #require(native.activities["a1"])
        #expect(a.pushToken.map(PushToken.isWellFormed) == true)
        a.pushToken = nil
        b.pushToken = nil
        a.lastPushTimestamp = nil
        #expect(a == b)
        #expect(outcome.events.map(\.kind) == [.started])
    }

    @Test func updatesWithOlderTimestampsAreIgnoredAndEndsApplyAnyway() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.applyPush(try push(startPayload()), pushToken: startToken, pushToStartToken: startToken, now: t0, newID: { ids.make() })
        let token = try #require(center.activities["a1"]?.pushToken)
        let update = #"{"aps":{"timestamp":\#(t0Unix + 10),"event":"update","content-state":{"workoutTimer":[\#(t0Reference),\#(t0Reference + 100)]},"alert":{"title":"Halfway","body":"Keep going"}}}"#
        let applied = try center.applyPush(try push(update), pushToken: token, pushToStartToken: startToken, now: t0 + 10, newID: { ids.make() })
        #expect(applied.verdict == .applied)
        #expect(applied.events.first?.alert == AlertConfiguration(title: "Halfway", body: "Keep going"))
        #expect(center.activities["a1"]?.timer?.end == t0 + 100)
        let older = update.replacingOccurrences(of: "\(t0Unix + 10)", with: "\(t0Unix + 5)")
        let ignored = try center.applyPush(try push(older), pushToken: token, pushToStartToken: startToken, now: t0 + 11, newID: { ids.make() })
        guard case .ignored = ignored.verdict else { Issue.record("older timestamp applied"); return }
        let end = #"{"aps":{"timestamp":\#(t0Unix + 1),"event":"end","dismissal-date":\#(t0Unix + 60)}}"#
        let ended = try center.applyPush(try push(end), pushToken: token, pushToStartToken: startToken, now: t0 + 12, newID: { ids.make() })
        #expect(ended.verdict == .applied)
        #expect(center.activities["a1"]?.activityState == .ended)
        #expect(center.activities["a1"]?.dismissalDate == t0 + 60)
    }

    @Test func devicesDropWhatTheyCannotShow() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        let noAlert = try center.applyPush(try push(startPayload(alert: false)), pushToken: startToken, pushToStartToken: startToken, now: t0, newID: { ids.make() })
        guard case .dropped(let reason) = noAlert.verdict else { Issue.record("start without alert applied"); return }
        #expect(reason.contains("alert"))
        let isoDates = startPayload().replacingOccurrences(of: "[\(t0Reference),\(t0Reference + 70)]", with: #"["2026-11-29T17:00:00Z","2026-11-29T17:01:10Z"]"#)
        let badState = try center.applyPush(try push(isoDates), pushToken: startToken, pushToStartToken: startToken, now: t0, newID: { ids.make() })
        guard case .dropped(let detail) = badState.verdict else { Issue.record("ISO dates decoded"); return }
        #expect(detail.hasPrefix("aps.content-state: typeMismatch Double at workoutTimer[0]"))
        #expect(center.activities.isEmpty)
        #expect(center.sequence == 0)
    }

    @Test func apnsRefusals() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        #expect(throws: PushRejection.self) {
            _ = try center.applyPush(try push(startPayload()), pushToken: String(repeating: "0", count: 64), pushToStartToken: startToken, now: t0, newID: { ids.make() })
        }
        do {
            _ = try push(#"{"aps":{"event":"update"}}"#)
            Issue.record("missing timestamp parsed")
        } catch let error as PushRejection {
            #expect(error.reason == "BadPayload")
            #expect(error.field == "aps.timestamp")
        }
        // A payload that is not an object is refused naming `payload` (it said "message must be a JSON object").
        for notAnObject in [#""hello""#, "[1]", "3"] {
            do {
                _ = try push(notAnObject)
                Issue.record("\(notAnObject) parsed as a payload")
            } catch let error as PushRejection {
                #expect(error.reason == "BadPayload")
                #expect(error.field == "payload")
                #expect(error.detail.hasPrefix("payload: expected a JSON object with \"aps\""), "\(error.detail)")
            }
        }
    }
}

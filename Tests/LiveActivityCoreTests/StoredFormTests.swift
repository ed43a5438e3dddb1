import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// The stores' form of activities and events, written in one encoding each, and the content value the
/// inspector keeps, built without encoding: each equal to what the slower way gave.
struct StoredFormTests {
    let start = Date(timeIntervalSince1970: 1_795_971_600.25)

    func activity() -> Activity {
        let state: JSONValue = .object([
            "workoutTimer": .object(["start": .string(ISODate.format(start)), "end": .string(ISODate.format(start + 70))]),
            "note": .string("Ünïcödé \"quoted\" / slash \u{1}"), "laps": .array([.number(1), .number(2.5), .null, .bool(true)]),
        ])
        // A kind the registry does not know: stored and read back as is (a known kind would normalise the state).
        var activity = Activity(id: "a1", attributesType: "interval", attributes: .object(["name": .string("Tempo ⏱")]),
                                content: ActivityContent(state: state, staleDate: start + 70, relevanceScore: 0.75),
                                timer: nil, startDate: start, timerFinished: true)
        activity.lastPushTimestamp = 1_795_971_601
        activity.pushToken = String(repeating: "ab", count: 32)
        activity.kindProblem = "attributes.workout: not one of the kind's values"
        return activity
    }

    @Test func contentValueEqualsItsEncodingReadBack() throws {
        for content in [activity().content, ActivityContent(state: .object([:]), staleDate: nil)] {
            let encoded = try JSONValue.parse(Array(try MessageEncoder.encoder.encode(content)))
            #expect(content.jsonValue == encoded)
        }
    }

    @Test func storedActivityHasTheEngineFieldsAndNoKindProblem() throws {
        let activity = activity()
        let stored = try JSONValue.parse(Array(StoredActivity.encode(activity).utf8))
        guard case .object(let object) = stored else { Issue.record("not an object"); return }
        #expect(object["timerFinished"] == .bool(true))
        #expect(object["lastPushTimestamp"] == .number(1_795_971_601))
        #expect(object["kindProblem"] == nil)
        // The wire form is unchanged: kindProblem, and neither engine field.
        guard case .object(let wire) = try JSONValue.parse(Array(try MessageEncoder.encoder.encode(activity))) else { return }
        #expect(wire["kindProblem"] == .string(activity.kindProblem!))
        #expect(wire["timerFinished"] == nil && wire["lastPushTimestamp"] == nil)
        // Every other key is the wire's, with the same value.
        for (key, value) in wire where key != "kindProblem" { #expect(object[key] == value, "\(key)") }

        var restored = try StoredActivity.decode(StoredActivity.encode(activity), kinds: .builtIn)
        #expect(restored.kindProblem == nil)
        restored.kindProblem = activity.kindProblem
        #expect(restored == activity)
    }

    @Test func storedEventRoundTripsWithAndWithoutAlert() throws {
        var activity = activity()
        activity.kindProblem = nil
        for alert in [nil, AlertConfiguration(title: "Halfway \"there\"", body: "Keep going\n", sound: "default"),
                      AlertConfiguration(title: "T", body: "B", sound: nil)] {
            let event = ActivityEvent(kind: .updated, sequence: 9_007_199_254, activity: activity, alert: alert)
            let text = StoredActivity.encode(event)
            #expect(text == StoredActivity.encode(event, activityText: StoredActivity.encode(activity)))
            #expect(try StoredActivity.decodeEvent(text, kinds: .builtIn) == event)
            // Keys sorted, as every JSON the server writes.
            let reencoded = try MessageEncoder.encoder.encode(try JSONValue.parse(Array(text.utf8)))
            #expect(String(decoding: reencoded, as: UTF8.self) == text)
        }
    }
}

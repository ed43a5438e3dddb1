import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// One real-shaped APNs payload per cause, each with the verdict and reason iOS would give it.
struct PushVerdictTests {
    static let startToken = String(repeating: "cd", count: 32)
    static var ref0: Double { t0.timeIntervalSinceReferenceDate }
    static var unix0: Double { t0.timeIntervalSince1970 }

    /// What a case expects: an HTTP status other than 200 (with APNs's reason), or a verdict and cause.
    enum Expected {
        case refused(status: Int, reason: String)
        case verdict(String, PushCause?)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        /// `start` goes to the push-to-start token; the others to a started activity's token.
        var payload: String
        /// End the activity before sending.
        var ended = false
        var expected: Expected
        /// Words the reason (detail or warning) must contain.
        var mentions: [String]
        var testDescription: String { name }
    }

    static let timer = #"{"workoutTimer":[\#(ref0),\#(ref0 + 600)]}"#

    static let cases: [Case] = [
        Case(name: "applied update",
             payload: #"{"aps":{"timestamp":\#(unix0 + 20),"event":"update","content-state":\#(timer),"stale-date":\#(unix0 + 600)}}"#,
             expected: .verdict("applied", nil), mentions: []),
        Case(name: "old timestamp",
             payload: #"{"aps":{"timestamp":\#(unix0 - 60),"event":"update","content-state":\#(timer)}}"#,
             expected: .verdict("ignored", .oldTimestamp), mentions: ["aps.timestamp", "not newer"]),
        Case(name: "timestamp more than 8 h ahead",
             payload: #"{"aps":{"timestamp":\#(unix0 + 9 * 3600),"event":"update","content-state":\#(timer)}}"#,
             expected: .verdict("dropped", .futureTimestamp), mentions: ["aps.timestamp", "8 hours"]),
        Case(name: "timestamp in milliseconds",
             payload: #"{"aps":{"timestamp":\#(unix0 * 1000),"event":"update","content-state":\#(timer)}}"#,
             expected: .verdict("dropped", .futureTimestamp), mentions: ["milliseconds"]),
        Case(name: "update to an ended activity",
             payload: #"{"aps":{"timestamp":\#(unix0 + 20),"event":"update","content-state":\#(timer)}}"#, ended: true,
             expected: .verdict("ignored", .activityEnded), mentions: ["ended"]),
        Case(name: "content-state with ISO dates",
             payload: #"{"aps":{"timestamp":\#(unix0 + 20),"event":"update","content-state":{"workoutTimer":["2026-11-29T17:00:00Z","2026-11-29T17:10:00Z"]}}}"#,
             expected: .verdict("dropped", .undecodableContentState), mentions: ["aps.content-state", "typeMismatch Double at workoutTimer[0]", "string"]),
        Case(name: "content-state with a missing key",
             payload: #"{"aps":{"timestamp":\#(unix0 + 20),"event":"update","content-state":{"pausedAt":\#(ref0)}}}"#,
             expected: .verdict("dropped", .undecodableContentState), mentions: [#"aps.content-state: keyNotFound "workoutTimer""#]),
        Case(name: "a pausedAt the app cannot read is ignored, as the app ignores it",
             payload: #"{"aps":{"timestamp":\#(unix0 + 20),"event":"update","content-state":{"workoutTimer":[\#(ref0),\#(ref0 + 600)],"pausedAt":"x"}}}"#,
             expected: .verdict("applied", nil), mentions: []),
        Case(name: "update without content-state",
             payload: #"{"aps":{"timestamp":\#(unix0 + 20),"event":"update"}}"#,
             expected: .verdict("dropped", .missingContentState), mentions: ["aps.content-state"]),
        Case(name: "attributes and content-state swapped in an update",
             payload: #"{"aps":{"timestamp":\#(unix0 + 20),"event":"update","content-state":{"workout":2}}}"#,
             expected: .verdict("dropped", .swappedAttributesAndContentState), mentions: ["swapped"]),
        Case(name: "attributes and content-state swapped in a start",
             payload: #"{"aps":{"timestamp":\#(unix0),"event":"start","attributes-type":"WorkoutWidgetAttributes","attributes":\#(timer),"content-state":{"workout":1},"alert":{"title":"Go","body":"Now"}}}"#,
             expected: .verdict("dropped", .swappedAttributesAndContentState), mentions: ["swapped"]),
        Case(name: "unknown attributes type",
             payload: #"{"aps":{"timestamp":\#(unix0),"event":"start","attributes-type":"PizzaDeliveryAttributes","attributes":{"workout":1},"content-state":\#(timer),"alert":{"title":"Go","body":"Now"}}}"#,
             expected: .verdict("dropped", .unknownAttributesType), mentions: ["PizzaDeliveryAttributes"]),
        Case(name: "start without an alert",
             payload: #"{"aps":{"timestamp":\#(unix0),"event":"start","attributes-type":"WorkoutWidgetAttributes","attributes":{"workout":1},"content-state":\#(timer)}}"#,
             expected: .verdict("dropped", .missingAlert), mentions: ["aps.alert"]),
        Case(name: "undecodable attributes",
             payload: #"{"aps":{"timestamp":\#(unix0),"event":"start","attributes-type":"WorkoutWidgetAttributes","attributes":{"workout":7},"content-state":\#(timer),"alert":{"title":"Go","body":"Now"}}}"#,
             expected: .verdict("dropped", .undecodableAttributes), mentions: ["aps.attributes", "invalid enum raw value 7 for Workout at workout"]),
        Case(name: "stale date already past",
             payload: #"{"aps":{"timestamp":\#(unix0 + 20),"event":"update","content-state":\#(timer),"stale-date":\#(unix0 - 30)}}"#,
             expected: .verdict("applied", .staleDateInPast), mentions: ["aps.stale-date", "stale"]),
        Case(name: "payload over 4 KB",
             payload: #"{"aps":{"timestamp":\#(unix0 + 20),"event":"update","content-state":\#(timer),"alert":{"title":"\#(String(repeating: "x", count: 4100))","body":"b"}}}"#,
             expected: .refused(status: 413, reason: "PayloadTooLarge"), mentions: ["4096"]),
        Case(name: "end with an older timestamp still applies",
             payload: #"{"aps":{"timestamp":\#(unix0 - 60),"event":"end","dismissal-date":\#(unix0 + 60)}}"#,
             expected: .verdict("applied", nil), mentions: []),
    ]

    @Test(arguments: cases)
    func verdict(_ item: Case) throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        let start = #"{"aps":{"timestamp":\#(Self.unix0),"event":"start","attributes-type":"WorkoutWidgetAttributes","attributes":{"workout":2},"content-state":\#(Self.timer),"alert":{"title":"Go","body":"Yoga"}}}"#
        let started = try center.applyPush(try APNsPush.parse(try JSONValue.parse(Array(start.utf8))), pushToken: Self.startToken,
                                           pushToStartToken: Self.startToken, now: t0, newID: { ids.make() })
        #expect(started.verdict == .applied)
        let token = try #require(center.activities["a1"]?.pushToken)
        if item.ended { _ = try center.apply(#"{"type":"end","activityId":"a1"}"#, at: t0 + 5, ids: &ids) }

        let now = t0 + 10
        let outcome: ActivityCenter.PushOutcome
        let json = try JSONValue.parse(Array(item.payload.utf8))
        let address = item.payload.contains(#""event":"start""#) ? Self.startToken : token
        do throws(PushRejection) {
            let push = try APNsPush.parse(json)
            outcome = try center.applyPush(push, pushToken: address,
                                           pushToStartToken: Self.startToken, now: now, newID: { ids.make() })
        } catch {
            guard case .refused(let status, let reason) = item.expected else {
                Issue.record("\(item.name): refused (\(error.status) \(error.reason): \(error.detail)), expected a verdict")
                return
            }
            #expect(error.status == status)
            #expect(error.reason == reason)
            for word in item.mentions { #expect(error.detail.contains(word), "\(error.detail) should mention \(word)") }
            return
        }
        guard case .verdict(let name, let cause) = item.expected else {
            Issue.record("\(item.name): got \(outcome.verdict.name), expected a refusal")
            return
        }
        #expect(outcome.verdict.name == name, "\(item.name): \(outcome.verdict)")
        #expect(outcome.cause == cause, "\(item.name): cause \(String(describing: outcome.cause))")
        let text = (outcome.verdict.reason ?? "") + (outcome.warning ?? "")
        for word in item.mentions { #expect(text.contains(word), "\(text) should mention \(word)") }
        let result = PushResult(outcome, apnsId: "x")
        #expect(result.status == 200 && result.verdict == name && result.cause == cause?.rawValue)
        if name != "applied" { #expect(outcome.events.isEmpty) }
    }

    @Test func everyCauseHasACase() {
        let covered = Set(Self.cases.compactMap { item -> PushCause? in
            if case .verdict(_, let cause) = item.expected { return cause }
            return nil
        })
        // Channel causes are covered by ChannelRegistryTests (they need a channel).
        #expect(covered.union([.limitExceeded, .noSubscribers, .channelNotRegistered]) == Set(PushCause.allCases))
    }
}

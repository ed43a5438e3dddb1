import Foundation
import Testing
@testable import LiveActivityCore

/// A push's `attributes-type` when several kinds declare the same Swift struct name (`KindRegistry.match`): a
/// user kind (`serve --kinds`) takes it from a built-in one, two user kinds make it ambiguous (the push is
/// refused, 400 `BadPayload`), and a wire name always wins. Before, the first kind listed took every push.
struct SwiftNameClashTests {
    static let myWorkout = """
        import ActivityKit
        struct WorkoutAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable { var laps: Int }
            var runner: String
        }
        """
    static let ride = """
        import ActivityKit
        struct RideAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable { var eta: Int }
            var driver: String
        }
        """

    static func kind(_ name: String, _ source: String, kindJSON: String? = nil) throws -> any ActivityKind {
        var files = ["Attributes.swift": source]
        if let kindJSON { files["kind.json"] = kindJSON }
        return try KindRegistry.kind(for: try KindFolder.make(name: name, path: "user/\(name)", files: files))
    }

    /// The built-in kinds, marked built-in, then `user`.
    static func registry(_ user: [any ActivityKind]) -> KindRegistry {
        KindRegistry(KindRegistry.builtIn.all + user, builtIn: Set(KindRegistry.builtIn.names))
    }

    static func push(_ type: String, attributes: String, state: String) throws -> APNsPush {
        let text = #"{"aps":{"timestamp":\#(t0.timeIntervalSince1970),"event":"start","attributes-type":"\#(type)","attributes":\#(attributes),"content-state":\#(state),"alert":{"title":"Go","body":"Go"}}}"#
        return try APNsPush.parse(try JSONValue.parse(Array(text.utf8)))
    }

    @Test func aUserKindTakesASwiftNameFromABuiltInOne() throws {
        let registry = Self.registry([try Self.kind("my-workout", Self.myWorkout)])
        #expect(registry.kind(forPushType: "WorkoutAttributes")?.attributesType == "my-workout")
        // The built-in stays reachable by its wire name and its own struct name.
        #expect(registry.kind(forPushType: "workout")?.attributesType == "workout")
        #expect(registry.kind(forPushType: "WorkoutWidgetAttributes")?.attributesType == "workout")
        #expect(registry.swiftNameClashes == [.init(swiftName: "WorkoutAttributes", winner: "my-workout", others: ["workout"])])

        var center = ActivityCenter(kinds: registry)
        var ids = IDs()
        let token = String(repeating: "cd", count: 32)
        let outcome = try center.applyPush(try Self.push("WorkoutAttributes", attributes: #"{"runner":"Ada"}"#, state: #"{"laps":3}"#),
                                           pushToken: token, pushToStartToken: token, now: t0, newID: { ids.make() })
        #expect(outcome.verdict == .applied)
        #expect(center.activities[outcome.activityId ?? ""]?.attributesType == "my-workout")
    }

    @Test func twoUserKindsMakeASwiftNameAmbiguousAndThePushIsRefused() throws {
        let ride = try Self.kind("ride", Self.ride)
        let ride2 = try Self.kind("ride2", Self.ride, kindJSON: #"{"swiftNames": ["RideAttributes"]}"#)
        let registry = Self.registry([ride, ride2])
        guard case .ambiguous(let candidates) = registry.match(pushType: "RideAttributes") else {
            Issue.record("RideAttributes is not ambiguous")
            return
        }
        #expect(candidates == ["ride", "ride2"])
        #expect(registry.kind(forPushType: "RideAttributes") == nil)
        #expect(registry.swiftNameClashes == [.init(swiftName: "RideAttributes", winner: nil, others: ["ride", "ride2"])])
        // A wire name always wins.
        #expect(registry.kind(forPushType: "ride2")?.attributesType == "ride2")

        var center = ActivityCenter(kinds: registry)
        var ids = IDs()
        let token = String(repeating: "cd", count: 32)
        let attributes = #"{"driver":"Bo"}"#, state = #"{"eta":5}"#
        #expect(throws: PushRejection.self) {
            _ = try center.applyPush(try Self.push("RideAttributes", attributes: attributes, state: state),
                                     pushToken: token, pushToStartToken: token, now: t0, newID: { ids.make() })
        }
        do {
            _ = try center.applyPush(try Self.push("RideAttributes", attributes: attributes, state: state),
                                     pushToken: token, pushToStartToken: token, now: t0, newID: { ids.make() })
        } catch let rejection as PushRejection {
            #expect(rejection.status == 400 && rejection.reason == "BadPayload" && rejection.field == "aps.attributes-type")
            #expect(rejection.detail.contains(#""ride", "ride2""#) && rejection.detail.contains("wire name"))
        }
        #expect(center.activities.isEmpty)
        let byWireName = try center.applyPush(try Self.push("ride2", attributes: attributes, state: state),
                                              pushToken: token, pushToStartToken: token, now: t0, newID: { ids.make() })
        #expect(byWireName.verdict == .applied && center.activities[byWireName.activityId ?? ""]?.attributesType == "ride2")
    }

    @Test func builtInKindsAloneKeepTheFirstListed() throws {
        // Two built-ins declaring one name (no user kind among them): the first listed, as before; no clash reported.
        let other = try Self.kind("other-workout", Self.myWorkout)
        let registry = KindRegistry(KindRegistry.builtIn.all + [other], builtIn: Set(KindRegistry.builtIn.names + ["other-workout"]))
        #expect(registry.kind(forPushType: "WorkoutAttributes")?.attributesType == "workout")
        #expect(registry.swiftNameClashes.isEmpty)
    }
}

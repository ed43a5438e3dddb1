import Foundation
import LiveActivityCore
import Testing
import KindFixtures

/// Broadcast channels: the registry's checks (APNs's channel errors), creation bodies, and broadcasts applied
/// to the subscribed activities only. No I/O.
struct ChannelRegistryTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func channel(_ bundle: String = "com.example.app", policy: BroadcastChannel.StoragePolicy = .mostRecent, at offset: TimeInterval = 0) -> BroadcastChannel {
        BroadcastChannel(id: BroadcastChannel.newID(), bundleId: bundle, storagePolicy: policy, createdAt: now.addingTimeInterval(offset))
    }

    private func reason(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch { return (error as? PushRejection).map { "\($0.status) \($0.reason)" } ?? "\(error)" }
    }

    @Test func idsAreBase64Of16Bytes() {
        let id = BroadcastChannel.newID()
        #expect(BroadcastChannel.isWellFormedID(id))
        #expect(id.count == 24 && id.hasSuffix("=="))
        #expect(!BroadcastChannel.isWellFormedID("dHN0LXNyY2gtY2hubA"))  // no padding
        #expect(!BroadcastChannel.isWellFormedID("not base64 at all!!!!!!="))
        #expect(BroadcastChannel.isWellFormedBundleID("com.example.app-1"))
        #expect(!BroadcastChannel.isWellFormedBundleID("com example"))
    }

    @Test func lookupsFailAsAPNsDoes() {
        let channel = Self.channel()
        let registry = ChannelRegistry([channel])
        #expect(reason { _ = try registry.channel(nil, bundleId: "com.example.app") } == "400 MissingChannelId")
        #expect(reason { _ = try registry.channel("", bundleId: "com.example.app") } == "400 MissingChannelId")
        #expect(reason { _ = try registry.channel("nope", bundleId: "com.example.app") } == "400 BadChannelId")
        #expect(reason { _ = try registry.channel(BroadcastChannel.newID(), bundleId: "com.example.app") } == "404 ChannelNotRegistered")
        #expect(reason { _ = try registry.channel(channel.id, bundleId: "com.other.app") } == "404 ChannelNotRegistered")
        #expect(reason { _ = try registry.channel(channel.id, bundleId: "com.example.app") } == nil)
        #expect(reason { _ = try registry.channel(channel.id, bundleId: nil) } == nil)
    }

    @Test func channelsAreListedPerAppOldestFirstAndRemoved() {
        let first = Self.channel(at: 0), second = Self.channel(at: 5), other = Self.channel("com.other.app", at: 1)
        var registry = ChannelRegistry([second, other, first])
        #expect(registry.ids(bundleId: "com.example.app") == [first.id, second.id])
        registry.remove(id: first.id)
        #expect(registry.ids(bundleId: "com.example.app") == [second.id])
        #expect(reason { _ = try registry.channel(first.id, bundleId: nil) } == "404 ChannelNotRegistered")
        #expect(reason { try registry.checkRoom(bundleId: "com.example.app") } == nil)
    }

    @Test func anAppMayHaveAtMost10000Channels() {
        let registry = ChannelRegistry((0..<ChannelRegistry.maximumChannels).map { Self.channel(at: TimeInterval($0)) })
        #expect(reason { try registry.checkRoom(bundleId: "com.example.app") } == "400 CannotCreateChannelConfig")
        #expect(reason { try registry.checkRoom(bundleId: "com.other.app") } == nil)
    }

    @Test(arguments: [
        (#"{"message-storage-policy":1,"push-type":"LiveActivity"}"#, "ok 1"),
        (#"{"message-storage-policy":0,"push-type":"LiveActivity"}"#, "ok 0"),
        (#"{"message-storage-policy":2,"push-type":"LiveActivity"}"#, "400 BadMessageStoragePolicy"),
        (#"{"push-type":"LiveActivity"}"#, "400 BadMessageStoragePolicy"),
        (#"{"message-storage-policy":1}"#, "400 MissingPushType"),
        (#"{"message-storage-policy":1,"push-type":"alert"}"#, "400 InvalidPushType"),
        ("[]", "400 BadPayload"),
        ("", "400 PayloadEmpty"),
    ])
    func creationBodies(body: String, expected: String) {
        do {
            let policy = try ChannelRegistry.storagePolicy(fromCreationBody: Array(body.utf8))
            #expect(expected == "ok \(policy.rawValue)")
        } catch {
            #expect(expected == "\(error.status) \(error.reason)")
        }
    }

    /// Starts a workout activity subscribed to `channel` (or none).
    private func start(_ center: inout ActivityCenter, channel: String?) throws -> String {
        let state = JSONValue.object(["workoutTimer": .object(["start": .string("2027-01-15T08:00:00.000Z"),
                                                               "end": .string("2027-01-15T09:00:00.000Z")])])
        var message: [String: JSONValue] = ["type": .string("start"), "attributes": .object(["workout": .string("yoga")]),
                                            "content": .object(["state": state])]
        if let channel { message["channelId"] = .string(channel) }
        let parsed = ClientMessage.parse(Array((try JSONEncoder().encode(JSONValue.object(message)))), kinds: .builtIn)
        guard case .success(let command) = parsed.command else { throw ProtocolError.missing("command") }
        return try center.apply(command, now: Self.now, newID: { UUID().uuidString }).activityId!
    }

    @Test func aBroadcastReachesTheSubscribedActivitiesOnly() throws {
        let channel = Self.channel()
        var center = ActivityCenter(activities: [], sequence: 0, kinds: .builtIn)
        let a = try start(&center, channel: channel.id)
        let b = try start(&center, channel: channel.id)
        let other = try start(&center, channel: Self.channel().id)
        let none = try start(&center, channel: nil)
        let reference = Self.now.timeIntervalSinceReferenceDate
        let payload = JSONValue.object(["aps": .object(["timestamp": .number(Self.now.timeIntervalSince1970), "event": .string("update"),
                                                        "content-state": .object(["workoutTimer": .array([.number(reference), .number(reference + 900)])])])])
        let push = try APNsPush.parse(payload, maximumBytes: APNsPush.maximumBroadcastBytes)
        let outcome = try center.applyBroadcast(push, channelId: channel.id, now: Self.now)
        #expect(outcome.verdict == .applied)
        #expect(Set(outcome.activityIds) == [a, b])
        #expect(Set(outcome.events.filter { $0.kind == .updated }.map(\.activity.id)) == [a, b])
        #expect(center.activities[other]?.content == center.activities[none]?.content)
        #expect(outcome.warnings.isEmpty)
        #expect(PushResult(outcome, requestId: "r").warning == nil)
        // A key the app's ContentState does not declare: applied (Swift ignores it), and said once for all subscribers.
        let extra = JSONValue.object(["aps": .object(["timestamp": .number(Self.now.timeIntervalSince1970 + 1), "event": .string("update"),
                                                      "content-state": .object(["workoutTimer": .array([.number(reference), .number(reference + 800)]),
                                                                                "heartRate": .number(120)])])])
        let ignoring = try center.applyBroadcast(try APNsPush.parse(extra, maximumBytes: APNsPush.maximumBroadcastBytes), channelId: channel.id, now: Self.now)
        #expect(ignoring.verdict == .applied)
        #expect(ignoring.warnings.count == 1 && ignoring.warnings[0].contains("heartRate"))
        #expect(PushResult(ignoring, requestId: "r").warning?.contains("aps.content-state") == true)
        // An older timestamp again: ignored by each subscriber, as iOS ignores an older push.
        let again = try center.applyBroadcast(push, channelId: channel.id, now: Self.now)
        #expect(again.verdict.name == "ignored" && again.cause == .oldTimestamp && again.events.isEmpty)
        // No subscriber: ignored, nothing changes.
        let empty = try center.applyBroadcast(push, channelId: Self.channel().id, now: Self.now)
        #expect(empty.cause == .noSubscribers && empty.activityIds.isEmpty)
        // A channel cannot start an activity.
        let start = try APNsPush.parse(.object(["aps": .object(["timestamp": .number(1), "event": .string("start")])]))
        #expect(throws: PushRejection.self) { try center.applyBroadcast(start, channelId: channel.id, now: Self.now) }
    }

    @Test func aPushToStartSubscribesToItsInputPushChannel() throws {
        let channel = Self.channel()
        var center = ActivityCenter(activities: [], sequence: 0, kinds: .builtIn)
        let token = PushToken.random()
        let reference = Self.now.timeIntervalSinceReferenceDate
        func payload(_ channelId: String) -> JSONValue {
            .object(["aps": .object(["timestamp": .number(Self.now.timeIntervalSince1970), "event": .string("start"),
                                     "attributes-type": .string("WorkoutWidgetAttributes"), "attributes": .object(["workout": .number(2)]),
                                     "content-state": .object(["workoutTimer": .array([.number(reference), .number(reference + 600)])]),
                                     "alert": .object(["title": .string("t"), "body": .string("b")]),
                                     "input-push-channel": .string(channelId)])])
        }
        let started = try center.applyPush(try APNsPush.parse(payload(channel.id)), pushToken: token, pushToStartToken: token, now: Self.now,
                                           isChannelRegistered: { $0 == channel.id }, newID: { "A" })
        #expect(started.verdict == .applied)
        #expect(center.activities["A"]?.channelId == channel.id)
        let unknown = try center.applyPush(try APNsPush.parse(payload(Self.channel().id)), pushToken: token, pushToStartToken: token,
                                           now: Self.now, isChannelRegistered: { $0 == channel.id }, newID: { "B" })
        #expect(unknown.verdict.name == "dropped" && unknown.cause == .channelNotRegistered)
        #expect(center.activities["B"] == nil)
        #expect(throws: PushRejection.self) { try APNsPush.parse(payload("not-a-channel")) }
    }
}

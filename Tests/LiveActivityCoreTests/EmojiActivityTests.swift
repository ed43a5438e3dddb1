import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// The `emoji` kind: its attributes and state are validated and normalised, and thumbnails are published
/// with `updated` events.
struct EmojiActivityTests {
    private let start = #"{"type":"start","attributesType":"emoji","attributes":{"startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00+01:00","name":"Morning run","image":"https://example.com/a/200"},"content":{"state":{"emoji":"🏃‍♀️"}}}"#

    private func parseError(_ json: String) -> ProtocolError? {
        if case .failure(let error) = ClientMessage.parse(Array(json.utf8), kinds: .builtIn).command { return error }
        return nil
    }

    private func attributes(_ fields: String) throws(ProtocolError) -> JSONValue {
        try KindRegistry.builtIn.kind(forPushType: "emoji")!.attributes(from: try JSONValue.parse(Array("{\(fields)}".utf8)), field: "attributes")
    }

    @Test func isRegisteredBesideWorkout() throws {
        #expect(KindRegistry.builtIn.names == ["workout", "emoji"])
        #expect(KindRegistry.builtIn.kind(forPushType: "EmojiAttributes")?.attributesType == "emoji")
        let error = try #require(parseError(#"{"type":"start","attributesType":"weather","attributes":{},"durationSeconds":5}"#))
        #expect(error.field == "attributesType")
        #expect(error.message.contains(#""workout", "emoji""#))
    }

    @Test func startNormalisesAttributesAndState() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        let outcome = try center.apply(start, at: t0, ids: &ids)
        let activity = try #require(outcome.events.first?.activity)
        #expect(outcome.events.map(\.kind) == [.started])
        #expect(activity.attributes == .object([
            "startTime": .string("2026-11-29T17:00:00.000Z"),
            "endTime": .string("2026-11-29T17:00:00.000Z"),
            "name": .string("Morning run"),
            "image": .string("https://example.com/a/200"),
        ]))
        #expect(activity.content.state == .object(["emoji": .string("🏃‍♀️")]))
        #expect(activity.timer == nil)
        #expect(activity.imageURL == "https://example.com/a/200")
        #expect(activity.thumbnail == nil)
        #expect(center.tick(at: t0) == nil)
    }

    @Test func imageIsOptional() throws {
        let value = try attributes(#""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T17:00:00Z","name":"x""#)
        guard case .object(let object) = value else { Issue.record("not an object"); return }
        #expect(object["image"] == nil)
    }

    @Test func codableDatesFromAPNsAreAccepted() throws {
        let kind = try #require(KindRegistry.builtIn.kind(forPushType: "EmojiAttributes"))
        let value = try kind.attributes(fromCodable: try JSONValue.parse(Array(#"{"startTime":786278400,"endTime":786282000,"name":"Push"}"#.utf8)), field: "aps.attributes")
        // Over WebSocket, the protocol's form: ISO-8601 only.
        #expect(throws: ProtocolError.self) { try attributes(#""startTime":786278400,"endTime":786282000,"name":"Push""#) }
        guard case .object(let object) = value else { Issue.record("not an object"); return }
        #expect(object["startTime"] == .string(ISODate.format(Date(timeIntervalSinceReferenceDate: 786_278_400))))
        #expect(object["endTime"] == .string(ISODate.format(Date(timeIntervalSinceReferenceDate: 786_282_000))))
    }

    @Test(arguments: [
        (#""endTime":"2026-11-29T18:00:00Z","name":"x""#, ProtocolError.Code.missingField, "attributes.startTime"),
        (#""startTime":"2026-11-29T17:00:00Z","name":"x""#, .missingField, "attributes.endTime"),
        (#""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T16:00:00Z","name":"x""#, .invalidField, "attributes.endTime"),
        (#""startTime":"yesterday","endTime":"2026-11-29T18:00:00Z","name":"x""#, .invalidField, "attributes.startTime"),
        (#""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z""#, .missingField, "attributes.name"),
        (#""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z","name":"   ""#, .invalidField, "attributes.name"),
        (#""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z","name":"a\u0007b""#, .invalidField, "attributes.name"),
        (#""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z","name":7"#, .invalidField, "attributes.name"),
        (#""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z","name":"x","image":"file:///etc/passwd""#, .invalidField, "attributes.image"),
        (#""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z","name":"x","image":"ftp://example.com/a.png""#, .invalidField, "attributes.image"),
        (#""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z","name":"x","image":"/relative.png""#, .invalidField, "attributes.image"),
        (#""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z","name":"x","image":"https://user:pw@example.com/a.png""#, .invalidField, "attributes.image"),
        (#""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z","name":"x","image":"http://""#, .invalidField, "attributes.image"),
        (#""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z","name":"x","image":42"#, .invalidField, "attributes.image"),
    ])
    func badAttributesNameTheirField(fields: String, code: ProtocolError.Code, field: String) {
        do {
            _ = try attributes(fields)
            Issue.record("accepted {\(fields)}")
        } catch {
            #expect(error.code == code)
            #expect(error.field == field)
        }
    }

    @Test func nameAndImageLengthLimits() throws {
        let base = #""startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z""#
        _ = try attributes(base + #","name":"\#(String(repeating: "é", count: 64))""#)
        #expect(throws: ProtocolError.self) { try attributes(base + #","name":"\#(String(repeating: "a", count: 65))""#) }
        let longURL = "https://example.com/" + String(repeating: "a", count: 2048 - 20)
        _ = try attributes(base + #","name":"x","image":"\#(longURL)""#)
        #expect(throws: ProtocolError.self) { try attributes(base + #","name":"x","image":"\#(longURL)a""#) }
    }

    @Test(arguments: ["🏃", "👩🏽‍🚀", "🇫🇷", "❤️", "Go!", "sixteen chars ok"])
    func acceptedEmoji(_ emoji: String) throws {
        let (state, timer) = try KindRegistry.builtIn.kind(forPushType: "emoji")!.state(from: .object(["emoji": .string(emoji)]), field: "content.state")
        #expect(state == .object(["emoji": .string(emoji)]))
        #expect(timer == nil)
    }

    @Test(arguments: [
        (JSONValue.object([:]), ProtocolError.Code.missingField),
        (.object(["emoji": .string("")]), .invalidField),
        (.object(["emoji": .string("seventeen chars!!")]), .invalidField),
        (.object(["emoji": .string("a\nb")]), .invalidField),
        (.object(["emoji": .number(1)]), .invalidField),
        (.object(["emoji": .string("e" + String(repeating: "\u{301}", count: 80))]), .invalidField),
        (.string("🏃"), .invalidField),
    ])
    func rejectedEmoji(_ value: JSONValue, code: ProtocolError.Code) {
        do {
            _ = try KindRegistry.builtIn.kind(forPushType: "emoji")!.state(from: value, field: "content.state")
            Issue.record("accepted \(value)")
        } catch {
            #expect(error.code == code)
            #expect(error.field?.hasPrefix("content.state") == true)
        }
    }

    @Test func durationShortcutAndTimerControlsAreRefused() throws {
        var refused = ActivityCenter(kinds: .builtIn)
        var refusedIDs = IDs()
        let shortcut = #"{"type":"start","attributesType":"emoji","attributes":{"startTime":"2026-11-29T17:00:00Z","endTime":"2026-11-29T18:00:00Z","name":"x"},"durationSeconds":60}"#
        let error = try #require(#expect(throws: ProtocolError.self) { try refused.apply(shortcut, at: t0, ids: &refusedIDs) })
        #expect(error.field == "durationSeconds")

        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        let id = try #require(try center.apply(start, at: t0, ids: &ids).activityId)
        #expect(throws: ProtocolError.self) { try center.apply(#"{"type":"pause","activityId":"\#(id)"}"#, at: t0, ids: &ids) }
        #expect(throws: ProtocolError.self) { try center.apply(#"{"type":"extend","activityId":"\#(id)","seconds":5}"#, at: t0, ids: &ids) }
        let updated = try center.apply(#"{"type":"update","activityId":"\#(id)","content":{"state":{"emoji":"🎉"}}}"#, at: t0, ids: &ids)
        #expect(updated.events.first?.activity.content.state == .object(["emoji": .string("🎉")]))
    }

    @Test func thumbnailIsPublishedOnceWithAnUpdatedEvent() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        let first = try #require(try center.apply(start, at: t0, ids: &ids).activityId)
        let second = try #require(try center.apply(start, at: t0, ids: &ids).activityId)
        #expect(center.imagesWithoutThumbnail == ["https://example.com/a/200"])
        let thumbnail = ActivityThumbnail(key: String(repeating: "ab", count: 32))
        let before = center.sequence
        let events = center.setThumbnail(thumbnail, forImage: "https://example.com/a/200")
        #expect(events.map(\.kind) == [.updated, .updated])
        #expect(Set(events.map(\.activity.id)) == [first, second])
        #expect(events.map(\.sequence) == [before + 1, before + 2])
        #expect(events.allSatisfy { $0.alert == nil && $0.activity.thumbnail == thumbnail })
        #expect(center.activities[first]?.thumbnail == thumbnail)
        #expect(center.imagesWithoutThumbnail.isEmpty)
        #expect(center.setThumbnail(thumbnail, forImage: "https://example.com/a/200").isEmpty)
        #expect(center.setThumbnail(thumbnail, forImage: "https://other.example/a/200").isEmpty)
    }

    @Test func thumbnailIsEncodedAndStored() throws {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        let id = try #require(try center.apply(start, at: t0, ids: &ids).activityId)
        let key = String(repeating: "0f", count: 32)
        _ = center.setThumbnail(ActivityThumbnail(key: key), forImage: "https://example.com/a/200")
        let activity = try #require(center.activities[id])
        let wire = try JSONValue.parse(activity.encodedJSON())
        guard case .object(let object) = wire else { Issue.record("not an object"); return }
        #expect(object["thumbnail"] == .object([
            "1x": .string("/images/\(key)@1x.png"),
            "2x": .string("/images/\(key)@2x.png"),
            "3x": .string("/images/\(key)@3x.png"),
        ]))
        let restored = try StoredActivity.decode(StoredActivity.encode(activity), kinds: .builtIn)
        #expect(restored == activity)
        #expect(ActivityThumbnail(.object(["1x": .string("/images/../etc@1x.png")])) == nil)
    }
}

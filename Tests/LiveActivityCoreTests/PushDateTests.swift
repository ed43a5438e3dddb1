import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// APNs-shaped pushes with impossible or absurd dates: refused as APNs refuses a malformed payload (400
/// `BadPayload`), naming the key, and nothing changes.
struct PushDateTests {
    let startToken = String(repeating: "ab", count: 32)
    var t0Reference: Double { t0.timeIntervalSinceReferenceDate }
    var t0Unix: Double { t0.timeIntervalSince1970 }

    private func refusal(of json: String) -> PushRejection? {
        do {
            _ = try APNsPush.parse(try JSONValue.parse(Array(json.utf8)))
            return nil
        } catch let rejection as PushRejection {
            return rejection
        } catch {
            Issue.record("\(error)")
            return nil
        }
    }

    @Test(arguments: ["-1e308", "-1", "1e308", "9007199254740994", "1.8e19"])
    func outOfRangeTimestampsAreBadPayloads(timestamp: String) throws {
        let rejection = try #require(refusal(of: #"{"aps":{"timestamp":\#(timestamp),"event":"end"}}"#))
        #expect(rejection.status == 400 && rejection.reason == "BadPayload" && rejection.field == "aps.timestamp")
        #expect(rejection.detail.hasPrefix("aps.timestamp: expected Unix seconds"), "\(rejection.detail)")
    }

    @Test func nonNumbersAndInfinityAreBadPayloads() throws {
        for payload in [#"{"aps":{"timestamp":"now","event":"end"}}"#, #"{"aps":{"timestamp":null,"event":"end"}}"#] {
            let rejection = try #require(refusal(of: payload))
            #expect(rejection.field == "aps.timestamp" && rejection.status == 400)
        }
        // 1e999 is not a JSON number the parser keeps (it is refused as invalid JSON before the payload is read).
        #expect(throws: ProtocolError.self) { _ = try JSONValue.parse(Array(#"{"aps":{"timestamp":1e999}}"#.utf8)) }
    }

    @Test func millisecondTimestampsStayDroppedAsFuture() throws {
        // Milliseconds are a known mistake the device drops (futureTimestamp), not a malformed payload.
        let payload = try APNsPush.parse(try JSONValue.parse(Array(#"{"aps":{"timestamp":\#(t0Unix * 1000),"event":"end"}}"#.utf8)))
        #expect(payload.timestamp == t0Unix * 1000)
    }

    private func started() throws -> (ActivityCenter, String) {
        var center = ActivityCenter(kinds: .builtIn)
        var ids = IDs()
        _ = try center.apply(#"{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":600}"#, at: t0, ids: &ids)
        return (center, try #require(center.activities.values.first?.pushToken))
    }

    @Test(arguments: [
        // (aps members, key named)
        (#""event":"update","content-state":{"workoutTimer":[T0,T0+60]},"stale-date":-1e10"#, "aps.stale-date"),
        (#""event":"update","content-state":{"workoutTimer":[T0,T0+60]},"stale-date":1e10"#, "aps.stale-date"),
        (#""event":"update","content-state":{"workoutTimer":[T0,T0+60]},"stale-date":U0-86400"#, "aps.stale-date"),
        (#""event":"end","dismissal-date":U0+40000000"#, "aps.dismissal-date"),
        (#""event":"end","dismissal-date":0"#, "aps.dismissal-date"),
    ])
    func datesOutsideTheWindowAreBadPayloadsAndChangeNothing(members: String, field: String) throws {
        var (center, token) = try started()
        let before = center.activities
        let sequence = center.sequence
        let aps = members.replacingOccurrences(of: "T0+60", with: "\(t0Reference + 60)").replacingOccurrences(of: "T0", with: "\(t0Reference)")
            .replacingOccurrences(of: "U0-86400", with: "\(t0Unix - 86_400)").replacingOccurrences(of: "U0+40000000", with: "\(t0Unix + 40_000_000)")
        let push = try APNsPush.parse(try JSONValue.parse(Array(#"{"aps":{"timestamp":\#(t0Unix + 5),\#(aps)}}"#.utf8)))
        do {
            _ = try center.applyPush(push, pushToken: token, pushToStartToken: startToken, now: t0 + 5, newID: { "x" })
            Issue.record("applied \(aps)")
        } catch {
            #expect(error.status == 400 && error.reason == "BadPayload" && error.field == field, "\(error)")
            #expect(error.detail.hasPrefix("\(field): the date is "), "\(error.detail)")
        }
        #expect(center.activities == before && center.sequence == sequence)
    }

    @Test func aStaleDateAnHourAgoStillAppliesWithTheWarning() throws {
        var (center, token) = try started()
        let push = try APNsPush.parse(try JSONValue.parse(Array(#"{"aps":{"timestamp":\#(t0Unix + 5),"event":"update","content-state":{"workoutTimer":[\#(t0Reference),\#(t0Reference + 60)]},"stale-date":\#(t0Unix - 3600)}}"#.utf8)))
        let outcome = try center.applyPush(push, pushToken: token, pushToStartToken: startToken, now: t0 + 5, newID: { "x" })
        #expect(outcome.verdict == .applied && outcome.cause == .staleDateInPast)
    }

    @Test func contentStateDatesAreLeftToTheDeviceAsIOSDecodesThem() throws {
        // Unix seconds where Swift reads seconds since 2001: iOS applies it (the countdown ends 31 years late);
        // the inspector's date lens flags it. Not a malformed payload.
        var (center, token) = try started()
        let push = try APNsPush.parse(try JSONValue.parse(Array(#"{"aps":{"timestamp":\#(t0Unix + 5),"event":"update","content-state":{"workoutTimer":[\#(t0Unix),\#(t0Unix + 60)]}}}"#.utf8)))
        let outcome = try center.applyPush(push, pushToken: token, pushToStartToken: startToken, now: t0 + 5, newID: { "x" })
        #expect(outcome.verdict == .applied)
    }

    @Test func aDateFarBeforeItsEpochSaysBeforeNotBeyond() throws {
        #expect(throws: ProtocolError.self) { try CodableDate.unix(-1e308, field: "aps.stale-date") }
        do {
            _ = try CodableDate.unix(-1e308, field: "aps.stale-date")
        } catch {
            #expect(error.message.contains("before the year") && !error.message.contains("beyond"), "\(error.message)")
        }
        do {
            _ = try CodableDate.unix(1e300, field: "aps.stale-date")
        } catch {
            #expect(error.message.contains("beyond the year"), "\(error.message)")
        }
    }
}

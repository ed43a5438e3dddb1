import Foundation
import Testing
@testable import LiveActivityCore

/// A kind read from an app's `Attributes.swift` (issue 17's interval workout), without sockets: both forms,
/// the countdown, push verdicts in Swift's terms, ignored-key warnings, and a changed declaration.
struct DeclaredKindTests {
    static let startToken = String(repeating: "cd", count: 32)
    static var ref0: Double { t0.timeIntervalSinceReferenceDate }

    static func kind(_ source: String = DeclarationFixtures.intervalWorkout, metadata: KindMetadata? = nil) throws -> DeclaredKind {
        try DeclaredKind(declaration: try ActivityDeclaration(swiftSource: source), metadata: metadata)
    }

    static func center(_ kind: DeclaredKind) -> ActivityCenter {
        ActivityCenter(kinds: KindRegistry(KindRegistry.builtIn.all + [kind]))
    }

    static func push(_ text: String) throws -> APNsPush {
        try APNsPush.parse(try JSONValue.parse(Array(text.utf8)))
    }

    static let state = #"{"heartRate":150,"distance":1.5,"phase":"work","interval":[\#(ref0),\#(ref0 + 60)]}"#

    @Test func wireNameIsTheStructsWithoutKindJSON() throws {
        let kind = try Self.kind()
        #expect(kind.attributesType == "IntervalWorkoutAttributes")
        #expect(kind.metadata.countdown == "interval")
        let named = try Self.kind(metadata: KindMetadata(name: "interval"))
        #expect(named.attributesType == "interval" && named.swiftTypeNames == ["IntervalWorkoutAttributes"])
    }

    @Test func aDateCountdownCountsFromTheActivitysStart() throws {
        let source = """
        import ActivityKit
        struct TrainAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable { var departure: Date }
            var line: String
        }
        """
        let kind = try Self.kind(source, metadata: KindMetadata(name: "train", countdown: "departure"))
        var center = Self.center(kind)
        let departure = ISODate.format(t0.addingTimeInterval(1800))
        let message = #"{"type":"start","attributesType":"train","attributes":{"line":"S1"},"content":{"state":{"departure":"\#(departure)"}}}"#
        guard case .success(let command) = ClientMessage.parse(Array(message.utf8), kinds: center.kinds).command else {
            Issue.record("start refused"); return
        }
        let id = try #require(try center.apply(command, now: t0, newID: { "T" }).activityId)
        let timer = try #require(center.activities[id]?.timer)
        // Text(timerInterval: startDate...departure): 30 minutes from the start, not a range of no length.
        #expect(timer.start == t0 && timer.end == t0.addingTimeInterval(1800))
        #expect(timer.remainingSeconds(at: t0.addingTimeInterval(60)) == 1740)
        // Read back from a store, the same.
        let stored = StoredActivity.encode(try #require(center.activities[id]))
        #expect(try StoredActivity.decode(stored, kinds: center.kinds).timer == timer)
    }

    @Test func countdownMustBeADateField() throws {
        #expect(throws: ProtocolError.self) { try Self.kind(metadata: KindMetadata(name: "x", countdown: "heartRate")) }
        #expect(throws: ProtocolError.self) { try Self.kind(metadata: KindMetadata(name: "x", countdown: "nope")) }
    }

    @Test func protocolFormNormalisesAndFindsTheCountdown() throws {
        let kind = try Self.kind()
        let value = try JSONValue.parse(Array(#"{"heartRate":1,"distance":2,"phase":"rest","interval":{"start":"2026-12-01T10:00:00Z","end":"2026-12-01T10:10:00Z"},"pausedAt":"2026-12-01T10:05:00Z"}"#.utf8))
        let (state, timer) = try kind.state(from: value, field: "content.state")
        #expect(timer?.end.timeIntervalSince(timer!.start) == 600)
        #expect(timer?.pausedAt != nil)
        #expect(state["pausedAt"] == .string("2026-12-01T10:05:00.000Z"))
        // resume: the mark goes, the range moves
        let resumed = kind.state(state, with: TimerRange(start: timer!.start + 60, end: timer!.end + 60))
        #expect(resumed["pausedAt"] == nil && resumed["heartRate"] == .number(1))
        #expect(throws: ProtocolError.self) { try kind.state(from: .object(["heartRate": .number(1)]), field: "content.state") }
    }

    /// An enum with an `Int` raw value that `kind.json` does not list is labelled by its cases' names ("XL"), and
    /// its values stay the app's numbers: accepted and kept as numbers, the names refused as the app would
    /// refuse them; `kind.json`'s `"sentAs": "rawValue"` says the same of its own entries.
    @Test func anIntRawEnumIsLabelledByItsNamesAndSentAsItsNumbers() throws {
        let source = """
        import ActivityKit
        struct RideAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable { var eta: Date }
            enum Tier: Int, Codable, Hashable { case standard = 1, xl, extraComfort = 7 }
            var tier: Tier
        }
        """
        let kind = try Self.kind(source, metadata: KindMetadata(name: "ride"))
        let entries = try #require(kind.metadata.enums["tier"])
        #expect(entries.map(\.label) == ["Standard", "XL", "Extra comfort"])
        #expect(entries.map(\.rawValue) == [.number(1), .number(2), .number(7)] && entries.allSatisfy { !$0.sentAsName })
        #expect(try kind.attributes(from: .object(["tier": .number(2)]), field: "attributes") == .object(["tier": .number(2)]))
        #expect(throws: ProtocolError.self) { try kind.attributes(from: .object(["tier": .string("xl")]), field: "attributes") }
        guard case .array(let written)? = kind.metadata.json["enums"]?["tier"] else { Issue.record("no tier in /kinds"); return }
        #expect(written.last == JSONValue.object(["value": .string("extraComfort"), "rawValue": .number(7), "label": .string("Extra comfort"),
                                 "sentAs": .string("rawValue")]))
        let read = try KindMetadata.read(try JSONValue.parse(Array(#"{"name":"ride","enums":{"tier":[{"value":"xl","rawValue":2,"label":"Extra large","sentAs":"rawValue"}]}}"#.utf8)), folderName: "ride")
        #expect(read.enums["tier"]?.first?.sentAsName == false)
        #expect(throws: ProtocolError.self) {
            try KindMetadata.read(try JSONValue.parse(Array(#"{"name":"ride","enums":{"tier":[{"value":"xl","sentAs":"rawValue"}]}}"#.utf8)), folderName: "ride")
        }
    }

    /// A keyed case's associated value of a raw-value enum reads in words, as a top-level field does ("Team Home",
    /// it read "Team home"; an `Int` raw value by its case's name). From the new-user trial.
    @Test func anEnumAssociatedValueIsLabelledInWords() throws {
        let source = """
        import ActivityKit
        struct GameAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable { var lastPlay: Play }
            enum Side: String, Codable, Hashable { case home, away_team }
            enum Kind: Int, Codable, Hashable { case field = 2, free = 1 }
            enum Play: Codable, Hashable { case score(team: Side, kind: Kind, points: Int) }
            var venue: String
        }
        """
        let kind = try Self.kind(source, metadata: KindMetadata(name: "game"))
        let values = try #require(kind.metadata.enums["lastPlay"]?.first?.associatedValues)
        #expect(values.map(\.key) == ["team", "kind", "points"])
        #expect(values[0].valueLabels == ["home": "Home", "away_team": "Away team"])
        #expect(values[1].valueLabels == ["2": "Field", "1": "Free"])
        #expect(values[2].valueLabels.isEmpty)
    }

    /// `kind.json`'s `enums` must agree with the declaration: each refusal names the entry (they loaded "ok" and
    /// showed a case under another's label, offered 99 in START, or made a String field refuse every value); a
    /// list that leaves cases out is completed, as without kind.json. From the second new-user trial.
    @Test func kindJSONEnumsAreCheckedAgainstTheDeclaration() throws {
        let source = """
        import ActivityKit
        struct ParcelAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable { var status: Status; var level: Level; var stage: Stage }
            enum Status: String, Codable, Hashable { case pending, on_its_way, delivered }
            enum Level: Int, Codable, Hashable { case low = -3, mid, high }
            enum Stage: Codable, Hashable { case placed, late(minutes: Int) }
            var carrier: String
        }
        """
        func kind(_ enums: String) throws -> DeclaredKind {
            try Self.kind(source, metadata: KindMetadata.read(try JSONValue.parse(Array(#"{"name":"parcel","enums":\#(enums)}"#.utf8)), folderName: "parcel"))
        }
        for (enums, field, words) in [
            (#"{"carrier":[{"value":"a","rawValue":1}]}"#, "enums.carrier", "is a String, not an enum"),
            (#"{"nope":[{"value":"a"}]}"#, "enums.nope", "is not a field of"),
            (#"{"status":[{"value":"bogus"}]}"#, "enums.status[0].value", "\"bogus\" is not a case of Status"),
            (#"{"status":[{"value":"x","rawValue":10}]}"#, "enums.status[0].rawValue", "10 is not a case of Status"),
            (#"{"level":[{"value":"x","rawValue":99}]}"#, "enums.level[0].rawValue", "99 is not a case of Level (-3, -2, -1)"),
            (#"{"level":[{"value":"x","rawValue":"-3"}]}"#, "enums.level[0].rawValue", "is not a case of Level"),
            (#"{"level":[{"value":"x"}]}"#, "enums.level[0].rawValue", "missing"),
            (#"{"level":[{"value":"a","rawValue":-3},{"value":"b","rawValue":-3}]}"#, "enums.level[1]", "names Level.low again"),
            (#"{"stage":[{"value":"placed","rawValue":1,"sentAs":"rawValue"}]}"#, "enums.stage[0].rawValue", "has no raw values"),
        ] {
            do {
                _ = try kind(enums)
                Issue.record("\(enums) was accepted")
            } catch let error as ProtocolError {
                #expect(error.field == field && error.message.contains(words), "\(enums): \(error.field ?? "") \(error.message)")
            }
        }
        // A list that names one case: the others as without kind.json, sent as the list's are.
        let partial = try kind(#"{"status":[{"value":"pending","label":"Waiting"}],"level":[{"value":"middle","rawValue":-2,"label":"Middle","sentAs":"rawValue"}]}"#)
        #expect(partial.metadata.enums["status"]?.map(\.label) == ["Waiting", "On its way", "Delivered"])
        let levels = try #require(partial.metadata.enums["level"])
        #expect(levels.map(\.label) == ["Middle", "Low", "High"] && levels.allSatisfy { !$0.sentAsName })
    }

    /// A list or dictionary of a raw-value enum reads in words (it showed "-3, 3" and "3 7, 1 2"):
    /// ``KindMetadata/elementLabels`` for its elements, values and keys. From the second new-user trial.
    @Test func collectionsOfRawValueEnumsAreLabelled() throws {
        let source = """
        import ActivityKit
        struct GaugeAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable {
                var levels: [Level]
                var countsByTier: [Tier: Int]?
                var stages: [Int: Stage]
                var notes: [String]
            }
            enum Level: Int, Codable, Hashable { case low = -3, high = 3 }
            enum Tier: Int, Codable, Hashable { case standard = 1, comfortPlus = 3 }
            enum Stage: String, Codable, Hashable { case prepared, on_its_way }
            var name: String
        }
        """
        let labels = try Self.kind(source, metadata: KindMetadata(name: "gauge")).metadata.elementLabels
        #expect(labels["levels"] == KindMetadata.ElementLabels(values: ["-3": "Low", "3": "High"]))
        #expect(labels["countsByTier"] == KindMetadata.ElementLabels(keys: ["1": "Standard", "3": "Comfort plus"]))
        #expect(labels["stages"] == KindMetadata.ElementLabels(values: ["prepared": "Prepared", "on_its_way": "On its way"]))
        #expect(labels["notes"] == nil && labels.count == 3)
    }

    /// `durationSeconds` for a declared kind that does not take it says what would (it said its kind.json turned
    /// the shortcut off, where the kind had no kind.json). From the second new-user trial.
    @Test func durationSecondsRefusedSaysWhatWouldTakeIt() throws {
        var center = Self.center(try Self.kind())
        let message = #"{"type":"start","attributesType":"IntervalWorkoutAttributes","attributes":{"athlete":"Ada","plan":"5x5"},"durationSeconds":60}"#
        do {
            let command = try ClientMessage.parse(Array(message.utf8), kinds: center.kinds).command.get()
            _ = try center.apply(command, now: t0, newID: { "d1" })
            Issue.record("durationSeconds was taken")
        } catch let error as ProtocolError {
            #expect(error.field == "durationSeconds" && error.message.contains(#"would say "durationShortcut": true"#), "\(error.message)")
        }
    }

    @Test func codableFailuresSpeakSwift() throws {
        let kind = try Self.kind()
        func failure(_ state: String) -> ProtocolError? {
            do throws(ProtocolError) {
                _ = try kind.state(fromCodable: try! JSONValue.parse(Array(state.utf8)), field: "aps.content-state")
                return nil
            } catch { return error }
        }
        let missing = failure(#"{"distance":1.5,"phase":"work","interval":[\#(Self.ref0),\#(Self.ref0 + 60)]}"#)
        #expect(missing?.message.contains(#"keyNotFound "heartRate""#) == true)
        #expect(missing?.field == "aps.content-state.heartRate")
        let mismatch = failure(#"{"heartRate":1,"distance":1.5,"phase":"work","interval":[\#(Self.ref0),"soon"]}"#)
        #expect(mismatch?.message.contains("typeMismatch Double at interval[1]") == true)
        let sprint = failure(#"{"heartRate":1,"distance":1.5,"phase":"sprint","interval":[\#(Self.ref0),\#(Self.ref0 + 60)]}"#)
        #expect(sprint?.message.contains(#"dataCorrupted: invalid enum raw value "sprint" for Phase"#) == true)
    }

    @Test func pushesAreJudgedInSwiftsTermsAndWarnAboutIgnoredKeys() throws {
        var center = Self.center(try Self.kind())
        var ids = IDs()
        let start = #"{"aps":{"timestamp":\#(t0.timeIntervalSince1970),"event":"start","attributes-type":"IntervalWorkoutAttributes","attributes":{"athlete":"Ada","plan":"5x5","coach":"Bo"},"content-state":\#(Self.state),"alert":{"title":"Go","body":"Go"}}}"#
        let started = try center.applyPush(try Self.push(start), pushToken: Self.startToken, pushToStartToken: Self.startToken,
                                           now: t0, newID: { ids.make() })
        #expect(started.verdict == .applied)
        #expect(started.warnings.contains { $0.contains("coach") })
        let token = try #require(center.activities["a1"]?.pushToken)
        #expect(center.activities["a1"]?.timer != nil)

        let bad = #"{"aps":{"timestamp":\#(t0.timeIntervalSince1970 + 1),"event":"update","content-state":{"distance":1,"phase":"work","interval":[\#(Self.ref0),\#(Self.ref0 + 60)]}}}"#
        let dropped = try center.applyPush(try Self.push(bad), pushToken: token, pushToStartToken: Self.startToken, now: t0 + 1, newID: { ids.make() })
        #expect(dropped.verdict.name == "dropped" && dropped.cause == .undecodableContentState)
        #expect(dropped.verdict.reason?.contains(#"keyNotFound "heartRate""#) == true)

        let extra = #"{"aps":{"timestamp":\#(t0.timeIntervalSince1970 + 2),"event":"update","content-state":{"heartRate":1,"hartRate":2,"distance":1,"phase":"rest","interval":[\#(Self.ref0),\#(Self.ref0 + 60)]}}}"#
        let applied = try center.applyPush(try Self.push(extra), pushToken: token, pushToStartToken: Self.startToken, now: t0 + 2, newID: { ids.make() })
        #expect(applied.verdict == .applied)
        #expect(PushResult(applied, apnsId: "x").warning?.contains("hartRate") == true)
    }

    @Test func aChangedDeclarationReportsTheProblem() throws {
        let kind = try Self.kind()
        let (state, _) = try kind.state(fromCodable: try JSONValue.parse(Array(Self.state.utf8)), field: "s")
        let attributes = try kind.attributes(from: .object(["athlete": .string("Ada"), "plan": .string("tabata")]), field: "a")
        #expect(kind.problem(attributes: attributes, state: state) == nil)
        let stricter = try Self.kind(DeclarationFixtures.intervalWorkout.replacingOccurrences(of: "var note: String?", with: "var note: String"))
        #expect(stricter.problem(attributes: attributes, state: state)?.contains("content.state.note") == true)
    }
}

/// A reload with a stricter declaration marks the activity, and keeps it.
struct DeclaredKindReloadTests {
    @Test func replaceKindsMarksAndKeeps() throws {
        let kind = try DeclaredKindTests.kind(metadata: KindMetadata(name: "interval"))
        var center = DeclaredKindTests.center(kind)
        var ids = IDs()
        let start = #"{"type":"start","attributesType":"interval","attributes":{"athlete":"Ada","plan":"5x5"},"content":{"state":{"heartRate":1,"distance":1,"phase":"work","interval":{"start":"2026-12-01T10:00:00Z","end":"2026-12-01T10:10:00Z"}},"relevanceScore":0}}"#
        let command = try ClientMessage.parse(Array(start.utf8), kinds: center.kinds).command.get()
        _ = try center.apply(command, now: t0, newID: { ids.make() })
        #expect(center.activities["a1"]?.kindProblem == nil)
        let stricter = try DeclaredKindTests.kind(DeclarationFixtures.intervalWorkout.replacingOccurrences(of: "var note: String?", with: "var note: String"),
                                                  metadata: KindMetadata(name: "interval"))
        center.replaceKinds(KindRegistry(KindRegistry.builtIn.all + [stricter]))
        #expect(center.activities["a1"]?.kindProblem?.contains("content.state.note") == true)
        // A marked activity's countdown is not changed either: pause, resume and extend are refused.
        for json in [#"{"type":"pause","activityId":"a1"}"#, #"{"type":"extend","activityId":"a1","seconds":60}"#] {
            let change = try ClientMessage.parse(Array(json.utf8), kinds: center.kinds).command.get()
            let error = #expect(throws: ProtocolError.self) { _ = try center.apply(change, now: t0, newID: { ids.make() }) }
            #expect(error?.message.contains("no longer matches its kind") == true, "\(String(describing: error))")
            #expect(error?.message.hasSuffix("send an update with a state that does") == true, "\(String(describing: error))")
        }
        // Attributes that no longer decode cannot be mended by an update (they are fixed): the error says what can
        // (it said to send an update). From the new-user trial.
        let otherAttributes = try DeclaredKindTests.kind(DeclarationFixtures.intervalWorkout.replacingOccurrences(of: "var athlete: String", with: "var athlete: Int"),
                                                         metadata: KindMetadata(name: "interval"))
        center.replaceKinds(KindRegistry(KindRegistry.builtIn.all + [otherAttributes]))
        let pause = try ClientMessage.parse(Array(#"{"type":"pause","activityId":"a1"}"#.utf8), kinds: center.kinds).command.get()
        let refused = #expect(throws: ProtocolError.self) { _ = try center.apply(pause, now: t0, newID: { ids.make() }) }
        #expect(refused?.message.contains("(attributes.athlete: ") == true, "\(String(describing: refused))")
        #expect(refused?.message.hasSuffix("its attributes cannot change: end it, or change the declaration back") == true,
                "\(String(describing: refused))")
        center.replaceKinds(KindRegistry.builtIn)
        #expect(center.activities["a1"]?.kindProblem?.contains("no longer loaded") == true)
        center.replaceKinds(KindRegistry(KindRegistry.builtIn.all + [kind]))
        #expect(center.activities["a1"]?.kindProblem == nil)
    }
}

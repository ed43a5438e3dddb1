import Foundation
import Testing
@testable import LiveActivityCore
import KindFixtures

/// Kind folders' `kind.json`: the shipped files match the built-in kinds' defaults, and bad files are errors
/// naming the file and line.
struct KindMetadataTests {
    private static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private static func shipped(_ name: String) throws -> KindFolder {
        let folder = repo.appendingPathComponent("Kinds/\(name)")
        var files: [String: String] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            files[file] = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
        }
        return try KindFolder.make(name: name, path: "Kinds/\(name)", files: files)
    }

    @Test func shippedFoldersAreDeclaredKinds() throws {
        let workout = try Self.shipped("workout")
        #expect(workout.metadata.countdown == "workoutTimer" && workout.metadata.durationShortcut)
        #expect(workout.metadata.enums["workout"]?.map(\.value) == ["jogging", "aerobics", "yoga"])
        #expect(workout.presentations == KindFolder.templateFiles)
        #expect(workout.attributesSource?.contains("struct WorkoutWidgetAttributes: ActivityAttributes") == true)
        #expect(try KindRegistry.kind(for: workout) is DeclaredKind)
        let emoji = try Self.shipped("emoji")
        #expect(emoji.metadata.limits[.attributes]?["name"] == FieldLimits(minLength: 1, maxLength: 64, controlCharacters: false))
        #expect(emoji.metadata.limits[.contentState]?["emoji"]?.maxScalars == 64)
        #expect(emoji.presentations == KindFolder.templateFiles)
        #expect(try KindRegistry.kind(for: emoji).attributesType == "emoji")
    }

    @Test func limitsAreReadAndBadOnesNamed() throws {
        let metadata = try KindMetadata.parse(#"{"limits": {"attributes": {"url": {"schemes": ["HTTPS"], "maxLength": 10}}}}"#, file: "k.json", folderName: "k")
        #expect(metadata.limits[.attributes]?["url"] == FieldLimits(maxLength: 10, schemes: ["https"]))
        for (text, named) in [(#"{"limits": {"attributes": {"url": {"maxLength": -1}}}}"#, "limits.attributes.url.maxLength"),
                              (#"{"limits": {"attributes": {"url": {"schemes": []}}}}"#, "limits.attributes.url.schemes"),
                              (#"{"limits": {"content": {}}}"#, "limits.content")] {
            #expect { _ = try KindMetadata.parse(text, file: "k.json", folderName: "k") } throws: { error in
                "\(error)".contains(named)
            }
        }
    }

    @Test func badJSONNamesTheFileAndLine() {
        #expect(throws: KindFolderError.self) {
            _ = try KindFolder.make(name: "x", path: "Kinds/x", files: ["kind.json": "{\n  \"name\": \"x\",\n  oops\n}"])
        }
        do {
            _ = try KindMetadata.parse("{\n  \"name\": \"x\",\n  oops\n}", file: "Kinds/x/kind.json", folderName: "x")
        } catch {
            #expect(error.file == "Kinds/x/kind.json")
            #expect(error.description.hasPrefix("Kinds/x/kind.json"))
            #expect(error.line == 3, "\(error)")
        }
    }

    @Test func badKeysNameTheKey() {
        for (text, key) in [(#"{"name": "Bad Name"}"#, "name"), (#"{"durationShortcut": true}"#, "durationShortcut"),
                            (#"{"swiftNames": [1]}"#, "swiftNames[0]"), (#"{"enums": {"w": [{"label": "x"}]}}"#, "enums.w[0].value")] {
            do {
                _ = try KindMetadata.parse(text, file: "k.json", folderName: "k")
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.message.contains(key), "\(error)")
            }
        }
        #expect((try? KindMetadata.parse("{}", file: "k.json", folderName: "k"))?.name == "k")
    }

    @Test func registryLooksUpByWireAndSwiftName() throws {
        let registry = KindRegistry.builtIn
        #expect(registry.kind(forPushType: "WorkoutWidgetAttributes")?.attributesType == "workout")
        #expect(throws: ProtocolError.self) { _ = try registry.kind(named: "interval", field: "attributesType") }
        let workout = try #require(registry.kind(forPushType: "workout"))
        #expect(KindRegistry([workout, workout]).names == ["workout"])
    }
}

/// Stored activities survive a change of kinds: kept as stored, without a countdown, never refused.
struct StoredActivityKindChangeTests {
    @Test func anActivityOfAKindNoLongerKnownIsKept() throws {
        let t0 = Date(timeIntervalSince1970: 1_795_971_600)
        let state: JSONValue = .object(["workoutTimer": .object(["start": .string(ISODate.format(t0)), "end": .string(ISODate.format(t0 + 70))])])
        let activity = Activity(id: "a", attributesType: "workout", attributes: .object(["workout": .string("yoga")]),
                                content: ActivityContent(state: state, staleDate: t0 + 70),
                                timer: TimerRange(start: t0, end: t0 + 70), startDate: t0)
        let text = StoredActivity.encode(activity)
        #expect(try StoredActivity.decode(text, kinds: .builtIn).timer == activity.timer)
        let withoutWorkout = KindRegistry(KindRegistry.builtIn.all.filter { $0.attributesType != "workout" })
        let kept = try StoredActivity.decode(text, kinds: withoutWorkout)
        #expect(kept.id == "a" && kept.timer == nil && kept.content.state == state)
        #expect(StoredActivity.encode(kept) == text)
    }
}

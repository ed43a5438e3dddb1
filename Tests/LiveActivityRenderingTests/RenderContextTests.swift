import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityRendering

/// The render context: the Swift builder gives, for each shared case, exactly the object the page's
/// `Public/js/render-context.js` gives (Tests/fixtures/render-context/cases.json; the integration test
/// test_kinds.py runs the JavaScript side against the same file).
struct RenderContextTests {
    private static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private static func kind(_ name: String) throws -> KindMetadata {
        let file = repo.appendingPathComponent("Kinds/\(name)/kind.json")
        return try KindMetadata.parse(String(contentsOf: file, encoding: .utf8), file: file.path, folderName: name)
    }

    @Test func sharedCasesGiveTheSameContextAsTheScript() throws {
        let text = try String(contentsOf: Self.repo.appendingPathComponent("Tests/fixtures/render-context/cases.json"), encoding: .utf8)
        guard case .array(let cases) = try JSONValue.parse(Array(text.utf8)) else { Issue.record("not an array"); return }
        #expect(cases.count >= 6)
        for item in cases {
            let name = item["name"]?.stringValue ?? "?"
            let kind = try item["kind"]!.stringValue.map(Self.kind) ?? DisplayValuesTests.inlineKind(item["kind"]!)
            let context = RenderContext.build(json: item["activity"]!, kind: kind,
                                              nowMs: Int64(item["nowMs"]!.numberValue!),
                                              timeZoneOffsetMinutes: Int(item["offsetMinutes"]!.numberValue!))
            #expect(context == item["expected"], "\(name)")
        }
    }

    @Test func countdownIsClampedFrozenAndRanged() throws {
        let kind = try Self.kind("workout")
        let t0 = Date(timeIntervalSince1970: 1_795_971_600) // 2026-11-29T17:00:00Z
        let timer = TimerRange(start: t0, end: t0 + 70, pausedAt: t0 + 20)
        let state: JSONValue = .object(["workoutTimer": .object(["start": .string(ISODate.format(t0)), "end": .string(ISODate.format(t0 + 70))]),
                                        "pausedAt": .string(ISODate.format(t0 + 20))])
        let activity = Activity(id: "a", attributesType: "workout", attributes: .object(["workout": .string("yoga")]),
                                content: ActivityContent(state: state, staleDate: t0 + 600), timer: timer, startDate: t0)
        let context = RenderContext.build(activity, kind: kind, now: t0 + 300, timeZoneOffsetMinutes: 60)
        #expect(context["workoutTimer"]?["countdown"] == .string("0:50"))   // frozen at pausedAt
        #expect(context["workoutTimer"]?["range"] == .string("18:00 – 18:01"))
        #expect(context["workoutTimer"]?["paused"] == .bool(true))
        #expect(context["workout"]?["label"] == .string("Yoga"))
        #expect(context["activity"]?["badge"] == .string("Paused"))
        var running = activity
        running.content.state = .object(["workoutTimer": state["workoutTimer"]!])
        #expect(RenderContext.build(running, kind: kind, now: t0 + 3600)["workoutTimer"]?["countdown"] == .string("0:00"))
    }

    @Test func titlesFillPathsAndIgnoreTheRest() {
        let context: JSONValue = .object(["name": .string("Run"), "n": .number(3), "workout": .object(["label": .string("Yoga")])])
        #expect(KindTitle.render("{{workout.label}}", context: context) == "Yoga")
        #expect(KindTitle.render(" {{ name }} #{{n}}{{missing}} ", context: context) == "Run #3")
        #expect(KindTitle.render("{{workout}} {{unclosed", context: context) == "{{unclosed")
    }
}

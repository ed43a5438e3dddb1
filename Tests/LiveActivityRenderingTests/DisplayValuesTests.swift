import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityRendering

/// The render context's `display` values: the Swift builder gives, for each shared case, exactly what the page's
/// `Public/js/display-values.js` gives (Tests/fixtures/render-context/display-cases.json; test_face.py runs the
/// JavaScript side against the same file).
struct DisplayValuesTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func sharedCasesGiveWhatTheScriptGives() throws {
        let text = try String(contentsOf: Self.repo.appendingPathComponent("Tests/fixtures/render-context/display-cases.json"), encoding: .utf8)
        guard case .array(let cases) = try JSONValue.parse(Array(text.utf8)) else { Issue.record("not an array"); return }
        #expect(cases.count >= 3)
        for item in cases {
            let kindText = String(decoding: try JSONEncoder().encode(item["kind"]!), as: UTF8.self)
            let kind = try KindMetadata.parse(kindText, file: "case", folderName: "x")
            let display = DisplayValues.build(item["fields"]?.objectValue ?? [:], context: item["context"]?.objectValue ?? [:],
                                              kind: kind, nowMs: Int64(item["nowMs"]!.numberValue!),
                                              startMs: item["startMs"]?.numberValue.map { Int64($0) },
                                              freezeMs: item["freezeMs"]?.numberValue.map { Int64($0) },
                                              offsetMinutes: Int(item["offsetMinutes"]!.numberValue!))
            #expect(display == item["expected"], "\(item["name"]?.stringValue ?? "?")")
        }
    }
}

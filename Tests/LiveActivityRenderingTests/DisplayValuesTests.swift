import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityRendering

/// The render context's `display` values: the Swift builder gives, for each shared case, exactly what the page's
/// `Public/js/display-values.js` gives (Tests/fixtures/render-context/display-cases.json; test_face.py runs the
/// JavaScript side against the same file).
struct DisplayValuesTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A case's own kind, as `GET /kinds` lists it: `kind.json`'s keys, with what the server adds from a
    /// declaration (`dictionaries`, the enums' `associatedValues`).
    static func inlineKind(_ value: JSONValue) throws -> KindMetadata {
        let text = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
        var kind = try KindMetadata.parse(text, file: "case", folderName: "x")
        for (field, labels) in value["elementLabels"]?.objectValue ?? [:] {
            kind.elementLabels[field] = KindMetadata.ElementLabels(keys: (labels["keys"]?.objectValue ?? [:]).compactMapValues(\.stringValue),
                                                                   values: (labels["values"]?.objectValue ?? [:]).compactMapValues(\.stringValue))
        }
        for (field, form) in value["dictionaries"]?.objectValue ?? [:] {
            kind.dictionaries[field] = form.stringValue.flatMap(KindMetadata.DictionaryForm.init(rawValue:))
        }
        for (field, entries) in value["enums"]?.objectValue ?? [:] {
            guard case .array(let list) = entries else { continue }
            for (index, entry) in list.enumerated() {
                guard case .array(let values)? = entry["associatedValues"] else { continue }
                kind.enums[field]?[index].associatedValues = values.map {
                    KindMetadata.AssociatedValue(key: $0["key"]?.stringValue ?? "", label: $0["label"]?.stringValue ?? "",
                                                 valueLabels: ($0["valueLabels"]?.objectValue ?? [:]).compactMapValues(\.stringValue))
                }
            }
        }
        return kind
    }

    @Test func sharedCasesGiveWhatTheScriptGives() throws {
        let text = try String(contentsOf: Self.repo.appendingPathComponent("Tests/fixtures/render-context/display-cases.json"), encoding: .utf8)
        guard case .array(let cases) = try JSONValue.parse(Array(text.utf8)) else { Issue.record("not an array"); return }
        #expect(cases.count >= 3)
        for item in cases {
            let kind = try Self.inlineKind(item["kind"]!)
            let display = DisplayValues.build(item["fields"]?.objectValue ?? [:], context: item["context"]?.objectValue ?? [:],
                                              kind: kind, nowMs: Int64(item["nowMs"]!.numberValue!),
                                              startMs: item["startMs"]?.numberValue.map { Int64($0) },
                                              freezeMs: item["freezeMs"]?.numberValue.map { Int64($0) },
                                              offsetMinutes: Int(item["offsetMinutes"]!.numberValue!))
            #expect(display == item["expected"], "\(item["name"]?.stringValue ?? "?")")
        }
    }
}

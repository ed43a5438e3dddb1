import Foundation
import LiveActivityCore
import LiveActivityRendering

/// `liveactivity kinds new DIR --from Attributes.swift`: a new kind folder from an app's declaration, as a
/// starting point to edit: `Attributes.swift` (copied), `kind.json` (the folder's name as the wire name, the
/// struct's name in words as the label, the Swift name, a label per enum value) and the five templates of the
/// generated layout (``GeneratedLayout``), which the server would draw without them.
///
/// The folder is read back as the server reads it before the command reports success.
public enum KindScaffold {
    /// Writes the folder.
    /// - Parameters:
    ///   - folder: the new kind folder; it must not exist, or be empty. Its name is the wire name.
    ///   - source: the app's `Attributes.swift`.
    ///   - swiftName: which struct to read when several conform to `ActivityAttributes`.
    /// - Returns: the paths written, in order.
    /// - Throws: ``KindFolderError`` naming the file and line of what is wrong.
    public static func write(to folder: URL, from source: URL, swiftName: String? = nil) throws(KindFolderError) -> [String] {
        let name = folder.lastPathComponent
        // The names a kind folder may have (KindRegistry+Folder.swift): a kind name, or a Swift-like one (`DeliveryTracker`).
        guard KindMetadata.isKindName(name) || KindMetadata.isSwiftTypeName(name) else {
            throw KindFolderError(file: folder.path, line: nil, message: "the folder's name is the kind's wire name: "
                                  + "1…64 of a-z, 0-9, - and _, or a Swift-like name of letters, digits and _ (DeliveryTracker)")
        }
        guard FileManager.default.fileExists(atPath: source.path) else {
            throw KindFolderError(file: source.path, line: nil, message: "no such file (--from names the app's Attributes.swift)")
        }
        let existing = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        guard existing.filter({ !$0.hasPrefix(".") }).isEmpty else {
            throw KindFolderError(file: folder.path, line: nil, message: "is not empty; kinds new writes a new folder and overwrites nothing")
        }
        guard let text = FileManager.default.contents(atPath: source.path).flatMap({ String(data: $0, encoding: .utf8) }) else {
            throw KindFolderError(file: source.path, line: nil, message: "cannot be read as UTF-8 text")
        }
        let declaration: ActivityDeclaration
        do throws(DeclarationError) {
            declaration = try ActivityDeclaration(swiftSource: text, file: source.path, attributesType: swiftName)
        } catch {
            let hint = swiftName == nil && error.message.contains("several structs") ? " (kinds new: --swift-name NAME)" : ""
            throw KindFolderError(file: error.file, line: error.line, message: error.message + hint)
        }
        let kindJSON = kindJSON(name: name, declaration: declaration)
        let metadata = try KindMetadata.parse(kindJSON, file: folder.appendingPathComponent("kind.json").path, folderName: name)
        let kind: DeclaredKind
        do throws(ProtocolError) {
            kind = try DeclaredKind(declaration: declaration, metadata: metadata)
        } catch {
            throw KindFolderError(file: source.path, line: nil, message: error.message)
        }
        var files = [("Attributes.swift", text), ("kind.json", kindJSON)]
        let templates = GeneratedLayout.templates(LayoutPlan(declaration: kind.declaration, metadata: kind.metadata))
        files += KindFolder.templateFiles.map { ("\($0).html", templates[$0] ?? "") }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (file, content) in files {
                try Data(content.utf8).write(to: folder.appendingPathComponent(file), options: .withoutOverwriting)
            }
        } catch {
            throw KindFolderError(file: folder.path, line: nil, message: "cannot be written: \(error.localizedDescription)")
        }
        _ = try KindRegistry.kind(for: KindLoader.read(folder, name: name))  // read back as the server reads it
        return files.map { folder.appendingPathComponent($0.0).path }
    }

    /// `kind.json`'s text: name, label, Swift name, a generic icon, the countdown the generated layout leads with
    /// (``LayoutPlan``'s choice) when it is a `ContentState` field (the only place `kind.json`'s `countdown` may
    /// name), and each top-level enum field's values with a label (a raw value that reads as a sentence is kept;
    /// an identifier is put in words: `in_progress` → "In progress"; another raw value by its case's name, and
    /// `"sentAs": "rawValue"`, so that the wire keeps the app's numbers).
    static func kindJSON(name: String, declaration: ActivityDeclaration) -> String {
        var object: [String: JSONValue] = [
            "name": .string(name),
            "label": .string(Words.title(ofStruct: declaration.attributesType)),
            "swiftNames": .array([.string(declaration.attributesType)]),
            "fallbackIcon": .string("activity"),
        ]
        let planned = LayoutPlan(declaration: declaration, metadata: KindMetadata(name: name)).choice(for: .lockScreen).countdown
        if let key = planned?.key, declaration.contentState.fields.contains(where: { $0.key == key }) {
            object["countdown"] = .string(key)
        }
        var enums: [String: JSONValue] = [:]
        for field in declaration.contentState.fields + declaration.attributes.fields {
            guard case .enumeration(let enumName) = field.type.unwrapped, let declared = declaration.enums[enumName] else { continue }
            enums[field.key] = .array(declared.cases.map { item in
                var entry: [String: JSONValue] = [:]
                if case .string(let raw) = item.rawValue {
                    entry["value"] = .string(raw)
                    entry["label"] = .string(Words.label(ofRawValue: raw))
                } else {
                    // Labelled by the case's name, sent as the app's number: as with no kind.json at all.
                    entry["value"] = .string(item.name)
                    entry["rawValue"] = item.rawValue
                    entry["label"] = .string(Words.label(ofField: item.name))
                    entry["sentAs"] = .string("rawValue")
                }
                return .object(entry)
            })
        }
        if !enums.isEmpty { object["enums"] = .object(enums) }
        let data = (try? JSONEncoder.prettySorted.encode(JSONValue.object(object))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

private extension JSONEncoder {
    /// Indented, keys sorted: a file people edit.
    static var prettySorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

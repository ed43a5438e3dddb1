import Foundation
import LiveActivityCore

/// This checkout's `Kinds/` folder, for servers made in tests with a throw-away public folder
/// (`ServerConfiguration.kindsDirectory`).
public let repositoryKindsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Kinds")

extension KindRegistry {
    /// The kinds of this checkout's `Kinds/` folder (`workout`, `emoji`), read once, for tests that need the
    /// built-in kinds without a server. Traps when a folder does not load: the tests cannot run without them.
    public static let builtIn: KindRegistry = {
        let root = repositoryKindsDirectory
        let kinds = ["workout", "emoji"].map { name -> any ActivityKind in
            let folder = root.appendingPathComponent(name)
            var files: [String: String] = [:]
            for file in ["kind.json", "Attributes.swift"] + KindFolder.templateFiles.map({ "\($0).html" }) {
                if let text = try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8) { files[file] = text }
            }
            do {
                return try KindRegistry.kind(for: try KindFolder.make(name: name, path: folder.path, files: files))
            } catch {
                fatalError("Kinds/\(name) does not load: \(error)")
            }
        }
        return KindRegistry(kinds)
    }()
}

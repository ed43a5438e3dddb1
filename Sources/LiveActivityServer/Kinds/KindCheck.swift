import Foundation
import LiveActivityCore
import LiveActivityRendering

/// What `liveactivity kinds check DIR` reports: every kind folder of a directory read as the server reads it.
///
/// Each folder's `kind.json` and `Attributes.swift` are read into a kind (``KindRegistry/kind(for:)``) and
/// each template is parsed (``MustacheTemplate/init(parsing:name:)``). Nothing is served; no server is needed.
public struct KindCheck: Sendable {
    /// The kinds that read, as `(wire name, folder path)`, in folder order.
    public var kinds: [(name: String, path: String)]
    /// One `file:line: message` per problem, in folder order (an empty list: every folder reads).
    public var problems: [String]
    /// Warnings that do not stop a kind from loading: a Swift struct name two folders declare, so that a push
    /// naming only it is refused as ambiguous (``KindRegistry/swiftNameClashes``). `kinds check` prints them
    /// on standard error and still exits 0.
    public var warnings: [String] = []

    /// Why `directory` cannot be read as a folder of kind folders, or `nil` when it can: it is missing, it is a
    /// file, or it is a kind folder itself (it holds `Attributes.swift` or `kind.json`). The one rule both
    /// `kinds check DIR` and `serve --kinds DIR` apply.
    /// - Parameter advice: what to do instead, given the path of the folder that holds a kind folder (for
    ///   `kinds check`: check that folder; for `serve`: pass it to `--kinds`).
    public static func directoryProblem(_ directory: URL, advice: (_ parent: String) -> String) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) else {
            return "no such folder"
        }
        guard isDirectory.boolValue else { return "is a file, not a folder of kind folders" }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        if ["Attributes.swift", "kind.json"].contains(where: names.contains) {
            return "this is a kind folder itself: " + advice(directory.standardizedFileURL.deletingLastPathComponent().path)
        }
        return nil
    }

    /// Checks every kind folder of `directory`, loaded after the built-in kinds as `serve --kinds` loads it: a
    /// folder whose kind has a name already loaded (a built-in's, or an earlier folder's) is a problem.
    /// - Parameters:
    ///   - directory: a folder of kind folders (`Kinds/`, or what `serve --kinds` is given).
    ///   - builtIn: the built-in `Kinds/` folder `serve` loads first (`nil`: none; `directory` itself: checked alone).
    /// - Returns: the kinds that read and the problems; a missing or unreadable `directory` is one problem.
    public static func check(_ directory: URL, builtIn: URL? = nil) -> KindCheck {
        var result = KindCheck(kinds: [], problems: [])
        var read: [any ActivityKind] = []
        var isDirectory: ObjCBool = false
        if let problem = directoryProblem(directory, advice: { "check the folder that holds it (liveactivity kinds check \($0))" }) {
            result.problems.append("\(directory.path): " + (problem.hasPrefix("this is") ? "no kind folders found; " : "") + problem)
            return result
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
        for name in names where !name.hasPrefix(".") {
            let folderURL = directory.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: folderURL.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            do throws(KindFolderError) {
                let folder = try KindLoader.read(folderURL, name: name)
                let kind = try KindRegistry.kind(for: folder)
                var fine = true
                for presentation in folder.presentations {
                    let file = "\(folder.path)/\(presentation).html"
                    do throws(TemplateError) {
                        _ = try MustacheTemplate(parsing: folder.templates[presentation] ?? "", name: file)
                    } catch {
                        result.problems.append(error.description)
                        fine = false
                    }
                }
                if fine { result.kinds.append((kind.attributesType, folder.path)) }
                read.append(kind)
            } catch {
                result.problems.append(error.description)
            }
        }
        // Loaded as `serve` loads them (KindLoader.load): after the built-in kinds, a name already loaded is skipped.
        let loadsAlone = builtIn.map { $0.standardizedFileURL.path == directory.standardizedFileURL.path } ?? true
        let loaded = KindLoader.load((loadsAlone ? [] : builtIn.map { [$0] } ?? []) + [directory])
        let skipped = loaded.errors.filter { !loaded.failed.contains($0.file) && $0.file.hasPrefix(directory.path + "/") }
        // What the folder loop above reported already is said once (a kind whose Attributes.swift does not read
        // was printed twice).
        for problem in skipped.map(\.description) where !result.problems.contains(problem) { result.problems.append(problem) }
        result.kinds.removeAll { kind in skipped.contains { $0.file == kind.path } }
        // The folders of one directory are all user kinds (as `serve --kinds` loads them).
        let paths = Dictionary(result.kinds.map { ($0.name, $0.path) }, uniquingKeysWith: { first, _ in first })
        result.warnings = KindCatalog.warnings(for: KindRegistry(read).swiftNameClashes) { paths[$0] }
        if result.kinds.isEmpty, result.problems.isEmpty {
            // Checking nothing is not a pass: an empty folder (a kind folder given instead of its parent is above).
            result.problems.append("\(directory.path): no kind folders found (each kind is a folder holding Attributes.swift, kind.json and templates)")
        }
        return result
    }
}

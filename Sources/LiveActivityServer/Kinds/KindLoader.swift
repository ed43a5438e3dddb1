import Foundation
import LiveActivityCore

/// Reads kind folders from disk into a ``KindCatalog``.
///
/// Each directory given holds one folder per kind (`Kinds/workout/`, `Kinds/emoji/`). A folder that cannot be
/// read (bad `kind.json`, an `Attributes.swift` the declaration reader refuses) is skipped with an error in the log
/// naming the file and line; the others keep working. The built-in kinds are folders like any other
/// (`Kinds/` beside the public folder): a server without them has no kinds (`serve` refuses to start).
enum KindLoader {
    /// Largest file read from a kind folder, in bytes.
    static let maximumFileBytes = 256 * 1024
    /// The reference apps' kinds, listed first in this order (`Kinds/workout`, `Kinds/emoji`); the rest follow
    /// in the order their folders were read.
    static let referenceKinds = [ClientMessage.defaultAttributesType, "emoji"]

    /// `kinds` with the ``referenceKinds`` first, in that order; the others keep their order.
    static func inListingOrder(_ kinds: [any ActivityKind]) -> [any ActivityKind] {
        let rank = { (kind: any ActivityKind) in referenceKinds.firstIndex(of: kind.attributesType) ?? referenceKinds.count }
        return kinds.enumerated().sorted { a, b in
            let (x, y) = (rank(a.element), rank(b.element))
            return x != y ? x < y : a.offset < b.offset
        }.map(\.element)
    }

    /// Loads every kind folder of `directories`, in order (a later folder with an existing kind's name is
    /// skipped with an error). The first directory holds the built-in kinds (``ServerConfiguration/allKindsDirectories``):
    /// a kind from a later one (`serve --kinds`) takes a Swift name from them (``KindRegistry/match(pushType:)``).
    /// - Returns: the catalog, one ``KindFolderError`` per folder skipped, and the paths of the folders that
    ///   failed to read (not those skipped for a name already loaded).
    static func load(_ directories: [URL]) -> (catalog: KindCatalog, errors: [KindFolderError], failed: Set<String>) {
        var folders: [KindFolder] = []
        var errors: [KindFolderError] = []
        var failed = Set<String>()
        var builtInPaths = Set<String>()
        for (index, directory) in directories.enumerated() {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            for name in names.sorted() where !name.hasPrefix(".") {
                let folder = directory.appendingPathComponent(name)
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
                do throws(KindFolderError) {
                    folders.append(try read(folder, name: name))
                    if index == 0 { builtInPaths.insert(folder.path) }
                } catch {
                    errors.append(error)
                    failed.insert(folder.path)
                }
            }
        }
        return (catalog(from: folders, builtIn: builtInPaths, errors: &errors, failed: &failed), errors, failed)
    }

    /// The catalog of `folders`: the built-in kinds first (with their folder's metadata when there is one).
    /// - Parameter builtIn: the paths of the folders read from the built-in `Kinds/` directory.
    static func catalog(from folders: [KindFolder], builtIn: Set<String> = [], errors: inout [KindFolderError],
                        failed: inout Set<String>) -> KindCatalog {
        var kinds: [any ActivityKind] = []
        var byName: [String: KindFolder] = [:]
        for folder in folders {
            let kind: any ActivityKind
            do throws(KindFolderError) {
                kind = try KindRegistry.kind(for: folder)
            } catch {
                errors.append(error)
                failed.insert(folder.path)
                continue
            }
            guard byName[kind.attributesType] == nil else {
                errors.append(KindFolderError(file: folder.path, line: nil, message: "a kind named \"\(kind.attributesType)\" is already loaded; skipped"))
                continue
            }
            byName[kind.attributesType] = folder
            kinds.append(kind)
        }
        let builtInNames = Set(byName.filter { builtIn.contains($0.value.path) }.keys)
        return KindCatalog(registry: KindRegistry(inListingOrder(kinds), builtIn: builtInNames), folders: byName)
    }

    /// Reads one folder's files.
    /// - Throws: ``KindFolderError`` naming the file that cannot be read or is wrong.
    static func read(_ folder: URL, name: String) throws(KindFolderError) -> KindFolder {
        var files: [String: String] = [:]
        for file in ["kind.json", "Attributes.swift"] + KindFolder.templateFiles.map({ "\($0).html" }) {
            let url = folder.appendingPathComponent(file)
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw KindFolderError(file: url.path, line: nil, message: "cannot be read")
            }
            guard data.count <= maximumFileBytes else {
                throw KindFolderError(file: url.path, line: nil, message: "is \(data.count) bytes; at most \(maximumFileBytes) are read")
            }
            guard let text = String(data: data, encoding: .utf8) else {
                throw KindFolderError(file: url.path, line: nil, message: "is not UTF-8 text")
            }
            files[file] = text
        }
        return try KindFolder.make(name: name, path: folder.path, files: files)
    }
}

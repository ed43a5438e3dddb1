import Foundation
import LiveActivityCore

/// The kinds the server knows: the registry that validates activities, and the folders they came from
/// (templates, declaration). An immutable value: the server holds the current one and swaps it on reload.
struct KindCatalog: Sendable {
    /// The kinds that validate starts, updates and pushes.
    var registry: KindRegistry
    /// The folders read, by wire name.
    var folders: [String: KindFolder]

    /// This catalog, plus each kind of `previous` whose folder is among `failed` (it was loaded before and
    /// now does not read) and which this catalog lacks: a folder broken while the server runs keeps its last
    /// good kind until it is mended, so its activities and pushes go on working.
    /// - Returns: the merged catalog and the wire names kept from `previous`.
    func keeping(_ previous: KindCatalog, whereFolderFailed failed: Set<String>) -> (catalog: KindCatalog, kept: [String]) {
        var kinds = registry.all
        var folders = self.folders
        var kept: [String] = []
        for kind in previous.registry.all where folders[kind.attributesType] == nil {
            guard let folder = previous.folders[kind.attributesType], failed.contains(folder.path) else { continue }
            kinds.append(kind)
            folders[kind.attributesType] = folder
            kept.append(kind.attributesType)
        }
        let builtIn = registry.builtInNames.union(previous.registry.builtInNames.intersection(kept))
        return (KindCatalog(registry: KindRegistry(KindLoader.inListingOrder(kinds), builtIn: builtIn), folders: folders), kept)
    }

    /// One warning per Swift name several kinds declare (``KindRegistry/swiftNameClashes``), naming the
    /// folders: a user kind taking it from a built-in one, or user kinds between which it is ambiguous (a push
    /// naming only it is refused). Logged at load and reload; `kinds check` prints the same sentences.
    var nameWarnings: [String] {
        Self.warnings(for: registry.swiftNameClashes) { name in folders[name]?.path }
    }

    /// The sentences of ``nameWarnings`` for `clashes`, with `path` giving each kind's folder.
    static func warnings(for clashes: [KindRegistry.SwiftNameClash], path: (String) -> String?) -> [String] {
        func named(_ name: String) -> String { "'\(name)'" + (path(name).map { " (\($0))" } ?? "") }
        return clashes.map { clash in
            if let winner = clash.winner {
                let others = clash.others.map { "'\($0)'" }.joined(separator: ", ")
                return "kind \(named(winner)) takes attributes-type \(clash.swiftName) from the built-in kind\(clash.others.count == 1 ? "" : "s") "
                    + "\(others); the built-in is still reachable by its name \(others)"
            }
            return "attributes-type \(clash.swiftName) is ambiguous: the kinds \(clash.others.map(named).joined(separator: " and ")) all declare it; "
                + "a push naming only \(clash.swiftName) is refused (400 BadPayload): send the kind's wire name "
                + "(\(clash.others.map { "\"\($0)\"" }.joined(separator: " or "))) as attributes-type, or give one struct another name"
        }
    }

    /// `GET /kinds`'s body: `{"kinds": [{name, label, swiftNames, countdown, durationShortcut, title, image,
    /// fallbackIcon, enums, presentations}]}`, in listing order.
    var json: JSONValue {
        .object(["kinds": .array(registry.all.map { kind in
            var object = kind.metadata.json.objectValue ?? [:]
            // A declared kind has all five: its own templates, or the generated layout (GeneratedLayout).
            let presentations = kind is DeclaredKind ? KindFolder.templateFiles : (folders[kind.attributesType]?.presentations ?? [])
            object["presentations"] = .array(presentations.map(JSONValue.string))
            return .object(object)
        })])
    }
}

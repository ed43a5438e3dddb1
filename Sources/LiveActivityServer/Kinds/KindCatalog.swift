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
        return (KindCatalog(registry: KindRegistry(KindLoader.inListingOrder(kinds)), folders: folders), kept)
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

import Foundation
import LiveActivityCore

/// The kinds the server knows: the registry that validates activities, and the folders they came from
/// (templates, declaration). An immutable value: the server holds the current one and swaps it on reload.
struct KindCatalog: Sendable {
    /// The kinds that validate starts, updates and pushes.
    var registry: KindRegistry
    /// The folders read, by wire name.
    var folders: [String: KindFolder]

    /// `GET /kinds`'s body: `{"kinds": [{name, label, swiftNames, countdown, durationShortcut, title, image,
    /// fallbackIcon, enums, presentations}]}`, in listing order.
    var json: JSONValue {
        .object(["kinds": .array(registry.all.map { kind in
            var object = kind.metadata.json.objectValue ?? [:]
            object["presentations"] = .array((folders[kind.attributesType]?.presentations ?? []).map(JSONValue.string))
            return .object(object)
        })])
    }
}

import Foundation

/// The activity kinds a server accepts: an immutable value, looked up by wire name or Swift name.
///
/// The server holds the current registry and swaps in a new one when kinds are reloaded; activities keep
/// their `attributesType` string, so they find their kind again in the new registry. Thread-safe (a value).
public struct KindRegistry: Sendable {
    /// Every kind, in listing order (the built-in kinds first).
    public let all: [any ActivityKind]

    /// Creates a registry; a later kind with the same wire name as an earlier one is ignored.
    public init(_ kinds: [any ActivityKind]) {
        var seen = Set<String>()
        all = kinds.filter { seen.insert($0.attributesType).inserted }
    }

    /// The wire names, in listing order.
    public var names: [String] { all.map(\.attributesType) }

    /// The kind whose `attributesType` or Swift type name is `name`, or `nil`.
    public func kind(forPushType name: String) -> (any ActivityKind)? {
        all.first { $0.attributesType == name || $0.swiftTypeNames.contains(name) }
    }

    /// The kind named `attributesType`.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `field` and the known kinds.
    public func kind(named attributesType: String, field: String) throws(ProtocolError) -> any ActivityKind {
        if let kind = all.first(where: { $0.attributesType == attributesType }) { return kind }
        let known = all.map { "\"\($0.attributesType)\"" }.joined(separator: ", ")
        throw ProtocolError.invalid(field, "unknown attributes type \"\(attributesType.prefix(64))\"; known types: \(known)")
    }

    /// The metadata of the kind named `attributesType`, or `nil`.
    public func metadata(named attributesType: String) -> KindMetadata? {
        all.first { $0.attributesType == attributesType }?.metadata
    }
}

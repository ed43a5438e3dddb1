import Foundation

/// The activity kinds a server accepts: an immutable value, looked up by wire name or Swift name.
///
/// The server holds the current registry and swaps in a new one when kinds are reloaded; activities keep
/// their `attributesType` string, so they find their kind again in the new registry. Thread-safe (a value).
///
/// Naming rule for a push's `attributes-type` (``match(pushType:)``): a kind's wire name always wins; else the
/// kinds that list the name among their Swift names: one kind from a user folder (`serve --kinds`) wins over
/// built-in ones (`Kinds/`); two or more user kinds make the name ambiguous (the push is refused); among
/// built-in kinds only, the first listed wins.
public struct KindRegistry: Sendable {
    /// Every kind, in listing order (the built-in kinds first).
    public let all: [any ActivityKind]
    /// The wire names of the built-in kinds (read from `Kinds/`); every other kind came from a user folder.
    public let builtInNames: Set<String>

    /// Creates a registry; a later kind with the same wire name as an earlier one is ignored.
    /// - Parameters:
    ///   - kinds: the kinds, in listing order.
    ///   - builtIn: the wire names of those read from the built-in `Kinds/` folder: a user kind takes a Swift
    ///     name from them (``match(pushType:)``). Default none: every kind is a user kind.
    public init(_ kinds: [any ActivityKind], builtIn: Set<String> = []) {
        var seen = Set<String>()
        all = kinds.filter { seen.insert($0.attributesType).inserted }
        builtInNames = builtIn.intersection(seen)
    }

    /// The wire names, in listing order.
    public var names: [String] { all.map(\.attributesType) }

    /// What a push's `attributes-type` names.
    public enum PushTypeMatch {
        /// The kind it names.
        case kind(any ActivityKind)
        /// A Swift name two or more user kinds declare: their wire names, in listing order.
        case ambiguous([String])
        /// No kind has that wire name or Swift name.
        case unknown
    }

    /// The kind a push's `attributes-type` names, by the naming rule (see the type's comment): a wire name
    /// first; then a Swift name, a user kind's over a built-in one's; two user kinds with it: ambiguous.
    public func match(pushType name: String) -> PushTypeMatch {
        if let kind = all.first(where: { $0.attributesType == name }) { return .kind(kind) }
        let claimants = all.filter { $0.swiftTypeNames.contains(name) }
        guard let first = claimants.first else { return .unknown }
        let users = claimants.filter { !builtInNames.contains($0.attributesType) }
        if users.count > 1 { return .ambiguous(users.map(\.attributesType)) }
        return .kind(users.first ?? first)
    }

    /// The kind whose `attributesType` or Swift type name is `name` (``match(pushType:)``), or `nil` when
    /// none is, or the Swift name is ambiguous.
    public func kind(forPushType name: String) -> (any ActivityKind)? {
        if case .kind(let kind) = match(pushType: name) { return kind }
        return nil
    }

    /// A Swift name more than one kind declares, and who gets it.
    public struct SwiftNameClash: Sendable, Equatable {
        /// The Swift struct name (`WorkoutAttributes`).
        public var swiftName: String
        /// The kind a push naming it reaches, or `nil` when it is ambiguous (two or more user kinds).
        public var winner: String?
        /// The other kinds declaring it, in listing order (for a winner: the built-in kinds it takes it from;
        /// ambiguous: every user kind declaring it).
        public var others: [String]
    }

    /// Every Swift name declared by more than one kind where a user kind is among them, sorted by name:
    /// a user kind taking it from built-in ones, or two user kinds making it ambiguous. A Swift name that is
    /// also some kind's wire name is not listed (the wire name wins).
    public var swiftNameClashes: [SwiftNameClash] {
        var claimants: [String: [String]] = [:]
        for kind in all {
            for name in Set(kind.swiftTypeNames) { claimants[name, default: []].append(kind.attributesType) }
        }
        let wireNames = Set(names)
        return claimants.keys.sorted().compactMap { name -> SwiftNameClash? in
            let kinds = claimants[name]!
            guard kinds.count > 1, !wireNames.contains(name) else { return nil }
            let users = kinds.filter { !builtInNames.contains($0) }
            switch users.count {
            case 0: return nil
            case 1: return SwiftNameClash(swiftName: name, winner: users[0], others: kinds.filter { $0 != users[0] })
            default: return SwiftNameClash(swiftName: name, winner: nil, others: users)
            }
        }
    }

    /// The kind named `attributesType`.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `field` and the known kinds.
    public func kind(named attributesType: String, field: String) throws(ProtocolError) -> any ActivityKind {
        if let kind = all.first(where: { $0.attributesType == attributesType }) { return kind }
        let known = all.map { "\"\($0.attributesType)\"" }.joined(separator: ", ")
        throw ProtocolError.invalid(field, "unknown attributes type \"\(attributesType.clipped(to: 64))\"; known types: \(known)")
    }

    /// The metadata of the kind named `attributesType`, or `nil`.
    public func metadata(named attributesType: String) -> KindMetadata? {
        all.first { $0.attributesType == attributesType }?.metadata
    }
}

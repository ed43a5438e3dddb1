import Foundation

/// One kind of Live Activity: its `ActivityAttributes` and `ContentState`, and how to validate them.
///
/// A kind is one Swift file (see ``WorkoutActivity``) plus its layouts in `Public/`; registering it in
/// ``ActivityKinds/all`` is all it takes to add one.
public protocol ActivityKind: Sendable {
    /// The `attributesType` name on the wire, e.g. `"workout"`.
    static var attributesType: String { get }

    /// The Swift type names an APNs payload's `attributes-type` may use, e.g. `WorkoutWidgetAttributes`.
    static var swiftTypeNames: [String] { get }

    /// Validates a `content-state` in Swift's default `Codable` form, as an APNs payload carries it: dates as
    /// seconds since 2001-01-01 (`Date.timeIntervalSinceReferenceDate`), `ClosedRange<Date>` as a
    /// two-element array.
    /// - Returns: the normalised state (in this protocol's form) and its countdown, if any.
    /// - Throws: ``ProtocolError`` naming the key path that does not decode.
    static func state(fromCodable value: JSONValue, field: String) throws(ProtocolError) -> (state: JSONValue, timer: TimerRange?)

    /// Validates and normalises the fixed attributes.
    /// - Parameters:
    ///   - value: the `attributes` field as received.
    ///   - field: its dotted path, for error messages.
    /// - Returns: the normalised attributes, as they are stored and sent.
    /// - Throws: ``ProtocolError`` naming the bad field.
    static func attributes(from value: JSONValue, field: String) throws(ProtocolError) -> JSONValue

    /// Validates and normalises a `ContentState`.
    /// - Returns: the normalised state and the countdown it holds, if any.
    /// - Throws: ``ProtocolError`` naming the bad field.
    static func state(from value: JSONValue, field: String) throws(ProtocolError) -> (state: JSONValue, timer: TimerRange?)

    /// The state for the `durationSeconds` shortcut: a countdown from `now` to `now + seconds`.
    /// - Returns: `nil` when the kind has no countdown (the shortcut is then refused).
    static func state(counting seconds: TimeInterval, from now: Date) -> (state: JSONValue, timer: TimerRange)?

    /// `state` with its countdown replaced by `timer` (for pause, resume and extend).
    /// Only called for states whose kind reported a countdown.
    static func state(_ state: JSONValue, with timer: TimerRange) -> JSONValue

    /// The key of the countdown inside the state (`workoutTimer`), for naming its dates in errors.
    static var timerKey: String { get }

    /// The dates among normalised `attributes` (``attributes(from:field:)``'s result), each with its dotted
    /// path under `field`, for ``DateWindow`` to check.
    static func dates(inAttributes attributes: JSONValue, field: String) -> [(field: String, date: Date)]
}

extension ActivityKind {
    /// `"timer"`: kinds with a countdown name their own key.
    public static var timerKey: String { "timer" }

    /// None: kinds with date attributes list them.
    public static func dates(inAttributes attributes: JSONValue, field: String) -> [(field: String, date: Date)] { [] }
}

/// The registry of built-in activity kinds.
public enum ActivityKinds {
    /// Every kind the server accepts.
    public static let all: [any ActivityKind.Type] = [WorkoutActivity.self, EmojiActivity.self]

    /// The kind whose `attributesType` or Swift type name is `name`, or `nil`.
    public static func kind(forPushType name: String) -> (any ActivityKind.Type)? {
        all.first { $0.attributesType == name || $0.swiftTypeNames.contains(name) }
    }

    /// The kind named `attributesType`.
    /// - Throws: ``ProtocolError`` `invalid_field` naming the known kinds.
    public static func kind(named attributesType: String, field: String) throws(ProtocolError) -> any ActivityKind.Type {
        if let kind = all.first(where: { $0.attributesType == attributesType }) { return kind }
        let known = all.map { "\"\($0.attributesType)\"" }.joined(separator: ", ")
        throw ProtocolError.invalid(field, "unknown attributes type \"\(attributesType)\"; known types: \(known)")
    }
}

import Foundation

/// One kind of Live Activity: its `ActivityAttributes` and `ContentState`, and how to validate them.
///
/// A kind is a value, made by a ``KindRegistry`` from a kind folder's `kind.json` (``KindMetadata``), so a kind
/// declared as data (a folder with the app's `Attributes.swift`) is a ``DeclaredKind``; the built-in kinds
/// are such folders too. Mirrors ActivityKit's `ActivityAttributes`
/// (https://developer.apple.com/documentation/activitykit/activityattributes): fixed attributes plus a
/// `ContentState` that changes.
public protocol ActivityKind: Sendable {
    /// What the kind's folder says about it: wire name, Swift names, countdown field, labels and icons.
    var metadata: KindMetadata { get }

    /// Validates a `content-state` in Swift's default `Codable` form, as an APNs payload carries it: dates as
    /// seconds since 2001-01-01 (`Date.timeIntervalSinceReferenceDate`), `ClosedRange<Date>` as a
    /// two-element array.
    /// - Returns: the normalised state (in this protocol's form) and its countdown, if any.
    /// - Throws: ``ProtocolError`` naming the key path that does not decode.
    func state(fromCodable value: JSONValue, field: String) throws(ProtocolError) -> (state: JSONValue, timer: TimerRange?)

    /// Validates the fixed attributes in Swift's default `Codable` form, as an APNs start push carries them.
    /// - Returns: the normalised attributes (in this protocol's form).
    /// - Throws: ``ProtocolError`` naming the key path that does not decode.
    func attributes(fromCodable value: JSONValue, field: String) throws(ProtocolError) -> JSONValue

    /// What the app's type would silently ignore or misread in a Codable-form value (unknown keys, extra range
    /// elements, dates far off or, given `now`, that look like Unix seconds), one sentence each, for the push
    /// answer and inspector; empty when nothing is wrong or the value does not decode.
    func warnings(inCodable value: JSONValue, as part: DeclaredPart, field: String, now: Date?) -> [String]

    /// Validates and normalises the fixed attributes.
    /// - Parameters:
    ///   - value: the `attributes` field as received.
    ///   - field: its dotted path, for error messages.
    /// - Returns: the normalised attributes, as they are stored and sent.
    /// - Throws: ``ProtocolError`` naming the bad field.
    func attributes(from value: JSONValue, field: String) throws(ProtocolError) -> JSONValue

    /// Validates and normalises a `ContentState` in this protocol's form (ISO-8601 dates, `{"start","end"}` ranges).
    /// - Returns: the normalised state and the countdown it holds, if any.
    /// - Throws: ``ProtocolError`` naming the bad field.
    func state(from value: JSONValue, field: String) throws(ProtocolError) -> (state: JSONValue, timer: TimerRange?)

    /// The state for the `durationSeconds` shortcut: a countdown from `now` to `now + seconds`.
    /// - Returns: `nil` when the kind has no countdown (the shortcut is then refused).
    func state(counting seconds: TimeInterval, from now: Date) -> (state: JSONValue, timer: TimerRange)?

    /// `state` with its countdown replaced by `timer` (for pause, resume and extend).
    /// Only called for states whose kind reported a countdown.
    func state(_ state: JSONValue, with timer: TimerRange) -> JSONValue

    /// The dates among normalised `attributes` (``attributes(from:field:)``'s result), each with its dotted
    /// path under `field`, for ``DateWindow`` to check.
    func dates(inAttributes attributes: JSONValue, field: String) -> [(field: String, date: Date)]
}

extension ActivityKind {
    /// The `attributesType` name on the wire, e.g. `"workout"` (``KindMetadata/name``).
    public var attributesType: String { metadata.name }

    /// The Swift type names an APNs payload's `attributes-type` may use, e.g. `WorkoutWidgetAttributes`
    /// (``KindMetadata/swiftNames``).
    public var swiftTypeNames: [String] { metadata.swiftNames }

    /// The key of the countdown inside the state (`workoutTimer`), for naming its dates in errors;
    /// `"timer"` for kinds without one.
    public var timerKey: String { metadata.countdown ?? "timer" }

    /// The protocol form's validation (``attributes(from:field:)``): the built-in kinds accept both forms.
    public func attributes(fromCodable value: JSONValue, field: String) throws(ProtocolError) -> JSONValue {
        try attributes(from: value, field: field)
    }

    /// None: the built-in kinds do not report ignored keys.
    public func warnings(inCodable value: JSONValue, as part: DeclaredPart, field: String, now: Date?) -> [String] { [] }

    /// ``warnings(inCodable:as:field:now:)`` without the current time (no Unix-seconds date warning).
    public func warnings(inCodable value: JSONValue, as part: DeclaredPart, field: String) -> [String] {
        warnings(inCodable: value, as: part, field: field, now: nil)
    }

    /// Why an activity's stored attributes and state no longer validate under this kind (after its
    /// declaration changed), or `nil` when they do: `content.state.heartRate: required field is missing`.
    public func problem(attributes: JSONValue, state: JSONValue) -> String? {
        do throws(ProtocolError) {
            _ = try self.attributes(from: attributes, field: "attributes")
            _ = try self.state(from: state, field: "content.state")
            return nil
        } catch {
            return error.message
        }
    }

    /// `timer` as an activity that started at `startDate` counts it: a `Date` countdown (which
    /// ``DeclaredKind`` reads as a range of no length, ending at that date) counts down from the activity's
    /// start, as `Text(timerInterval: startDate...date)` and the renderings do; a range is kept as it is.
    public func anchored(_ timer: TimerRange?, startDate: Date) -> TimerRange? {
        guard var timer, timer.start == timer.end, let declared = self as? DeclaredKind,
              declared.countdownField?.type.unwrapped == .date else { return timer }
        timer.start = min(startDate, timer.end)
        return timer
    }

    /// None: kinds with date attributes list them.
    public func dates(inAttributes attributes: JSONValue, field: String) -> [(field: String, date: Date)] { [] }
}

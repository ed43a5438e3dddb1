import Foundation

/// The reference app's workout activity.
///
/// - Attributes: `{"workout": "jogging" | "aerobics" | "yoga"}`; the seed app's integer raw values
///   0 / 1 / 2 are accepted on input and written as strings.
/// - ContentState: `{"workoutTimer": {"start": ISO-8601, "end": ISO-8601}, "pausedAt": ISO-8601?}`, a
///   countdown range, frozen at `pausedAt` while paused.
public struct WorkoutActivity: ActivityKind {
    /// The kinds of workout, in the seed app's raw-value order.
    public enum Workout: String, Sendable, CaseIterable {
        case jogging, aerobics, yoga

        /// The seed app's integer raw value: 0, 1 or 2.
        public var index: Int { Self.allCases.firstIndex(of: self)! }
    }

    /// What `Kinds/workout/kind.json` holds, for a registry made without the folder (``KindRegistry/builtIn``).
    public static let defaultMetadata = KindMetadata(
        name: "workout", label: "Workout", swiftNames: ["WorkoutWidgetAttributes", "WorkoutAttributes"], countdown: "workoutTimer",
        durationShortcut: true, title: "{{workout.label}}", fallbackIcon: "workout",
        enums: ["workout": Workout.allCases.map { workout in
            KindMetadata.EnumValue(value: workout.rawValue, rawValue: .number(Double(workout.index)),
                                   label: workout.rawValue.prefix(1).uppercased() + workout.rawValue.dropFirst(), icon: workout.rawValue)
        }])

    /// The kind's folder metadata (``ActivityKind/metadata``).
    public let metadata: KindMetadata

    /// Creates the kind with its folder's metadata (`Kinds/workout/kind.json`).
    public init(metadata: KindMetadata = Self.defaultMetadata) {
        self.metadata = metadata
    }

    /// Validates a `content-state` in Swift `Codable` form: `workoutTimer` as `[lower, upper]` seconds since 2001 (``ActivityKind/state(fromCodable:field:)``).
    /// - Throws: ``ProtocolError`` naming the key path that does not decode.
    public func state(fromCodable value: JSONValue, field: String) throws(ProtocolError) -> (state: JSONValue, timer: TimerRange?) {
        let reader = try FieldReader(value, path: field)
        let key = reader.path("workoutTimer")
        guard case .array(let bounds)? = reader.value("workoutTimer") else {
            if let other = reader.value("workoutTimer") {
                throw .invalid(key, "ClosedRange<Date> decodes from a two-element array [lower, upper] of seconds since 2001-01-01, got \(other.typeName)")
            }
            throw .missing(key)
        }
        guard bounds.count == 2 else { throw .invalid(key, "ClosedRange<Date> needs exactly 2 elements, got \(bounds.count)") }
        let start = try CodableDate.decode(bounds[0], field: "\(key)[0]")
        let end = try CodableDate.decode(bounds[1], field: "\(key)[1]")
        guard end >= start else { throw .invalid("\(key)[1]", "upper bound is before lower bound (ClosedRange traps)") }
        let pausedAt = try reader.value("pausedAt").map { value throws(ProtocolError) in try CodableDate.decode(value, field: reader.path("pausedAt")) }
        let timer = TimerRange(start: start, end: end, pausedAt: pausedAt)
        return (encode(timer), timer)
    }

    /// Validates and normalises the attributes (``ActivityKind/attributes(from:field:)``).
    /// - Throws: ``ProtocolError`` naming the bad field.
    public func attributes(from value: JSONValue, field: String) throws(ProtocolError) -> JSONValue {
        let reader = try FieldReader(value, path: field)
        let key = reader.path("workout")
        let names = Workout.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        let workout: Workout
        switch try reader.required("workout") {
        case .string(let name):
            guard let found = Workout(rawValue: name) else {
                throw .invalid(key, "unknown workout \"\(name.prefix(40))\"; expected one of \(names) (or 0, 1, 2)")
            }
            workout = found
        case .number(let number):
            // Range first: converting a huge number (1e300) to Int would trap.
            guard number.rounded() == number, number >= 0, number < Double(Workout.allCases.count) else {
                throw .invalid(key, "raw value \(number.jsonText) is not 0 (jogging), 1 (aerobics) or 2 (yoga)")
            }
            workout = Workout.allCases[Int(number)]
        case let other:
            throw .wrongType(key, expected: "one of \(names) or 0, 1, 2", got: other)
        }
        return .object(["workout": .string(workout.rawValue)])
    }

    /// Validates and normalises a content state (``ActivityKind/state(from:field:)``).
    /// - Throws: ``ProtocolError`` naming the bad field.
    public func state(from value: JSONValue, field: String) throws(ProtocolError) -> (state: JSONValue, timer: TimerRange?) {
        let reader = try FieldReader(value, path: field)
        guard let range = try reader.object("workoutTimer") else { throw .missing(reader.path("workoutTimer")) }
        guard let start = try range.date("start") else { throw .missing(range.path("start")) }
        guard let end = try range.date("end") else { throw .missing(range.path("end")) }
        guard end >= start else {
            throw .invalid(range.path("end"), "must not be before \(range.path("start")) (\(ISODate.format(start)))")
        }
        let timer = TimerRange(start: start, end: end, pausedAt: try reader.date("pausedAt"))
        return (encode(timer), timer)
    }

    /// The state with its countdown replaced by `timer` (``ActivityKind/state(_:with:)``).
    public func state(_ state: JSONValue, with timer: TimerRange) -> JSONValue {
        encode(timer)
    }

    /// The state for a countdown of `seconds` from `now` (``ActivityKind/state(counting:from:)``).
    public func state(counting seconds: TimeInterval, from now: Date) -> (state: JSONValue, timer: TimerRange)? {
        guard metadata.durationShortcut else { return nil }
        let timer = TimerRange(start: now, end: now.addingTimeInterval(seconds))
        return (encode(timer), timer)
    }

    private func encode(_ timer: TimerRange) -> JSONValue {
        var state: [String: JSONValue] = ["workoutTimer": .object([
            "start": .string(ISODate.format(timer.start)),
            "end": .string(ISODate.format(timer.end)),
        ])]
        if let pausedAt = timer.pausedAt { state["pausedAt"] = .string(ISODate.format(pausedAt)) }
        return .object(state)
    }
}

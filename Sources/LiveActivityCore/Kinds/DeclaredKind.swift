import Foundation

/// An activity kind declared as data: validated by the app's own `ActivityAttributes` declaration
/// (a kind folder's `Attributes.swift`, read into an ``ActivityDeclaration``).
///
/// - Over WebSocket and the CLI, attributes and state are in this protocol's form (ISO-8601 dates,
///   `{"start","end"}` ranges), validated by ``ActivityDeclaration/normalise(_:as:field:)``.
/// - In APNs-shaped pushes they are in Swift's `Codable` form, decoded exactly as `JSONDecoder` would
///   (``ActivityDeclaration/decode(codable:as:field:)``); a failure names Swift's `DecodingError` case and the
///   key path (`keyNotFound "heartRate"`; https://developer.apple.com/documentation/swift/decodingerror).
/// - The countdown is `kind.json`'s `countdown` field, else the only `ClosedRange<Date>`, `Range<Date>` or
///   `Date` field of `ContentState` (``ActivityDeclaration/countdownCandidates``). While paused, the state
///   carries `pausedAt` (ISO-8601) beside the declared fields, as the workout kind's does; the app ignores it.
public struct DeclaredKind: ActivityKind {
    /// The key the server adds to a paused state when the declaration has no `pausedAt` of its own.
    public static let pausedAtKey = "pausedAt"

    /// The kind's metadata (``ActivityKind/metadata``): `kind.json`'s, with the struct's name among the
    /// Swift names and the countdown resolved.
    public let metadata: KindMetadata
    /// The declaration read from `Attributes.swift`.
    public let declaration: ActivityDeclaration
    /// The countdown field of `ContentState`, if any.
    public let countdownField: DeclaredField?

    /// Creates the kind.
    /// - Parameters:
    ///   - declaration: the app's declaration.
    ///   - metadata: what `kind.json` says, or `nil` without one (the wire name is then the struct's name).
    /// - Throws: ``ProtocolError`` `invalid_field` naming `countdown` when `kind.json`'s `countdown` is not a
    ///   `Date`, `ClosedRange<Date>` or `Range<Date>` field at the top of `ContentState`; naming `enums.F` (or an
    ///   entry's member) when `kind.json`'s `enums` disagree with the declaration (``checkedEnums(_:against:inWords:)``).
    public init(declaration: ActivityDeclaration, metadata: KindMetadata?) throws(ProtocolError) {
        var metadata = metadata ?? KindMetadata(name: declaration.attributesType, label: Words.title(ofStruct: declaration.attributesType))
        if !metadata.labelGiven { metadata.label = Words.title(ofStruct: declaration.attributesType) }  // not "Pizza-delivery"
        if !metadata.swiftNames.contains(declaration.attributesType), metadata.name != declaration.attributesType {
            metadata.swiftNames.insert(declaration.attributesType, at: 0)
        }
        let candidates = declaration.countdownCandidates.map(\.field)
        if let name = metadata.countdown {
            guard let field = declaration.contentState.fields.first(where: { $0.key == name || $0.name == name }) else {
                throw .invalid("countdown", "\"\(name)\" is not a field of \(declaration.contentState.swiftName)")
            }
            guard candidates.contains(field) else {
                throw .invalid("countdown", "\"\(name)\" is a \(field.type.swiftName); a countdown is a Date, ClosedRange<Date> or Range<Date>")
            }
            countdownField = field
        } else {
            countdownField = candidates.count == 1 ? candidates[0] : nil
        }
        metadata.countdown = countdownField?.key
        let inWords = Self.enumsInWords(declaration)
        metadata.enums = try Self.checkedEnums(metadata.enums, against: declaration, inWords: inWords)
        metadata.enums.merge(inWords) { given, declared in Self.withAssociatedValues(given, from: declared) }
        metadata.dictionaries = Self.dictionaryForms(declaration)
        metadata.elementLabels = Self.elementLabels(declaration)
        if countdownField == nil { metadata.durationShortcut = false }
        self.metadata = metadata
        self.declaration = declaration
    }

    // MARK: Protocol form

    /// Validates and normalises attributes in protocol form (``ActivityKind/attributes(from:field:)``).
    /// - Throws: ``ProtocolError`` naming the bad field.
    public func attributes(from value: JSONValue, field: String) throws(ProtocolError) -> JSONValue {
        let input = try rawEnumValues(in: value, field: field)
        return try checked(declaration.normalise(input, as: .attributes, field: field).value, as: .attributes, field: field)
    }

    /// Validates and normalises a content state in protocol form (``ActivityKind/state(from:field:)``); an
    /// undeclared `pausedAt` (ISO-8601) is kept as the pause mark.
    /// - Throws: ``ProtocolError`` naming the bad field.
    public func state(from value: JSONValue, field: String) throws(ProtocolError) -> (state: JSONValue, timer: TimerRange?) {
        var input = value
        var pausedAt: Date?
        if !declaresPausedAt, case .object(var object) = value, let mark = object.removeValue(forKey: Self.pausedAtKey) {
            let path = field.isEmpty ? Self.pausedAtKey : "\(field).\(Self.pausedAtKey)"
            guard case .string(let text) = mark, let date = ISODate.parse(text) else {
                throw .invalid(path, "expected an ISO-8601 date (the pause mark)")
            }
            pausedAt = date
            input = .object(object)
        }
        input = try rawEnumValues(in: input, field: field)
        let state = try checked(declaration.normalise(input, as: .contentState, field: field).value, as: .contentState, field: field)
        var timer = try countdown(in: state, field: field)
        if let pausedAt, timer != nil { timer?.pausedAt = pausedAt }
        return (timer.map { self.state(state, with: $0) } ?? state, timer)
    }

    // MARK: Codable form

    /// Decodes attributes in Codable form, as the app will (``ActivityKind/attributes(fromCodable:field:)``).
    /// - Returns: the attributes in protocol form.
    /// - Throws: ``ProtocolError`` whose message gives Swift's verdict (``DecodingFailure/summary``).
    public func attributes(fromCodable value: JSONValue, field: String) throws(ProtocolError) -> JSONValue {
        try checked(decodeCodable(value, as: .attributes, field: field).value, as: .attributes, field: field)
    }

    /// Decodes a content state in Codable form, as the app will (``ActivityKind/state(fromCodable:field:)``);
    /// an undeclared `pausedAt` (seconds since 2001-01-01, as a push carries dates) is kept as the pause mark,
    /// which the app ignores. One that is not such a date is ignored here too, as the app ignores it: the
    /// state still applies, with no pause mark (the push endpoint's ignored-key warning names the key).
    /// - Returns: the state in protocol form and its countdown.
    /// - Throws: ``ProtocolError`` whose message gives Swift's verdict (``DecodingFailure/summary``).
    public func state(fromCodable value: JSONValue, field: String) throws(ProtocolError) -> (state: JSONValue, timer: TimerRange?) {
        var input = value
        var pausedAt: Date?
        if !declaresPausedAt, case .object(var object) = value, let mark = object.removeValue(forKey: Self.pausedAtKey) {
            pausedAt = try? CodableDate.decode(mark, field: field.isEmpty ? Self.pausedAtKey : "\(field).\(Self.pausedAtKey)")
            input = .object(object)
        }
        let state = try checked(decodeCodable(input, as: .contentState, field: field).value, as: .contentState, field: field)
        var timer = try countdown(in: state, field: field)
        if let pausedAt, timer != nil { timer?.pausedAt = pausedAt }
        return (timer.map { self.state(state, with: $0) } ?? state, timer)
    }

    /// What the app would silently ignore in a Codable-form value (``ActivityKind/warnings(inCodable:as:field:)``).
    public func warnings(inCodable value: JSONValue, as part: DeclaredPart, field: String, now: Date?) -> [String] {
        ((try? declaration.decode(codable: value, as: part, field: field, now: now))?.warnings ?? []).map(\.description)
    }

    // MARK: Countdown

    /// The state with its countdown replaced by `timer` (``ActivityKind/state(_:with:)``).
    public func state(_ state: JSONValue, with timer: TimerRange) -> JSONValue {
        guard let countdownField, case .object(var object) = state else { return state }
        switch countdownField.type.unwrapped {
        case .date: object[countdownField.key] = .string(ISODate.format(timer.end))
        default: object[countdownField.key] = .object(["start": .string(ISODate.format(timer.start)), "end": .string(ISODate.format(timer.end))])
        }
        if let pausedAt = timer.pausedAt {
            object[Self.pausedAtKey] = .string(ISODate.format(pausedAt))
        } else if !declaresPausedAt {
            object.removeValue(forKey: Self.pausedAtKey)
        }
        return .object(object)
    }

    /// The state for a countdown of `seconds` from `now` (``ActivityKind/state(counting:from:)``): only
    /// when `kind.json` allows the shortcut and every other `ContentState` field is optional.
    public func state(counting seconds: TimeInterval, from now: Date) -> (state: JSONValue, timer: TimerRange)? {
        guard metadata.durationShortcut, let countdownField,
              declaration.contentState.fields.allSatisfy({ $0 == countdownField || $0.type.isOptional }) else { return nil }
        let timer = TimerRange(start: now, end: now.addingTimeInterval(seconds))
        return (state(.object([:]), with: timer), timer)
    }

    /// The countdown in a normalised state: a range's bounds, or a `Date` as the end of a countdown that
    /// starts there too (only its end matters). `nil` when there is no countdown field or it is absent.
    private func countdown(in state: JSONValue, field: String) throws(ProtocolError) -> TimerRange? {
        guard let countdownField, case .object(let object) = state, let value = object[countdownField.key] else { return nil }
        switch value {
        case .string(let text):
            guard let date = ISODate.parse(text) else { return nil }
            return TimerRange(start: date, end: date)
        case .object(let range):
            guard case .string(let start)? = range["start"], case .string(let end)? = range["end"],
                  let lower = ISODate.parse(start), let upper = ISODate.parse(end) else { return nil }
            return TimerRange(start: lower, end: upper)
        default:
            return nil
        }
    }

    /// Whether `ContentState` itself declares `pausedAt` (then it is the app's field, not the server's mark).
    private var declaresPausedAt: Bool { declaration.contentState.field(forKey: Self.pausedAtKey) != nil }

    /// Decodes as the app will, turning a ``DecodingFailure`` into a request error whose field is the key path
    /// and whose message starts with Swift's verdict: `aps.content-state: keyNotFound "heartRate" (No value…)`.
    private func decodeCodable(_ value: JSONValue, as part: DeclaredPart, field: String) throws(ProtocolError) -> DeclaredValue {
        do {
            return try declaration.decode(codable: value, as: part)
        } catch {
            throw Self.verdict(error, field: field)
        }
    }

    /// A decoding failure of the value sent in `field`, as a request error in Swift's terms.
    public static func verdict(_ failure: DecodingFailure, field: String) -> ProtocolError {
        let located = failure.protocolError(field: field)
        return ProtocolError(located.code, field: located.field, message: "\(field): \(failure.summary) (\(failure.debugDescription))")
    }
}

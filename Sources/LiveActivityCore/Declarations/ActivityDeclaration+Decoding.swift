import Foundation

/// Decoding as the app will, and converting between the Codable and protocol forms.
extension ActivityDeclaration {
    /// Decodes a value in Codable form exactly as the app's synthesized `init(from:)` does under `JSONDecoder`'s
    /// default strategies, and returns it in protocol form.
    ///
    /// Rules mirrored: `Date` is a number of seconds since 2001-01-01 (`deferredToDate`); `ClosedRange<Date>` and
    /// `Range<Date>` are `[lower, upper]` with lower ≤ upper (extra elements ignored); enums by raw value;
    /// optionals may be absent or `null`; integers must be whole and in range; `Bool` is `true`/`false` only;
    /// `URL` is a string `URL(string:)` accepts; `CodingKeys` renames; unknown keys are ignored (and reported
    /// as warnings). One addition: dates more than about 1,000 years from 2001 are refused (``CodableDate``).
    /// - Parameters:
    ///   - value: the `attributes` or `content-state` of an APNs payload.
    ///   - part: which struct it is for.
    ///   - field: its dotted path, prefixed to warnings (`aps.content-state`).
    ///   - now: the current time, when known: a `Date` that looks like Unix seconds then gets a warning
    ///     (``DateLens/unixSecondsSentAsReference(_:now:)``). It never changes what decodes.
    /// - Returns: the value in protocol form (declared keys only) and the warnings.
    /// - Throws: ``DecodingFailure``, as `JSONDecoder` would throw `DecodingError`
    ///   (https://developer.apple.com/documentation/swift/decodingerror).
    public func decode(codable value: JSONValue, as part: DeclaredPart, field: String = "", now: Date? = nil) throws(DecodingFailure) -> DeclaredValue {
        try convert(value, as: part, from: .codable, to: .protocolForm, field: field, now: now)
    }

    /// Validates and normalises a value in protocol form (ISO-8601 dates, ranges as `{"start", "end"}`; the
    /// rest as in the Codable form): dates are rewritten as `YYYY-MM-DDTHH:MM:SS.mmmZ`, keys the type does
    /// not decode are dropped (and reported as warnings).
    /// - Parameters:
    ///   - value: the `attributes` or `content.state` a client sent.
    ///   - part: which struct it is for.
    ///   - field: its dotted path in the message, for errors and warnings (`content.state`).
    /// - Returns: the normalised value and the warnings.
    /// - Throws: ``ProtocolError`` naming the field: `missing_field` for an absent or null required value,
    ///   `invalid_field` otherwise (`content.state.phase: unknown value "sprint"; expected one of …`).
    public func normalise(_ value: JSONValue, as part: DeclaredPart, field: String) throws(ProtocolError) -> DeclaredValue {
        do {
            return try convert(value, as: part, from: .protocolForm, to: .protocolForm, field: field)
        } catch {
            throw error.protocolError(field: field)
        }
    }

    /// Converts a value in protocol form to the Codable form the app decodes (for re-checking a stored
    /// activity, or showing it as the app would see it), validating it on the way.
    /// - Returns: the value in Codable form (`Date` as seconds since 2001-01-01, ranges as `[lower, upper]`).
    /// - Throws: ``DecodingFailure`` with protocol-form wording in ``DecodingFailure/reason``.
    public func codableForm(of value: JSONValue, as part: DeclaredPart, field: String = "") throws(DecodingFailure) -> DeclaredValue {
        try convert(value, as: part, from: .protocolForm, to: .codable, field: field)
    }

    /// Reads `value` in form `source` and writes it in form `target`.
    /// - Parameter now: the current time, for the Unix-seconds date warning (Codable source only); `nil`: none.
    /// - Throws: ``DecodingFailure`` at the first value that does not decode.
    public func convert(_ value: JSONValue, as part: DeclaredPart, from source: ContentForm, to target: ContentForm,
                        field: String = "", now: Date? = nil) throws(DecodingFailure) -> DeclaredValue {
        var converter = DeclarationConverter(declaration: self, from: source, to: target, field: field, now: now)
        let converted = try converter.convert(value, as: root(part), path: [])
        return DeclaredValue(value: converted, warnings: converter.warnings)
    }
}

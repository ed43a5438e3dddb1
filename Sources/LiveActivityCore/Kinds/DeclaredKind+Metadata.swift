import Foundation

/// What `kind.json` adds to a declaration: enum values by name (``KindMetadata/enums``), bounds on fields
/// (``KindMetadata/limits``), and the attributes' dates for the date window.
extension DeclaredKind {
    /// A label in words for each value of the top-level enum fields, so both renderers show the words where
    /// `kind.json` lists no labels: a `String` raw value's (`in_progress` → "In progress", `enRoute` → "En route";
    /// a sentence stays as it is); a keyed case's name, with its associated values' labels; a case's name for any
    /// other raw value (`enum Tier: Int { case standard = 1, xl }`: 2 reads "XL"), only as a label
    /// (``KindMetadata/EnumValue/sentAsName`` false). The values on the wire and their validation are unchanged.
    static func enumsInWords(_ declaration: ActivityDeclaration) -> [String: [KindMetadata.EnumValue]] {
        var enums: [String: [KindMetadata.EnumValue]] = [:]
        for field in declaration.contentState.fields + declaration.attributes.fields {
            guard case .enumeration(let name) = field.type.unwrapped, let declared = declaration.enums[name] else { continue }
            if declared.isKeyed {
                enums[field.key] = declared.cases.map { item in
                    KindMetadata.EnumValue(value: item.name, label: Words.label(ofRawValue: item.name),
                                           associatedValues: associatedValues(of: item, in: declaration))
                }
                continue
            }
            enums[field.key] = declared.cases.map { item in
                guard case .string(let raw) = item.rawValue else {
                    return KindMetadata.EnumValue(value: item.name, rawValue: item.rawValue, label: Words.label(ofField: item.name),
                                                  sentAsName: false)
                }
                return KindMetadata.EnumValue(value: raw, label: Words.label(ofRawValue: raw))
            }
        }
        return enums
    }

    /// `kind.json`'s `enums` checked against the declaration, each list completed with the cases it leaves out
    /// (labelled as without a `kind.json`, and sent as the list's entries are), so that no value of the app's
    /// shows as a bare raw value nor is missing from START's picker.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `enums.F` for a key that is no top-level enum field (a
    ///   `String` field given values could take none of them), or `enums.F[i]`'s member for an entry that names
    ///   no case (a `rawValue` that is not one of the enum's, or of another type; a `value` without `rawValue`
    ///   that is not a `String` raw value), names a case another entry names, or asks `"sentAs": "rawValue"` of an
    ///   enum without raw values.
    /// - Parameter inWords: the declaration's own labels (``enumsInWords(_:)``), which complete the lists.
    static func checkedEnums(_ given: [String: [KindMetadata.EnumValue]], against declaration: ActivityDeclaration,
                             inWords derived: [String: [KindMetadata.EnumValue]]) throws(ProtocolError) -> [String: [KindMetadata.EnumValue]] {
        var checked: [String: [KindMetadata.EnumValue]] = [:]
        for key in given.keys.sorted() {
            let entries = given[key] ?? []
            let path = "enums.\(key)"
            guard let field = declaration.contentState.field(forKey: key) ?? declaration.attributes.field(forKey: key) else {
                throw .invalid(path, "\"\(key.clipped(to: 40))\" is not a field of \(declaration.contentState.swiftName) or \(declaration.attributes.swiftName)")
            }
            guard case .enumeration(let name) = field.type.unwrapped, let declared = declaration.enums[name] else {
                throw .invalid(path, "\"\(key)\" is a \(field.type.swiftName), not an enum: its values come from the app as they are")
            }
            var seen: Set<JSONValue> = []
            for (index, entry) in entries.enumerated() {
                let at = "\(path)[\(index)]"
                let raw: JSONValue
                if declared.isKeyed {
                    guard entry.rawValue == nil, entry.sentAsName else {
                        throw .invalid("\(at).rawValue", "\(declared.swiftName) has no raw values: its cases are sent by name")
                    }
                    raw = .string(entry.value)
                } else if let given = entry.rawValue {
                    raw = given
                } else if declared.rawType == .string {
                    raw = .string(entry.value)
                } else {
                    throw .missing("\(at).rawValue")
                }
                guard let item = declared.case(rawValue: raw) ?? (declared.isKeyed ? declared.cases.first(where: { $0.name == entry.value }) : nil) else {
                    let known = declared.cases.prefix(20).map { declared.isKeyed ? "\"\($0.name)\"" : FieldReader.show($0.rawValue) }.joined(separator: ", ")
                    throw .invalid(entry.rawValue == nil ? "\(at).value" : "\(at).rawValue",
                                   "\(FieldReader.show(raw)) is not a case of \(declared.swiftName) (\(known))")
                }
                guard seen.insert(declared.isKeyed ? .string(item.name) : item.rawValue).inserted else {
                    throw .invalid(at, "names \(declared.swiftName).\(item.name) again")
                }
            }
            // The cases the list leaves out, as without kind.json, sent as the list's are.
            let sentAsName = entries.allSatisfy(\.sentAsName)
            let missing = (derived[key] ?? []).filter { candidate in
                !entries.contains { $0.value == candidate.value || ($0.rawValue != nil && $0.rawValue == candidate.rawValue) }
            }.map { candidate -> KindMetadata.EnumValue in
                var candidate = candidate
                if candidate.rawValue != nil { candidate.sentAsName = sentAsName }
                return candidate
            }
            checked[key] = entries + missing
        }
        return checked
    }

    /// A keyed case's associated values as the renderers label them: by position (`_0`) without a label; a
    /// raw-value enum's values in words, as a top-level field's (`team: Side` with `"home"`: "Team Home").
    static func associatedValues(of item: DeclaredEnum.Case, in declaration: ActivityDeclaration) -> [KindMetadata.AssociatedValue] {
        item.payload.map { value in
            let unlabelled = value.key.hasPrefix("_") && value.key.dropFirst().allSatisfy(\.isNumber)
            return KindMetadata.AssociatedValue(key: value.key, label: unlabelled ? "" : Words.label(ofField: value.name),
                                                valueLabels: words(of: value.type, in: declaration))
        }
    }

    /// A raw-value enum's raw values in words, by ``KindMetadata/labelKey(_:)``: a `String` raw value put in words
    /// (`"away_team"` → "Away team"), another by its case's name (`2` → "XL"); empty for any other type.
    static func words(of type: DeclaredType, in declaration: ActivityDeclaration) -> [String: String] {
        guard case .enumeration(let name) = type.unwrapped, let declared = declaration.enums[name], !declared.isKeyed else { return [:] }
        var words: [String: String] = [:]
        for item in declared.cases {
            guard let key = KindMetadata.labelKey(item.rawValue) else { continue }
            if case .string(let raw) = item.rawValue { words[key] = Words.label(ofRawValue: raw) } else { words[key] = Words.label(ofField: item.name) }
        }
        return words
    }

    /// The top-level collections of raw-value enums and the words for them (``KindMetadata/elementLabels``).
    static func elementLabels(_ declaration: ActivityDeclaration) -> [String: KindMetadata.ElementLabels] {
        var labels: [String: KindMetadata.ElementLabels] = [:]
        for field in declaration.contentState.fields + declaration.attributes.fields {
            var found = KindMetadata.ElementLabels()
            switch field.type.unwrapped {
            case .array(let element), .set(let element): found.values = words(of: element, in: declaration)
            case .dictionary(let key, let value):
                found.keys = words(of: key, in: declaration)
                found.values = words(of: value, in: declaration)
            default: continue
            }
            if !found.keys.isEmpty || !found.values.isEmpty { labels[field.key] = found }
        }
        return labels
    }

    /// The `kind.json` labels of a keyed enum field given the declaration's associated values, which `kind.json`
    /// does not list.
    static func withAssociatedValues(_ given: [KindMetadata.EnumValue], from declared: [KindMetadata.EnumValue]) -> [KindMetadata.EnumValue] {
        given.map { entry in
            var entry = entry
            if entry.associatedValues.isEmpty, let match = declared.first(where: { $0.value == entry.value }) {
                entry.associatedValues = match.associatedValues
            }
            return entry
        }
    }

    /// The top-level dictionary fields and how each is written (``KindMetadata/dictionaries``).
    static func dictionaryForms(_ declaration: ActivityDeclaration) -> [String: KindMetadata.DictionaryForm] {
        var forms: [String: KindMetadata.DictionaryForm] = [:]
        for field in declaration.contentState.fields + declaration.attributes.fields {
            guard case .dictionary(let key, _) = field.type.unwrapped else { continue }
            forms[field.key] = declaration.isObjectKey(key) ? .object : .array
        }
        return forms
    }

    /// The `Date` fields at the top of the attributes (``ActivityKind/dates(inAttributes:field:)``), each with
    /// its dotted path under `field`, for ``DateWindow`` to check.
    public func dates(inAttributes attributes: JSONValue, field: String) -> [(field: String, date: Date)] {
        guard case .object(let object) = attributes else { return [] }
        return declaration.attributes.fields.compactMap { declared in
            guard declared.type.unwrapped == .date, case .string(let text)? = object[declared.key],
                  let date = ISODate.parse(text) else { return nil }
            return (field.isEmpty ? declared.key : "\(field).\(declared.key)", date)
        }
    }

    /// `value` with each enum field given by its `kind.json` name (`"yoga"`) replaced by the app's raw value
    /// (`2`), so the declaration can decode it; raw values pass as they are.
    /// - Throws: ``ProtocolError`` `invalid_field` for a string that is neither a name nor a raw value of a
    ///   field whose names differ from its raw values.
    func rawEnumValues(in value: JSONValue, field: String) throws(ProtocolError) -> JSONValue {
        guard case .object(var object) = value else { return value }
        for (key, all) in metadata.enums {
            guard case .string(let text)? = object[key] else { continue }
            let entries = all.filter(\.sentAsName)
            guard entries.contains(where: { $0.rawValue != nil }) else { continue }
            if let entry = entries.first(where: { $0.value == text }) {
                if let raw = entry.rawValue { object[key] = raw }
            } else if !entries.contains(where: { $0.rawValue == .string(text) }) {
                let names = entries.map { "\"\($0.value)\"" }.joined(separator: ", ")
                let raws = entries.compactMap { $0.rawValue.map(FieldReader.show) }.joined(separator: ", ")
                throw .invalid(field.isEmpty ? key : "\(field).\(key)",
                               "unknown value \"\(text.clipped(to: 40))\"; expected one of \(names) (or \(raws))")
            }
        }
        return .object(object)
    }

    /// A normalised `value` with enum raw values written as their `kind.json` names, after checking the
    /// part's ``FieldLimits``.
    /// - Throws: ``ProtocolError`` `invalid_field` naming the first field out of its limits.
    func checked(_ value: JSONValue, as part: DeclaredPart, field: String) throws(ProtocolError) -> JSONValue {
        guard case .object(var object) = value else { return value }
        for (key, limits) in (metadata.limits[part] ?? [:]).sorted(by: { $0.key < $1.key }) {
            try limits.check(key, in: object, path: field.isEmpty ? key : "\(field).\(key)", parent: field)
        }
        for (key, entries) in metadata.enums {
            guard let current = object[key], let entry = entries.first(where: { $0.sentAsName && $0.rawValue == current }) else { continue }
            object[key] = .string(entry.value)
        }
        return .object(object)
    }
}

/// Dictionaries and enums without a raw type: the shapes whose JSON keys are data.
extension DeclarationConverter {
    /// A `[K: V]` as `Dictionary(from:)` reads it under `JSONDecoder`.
    ///
    /// `String` keys: an object, each value decoded at `path.key`. A `CodingKeyRepresentable` enum's keys: an
    /// object whose keys are its raw values (another key is `dataCorrupted` at `path.key`). `Int` keys: an object
    /// whose every key must be what `Int(_:)` reads (`"1"`, `"+1"`, `"01"`; otherwise `typeMismatch Int` at
    /// `path.key`, "Expected Int key but found String key instead."), kept as that integer's digits (`"+1"` and
    /// `"01"` are one entry, `"1"`). Other keys: a flat array `[k0, v0, k1, v1…]`; an odd count is
    /// `dataCorrupted` at `path` before any element is read. Entries are checked in key order (for objects)
    /// where `JSONDecoder` goes in hash order, so of several bad entries the one reported may differ.
    mutating func dictionary(_ value: JSONValue, key: DeclaredType, value element: DeclaredType, _ path: Path) throws(DecodingFailure) -> JSONValue {
        guard declaration.isObjectKey(key) else {
            guard case .array(let items) = value else { throw mismatch("Array<Any>", expected: "an array of alternating keys and values", value, path) }
            guard items.count % 2 == 0 else {
                throw corrupted("odd-length key/value array", debug: "Expected collection of key-value pairs; encountered odd-length array instead.",
                                protocolReason: "expected alternating keys and values, got \(items.count) elements", path)
            }
            var result: [JSONValue] = []
            result.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                result.append(try convert(item, as: index % 2 == 0 ? key : element, path: path + [.index(index)]))
            }
            // A key sent twice holds its last value, as `Dictionary(from:)` assigns each pair in turn; it keeps
            // its first place.
            var slot: [JSONValue: Int] = [:]
            var pairs: [(JSONValue, JSONValue)] = []
            for index in stride(from: 0, to: result.count, by: 2) {
                if let at = slot[result[index]] {
                    pairs[at].1 = result[index + 1]
                } else {
                    slot[result[index]] = pairs.count
                    pairs.append((result[index], result[index + 1]))
                }
            }
            return .array(pairs.flatMap { [$0.0, $0.1] })
        }
        guard case .object(let object) = value else {
            throw mismatch("Dictionary<String, Any>", expected: "an object", value, path)
        }
        var result: [String: JSONValue] = [:]
        for name in object.keys.sorted() {
            let entryPath = path + [.key(name)]
            // An integer key is kept as the `Int` it reads as: "+1" and "01" are the app's 1, and keys that read
            // as the same integer are one entry (the last in key order here; JSONDecoder keeps one of them too).
            var kept = name
            if case .enumeration(let enumName) = key, let declared = declaration.enums[enumName] {
                let raw: JSONValue? = declared.rawType == .string ? .string(name) : Int(name).map { .number(Double($0)) }
                if declared.rawType != .string, let number = Int(name) { kept = String(number) }
                guard let raw, declared.case(rawValue: raw) != nil else {
                    throw corrupted("key \"\(name.clipped(to: 40))\" is not a \(declared.swiftName)", debug: "Could not convert key to type \(declared.swiftName)",
                                    protocolReason: "unknown key \"\(name.clipped(to: 40))\" (not a \(declared.swiftName))", entryPath)
                }
            } else if key != .string, Int(name) == nil {
                throw DecodingFailure(kind: .typeMismatch, codingPath: entryPath, type: "Int",
                                      debugDescription: "Expected Int key but found String key instead.",
                                      reason: source == .codable ? "typeMismatch Int: expected Int key but found String key \"\(name.clipped(to: 40))\" instead"
                                          : "expected an integer key, got \"\(name.clipped(to: 40))\"")
            } else if key != .string, let number = Int(name) {
                kept = String(number)
            }
            result[kept] = try convert(object[name] ?? .null, as: element, path: entryPath)
        }
        return .object(result)
    }

    /// An enum without a raw type, in Swift 5.5's synthesized keyed form: an object with exactly one key that
    /// is a case name (other keys are not counted: `allKeys` holds only case names), whose value is an object of
    /// the case's associated values, decoded like a struct's fields.
    ///
    /// Failures as the synthesized `init(from:)` throws them: not an object, `typeMismatch Dictionary<String, Any>`;
    /// no case key or several, `typeMismatch` of the enum at `path` ("Invalid number of keys found, expected
    /// one."); the case's value `null`, `valueNotFound Dictionary<String, Any>` at `path.case`; not an object,
    /// `typeMismatch` there; a missing associated value, `keyNotFound` in it.
    mutating func keyed(_ value: JSONValue, _ declared: DeclaredEnum, _ path: Path) throws(DecodingFailure) -> JSONValue {
        let names = declared.cases.prefix(20).map { "\"\($0.name)\"" }.joined(separator: ", ")
        guard case .object(let object) = value else {
            throw mismatch("Dictionary<String, Any>", expected: "an object with one key, the case (one of \(names))", value, path)
        }
        let present = declared.cases.filter { object[$0.name] != nil }
        guard present.count == 1, let chosen = present.first else {
            let found = present.isEmpty ? "none of them" : present.map { "\"\($0.name)\"" }.joined(separator: ", ")
            throw DecodingFailure(kind: .typeMismatch, codingPath: path, type: declared.swiftName,
                                  debugDescription: "Invalid number of keys found, expected one.",
                                  reason: source == .codable ? "typeMismatch \(declared.swiftName): expected exactly one case key (one of \(names)), "
                                      + "found \(found)" : "expected an object with exactly one case key (one of \(names)), found \(found)")
        }
        let casePath = path + [.key(chosen.name)]
        let payloadValue = object[chosen.name] ?? .null
        if payloadValue == .null {
            throw DecodingFailure(kind: .valueNotFound, codingPath: casePath, type: "Dictionary<String, Any>",
                                  debugDescription: "Cannot get keyed decoding container -- found null value instead",
                                  reason: source == .codable ? "valueNotFound: case \(chosen.name) of \(declared.swiftName) needs an object "
                                      + "of its associated values ({} for none), found null" : "required field is null (write {} for a case without values)")
        }
        let payload = DeclaredStruct(name: "\(declared.name).\(chosen.name)", fields: chosen.payload, ignored: [], line: declared.line)
        let converted = try convert(payloadValue, as: payload, path: casePath)
        for key in object.keys.sorted() where key != chosen.name {
            warn(path, "key \"\(key.clipped(to: 64))\" is not a case of \(declared.swiftName); the app ignores it")
        }
        return .object([chosen.name: converted])
    }
}

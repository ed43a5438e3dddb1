// libFuzzer entry for the ActivityAttributes declaration reader and the decoders built on it (issue 17).
//
// Compiled together with every file of Sources/LiveActivityCore into one module (see Fuzz/run-declarations.sh),
// so it can reach internal API. Each input is Swift source, optionally followed by a NUL byte and a JSON value.
// The source is read with `ActivityDeclaration(swiftSource:)` (arbitrary bytes: must never crash, loop or
// overflow the stack); when it reads, the JSON (if any) is decoded as both parts in both forms.
//
// Any broken invariant calls `fatalError` with a reason (libFuzzer reports a deadly signal and writes the
// input as crash-<sha1>). Invariants:
// - a reader error has a line ≥ 1 and a message, and its description starts with the file name;
// - every struct and enum a declared type names is in the declaration (structs, enums), as are both roots;
// - both JSON Schemas, in both forms, encode as JSON;
// - a sample value built from the declaration (protocol form) normalises to itself, converts to the Codable
//   form, and decodes back to the same value;
// - the JSON tail: whatever decodes (Codable or protocol form) round-trips protocol → Codable → protocol
//   unchanged, and every failure gives a summary and a protocol error naming a field under the caller's.
import Foundation

private func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant: \(message())") }
}

private func encodes(_ value: JSONValue, _ what: String) {
    do { _ = try JSONEncoder().encode(value) } catch { fatalError("invariant: \(what) does not encode: \(error)") }
}

/// A protocol-form value for `type`, or nil when none can be built (an enum without cases, deep recursion).
private func sample(_ type: DeclaredType, in declaration: ActivityDeclaration, depth: Int) -> JSONValue? {
    guard depth < 24 else { return nil }
    switch type {
    case .string: return .string("x")
    case .integer: return .number(7)
    case .double: return .number(1.5)
    case .bool: return .bool(true)
    case .date: return .string("2026-11-29T17:00:00.000Z")
    case .url: return .string("https://example.com/a.png")
    case .closedDateRange, .dateRange:
        return .object(["start": .string("2026-11-29T17:00:00.000Z"), "end": .string("2026-11-29T18:00:00.000Z")])
    case .array(let element): return sample(element, in: declaration, depth: depth + 1).map { .array([$0]) } ?? .array([])
    case .optional: return nil
    case .enumeration(let name):
        guard let declared = declaration.enums[name], let first = declared.cases.first else { return nil }
        guard declared.isKeyed else { return first.rawValue }
        var payload: [String: JSONValue] = [:]
        for field in first.payload where !field.type.isOptional {
            guard let value = sample(field.type, in: declaration, depth: depth + 1) else { return nil }
            payload[field.key] = value
        }
        return .object([first.name: .object(payload)])
    case .uuid: return .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
    case .decimal: return .number(2.5)
    case .dictionary(let key, let value):
        guard declaration.isObjectKey(key) else {
            guard let k = sample(key, in: declaration, depth: depth + 1), let v = sample(value, in: declaration, depth: depth + 1) else { return .array([]) }
            return .array([k, v])
        }
        var name = key == .string ? "a" : "1"
        if case .enumeration(let enumName) = key {
            switch declaration.enums[enumName]?.cases.first?.rawValue {
            case .string(let text)?: name = text
            case .number(let number)?: name = String(Int(number))
            default: return .object([:])
            }
        }
        return sample(value, in: declaration, depth: depth + 1).map { .object([name: $0]) } ?? .object([:])
    case .structure(let name):
        guard let structure = declaration.structs[name] else { return nil }
        var object: [String: JSONValue] = [:]
        for field in structure.fields where !field.type.isOptional {
            guard let value = sample(field.type, in: declaration, depth: depth + 1) else { return nil }
            object[field.key] = value
        }
        return .object(object)
    }
}

private func checkTypes(_ declaration: ActivityDeclaration) {
    func named(_ type: DeclaredType) {
        switch type {
        case .structure(let name): check(declaration.structs[name] != nil, "struct \(name) is not in the declaration")
        case .enumeration(let name): check(declaration.enums[name] != nil, "enum \(name) is not in the declaration")
        case .array(let inner), .optional(let inner): named(inner)
        case .dictionary(let key, let value): named(key); named(value)
        default: break
        }
    }
    check(declaration.structs[declaration.attributes.name] != nil && declaration.structs[declaration.contentState.name] != nil,
          "a root struct is missing from structs")
    for structure in declaration.structs.values {
        for field in structure.fields { named(field.type) }
    }
}

private func roundTrips(_ declaration: ActivityDeclaration, _ protocolForm: JSONValue, _ part: DeclaredPart, _ what: String) {
    do {
        let codable = try declaration.codableForm(of: protocolForm, as: part).value
        let back = try declaration.decode(codable: codable, as: part).value
        check(back == protocolForm, "\(what): protocol → Codable → protocol changed \(protocolForm) into \(back)")
    } catch {
        fatalError("invariant: \(what): a normalised value does not convert back: \(error.summary)")
    }
}

private func checkFailure(_ failure: DecodingFailure) {
    check(!failure.summary.isEmpty, "empty summary")
    let error = failure.protocolError(field: "content-state")
    check(error.field?.hasPrefix("content-state") ?? false, "protocol error field \(error.field ?? "nil") is not under content-state")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func declarationFuzzer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let split = input.firstIndex(of: 0) ?? input.count
    let source = String(decoding: input[..<split], as: UTF8.self)
    let declaration: ActivityDeclaration
    do {
        declaration = try ActivityDeclaration(swiftSource: source, file: "Fuzz.swift")
    } catch {
        check(error.line >= 1 && !error.message.isEmpty && error.description.hasPrefix("Fuzz.swift:"), "bad reader error \(error)")
        return 0
    }
    checkTypes(declaration)
    for form in [ContentForm.protocolForm, .codable] { encodes(declaration.jsonDescription(form: form), "the JSON description") }
    _ = declaration.countdownCandidates
    _ = declaration.imageCandidates

    for part in DeclaredPart.allCases {
        guard let value = sample(.structure(declaration.root(part).name), in: declaration, depth: 0) else { continue }
        do {
            let normalised = try declaration.normalise(value, as: part, field: "state")
            check(normalised.value == value, "the sample \(value) normalises to \(normalised.value)")
            roundTrips(declaration, value, part, "sample")
        } catch {
            fatalError("invariant: the sample \(value) is refused: \(error)")
        }
    }

    guard split < input.count, let value = try? JSONValue.parse(input[(split + 1)...]) else { return 0 }
    for part in DeclaredPart.allCases {
        do {
            let decoded = try declaration.decode(codable: value, as: part, field: "content-state")
            roundTrips(declaration, decoded.value, part, "Codable input")
        } catch {
            checkFailure(error)
        }
        do {
            let normalised = try declaration.normalise(value, as: part, field: "content-state")
            roundTrips(declaration, normalised.value, part, "protocol input")
        } catch {
            check(error.field.map { $0.hasPrefix("content-state") } ?? true, "protocol error field \(error.field ?? "") is not under content-state")
        }
    }
    return 0
}

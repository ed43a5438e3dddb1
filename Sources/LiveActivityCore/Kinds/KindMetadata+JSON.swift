import Foundation

extension KindMetadata {
    /// Reads `kind.json`'s text.
    /// - Parameters:
    ///   - text: the file's UTF-8 text.
    ///   - file: the file's path, for messages (`Kinds/workout/kind.json`).
    ///   - folderName: the folder's name, the wire name when `name` is absent.
    /// - Throws: ``KindFolderError`` naming the file and, for JSON that does not parse, its line.
    public static func parse(_ text: String, file: String, folderName: String) throws(KindFolderError) -> KindMetadata {
        let value: JSONValue
        do {
            value = try JSONValue.parse(Array(text.utf8))
        } catch {
            // JSONDecoder's message has no position; Foundation's parser names the character it stopped at.
            var located = error.message
            do { _ = try JSONSerialization.jsonObject(with: Data(text.utf8)) } catch { located = "\((error as NSError).userInfo["NSDebugDescription"] ?? error)" }
            let line = JSONLine.of(error: located, in: text) ?? JSONLine.of(error: error.message, in: text)
            throw KindFolderError(file: file, line: line, message: "not valid JSON: \(located == error.message ? error.message : located)")
        }
        do throws(ProtocolError) {
            return try read(value, folderName: folderName)
        } catch {
            throw KindFolderError(file: file, line: nil, message: error.message)
        }
    }

    /// Reads the parsed `kind.json` object.
    /// - Throws: ``ProtocolError`` naming the bad key.
    static func read(_ value: JSONValue, folderName: String) throws(ProtocolError) -> KindMetadata {
        let reader = try FieldReader(value, path: "")
        let name = try reader.string("name", maxLength: 64) ?? folderName
        // A Swift type name is let through here: it is a wire name only when it is the struct's (KindRegistry.kind(for:)).
        guard KindMetadata.isKindName(name) || KindMetadata.isSwiftTypeName(name) else {
            throw .invalid("name", "\"\(name.clipped(to: 64))\" is not a kind name (1…64 of a-z, 0-9, - and _)")
        }
        var metadata = KindMetadata(name: name, label: try reader.string("label", maxLength: 64))
        metadata.swiftNames = try strings(reader, "swiftNames")
        metadata.countdown = try reader.string("countdown", maxLength: 128)
        metadata.durationShortcut = try reader.bool("durationShortcut") ?? false
        if metadata.durationShortcut, metadata.countdown == nil {
            throw .invalid("durationShortcut", "needs a \"countdown\" field to count down")
        }
        metadata.title = try reader.string("title", maxLength: 256)
        metadata.image = try reader.string("image", maxLength: 128)
        metadata.fallbackIcon = try reader.string("fallbackIcon", maxLength: 64) ?? "workout"
        if let enums = try reader.object("enums") {
            for field in enums.object.keys.sorted() {
                guard case .array(let items) = try enums.required(field) else {
                    throw .invalid(enums.path(field), "expected an array of {\"value\", \"label\", \"icon\"} objects")
                }
                metadata.enums[field] = try items.enumerated().map { index, item throws(ProtocolError) in
                    let entry = try FieldReader(item, path: "\(enums.path(field))[\(index)]")
                    guard let value = try entry.string("value", maxLength: 128) else { throw .missing(entry.path("value")) }
                    let rawValue = entry.value("rawValue")
                    let sentAs = try entry.string("sentAs", maxLength: 16) ?? "name"
                    guard sentAs == "name" || (sentAs == "rawValue" && rawValue != nil) else {
                        throw .invalid(entry.path("sentAs"), sentAs == "rawValue" ? "\"rawValue\" needs the entry's \"rawValue\""
                                       : "expected \"name\" or \"rawValue\", got \"\(sentAs.clipped(to: 16))\"")
                    }
                    return EnumValue(value: value, rawValue: rawValue,
                                     label: try entry.string("label", maxLength: 128) ?? value,
                                     icon: try entry.string("icon", maxLength: 64), sentAsName: sentAs == "name")
                }
            }
        }
        if let limits = try reader.object("limits") {
            for (key, part) in [("attributes", DeclaredPart.attributes), ("state", .contentState)] {
                guard let fields = try limits.object(key) else { continue }
                for field in fields.object.keys.sorted() {
                    metadata.limits[part, default: [:]][field] = try FieldLimits.read(try FieldReader(try fields.required(field), path: fields.path(field)))
                }
            }
            if let other = limits.object.keys.sorted().first(where: { $0 != "attributes" && $0 != "state" }) {
                throw .invalid(limits.path(other), "limits are given for \"attributes\" or \"state\"")
            }
        }
        try readFace(reader, into: &metadata)
        return metadata
    }

    /// Reads the keys of the generated layout and frame: `layout`, `activityBackgroundTint`,
    /// `activitySystemActionForegroundColor`.
    private static func readFace(_ reader: FieldReader, into metadata: inout KindMetadata) throws(ProtocolError) {
        for key in ["activityBackgroundTint", "activitySystemActionForegroundColor"] {
            guard let text = try reader.string(key, maxLength: 9) else { continue }
            let hex = text.dropFirst()
            guard text.hasPrefix("#"), [3, 4, 6, 8].contains(hex.count), hex.allSatisfy(\.isHexDigit) else {
                throw .invalid(key, "expected a colour such as \"#1c1c1e\" (#rgb, #rrggbb or #rrggbbaa)")
            }
            if key == "activityBackgroundTint" { metadata.activityBackgroundTint = text.lowercased() }
            else { metadata.activitySystemActionForegroundColor = text.lowercased() }
        }
        guard let layout = try reader.object("layout") else { return }
        let presentations = ["lock-screen", "compact", "minimal", "expanded", "small"]
        for key in layout.object.keys.sorted() {
            guard presentations.contains(key) else {
                throw .invalid(layout.path(key), "a layout is given per presentation: \(presentations.joined(separator: ", "))")
            }
            metadata.layout[key] = try strings(layout, key)
        }
    }

    private static func strings(_ reader: FieldReader, _ key: String) throws(ProtocolError) -> [String] {
        guard let value = reader.value(key) else { return [] }
        guard case .array(let items) = value else { throw .invalid(reader.path(key), "expected an array of strings") }
        return try items.enumerated().map { index, item throws(ProtocolError) in
            guard case .string(let text) = item, !text.isEmpty, text.count <= 128 else {
                throw .invalid("\(reader.path(key))[\(index)]", "expected a Swift type name")
            }
            return text
        }
    }

    /// This metadata as `GET /kinds` lists it (the `kind.json` shape).
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "name": .string(name),
            "label": .string(label),
            "swiftNames": .array(swiftNames.map(JSONValue.string)),
            "durationShortcut": .bool(durationShortcut),
            "fallbackIcon": .string(fallbackIcon),
        ]
        object["countdown"] = countdown.map(JSONValue.string) ?? .null
        object["title"] = title.map(JSONValue.string) ?? .null
        object["image"] = image.map(JSONValue.string) ?? .null
        object["enums"] = .object(enums.mapValues { values in
            .array(values.map { value in
                var entry: [String: JSONValue] = ["value": .string(value.value), "label": .string(value.label)]
                if let raw = value.rawValue { entry["rawValue"] = raw }
                if !value.sentAsName { entry["sentAs"] = .string("rawValue") }
                if let icon = value.icon { entry["icon"] = .string(icon) }
                if !value.associatedValues.isEmpty {
                    entry["associatedValues"] = .array(value.associatedValues.map { associated in
                        var object: [String: JSONValue] = ["key": .string(associated.key), "label": .string(associated.label)]
                        if !associated.valueLabels.isEmpty { object["valueLabels"] = .object(associated.valueLabels.mapValues(JSONValue.string)) }
                        return .object(object)
                    })
                }
                return .object(entry)
            })
        })
        object["limits"] = .object(Dictionary(uniqueKeysWithValues: limits.map { part, fields in
            (part == .attributes ? "attributes" : "state", JSONValue.object(fields.mapValues(\.json)))
        }))
        if !dictionaries.isEmpty { object["dictionaries"] = .object(dictionaries.mapValues { .string($0.rawValue) }) }
        if !elementLabels.isEmpty {
            object["elementLabels"] = .object(elementLabels.mapValues { labels in
                var entry: [String: JSONValue] = [:]
                if !labels.keys.isEmpty { entry["keys"] = .object(labels.keys.mapValues(JSONValue.string)) }
                if !labels.values.isEmpty { entry["values"] = .object(labels.values.mapValues(JSONValue.string)) }
                return .object(entry)
            })
        }
        if !layout.isEmpty { object["layout"] = .object(layout.mapValues { .array($0.map(JSONValue.string)) }) }
        if let tint = activityBackgroundTint { object["activityBackgroundTint"] = .string(tint) }
        if let color = activitySystemActionForegroundColor { object["activitySystemActionForegroundColor"] = .string(color) }
        return .object(object)
    }
}

/// Where in a text a JSON parser's message points: the line of the byte offset it names.
enum JSONLine {
    /// The 1-based line of the first `offset N` / `line N` the message names, or `nil`.
    static func of(error message: String, in text: String) -> Int? {
        let words = message.split(whereSeparator: { !$0.isLetter && !$0.isNumber })
        for (index, word) in words.enumerated() where index + 1 < words.count {
            guard let number = Int(words[index + 1]) else { continue }
            if word.lowercased() == "line" { return number }
            if ["offset", "character", "byte"].contains(word.lowercased()) {
                let prefix = text.utf8.prefix(number)
                return prefix.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
            }
        }
        return nil
    }
}

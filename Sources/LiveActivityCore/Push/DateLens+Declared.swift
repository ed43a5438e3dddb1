import Foundation

/// The date lens for declared kinds: the fields the app's own declaration types `Date`, `ClosedRange<Date>` or
/// `Range<Date>` are its dates, whatever their names (`ready`, `window`), read through the declaration's public
/// types (``ActivityDeclaration/root(_:)``, ``ActivityDeclaration/structs``, ``DeclaredType``).
extension DateLens {
    /// Every date in an APNs payload for a kind declared by `declaration`: `aps.timestamp`, `aps.stale-date`,
    /// `aps.dismissal-date` (Unix seconds), then each value of `aps.content-state` and `aps.attributes` the
    /// declaration types as a date (seconds since 2001; a range as its `[lower, upper]` pair), in declaration
    /// order. Without a declaration (built-in kinds), as ``push(_:now:)``: date-like key names.
    /// - Parameters:
    ///   - payload: the push's JSON payload.
    ///   - declaration: the declaration of the kind the push addresses or starts, or nil.
    ///   - now: the instant "about now".
    /// - Returns: the entries, each checked for a wrong epoch, milliseconds, strings and nulls.
    public static func push(_ payload: JSONValue, declaration: ActivityDeclaration?, now: Date) -> [Entry] {
        guard let declaration else { return push(payload, now: now) }
        guard case .object(let root) = payload, case .object(let aps)? = root["aps"] else { return [] }
        var entries = push(.object(["aps": .object(aps.filter { !["content-state", "attributes"].contains($0.key) })]), now: now)
        for (key, part) in [("content-state", DeclaredPart.contentState), ("attributes", .attributes)] {
            guard case .object(let object)? = aps[key] else { continue }
            declaredFields(object, of: declaration.root(part), declaration: declaration, path: "aps.\(key)", now: now, into: &entries)
        }
        return entries
    }

    /// Appends the dates among the fields of one declared struct, in declaration order.
    private static func declaredFields(_ object: [String: JSONValue], of declared: DeclaredStruct, declaration: ActivityDeclaration,
                                       path: String, now: Date, into entries: inout [Entry]) {
        for field in declared.fields {
            guard let child = object[field.key] else { continue }
            declaredDates(child, in: field.type, declaration: declaration, path: "\(path).\(field.key)", now: now, into: &entries)
        }
    }

    /// Walks `value` as `type` declares it, appending an entry for each value typed as a date.
    private static func declaredDates(_ value: JSONValue, in type: DeclaredType, declaration: ActivityDeclaration,
                                      path: String, now: Date, into entries: inout [Entry]) {
        switch type {
        case .date:
            entries.append(inspect(value, path: path, expects: .reference, now: now))
        case .closedDateRange, .dateRange:
            if case .array(let bounds) = value {
                for (index, bound) in bounds.enumerated() {
                    entries.append(inspect(bound, path: "\(path)[\(index)]", expects: .reference, now: now))
                }
            } else {
                entries.append(inspect(value, path: path, expects: .reference, now: now))
            }
        case .optional(let wrapped):
            if value != .null { declaredDates(value, in: wrapped, declaration: declaration, path: path, now: now, into: &entries) }
        case .array(let element), .set(let element):
            guard case .array(let items) = value else { return }
            for (index, item) in items.enumerated() {
                declaredDates(item, in: element, declaration: declaration, path: "\(path)[\(index)]", now: now, into: &entries)
            }
        case .structure(let name):
            guard case .object(let object) = value, let declared = declaration.structs[name] else { return }
            declaredFields(object, of: declared, declaration: declaration, path: path, now: now, into: &entries)
        case .dictionary(_, let valueType):
            // As JSONDecoder reads dictionaries: an object for String and Int keys, else a flat array of
            // alternating keys and values.
            switch value {
            case .object(let object):
                for key in object.keys.sorted() {
                    declaredDates(object[key]!, in: valueType, declaration: declaration, path: "\(path).\(key)", now: now, into: &entries)
                }
            case .array(let items):
                for index in stride(from: 1, to: items.count, by: 2) {
                    declaredDates(items[index], in: valueType, declaration: declaration, path: "\(path)[\(index)]", now: now, into: &entries)
                }
            default:
                return
            }
        case .string, .integer, .double, .bool, .url, .enumeration, .uuid, .decimal:
            return
        }
    }
}

import KindFixtures
@testable import LiveActivityCore

/// Random, seeded changes to a valid payload, for the differential decoder test: each mutant differs from its
/// source at one place (a key removed, a value nulled or replaced by another JSON type, a number pushed out
/// of an integer's range or given a fraction, a date in milliseconds, a string changed, an element dropped,
/// an unknown key added), so the decoder's verdict names one fault.
enum PayloadMutations {
    /// `count` mutants of `value`, the same for the same `seed`.
    static func mutants(of value: JSONValue, count: Int, seed: UInt64) -> [JSONValue] {
        var random = SplitMix64(seed: seed)
        var result: [JSONValue] = []
        for _ in 0..<count {
            let places = paths(in: value)
            guard let path = places.randomElement(using: &random) else { break }
            result.append(mutate(value, at: path[...], random: &random))
        }
        return result
    }

    private enum Step: Hashable {
        case key(String)
        case index(Int)
    }

    /// Every place in `value` (the root included), as key/index steps.
    private static func paths(in value: JSONValue, prefix: [Step] = []) -> [[Step]] {
        var found = [prefix]
        switch value {
        case .object(let object):
            for key in object.keys.sorted() { found += paths(in: object[key]!, prefix: prefix + [.key(key)]) }
        case .array(let items):
            for (index, item) in items.enumerated() { found += paths(in: item, prefix: prefix + [.index(index)]) }
        default:
            break
        }
        return found
    }

    private static func mutate(_ value: JSONValue, at path: ArraySlice<Step>, random: inout SplitMix64) -> JSONValue {
        guard let step = path.first else { return replacement(for: value, random: &random) }
        switch (value, step) {
        case (.object(var object), .key(let key)):
            if path.count == 1, Int.random(in: 0..<4, using: &random) == 0 {
                object.removeValue(forKey: key)
            } else if let inner = object[key] {
                object[key] = mutate(inner, at: path.dropFirst(), random: &random)
            }
            return .object(object)
        case (.array(var items), .index(let index)):
            if path.count == 1, Int.random(in: 0..<5, using: &random) == 0 {
                items.remove(at: index)
            } else {
                items[index] = mutate(items[index], at: path.dropFirst(), random: &random)
            }
            return .array(items)
        default:
            return value
        }
    }

    /// Another value for `value`: of its own type but off (out of range, fractional, milliseconds, a changed
    /// string), of another JSON type, `null`, or the same with an unknown key.
    private static func replacement(for value: JSONValue, random: inout SplitMix64) -> JSONValue {
        var options: [JSONValue] = [.null, .bool(true), .number(7), .string("x"), .array([]), .object([:]), .number(-1)]
        switch value {
        case .number(let number):
            options += [.number(number + 0.5), .number(number * 1000), .number(300), .number(70_000), .number(5e9), .number(-129),
                        .number(1e39), .number(1e-50), .string(number.jsonText), .bigInteger("9007199254740993"),
                        .bigInteger("-9223372036854775807"), .bigInteger("18446744073709551615")]
        case .bigInteger(let digits):
            options += [.number(Double(digits) ?? 0), .string(digits)]
        case .string(let text):
            options += [.string(""), .string(text + "!"), .string(text.uppercased()), .string(String(text.dropLast()))]
        case .object(var object):
            object["unexpected"] = .number(1)
            options += [.object(object), .array(Array(object.values))]
        case .array(let items):
            options += [.array(items + items.prefix(1)), .array(items.reversed()), .array(Array(items.dropFirst()))]
        case .bool(let flag):
            options += [.bool(!flag), .number(flag ? 1 : 0), .string(flag ? "true" : "false")]
        case .null:
            break
        }
        return options.randomElement(using: &random) ?? .null
    }
}

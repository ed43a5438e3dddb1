import Foundation
import LiveActivityCore

/// The render context's `display` object: each top-level field's value as the generated layout shows it
/// (docs/TEMPLATES.md), built the same way by the page's `Public/js/render-context.js` (`displayValues`).
///
/// By the value's shape, field by field (`null` and empty values are left out, so a section over
/// `display.F` shows nothing for a nil optional):
/// - an enum listed in `kind.json`: `{"text": label}`; text: `{"text"}`; a number: `{"text": "1,250"}` (grouped
///   from 10,000 on, at most two decimals); a `Bool`: `{"text": "Yes"}` or `"No"`;
/// - a date (ISO-8601) or a `{"start","end"}` range: `{"text": "17:46"` or `"17:30 – 17:50"`, `"short"`: one time
///   (a range's start before it begins, else its end), `"countdown": "m:ss"`, `"near": Bool` (its end is after
///   the shown instant and at most an hour away), `"progress": 0…1000`} (counted as the countdown is: frozen at
///   `pausedAt` and at `endDate` once ended);
/// - a dictionary (``KindMetadata/dictionaries``): `{"text": "economy 12, business 2 +1"}`;
/// - an enum without a raw type (keyed): its case and associated values, `{"text": "Delayed · Minutes 25"}`;
/// - an array of values: `{"text": "Margherita, Pepperoni +2"}`; an array of objects: `{"rows": [first two,
///   each `{"fields": its fields' texts by key}`], "more": "+N more"}` (`more` only past two); an object: `{"fields": {...}}`.
enum DisplayValues {
    /// How many rows of an array of objects a layout shows.
    static let rowLimit = 2
    /// How many items of an array of values its text names before `+N`.
    static let listLimit = 2
    /// How far ahead (ms) a date is "near" enough to show as a running countdown.
    static let nearMs: Int64 = 3_600_000

    /// The `display` object.
    /// - Parameters:
    ///   - fields: the attributes and state merged (state wins), as sent.
    ///   - context: the context built so far (for enum labels).
    ///   - startMs: the activity's `startDate` (a `Date` countdown counts from it), epoch ms.
    ///   - freezeMs: where countdowns stop (`pausedAt`, or `endDate` once ended), epoch ms.
    static func build(_ fields: [String: JSONValue], context: [String: JSONValue], kind: KindMetadata, nowMs: Int64,
                      startMs: Int64?, freezeMs: Int64?, offsetMinutes: Int) -> JSONValue {
        var display: [String: JSONValue] = [:]
        for (key, value) in fields where key != "pausedAt" && key != kind.image {
            if kind.enums[key] != nil, let label = context[key]?["label"]?.stringValue {
                display[key] = .object(["text": .string(label)])
                continue
            }
            let labels = kind.elementLabels[key]
            if let form = kind.dictionaries[key] {
                if let text = pairs(value, form: form, labels: labels, offsetMinutes: offsetMinutes) { display[key] = .object(["text": .string(text)]) }
                continue
            }
            if let words = labels?.values, case .array(let items) = value, !items.contains(where: \.isContainer) {
                if let text = list(items.map { labelled($0, words, offsetMinutes: offsetMinutes) }) { display[key] = .object(["text": .string(text)]) }
                continue
            }
            if let bounds = dateBounds(value, startMs: startMs) {
                var reference = nowMs
                if let freezeMs { reference = min(reference, freezeMs) }
                // A range not begun yet is shown by its start where one time fits (compact, minimal), else by its end.
                let next = bounds.isRange && reference < bounds.start ? bounds.start : bounds.end
                reference = max(reference, bounds.start)
                let left = bounds.end - reference
                let length = bounds.end - bounds.start
                let done = length <= 0 ? 1000 : min(1000, max(0, (reference - bounds.start) * 1000 / length))
                display[key] = .object([
                    "text": .string(bounds.isRange ? TimeOfDay.range(bounds.start, bounds.end, offsetMinutes: offsetMinutes)
                                                    : TimeOfDay.format(bounds.end, offsetMinutes: offsetMinutes)),
                    "short": .string(TimeOfDay.format(next, offsetMinutes: offsetMinutes)),
                    "countdown": .string(Countdown.format(left <= 0 ? 0 : Int((left + 999) / 1000))),
                    "near": .bool(left > 0 && left <= nearMs),
                    "progress": .number(Double(done)),
                ])
                continue
            }
            switch value {
            case .array(let items) where items.contains(where: { $0.objectValue != nil && !isRange($0) }):
                let rows = items.prefix(rowLimit).compactMap { item -> JSONValue? in
                    guard case .object(let object) = item else { return nil }
                    return .object(["fields": .object(texts(object, offsetMinutes: offsetMinutes))])
                }
                guard !rows.isEmpty else { continue }
                var entry: [String: JSONValue] = ["rows": .array(rows)]
                if items.count > rowLimit { entry["more"] = .string("+\(items.count - rowLimit) more") }
                display[key] = .object(entry)
            case .object(let object):
                let inner = texts(object, offsetMinutes: offsetMinutes)
                if !inner.isEmpty { display[key] = .object(["fields": .object(inner)]) }
            default:
                if let text = text(value, offsetMinutes: offsetMinutes), !text.isEmpty {
                    display[key] = .object(["text": .string(text)])
                }
            }
        }
        return .object(display)
    }

    /// A dictionary as its pairs, each key and value as text ("economy 12, business 2"), the first
    /// ``listLimit`` then `+N`: from a flat array of alternating key, value in its order, or from an object by
    /// sorted key; pairs with a `null` value are left out; nil when none is left, or when the value is not of
    /// the dictionary's form.
    /// - Parameter labels: words for the keys and the values of a raw-value enum (``KindMetadata/elementLabels``).
    static func pairs(_ value: JSONValue, form: KindMetadata.DictionaryForm, labels: KindMetadata.ElementLabels? = nil,
                      offsetMinutes: Int) -> String? {
        var pairs: [(JSONValue, JSONValue)] = []
        switch (form, value) {
        case (.array, .array(let items)):
            pairs = stride(from: 0, to: items.count - 1, by: 2).map { (items[$0], items[$0 + 1]) }
        case (.object, .object(let object)):
            pairs = object.keys.sorted().map { (.string($0), object[$0]!) }
        default:
            return nil
        }
        let texts = pairs.compactMap { key, value -> String? in
            guard let keyText = labelled(key, labels?.keys ?? [:], offsetMinutes: offsetMinutes),
                  let valueText = labelled(value, labels?.values ?? [:], offsetMinutes: offsetMinutes),
                  !valueText.isEmpty else { return nil }
            return "\(keyText) \(valueText)"
        }
        return list(texts)
    }

    /// Texts as a short list: the first ``listLimit`` joined with ", ", then `+N`; nil when none is left.
    static func list(_ texts: [String?]) -> String? {
        let texts = texts.compactMap { $0 }.filter { !$0.isEmpty }
        guard !texts.isEmpty else { return nil }
        let shown = texts.prefix(listLimit).joined(separator: ", ")
        return texts.count > listLimit ? "\(shown) +\(texts.count - listLimit)" : shown
    }

    /// A value as text, in words when `words` has its raw value (``KindMetadata/labelKey(_:)``).
    static func labelled(_ value: JSONValue, _ words: [String: String], offsetMinutes: Int) -> String? {
        if let key = KindMetadata.labelKey(value), let word = words[key] { return word }
        return text(value, offsetMinutes: offsetMinutes)
    }

    /// Each non-null field of an object as text.
    static func texts(_ object: [String: JSONValue], offsetMinutes: Int) -> [String: JSONValue] {
        object.compactMapValues { value in text(value, offsetMinutes: offsetMinutes).flatMap { $0.isEmpty ? nil : .string($0) } }
    }

    /// A value as one line of text: a date as its time of day, a range as both, a number formatted, a `Bool` as
    /// Yes / No, an array as a short list, an object as its values (by key) joined with " · "; `nil` for `null`.
    static func text(_ value: JSONValue, offsetMinutes: Int) -> String? {
        if let bounds = dateBounds(value, startMs: nil) {
            return bounds.isRange ? TimeOfDay.range(bounds.start, bounds.end, offsetMinutes: offsetMinutes)
                                  : TimeOfDay.format(bounds.end, offsetMinutes: offsetMinutes)
        }
        switch value {
        case .string(let text): return text
        case .number(let number): return format(number)
        case .bigInteger(let digits): return grouped(digits)
        case .bool(let flag): return flag ? "Yes" : "No"
        case .array(let items):
            return list(items.map { text($0, offsetMinutes: offsetMinutes) }) ?? ""
        case .object(let object):
            return object.keys.sorted().compactMap { object[$0].flatMap { text($0, offsetMinutes: offsetMinutes) } }
                .filter { !$0.isEmpty }.joined(separator: " · ")
        default: return nil
        }
    }

    /// `number` as `1.5e20`: the mantissa rounded to two decimals, trailing zeros dropped, no `+` nor leading zeros.
    static func exponent(_ number: Double) -> String {
        let parts = String(format: "%.2e", number).split(separator: "e").map(String.init)
        var mantissa = parts[0]
        while mantissa.hasSuffix("0") { mantissa.removeLast() }
        if mantissa.hasSuffix(".") { mantissa.removeLast() }
        return mantissa + "e" + String(Int(parts.count > 1 ? parts[1] : "0") ?? 0)
    }

    /// A number as the layout shows it: whole numbers below 2^53 in full, grouped with commas from 10,000 on
    /// (an identifier of 16 digits is not `9.01e15`); others rounded to two decimals, trailing zeros dropped; a
    /// magnitude from 1e15 on, or a non-zero one under 0.005 (which two decimals would show as 0), in exponent
    /// form: `1e308`, `-1.5e20`, `1e-7`.
    static func format(_ number: Double) -> String {
        guard number.isFinite else { return String(number) }
        let isWhole = number.rounded() == number && abs(number) < 9_007_199_254_740_992
        if !isWhole, number != 0, abs(number) >= 1e15 || abs(number) < 0.005 { return exponent(number) }
        var text = isWhole ? String(Int64(number)) : String(format: "%.2f", number)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        let negative = text.hasPrefix("-")
        if negative { text.removeFirst() }
        let parts = text.split(separator: ".", maxSplits: 1).map(String.init)
        var whole = parts.first ?? ""
        if whole.count > 4 { whole = grouped(whole) }
        return (negative ? "-" : "") + whole + (parts.count > 1 ? "." + parts[1] : "")
    }

    /// A whole number's digits grouped with commas (`-9,007,199,254,740,993`): a ``JSONValue/bigInteger(_:)``,
    /// shown exactly rather than in exponent form, and the whole part of ``format(_:)``'s numbers.
    static func grouped(_ digits: String) -> String {
        let negative = digits.hasPrefix("-")
        let whole = negative ? digits.dropFirst() : Substring(digits)
        var out = ""
        for (index, digit) in whole.enumerated() {
            if index > 0, (whole.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (negative ? "-" : "") + out
    }

    /// Whether a value is a `{"start","end"}` range of ISO-8601 dates.
    static func isRange(_ value: JSONValue) -> Bool {
        dateBounds(value, startMs: nil)?.isRange == true
    }

    /// A date's or range's bounds in epoch ms; a date counts from `startMs` (or from itself without one).
    static func dateBounds(_ value: JSONValue, startMs: Int64?) -> (start: Int64, end: Int64, isRange: Bool)? {
        switch value {
        case .string(let text):
            guard looksLikeDate(text), let end = ISODate.parse(text).map(RenderContext.milliseconds) else { return nil }
            return (min(startMs ?? end, end), end, false)
        case .object(let object):
            guard object.count == 2, case .string(let a)? = object["start"], case .string(let b)? = object["end"],
                  looksLikeDate(a), looksLikeDate(b),
                  let start = ISODate.parse(a).map(RenderContext.milliseconds),
                  let end = ISODate.parse(b).map(RenderContext.milliseconds) else { return nil }
            return (start, end, true)
        default:
            return nil
        }
    }

    /// `YYYY-MM-DDThh:mm…`: the protocol's dates (ISO-8601), not just any text a parser would take.
    static func looksLikeDate(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count >= 17, bytes.count <= 40 else { return false }
        let digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15]
        return digits.allSatisfy { bytes[$0] >= 48 && bytes[$0] <= 57 }
            && bytes[4] == UInt8(ascii: "-") && bytes[7] == UInt8(ascii: "-") && bytes[10] == UInt8(ascii: "T") && bytes[13] == UInt8(ascii: ":")
    }
}

private extension JSONValue {
    /// Whether this is an object or an array (a list of them is not a list of raw values).
    var isContainer: Bool {
        switch self {
        case .object, .array: return true
        default: return false
        }
    }
}

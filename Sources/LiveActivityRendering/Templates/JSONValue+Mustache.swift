import LiveActivityCore

/// How Mustache sees a JSON value: falsey or not, and the text it writes.
extension JSONValue {
    /// `false`, `null` and the empty array are falsey (a missing name too, handled by the caller).
    var isMustacheFalsey: Bool {
        switch self {
        case .null, .bool(false): return true
        case .array(let elements): return elements.isEmpty
        default: return false
        }
    }

    /// Appends the value's text: strings as is, numbers as JavaScript writes them, booleans as `true` / `false`;
    /// null, arrays and objects write nothing. `escaped` escapes `&` `<` `>` `"` `'` for HTML, after rendering
    /// bidirectional controls and NUL isolated (``BidiIsolation``).
    func appendMustacheText(to output: inout String, escaped: Bool) {
        switch self {
        case .string(let text):
            if escaped { Self.appendEscaped(text, to: &output) } else { output += text }
        case .number(let number): output += Self.javaScriptText(number)
        case .bigInteger(let digits): output += digits
        case .bool(let flag): output += flag ? "true" : "false"
        case .null, .array, .object: break
        }
    }

    private static func appendEscaped(_ text: String, to output: inout String) {
        // 0xE2 leads the UTF-8 of the bidirectional controls (U+202A…, U+2066…); 0 is NUL.
        let special = text.utf8.contains {
            $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">") || $0 == UInt8(ascii: "\"")
                || $0 == UInt8(ascii: "'") || $0 == 0xE2 || $0 == 0
        }
        guard special else {
            output += text
            return
        }
        for scalar in BidiIsolation.isolated(text).unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"": output += "&quot;"
            case "'": output += "&#39;"
            default: output.unicodeScalars.append(scalar)
            }
        }
    }

    /// A number as JavaScript's `String(n)` writes it (ECMA-262 Number::toString): the shortest digits that read
    /// back as the same number, without an exponent from 1e-6 up to 1e21, `0` for `-0`.
    static func javaScriptText(_ number: Double) -> String {
        if number.isNaN { return "NaN" }
        if number.isInfinite { return number < 0 ? "-Infinity" : "Infinity" }
        if number == 0 { return "0" }
        if number.rounded(.towardZero) == number, abs(number) < 1e15 { return String(Int64(number)) }

        // Swift's description also has the shortest round-trip digits; only the layout differs.
        let text = abs(number).description
        let parts = text.split(separator: "e", maxSplits: 1)
        let mantissa = parts[0]
        let exponent = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        var digits = Array(mantissa.utf8.filter { $0 != UInt8(ascii: ".") })
        var point = (mantissa.utf8.firstIndex(of: UInt8(ascii: ".")).map { mantissa.utf8.distance(from: mantissa.utf8.startIndex, to: $0) }
            ?? mantissa.utf8.count) + exponent
        while digits.first == UInt8(ascii: "0") {
            digits.removeFirst()
            point -= 1
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        let k = digits.count, n = point
        let s = String(decoding: digits, as: UTF8.self)
        var result = number < 0 ? "-" : ""
        if k <= n, n <= 21 {
            result += s + String(repeating: "0", count: n - k)
        } else if 0 < n, n <= 21 {
            result += s.prefix(n) + "." + s.dropFirst(n)
        } else if -6 < n, n <= 0 {
            result += "0." + String(repeating: "0", count: -n) + s
        } else {
            let e = n - 1
            let sign = e < 0 ? "-" : "+"
            result += k == 1 ? s : s.prefix(1) + "." + s.dropFirst(1)
            result += "e" + sign + String(abs(e))
        }
        return result
    }
}

/// A strict RFC 8259 parser straight to ``JSONValue``: the fast path of ``JSONValue/parse(_:depthLimit:)``.
///
/// Foundation's `JSONDecoder` reaches a ``JSONValue`` through `Decodable`, trying `Bool`, `Double`, `String`
/// and arrays in turn and building a `DecodingError` for each miss: about 100 µs for a 250-byte `update`,
/// paid for every message a client sends. This parser reads the bytes once.
///
/// It answers only when the answer is certainly Foundation's: an object or array at the top, every string
/// valid UTF-8 with valid escapes, every number finite and not rounded to zero (both read numbers correctly
/// rounded). On anything else — a syntax error included — it gives up and the caller asks Foundation, whose
/// value or error message is then the answer. One thing it refuses where Foundation would not: a key twice
/// in one object (Foundation keeps the first silently; RFC 8259 §4 leaves it to the reader, and RFC 7515 §4
/// asks a JOSE header's reader to refuse it), reported with the object's path. Nesting is bounded by the
/// caller's pre-scan (``JSONValue/maximumDepth``), so the recursion is too.
struct JSONParser {
    /// What the parser made of a text.
    enum Outcome: Equatable {
        /// The value, as Foundation would read it.
        case value(JSONValue)
        /// A key appears twice in one object: the dotted path of the second (`content.state.emoji`, `a[2].b`).
        case duplicateKey(path: String)
        /// Foundation must decide (an error, or a text this parser does not read).
        case unsure
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    /// Set when a key appears twice: the path from that key up to the object being unwound, innermost first.
    private var duplicatePath: [String]?

    /// What `bytes` holds (see ``Outcome``).
    static func parse(_ bytes: some Collection<UInt8>) -> Outcome {
        if let outcome = bytes.withContiguousStorageIfAvailable({ parse(buffer: $0) }) { return outcome }
        return Array(bytes).withUnsafeBufferPointer { parse(buffer: $0) }
    }

    private static func parse(buffer: UnsafeBufferPointer<UInt8>) -> Outcome {
        var parser = JSONParser(bytes: buffer)
        parser.skipWhitespace()
        guard let first = parser.peek(), first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return .unsure }
        let value = parser.value()
        if let path = parser.duplicatePath {
            var text = ""
            for component in path.reversed() {
                text += component.hasPrefix("[") || text.isEmpty ? component : "." + component
            }
            return .duplicateKey(path: String(text.prefix(200)))
        }
        guard let value else { return .unsure }
        parser.skipWhitespace()
        return parser.index == buffer.count ? .value(value) : .unsure
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    @inline(__always)
    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }

    private mutating func value() -> JSONValue? {
        skipWhitespace()
        guard let byte = peek() else { return nil }
        switch byte {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return nil
        }
    }

    private mutating func literal(_ text: StaticString, _ value: JSONValue) -> JSONValue? {
        let count = text.utf8CodeUnitCount
        guard bytes.count - index >= count else { return nil }
        for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return nil }
        index += count
        return value
    }

    private mutating func object() -> JSONValue? {
        index += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\""), let key = string() else { return nil }
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { return nil }
            index += 1
            guard let member = value() else {
                duplicatePath?.append(key)
                return nil
            }
            // A key twice (or two keys Swift's String calls equal).
            guard members.updateValue(member, forKey: key) == nil else {
                duplicatePath = [key]
                return nil
            }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(members)
            default: return nil
            }
        }
    }

    private mutating func array() -> JSONValue? {
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            guard let element = value() else {
                duplicatePath?.append("[\(elements.count)]")
                return nil
            }
            elements.append(element)
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(elements)
            default: return nil
            }
        }
    }

    /// A string from its opening quote; nil on a control character, a bad escape, a lone surrogate or bytes
    /// that are not UTF-8.
    private mutating func string() -> String? {
        index += 1  // "
        let start = index
        var escaped = false
        while true {
            guard let byte = peek() else { return nil }
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { return nil }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                index += 2
            } else {
                index += 1
            }
        }
        guard index < bytes.count else { return nil }
        let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
        index += 1  // "
        guard escaped else { return String(validating: raw, as: UTF8.self) }
        var utf8: [UInt8] = []
        utf8.reserveCapacity(raw.count)
        var position = 0
        while position < raw.count {
            let byte = raw[position]
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                position += 1
                continue
            }
            guard position + 1 < raw.count else { return nil }
            let kind = raw[position + 1]
            position += 2
            switch kind {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(kind)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                guard var unit = Self.hex4(raw, at: position) else { return nil }
                position += 4
                if (0xD800...0xDBFF).contains(unit) {
                    guard position + 6 <= raw.count, raw[position] == UInt8(ascii: "\\"), raw[position + 1] == UInt8(ascii: "u"),
                          let low = Self.hex4(raw, at: position + 2), (0xDC00...0xDFFF).contains(low) else { return nil }
                    position += 6
                    unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(unit) {
                    return nil
                }
                guard let scalar = Unicode.Scalar(unit) else { return nil }
                utf8.append(contentsOf: UTF8.encode(scalar)!)
            default:
                return nil
            }
        }
        return String(validating: utf8, as: UTF8.self)
    }

    private static func hex4(_ raw: UnsafeBufferPointer<UInt8>, at position: Int) -> UInt32? {
        guard position + 4 <= raw.count else { return nil }
        var value: UInt32 = 0
        for byte in raw[position..<position + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, finite and not rounded to zero; nil otherwise.
    private mutating func number() -> JSONValue? {
        let start = index
        var negative = false
        if peek() == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var digits = 0, integer: Int64 = 0, nonZero = false
        guard let first = peek(), Self.isDigit(first) else { return nil }
        if first == UInt8(ascii: "0") {
            index += 1
            digits = 1
            if let next = peek(), Self.isDigit(next) { return nil }
        } else {
            while let byte = peek(), Self.isDigit(byte) {
                digits += 1
                if digits <= 15 { integer = integer * 10 + Int64(byte - UInt8(ascii: "0")) }
                nonZero = true
                index += 1
            }
        }
        var whole = true
        if peek() == UInt8(ascii: ".") {
            whole = false
            index += 1
            guard let byte = peek(), Self.isDigit(byte) else { return nil }
            while let byte = peek(), Self.isDigit(byte) {
                nonZero = nonZero || byte != UInt8(ascii: "0")
                index += 1
            }
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            whole = false
            index += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
            guard let byte = peek(), Self.isDigit(byte) else { return nil }
            while let byte = peek(), Self.isDigit(byte) { index += 1 }
        }
        if whole, digits <= 15 {
            // Up to 15 digits: a Double holds it exactly.
            return .number(negative ? -Double(integer) : Double(integer))
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        // A whole number of 16 to 20 digits, however written (`9007199254740993`, `9007199254740993.0`,
        // `1e17`): exact from 2^53 on (a bigInteger), as JSONDecoder reads an Int64 or UInt64.
        if whole, let exact = JSONValue.integer(digits: text) { return exact }
        // Out of range either way (an overflow, or an underflow to zero): Foundation says what it makes of it.
        guard let value = Double(text), value.isFinite, value != 0 || !nonZero else { return nil }
        if !whole, abs(value) >= JSONValue.bigIntegerMagnitude,
           let exact = JSONValue.wholeDigits(ofNumber: text).flatMap({ JSONValue.integer(digits: $0) }) {
            return exact
        }
        return .number(value)
    }

    @inline(__always)
    private static func isDigit(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "0") < 10
    }
}

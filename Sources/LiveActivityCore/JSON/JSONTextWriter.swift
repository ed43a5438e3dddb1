import Foundation

/// Writes JSON text (RFC 8259) byte for byte as ``MessageEncoder/encoder`` writes the same values — Foundation's
/// `JSONEncoder` with `.sortedKeys` and `.withoutEscapingSlashes`, dates as ``ISODate`` strings — without
/// Codable's dynamic dispatch. The messages written once per update (every `activity` event and `ack`,
/// ``ServerMessage/encoded(heartbeatSeconds:)``) and the content-size check (``ContentLimits``) use it;
/// `JSONTextWriterTests` holds it to `JSONEncoder`'s bytes.
///
/// Rules, as `JSONEncoder` on this platform:
/// - objects' keys in ascending order of their UTF-8 bytes; no spaces;
/// - strings: `"` and `\` escaped with a backslash, `\b \f \n \r \t` by name, other code points below U+0020
///   as `\u00XX` (lowercase hex); `/` and everything else as their UTF-8;
/// - a ``JSONValue/number(_:)`` that is integral with magnitude below 9e15 as an integer (``JSONValue``'s own
///   encoding), any other finite number as Swift's shortest round-trip `description`, a trailing `.0` removed.
struct JSONTextWriter {
    /// A number that JSON cannot hold (NaN or ±infinity): `JSONEncoder` throws for it too.
    struct NonFiniteNumber: Error {}

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The text so far, UTF-8.
    private(set) var bytes: [UInt8] = []

    /// An empty writer with room for `capacity` bytes.
    init(capacity: Int = 512) { bytes.reserveCapacity(capacity) }

    /// Appends ASCII text as it is (punctuation, a key already quoted).
    @inline(__always)
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Opens an object: `{`.
    mutating func beginObject() { bytes.append(UInt8(ascii: "{")) }
    /// Closes an object: `}`.
    mutating func endObject() { bytes.append(UInt8(ascii: "}")) }

    /// Writes `"name":`, after a comma unless it is the object's first key. Callers give keys in sorted order.
    /// - Parameter name: the key, plain ASCII that needs no escaping.
    @inline(__always)
    mutating func key(_ name: StaticString) {
        if bytes.last != UInt8(ascii: "{") { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        raw(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes a string value, escaped as `JSONEncoder` escapes it.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if start < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index])) }
                start = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case UInt8(ascii: "\n"): bytes.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): bytes.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): bytes.append(UInt8(ascii: "t"))
                default:
                    raw("u00")
                    bytes.append(Self.hexDigits[Int(byte >> 4)])
                    bytes.append(Self.hexDigits[Int(byte & 0xF)])
                }
            }
            if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes an integer in decimal.
    mutating func integer<Integer: BinaryInteger>(_ value: Integer) {
        bytes.append(contentsOf: value.description.utf8)
    }

    /// Writes a number as ``JSONValue`` encodes it: an integer when integral and below 9e15 in magnitude.
    /// - Throws: ``NonFiniteNumber`` for NaN or ±infinity.
    mutating func number(_ value: Double) throws(NonFiniteNumber) {
        guard value.isFinite else { throw NonFiniteNumber() }
        if let whole = JSONValue.integerForm(of: value) {
            integer(whole)
        } else {
            try double(value)
        }
    }

    /// Writes a `Double` as `JSONEncoder` encodes one (not a ``JSONValue``): its shortest round-trip
    /// `description`, a trailing `.0` removed (`1700000000`, `1.5`, `5e+15`).
    /// - Throws: ``NonFiniteNumber`` for NaN or ±infinity.
    mutating func double(_ value: Double) throws(NonFiniteNumber) {
        guard value.isFinite else { throw NonFiniteNumber() }
        let text = value.description
        bytes.append(contentsOf: text.hasSuffix(".0") ? text.utf8.dropLast(2) : text.utf8[...])
    }

    /// Writes `true` or `false`.
    mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// Writes `null`.
    mutating func null() { raw("null") }

    /// Writes a date as ``ISODate/format(_:)`` (`2026-12-03T18:40:00.000Z`), or `null`.
    mutating func date(_ date: Date?) {
        guard let date else { return null() }
        string(ISODate.format(date))
    }

    /// Writes a string, or `null`.
    mutating func string(_ text: String?) {
        guard let text else { return null() }
        string(text)
    }

    /// Writes any JSON value, objects' keys sorted.
    /// - Throws: ``NonFiniteNumber`` for a NaN or infinite number anywhere in it.
    mutating func value(_ value: JSONValue) throws(NonFiniteNumber) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let number): try self.number(number)
        case .bigInteger(let digits): bytes.append(contentsOf: digits.utf8)
        case .string(let text): string(text)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                try self.value(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            var first = true
            for key in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                if !first { bytes.append(UInt8(ascii: ",")) }
                first = false
                string(key)
                bytes.append(UInt8(ascii: ":"))
                try self.value(members[key]!)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}

/// Where a JSON text first breaks RFC 8259's grammar, and what was expected there, for error messages.
///
/// Foundation's decoder says only "The given data was not valid JSON."; this second pass, run only after that
/// failure, names the byte, line and column and what was expected, so a client can find its mistake
/// (https://www.rfc-editor.org/rfc/rfc8259). It does not build values. Nesting is bounded by
/// ``JSONValue/maximumDepth`` before it runs, so its recursion is too.
struct JSONSyntaxCheck {
    /// The first syntax error: its byte offset (0-based), line and column (1-based, in bytes) and what was
    /// expected there, e.g. `"a value"`, `"\",\" or \"}\""`.
    struct Failure: Equatable {
        var offset: Int
        var line: Int
        var column: Int
        var expected: String
        /// What was found there: `end of message` or the character, quoted.
        var found: String

        /// `expected "," or "}" at line 1, column 16 (byte 15), found end of message`.
        var description: String { "expected \(expected) at line \(line), column \(column) (byte \(offset)), found \(found)" }
    }

    private let bytes: [UInt8]
    private var position = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The first syntax error in `bytes`, or `nil` when the grammar holds (the failure was elsewhere: a number
    /// out of range, a bad escape, invalid UTF-8).
    static func firstError(in bytes: some Collection<UInt8>) -> Failure? {
        var check = JSONSyntaxCheck(Array(bytes))
        do throws(Failure) {
            check.skipSpace()
            try check.value()
            check.skipSpace()
            if check.position < check.bytes.count { throw check.failure("the end of the message") }
            return nil
        } catch {
            return error
        }
    }

    private func failure(_ expected: String) -> Failure {
        var line = 1, column = 1
        for byte in bytes[..<min(position, bytes.count)] {
            if byte == UInt8(ascii: "\n") { line += 1; column = 1 } else { column += 1 }
        }
        let found: String
        if position >= bytes.count {
            found = "end of message"
        } else if (0x20..<0x7f).contains(bytes[position]) {
            found = "\"\(Character(UnicodeScalar(bytes[position])))\""
        } else {
            found = "byte 0x\(String(bytes[position], radix: 16))"
        }
        return Failure(offset: position, line: line, column: column, expected: expected, found: found)
    }

    private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d { position += 1 }
    }

    private mutating func expect(_ literal: String) throws(Failure) {
        for byte in literal.utf8 {
            guard current == byte else { throw failure("\"\(literal)\"") }
            position += 1
        }
    }

    private mutating func value() throws(Failure) {
        guard let byte = current else { throw failure("a value (object, array, string, number, true, false or null)") }
        switch byte {
        case UInt8(ascii: "{"): try object()
        case UInt8(ascii: "["): try array()
        case UInt8(ascii: "\""): try string()
        case UInt8(ascii: "t"): try expect("true")
        case UInt8(ascii: "f"): try expect("false")
        case UInt8(ascii: "n"): try expect("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
        default: throw failure("a value (object, array, string, number, true, false or null)")
        }
    }

    private mutating func object() throws(Failure) {
        position += 1
        skipSpace()
        if current == UInt8(ascii: "}") { position += 1; return }
        while true {
            guard current == UInt8(ascii: "\"") else { throw failure("a member name in double quotes") }
            try string()
            skipSpace()
            guard current == UInt8(ascii: ":") else { throw failure("\":\"") }
            position += 1
            skipSpace()
            try value()
            skipSpace()
            switch current {
            case UInt8(ascii: ","): position += 1; skipSpace()
            case UInt8(ascii: "}"): position += 1; return
            default: throw failure("\",\" or \"}\"")
            }
        }
    }

    private mutating func array() throws(Failure) {
        position += 1
        skipSpace()
        if current == UInt8(ascii: "]") { position += 1; return }
        while true {
            try value()
            skipSpace()
            switch current {
            case UInt8(ascii: ","): position += 1; skipSpace()
            case UInt8(ascii: "]"): position += 1; return
            default: throw failure("\",\" or \"]\"")
            }
        }
    }

    private mutating func string() throws(Failure) {
        position += 1
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return
            case UInt8(ascii: "\\"):
                position += 1
                guard let escape = current, "\"\\/bfnrtu".utf8.contains(escape) else {
                    throw failure("an escape (\\\", \\\\, \\/, \\b, \\f, \\n, \\r, \\t or \\uXXXX)")
                }
                position += 1
                if escape == UInt8(ascii: "u") {
                    for _ in 0..<4 {
                        guard let hex = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(hex)
                            || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(hex | 0x20) else { throw failure("four hex digits after \\u") }
                        position += 1
                    }
                }
            case 0..<0x20:
                throw failure("a character (control characters must be escaped in strings)")
            default:
                position += 1
            }
        }
        throw failure("a closing \"")
    }

    private mutating func number() throws(Failure) {
        if current == UInt8(ascii: "-") { position += 1 }
        guard let first = current, isDigit(first) else { throw failure("a digit") }
        position += 1
        if first != UInt8(ascii: "0") { while let byte = current, isDigit(byte) { position += 1 } }
        if current == UInt8(ascii: ".") {
            position += 1
            guard let byte = current, isDigit(byte) else { throw failure("a digit after the decimal point") }
            while let byte = current, isDigit(byte) { position += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { position += 1 }
            guard let byte = current, isDigit(byte) else { throw failure("a digit in the exponent") }
            while let byte = current, isDigit(byte) { position += 1 }
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}

extension JSONSyntaxCheck.Failure: Error {}

extension ClientMessage {
    /// The `requestId` of a message that is not valid JSON, when it can still be read there, so that the
    /// `invalid_json` error answering it carries the id as every other error does (docs/PROTOCOL.md).
    ///
    /// Read only from the top-level object's first member named `requestId` (a key at depth 1, escapes in
    /// the key not understood): a string without escapes or control characters, or a finite number. Anything
    /// less certain gives nil, and the error goes without an id, as before.
    /// - Parameter bytes: the message as received (UTF-8); only its first 64 KiB are read.
    static func salvagedRequestId(_ bytes: some Collection<UInt8>) -> JSONValue? {
        let text = Array(bytes.prefix(64 * 1024))
        guard let first = text.firstIndex(where: { !Self.isWhitespace($0) }), text[first] == UInt8(ascii: "{") else { return nil }
        var index = first, depth = 0
        while index < text.count {
            let byte = text[index]
            if byte == UInt8(ascii: "\"") {
                guard let (content, escaped, end) = Self.stringToken(text, from: index) else { return nil }
                index = end
                guard depth == 1, !escaped, content.elementsEqual("requestId".utf8) else { continue }
                var next = index
                while next < text.count, Self.isWhitespace(text[next]) { next += 1 }
                guard next < text.count, text[next] == UInt8(ascii: ":") else { continue }  // a value, not a key
                next += 1
                while next < text.count, Self.isWhitespace(text[next]) { next += 1 }
                return Self.simpleValue(text, at: next)
            }
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
            index += 1
        }
        return nil
    }

    /// The string token opening at `start`: its content bytes, whether it has escapes, and the index after
    /// its closing quote; nil when it does not close.
    private static func stringToken(_ text: [UInt8], from start: Int) -> (ArraySlice<UInt8>, Bool, Int)? {
        var index = start + 1, escaped = false
        while index < text.count, text[index] != UInt8(ascii: "\"") {
            if text[index] == UInt8(ascii: "\\") {
                escaped = true
                index += 2
            } else {
                index += 1
            }
        }
        guard index < text.count else { return nil }
        return (text[(start + 1)..<index], escaped, index + 1)
    }

    /// A string without escapes or control characters, or a finite number, starting at `index`.
    private static func simpleValue(_ text: [UInt8], at index: Int) -> JSONValue? {
        guard index < text.count else { return nil }
        if text[index] == UInt8(ascii: "\"") {
            guard let (content, escaped, _) = stringToken(text, from: index), !escaped,
                  !content.contains(where: { $0 < 0x20 }) else { return nil }
            return String(validating: content, as: UTF8.self).map(JSONValue.string)
        }
        let numberBytes = text[index...].prefix { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || [UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
                                                                       UInt8(ascii: "e"), UInt8(ascii: "E")].contains(byte)
        }
        guard !numberBytes.isEmpty, numberBytes.count <= 32,
              let value = Double(String(decoding: numberBytes, as: UTF8.self)), value.isFinite else { return nil }
        return .number(value)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
    }
}

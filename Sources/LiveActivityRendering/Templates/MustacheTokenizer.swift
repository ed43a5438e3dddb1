/// Splits a Mustache template into tokens, applying the spec's whitespace rules as it goes.
///
/// - Tags are found with the current delimiters (`{{` `}}` until a set-delimiter tag changes them).
/// - Standalone lines: a section, inverted, close, partial, comment or set-delimiter tag alone on its line
///   (only spaces and tabs around it, ending in `\n`, `\r\n` or the end of the template) removes the whole line;
///   the whitespace before a standalone partial tag becomes that partial's indentation.
/// - Comments and set-delimiter tags produce no token.
/// - Each line of the source that is kept starts with an ``Token/indent`` token.
///
/// Works on UTF-8 bytes; delimiters are matched byte for byte, which in valid UTF-8 only ever matches whole
/// characters. `Public/js/mustache.js` (`tokenize`) follows the same steps on UTF-16 code units.
struct MustacheTokenizer {
    /// One piece of the template.
    enum Token {
        case text(String)
        case indent
        case variable(name: String, escaped: Bool)
        /// `{{#name}}` or `{{^name}}`; `offset` is the tag's byte offset, for errors.
        case open(name: String, inverted: Bool, offset: Int)
        /// `{{/name}}`; `offset` is the tag's byte offset, for errors.
        case close(name: String, offset: Int)
        case partial(name: String, indentation: String?)
    }

    private let source: [UInt8]
    private let name: String
    private var tokens: [Token] = []
    private var openDelimiter = Array("{{".utf8)
    private var closeDelimiter = Array("}}".utf8)

    /// The tokens of `source`.
    ///
    /// - Throws: ``TemplateError`` for a tag without its closing delimiter, a tag with no name, or a malformed
    ///   set-delimiter tag.
    static func tokenize(_ source: [UInt8], name: String) throws(TemplateError) -> [Token] {
        var tokenizer = MustacheTokenizer(source: source, name: name)
        try tokenizer.run()
        return tokenizer.tokens
    }

    private init(source: [UInt8], name: String) {
        self.source = source
        self.name = name
    }

    // MARK: - Scanning

    private mutating func run() throws(TemplateError) {
        var position = 0
        let count = source.count
        while position < count {
            guard let tagStart = find(openDelimiter, from: position) else {
                emitText(from: position, to: count)
                return
            }
            var contentStart = tagStart + openDelimiter.count
            let sigil: UInt8? = contentStart < count ? source[contentStart] : nil
            let kind: UInt8
            switch sigil {
            case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "^"), UInt8(ascii: "/"), UInt8(ascii: ">"),
                 UInt8(ascii: "="), UInt8(ascii: "{"), UInt8(ascii: "&"):
                kind = sigil!
                contentStart += 1
            default:
                kind = 0  // a variable
            }
            let closing = kind == UInt8(ascii: "{") ? [UInt8(ascii: "}")] + closeDelimiter : closeDelimiter
            guard let contentEnd = find(closing, from: contentStart) else {
                throw error(at: tagStart, "unclosed tag: no \"\(text(closing))\" after \"\(text(openDelimiter))\"")
            }
            let tagEnd = contentEnd + closing.count
            let content = trimmed(contentStart, contentEnd)

            // Standalone: only spaces and tabs before the tag on its line, and after it up to the line's end.
            var lineStart: Int?
            var resume = tagEnd
            if kind != 0, kind != UInt8(ascii: "{"), kind != UInt8(ascii: "&") {
                let start = startOfBlankLine(before: tagStart)
                if let start, start >= position, let next = endOfBlankLine(after: tagEnd) {
                    lineStart = start
                    resume = next
                }
            }
            if let lineStart {
                emitText(from: position, to: lineStart)
            } else {
                emitText(from: position, to: tagStart)
                if tagStart == 0 || source[tagStart - 1] == UInt8(ascii: "\n") { tokens.append(.indent) }
            }

            switch kind {
            case UInt8(ascii: "!"):
                break
            case UInt8(ascii: "="):
                try setDelimiters(contentStart, contentEnd, tagStart: tagStart)
            default:
                let tagName = String(decoding: source[content], as: UTF8.self)
                if tagName.isEmpty { throw error(at: tagStart, "empty tag: a name is expected") }
                switch kind {
                case UInt8(ascii: "#"), UInt8(ascii: "^"):
                    tokens.append(.open(name: tagName, inverted: kind == UInt8(ascii: "^"), offset: tagStart))
                case UInt8(ascii: "/"):
                    tokens.append(.close(name: tagName, offset: tagStart))
                case UInt8(ascii: ">"):
                    let indentation = lineStart.map { String(decoding: source[$0..<tagStart], as: UTF8.self) }
                    tokens.append(.partial(name: tagName, indentation: indentation))
                default:
                    tokens.append(.variable(name: tagName, escaped: kind == 0))
                }
            }
            position = resume
        }
    }

    /// `{{=<% %>=}}`: the content between the delimiters must end in `=` and hold two whitespace-separated parts.
    private mutating func setDelimiters(_ start: Int, _ end: Int, tagStart: Int) throws(TemplateError) {
        guard end > start, source[end - 1] == UInt8(ascii: "=") else {
            throw error(at: tagStart, "invalid set-delimiter tag: it must end with \"=\(text(closeDelimiter))\"")
        }
        let parts = source[start..<(end - 1)].split(whereSeparator: Self.isWhitespace)
        guard parts.count == 2, !parts[0].contains(UInt8(ascii: "=")), !parts[1].contains(UInt8(ascii: "=")) else {
            throw error(at: tagStart, "invalid set-delimiter tag: two delimiters without \"=\" are expected, such as {{=<% %>=}}")
        }
        openDelimiter = Array(parts[0])
        closeDelimiter = Array(parts[1])
    }

    /// Text tokens for `source[from..<to]`, one per line, each line start preceded by an indent token.
    private mutating func emitText(from start: Int, to end: Int) {
        var position = start
        while position < end {
            if position == 0 || source[position - 1] == UInt8(ascii: "\n") { tokens.append(.indent) }
            var lineEnd = position
            while lineEnd < end, source[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            if lineEnd < end { lineEnd += 1 }
            tokens.append(.text(String(decoding: source[position..<lineEnd], as: UTF8.self)))
            position = lineEnd
        }
    }

    // MARK: - Helpers

    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, source.count >= needle.count else { return nil }
        var index = start
        let last = source.count - needle.count
        while index <= last {
            if source[index] == first {
                var matched = true
                for offset in 1..<needle.count where source[index + offset] != needle[offset] {
                    matched = false
                    break
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }

    /// If only spaces and tabs precede `offset` back to the start of its line, that line start. Looks no further
    /// back than the blanks, so a long line full of tags costs no more than its length.
    private func startOfBlankLine(before offset: Int) -> Int? {
        var index = offset
        while index > 0, source[index - 1] == UInt8(ascii: " ") || source[index - 1] == UInt8(ascii: "\t") { index -= 1 }
        return index == 0 || source[index - 1] == UInt8(ascii: "\n") ? index : nil
    }

    /// If only spaces and tabs follow `offset` up to `\n`, `\r\n` or the end, the offset just past that line end.
    private func endOfBlankLine(after offset: Int) -> Int? {
        var index = offset
        while index < source.count, source[index] == UInt8(ascii: " ") || source[index] == UInt8(ascii: "\t") { index += 1 }
        if index == source.count { return index }
        if source[index] == UInt8(ascii: "\n") { return index + 1 }
        if source[index] == UInt8(ascii: "\r"), index + 1 < source.count, source[index + 1] == UInt8(ascii: "\n") { return index + 2 }
        return nil
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
    }

    private func trimmed(_ start: Int, _ end: Int) -> Range<Int> {
        var lower = start, upper = end
        while lower < upper, Self.isWhitespace(source[lower]) { lower += 1 }
        while upper > lower, Self.isWhitespace(source[upper - 1]) { upper -= 1 }
        return lower..<upper
    }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    private func error(at offset: Int, _ reason: String) -> TemplateError {
        TemplateError.at(offset, in: source, name: name, reason)
    }
}

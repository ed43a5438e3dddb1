/// Splits Swift source into ``SwiftToken``s for the declaration reader.
///
/// Handles what can hide braces or quotes from a naive scan: line, block (nested) and doc comments; string
/// literals, multi-line (`"""`), raw (`#"…"#`, `##"…"##`) and with interpolations that contain strings of their
/// own (`"\(a ? "}" : "{")"`). `#if` blocks keep their first branch only (the condition is not evaluated).
/// Linear in the input; never traps (it is fuzzed).
struct SwiftTokenizer {
    /// Deepest string-in-interpolation nesting accepted.
    static let maximumInterpolationDepth = 16

    private let scalars: [Unicode.Scalar]
    private let file: String
    private var index = 0
    private var line = 1

    /// Tokenizes `source`.
    /// - Returns: the tokens, ending with one `.end` token.
    /// - Throws: ``DeclarationError`` for an unterminated string literal or block comment.
    static func tokenize(_ source: String, file: String) throws(DeclarationError) -> [SwiftToken] {
        var tokenizer = SwiftTokenizer(scalars: Array(source.unicodeScalars), file: file)
        return firstBranches(try tokenizer.all())
    }

    private init(scalars: [Unicode.Scalar], file: String) {
        self.scalars = scalars
        self.file = file
    }

    // MARK: - Scanning

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        let at = index + offset
        return at >= 0 && at < scalars.count ? scalars[at] : nil
    }

    private mutating func advance() {
        if index < scalars.count, scalars[index] == "\n" { line += 1 }
        index += 1
    }

    private func fail(_ message: String, line: Int) -> DeclarationError {
        DeclarationError(file: file, line: line, message: message)
    }

    private mutating func all() throws(DeclarationError) -> [SwiftToken] {
        var tokens: [SwiftToken] = []
        while let scalar = peek() {
            let start = line
            if scalar.properties.isWhitespace || scalar == "\u{0}" {
                advance()
            } else if scalar == "/", peek(1) == "/" {
                while let next = peek(), next != "\n" { advance() }
            } else if scalar == "/", peek(1) == "*" {
                try skipBlockComment()
            } else if scalar == "\"" {
                tokens.append(SwiftToken(kind: .string, text: try string(hashes: 0, depth: 0), line: start))
            } else if scalar == "#" {
                var hashes = 0
                while peek(hashes) == "#" { hashes += 1 }
                if peek(hashes) == "\"" {
                    for _ in 0..<hashes { advance() }
                    tokens.append(SwiftToken(kind: .string, text: try string(hashes: hashes, depth: 0), line: start))
                } else {
                    advance()
                    let name = identifierText()
                    tokens.append(SwiftToken(kind: name.isEmpty ? .punctuation : .directive, text: name.isEmpty ? "#" : name, line: start))
                }
            } else if scalar == "`" {
                advance()
                var name = ""
                while let next = peek(), next != "`", next != "\n" { name.unicodeScalars.append(next); advance() }
                if peek() == "`" { advance() }
                tokens.append(SwiftToken(kind: .identifier, text: name, line: start))
            } else if Self.isIdentifierStart(scalar) {
                tokens.append(SwiftToken(kind: .identifier, text: identifierText(), line: start))
            } else if Self.isDigit(scalar) {
                var text = ""
                while let next = peek(), Self.isIdentifierPart(next) || (next == "." && peek(1).map(Self.isDigit) == true) {
                    text.unicodeScalars.append(next)
                    advance()
                }
                tokens.append(SwiftToken(kind: .number, text: text, line: start))
            } else if scalar == "-", peek(1) == ">" {
                advance(); advance()
                tokens.append(SwiftToken(kind: .punctuation, text: "->", line: start))
            } else {
                advance()
                tokens.append(SwiftToken(kind: .punctuation, text: String(Character(scalar)), line: start))
            }
        }
        tokens.append(SwiftToken(kind: .end, text: "", line: line))
        return tokens
    }

    private mutating func identifierText() -> String {
        var text = ""
        while let next = peek(), Self.isIdentifierPart(next) {
            text.unicodeScalars.append(next)
            advance()
        }
        return text
    }

    private mutating func skipBlockComment() throws(DeclarationError) {
        let start = line
        var depth = 0
        repeat {
            guard let scalar = peek() else { throw fail("unterminated block comment (/* is never closed by */)", line: start) }
            if scalar == "/", peek(1) == "*" {
                depth += 1
                advance(); advance()
            } else if scalar == "*", peek(1) == "/" {
                depth -= 1
                advance(); advance()
            } else {
                advance()
            }
        } while depth > 0
    }

    /// Reads a string literal whose opening quote is at `index` (after `hashes` `#`s), returning its value.
    private mutating func string(hashes: Int, depth: Int) throws(DeclarationError) -> String {
        let start = line
        guard depth <= Self.maximumInterpolationDepth else {
            throw fail("string literals nested too deeply in interpolations (more than \(Self.maximumInterpolationDepth))", line: start)
        }
        let multiline = peek(1) == "\"" && peek(2) == "\""
        for _ in 0..<(multiline ? 3 : 1) { advance() }
        var value = ""
        while true {
            guard let scalar = peek() else { throw fail("unterminated string literal", line: start) }
            if scalar == "\n", !multiline { throw fail("unterminated string literal", line: start) }
            if scalar == "\"", closes(multiline: multiline, hashes: hashes) {
                for _ in 0..<((multiline ? 3 : 1) + hashes) { advance() }
                return value
            }
            if scalar == "\\", hashesFollow(hashes, from: 1) {
                for _ in 0...hashes { advance() }
                try escape(into: &value, hashes: hashes, depth: depth)
                continue
            }
            value.unicodeScalars.append(scalar)
            advance()
        }
    }

    private func hashesFollow(_ hashes: Int, from offset: Int) -> Bool {
        (0..<hashes).allSatisfy { peek(offset + $0) == "#" }
    }

    private func closes(multiline: Bool, hashes: Int) -> Bool {
        if multiline {
            return peek(1) == "\"" && peek(2) == "\"" && hashesFollow(hashes, from: 3)
        }
        return hashesFollow(hashes, from: 1)
    }

    /// After `\` (and the literal's `#`s): an escape, a line continuation, or an interpolation.
    private mutating func escape(into value: inout String, hashes: Int, depth: Int) throws(DeclarationError) {
        guard let scalar = peek() else { return }
        switch scalar {
        case "(":
            let start = line
            value += "\\(…)"
            advance()
            var parens = 1
            while parens > 0 {
                guard let next = peek() else { throw fail("unterminated string interpolation", line: start) }
                if next == "\"" {
                    _ = try string(hashes: 0, depth: depth + 1)
                    continue
                }
                if next == "#", peek(1) == "\"" || peek(1) == "#" {
                    var inner = 0
                    while peek(inner) == "#" { inner += 1 }
                    if peek(inner) == "\"" {
                        for _ in 0..<inner { advance() }
                        _ = try string(hashes: inner, depth: depth + 1)
                        continue
                    }
                }
                if next == "(" { parens += 1 }
                if next == ")" { parens -= 1 }
                advance()
            }
        case "n": value += "\n"; advance()
        case "t": value += "\t"; advance()
        case "r": value += "\r"; advance()
        case "0": value += "\u{0}"; advance()
        case "u":
            advance()
            guard peek() == "{" else { return }
            advance()
            var hex = ""
            while let next = peek(), next != "}", next != "\n", hex.count < 9 { hex.unicodeScalars.append(next); advance() }
            if peek() == "}" { advance() }
            if let code = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(code) { value.unicodeScalars.append(decoded) }
        case "\n", " ", "\t":
            // A multi-line literal's line continuation: `\` then (optional spaces and) the newline.
            while let next = peek(), next == " " || next == "\t" { advance() }
            if peek() == "\n" { advance() }
        default:
            value.unicodeScalars.append(scalar)
            advance()
        }
    }

    // MARK: - Character classes

    static func isDigit(_ scalar: Unicode.Scalar) -> Bool { scalar >= "0" && scalar <= "9" }

    static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || scalar == "$" || (scalar.value < 0x80 ? scalar.properties.isAlphabetic : scalar.properties.isXIDStart)
    }

    static func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        isIdentifierStart(scalar) || isDigit(scalar) || (scalar.value >= 0x80 && scalar.properties.isXIDContinue)
    }

    // MARK: - Conditional compilation

    /// The tokens with `#if` / `#elseif` / `#else` / `#endif` and their conditions removed, keeping only
    /// each block's first branch. An unmatched `#endif` is ignored; an unterminated `#if` runs to the end.
    static func firstBranches(_ tokens: [SwiftToken]) -> [SwiftToken] {
        var kept: [SwiftToken] = []
        kept.reserveCapacity(tokens.count)
        // One entry per open #if: whether its current branch is kept.
        var branches: [Bool] = []
        var conditionLine: Int?
        for token in tokens {
            if let line = conditionLine, token.line == line, token.kind != .end, token.kind != .directive { continue }
            conditionLine = nil
            let active = branches.last ?? true
            if token.kind == .directive {
                switch token.text {
                case "if":
                    branches.append(active)
                    conditionLine = token.line
                    continue
                case "elseif", "else":
                    if !branches.isEmpty { branches[branches.count - 1] = false }
                    conditionLine = token.text == "elseif" ? token.line : nil
                    continue
                case "endif":
                    if !branches.isEmpty { branches.removeLast() }
                    continue
                default:
                    break
                }
            }
            if active || token.kind == .end { kept.append(token) }
        }
        return kept
    }
}

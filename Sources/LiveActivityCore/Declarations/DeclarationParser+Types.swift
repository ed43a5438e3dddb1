/// Type expressions: what follows `:` in a property, `=` in a typealias, or an inheritance clause.
extension DeclarationParser {
    /// A type expression: a name with generic arguments, `[T]`, `[K: V]`, postfix `?`/`!`, or (as `.other`)
    /// a tuple, function, `some`/`any` type.
    mutating func type(depth: Int) throws(DeclarationError) -> TypeSyntax {
        guard depth <= Self.maximumDepth else {
            throw fail("type nested too deeply (more than \(Self.maximumDepth) levels)", line: current.line)
        }
        let start = index
        var result: TypeSyntax
        // Attributes on function types (`@escaping`, `@Sendable`).
        while current.isPunctuation("@") {
            advance()
            if current.kind == .identifier { advance() }
        }
        let token = current
        if token.kind == .identifier, ["some", "any", "inout", "borrowing", "consuming", "sending"].contains(token.text) {
            advance()
            let inner = try type(depth: depth + 1)
            result = .other("\(token.text) \(inner.text)")
        } else if token.kind == .identifier {
            var path: [String] = []
            var arguments: [TypeSyntax] = []
            while current.kind == .identifier {
                path.append(current.text)
                advance()
                if current.isPunctuation("<") {
                    advance()
                    while !current.isPunctuation(">"), !atEnd, !current.isPunctuation("{"), !current.isPunctuation("}") {
                        let before = index
                        arguments.append(try type(depth: depth + 1))
                        if current.isPunctuation(",") { advance() } else if index == before { advance() }
                    }
                    if current.isPunctuation(">") { advance() }
                }
                guard current.isPunctuation("."), peek(1).kind == .identifier else { break }
                advance()
            }
            result = .named(path, arguments)
        } else if token.isPunctuation("[") {
            advance()
            let key = try type(depth: depth + 1)
            if current.isPunctuation(":") {
                advance()
                let value = try type(depth: depth + 1)
                result = .dictionary(key, value)
            } else {
                result = .array(key)
            }
            guard current.isPunctuation("]") else { throw neverClosed("]", line: token.line) }
            advance()
        } else if token.isPunctuation("(") {
            try skipGroup()
            result = .other(text(from: start))
        } else {
            return .other(token.text)
        }
        while current.isPunctuation("?") || current.isPunctuation("!") {
            advance()
            result = .optional(result)
        }
        // `async`/`throws` and `->` make it a function type.
        while current.isIdentifier("async") || current.isIdentifier("throws") { advance() }
        if current.isPunctuation("->") {
            advance()
            _ = try type(depth: depth + 1)
            result = .other(text(from: start))
        }
        return result
    }

    /// The tokens from `start` to the current one, joined as source-like text (for messages).
    func text(from start: Int) -> String {
        var text = ""
        for token in tokens[start..<min(index, tokens.count)].prefix(40) {
            let piece = token.kind == .string ? "\"\(token.text)\"" : token.text
            if token.isPunctuation("->") { text += " " }
            if !text.isEmpty, token.kind == .identifier, let last = text.last, last.isLetter || last.isNumber || last == ">" {
                text += " "
            }
            text += piece
            if token.isPunctuation(",") || token.isPunctuation("->") || token.isPunctuation(":") { text += " " }
        }
        return text
    }
}

import Foundation

/// Properties and enum cases: the members the reader keeps.
extension DeclarationParser {
    /// After `var`/`let`: one or more bindings (`var a: Int = 1, b: String`). Computed properties
    /// (`var x: T { … }` without `willSet`/`didSet`) and destructuring patterns are skipped and not returned.
    mutating func propertyDeclaration(isLet: Bool, line: Int) throws(DeclarationError) -> [PropertySyntax] {
        var found: [PropertySyntax] = []
        // Names written without a type before one with a type (`var a, b: Int`) share that type.
        var waiting: [Int] = []
        while true {
            guard current.kind == .identifier else {
                try skipExpression()
                return found
            }
            var property = PropertySyntax(name: current.text, line: current.line, type: nil, isLet: isLet,
                                          hasInitialValue: false, literalType: nil)
            advance()
            var computed = false
            if current.isPunctuation(":") {
                advance()
                let type = try type(depth: 0)
                property.type = type
                for waitingIndex in waiting { found[waitingIndex].type = type }
                waiting.removeAll()
            }
            if current.isPunctuation("=") {
                let equals = current
                advance()
                let next = current
                if next.kind == .end || next.isPunctuation("}") || next.isPunctuation(",") || next.isPunctuation(";")
                    || (next.line > equals.line && startsDeclaration(next)) {
                    throw fail("property \"\(property.name)\" has \"=\" but no initial value", line: equals.line)
                }
                property.hasInitialValue = true
                property.literalType = loneLiteralType()
                try skipExpression()
            } else if current.isPunctuation("{") {
                let first = peek(1)
                computed = !(first.isIdentifier("willSet") || first.isIdentifier("didSet"))
                try skipGroup()
            }
            if !computed {
                if property.type == nil, !property.hasInitialValue { waiting.append(found.count) }
                found.append(property)
            }
            guard current.isPunctuation(",") else { return found }
            advance()
        }
    }

    /// The type of the initial value when it is one literal on its own (`3`, `-1.5`, `"x"`, `true`).
    private func loneLiteralType() -> String? {
        var offset = 0
        if current.isPunctuation("-"), peek(1).kind == .number { offset = 1 }
        let literal = peek(offset)
        let next = peek(offset + 1)
        let alone = next.kind == .end || next.line > literal.line || next.isPunctuation(",") || next.isPunctuation("}")
            || next.isPunctuation(";") || next.isPunctuation("{")
        guard alone else { return nil }
        switch literal.kind {
        case .string: return offset == 0 ? "String" : nil
        case .number: return Self.integer(literal.text) != nil ? "Int" : "Double"
        case .identifier where offset == 0 && (literal.text == "true" || literal.text == "false"): return "Bool"
        default: return nil
        }
    }

    /// Skips an expression (an initial value, a raw value): up to `,`, `;`, the container's `}`, or a
    /// declaration on a new line; bracketed groups (closures, calls, observers) are skipped whole.
    mutating func skipExpression() throws(DeclarationError) {
        var lastLine = current.line
        while true {
            let token = current
            if token.kind == .end || token.isPunctuation("}") || token.isPunctuation(",") || token.isPunctuation(";") { return }
            if token.line > lastLine, startsDeclaration(token) { return }
            if isOpener(token) {
                try skipGroup()
                lastLine = tokens[max(0, index - 1)].line
                continue
            }
            lastLine = token.line
            advance()
        }
    }

    /// After `case`: one or more enum cases (`case a, b = "x", c(Int)`).
    mutating func caseDeclaration() throws(DeclarationError) -> [CaseSyntax] {
        var found: [CaseSyntax] = []
        while current.kind == .identifier {
            var element = CaseSyntax(name: current.text, line: current.line, rawValue: nil, hasAssociatedValues: false)
            advance()
            if current.isPunctuation("(") {
                element.hasAssociatedValues = true
                element.associatedValues = try associatedValues()
            }
            if current.isPunctuation("=") {
                advance()
                element.rawValue = rawValue()
                try skipExpression()
            }
            found.append(element)
            guard current.isPunctuation(",") else { return found }
            advance()
        }
        try skipExpression()
        return found
    }

    /// At `(` after a case name: its associated values (`(Int, label: String, other: Double = 1)`), up to and
    /// including the matching `)`. A default value is skipped; whatever is not `label: Type` or `Type` is
    /// skipped to the next `,` at the same depth.
    private mutating func associatedValues() throws(DeclarationError) -> [CaseSyntax.AssociatedValue] {
        let start = index
        advance()
        var found: [CaseSyntax.AssociatedValue] = []
        while !current.isPunctuation(")") {
            if atEnd || current.isPunctuation("}") {
                index = start
                try skipGroup()
                return found
            }
            var label: String?
            if current.kind == .identifier, peek(1).isPunctuation(":") {
                label = current.text == "_" ? nil : current.text
                advance()
                advance()
            } else if current.kind == .identifier, peek(1).kind == .identifier, peek(2).isPunctuation(":") {
                // `_ name: Type`: the external label is the first word.
                label = current.text == "_" ? nil : current.text
                advance(); advance(); advance()
            }
            let before = index
            found.append(CaseSyntax.AssociatedValue(label: label, type: try type(depth: 1)))
            // A default value, or anything else, up to the next `,` or the closing `)`.
            while !current.isPunctuation(","), !current.isPunctuation(")"), !atEnd, !current.isPunctuation("}") {
                if isOpener(current) { try skipGroup() } else { advance() }
            }
            if current.isPunctuation(",") { advance() } else if index == before, !current.isPunctuation(")") { advance() }
        }
        advance()
        return found
    }

    /// The raw value literal at the current token (not consumed).
    private func rawValue() -> CaseSyntax.RawValue {
        let negative = current.isPunctuation("-")
        let literal = negative ? peek(1) : current
        let next = peek(negative ? 2 : 1)
        let alone = next.kind == .end || next.line > literal.line || next.isPunctuation(",") || next.isPunctuation("}")
            || next.isPunctuation(";")
        switch literal.kind {
        case .string where !negative && alone && !literal.text.contains("\\("):
            return .string(literal.text)
        case .number where alone:
            guard let value = Self.integer(literal.text) else { return .other((negative ? "-" : "") + literal.text) }
            if negative {
                return value == Int.min ? .other("-" + literal.text) : .integer(-value)
            }
            return .integer(value)
        default:
            return .other((negative ? "-" : "") + (literal.kind == .string ? "\"\(literal.text.clipped(to: 40))\"" : literal.text))
        }
    }

    /// An integer literal's value (`42`, `1_000`, `0x2A`, `0o52`, `0b101010`), or nil (a float, too large).
    static func integer(_ text: String) -> Int? {
        let digits = text.replacingOccurrences(of: "_", with: "")
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where digits.hasPrefix(prefix) {
            return Int(digits.dropFirst(2), radix: radix)
        }
        return Int(digits)
    }
}

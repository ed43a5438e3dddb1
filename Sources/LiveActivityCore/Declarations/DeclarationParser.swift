/// Recursive descent over Swift declarations: collects structs, enums (with their cases), typealiases and
/// stored properties, skipping everything else (functions, computed properties, `static` members, attributes,
/// modifiers, imports, classes) by balancing brackets.
///
/// Tolerant by design: at member level, whatever it does not understand is skipped one token (or one
/// bracketed group) at a time. Every loop consumes at least one token and nesting is bounded, so no input
/// makes it loop or overflow the stack. Only unbalanced braces (and over-deep nesting) are errors here;
/// what a declaration means is checked when it is resolved (``DeclarationResolver``).
struct DeclarationParser {
    /// Deepest nesting of type bodies and generic arguments accepted.
    static let maximumDepth = 48

    let tokens: [SwiftToken]
    private let file: String
    var index = 0
    private(set) var syntax = SourceSyntax()

    /// Parses the tokens of one file.
    /// - Throws: ``DeclarationError`` for unbalanced braces, brackets or parentheses, or nesting deeper than
    ///   ``maximumDepth``.
    static func parse(_ tokens: [SwiftToken], file: String) throws(DeclarationError) -> SourceSyntax {
        var parser = DeclarationParser(tokens: tokens, file: file)
        _ = try parser.members(scope: [], opening: nil, depth: 0)
        return parser.syntax
    }

    private init(tokens: [SwiftToken], file: String) {
        self.tokens = tokens.isEmpty ? [SwiftToken(kind: .end, text: "", line: 1)] : tokens
        self.file = file
    }

    // MARK: - Tokens

    var current: SwiftToken { tokens[min(index, tokens.count - 1)] }
    func peek(_ offset: Int) -> SwiftToken { tokens[min(index + offset, tokens.count - 1)] }
    var atEnd: Bool { current.kind == .end }
    mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    func fail(_ message: String, line: Int) -> DeclarationError {
        DeclarationError(file: file, line: line, message: message)
    }

    /// Words that start a declaration: seeing one on a new line ends a skipped expression or signature.
    private static let declarationWords: Set<String> = [
        "var", "let", "func", "init", "deinit", "subscript", "struct", "enum", "class", "actor", "protocol", "extension",
        "typealias", "associatedtype", "case", "import", "static", "public", "private", "fileprivate", "internal", "open",
        "final", "override", "mutating", "nonmutating", "nonisolated", "lazy", "weak", "unowned", "required",
        "convenience", "indirect", "package", "dynamic", "macro",
    ]

    private static let modifiers: Set<String> = [
        "public", "private", "fileprivate", "internal", "open", "final", "override", "mutating", "nonmutating",
        "nonisolated", "lazy", "weak", "unowned", "required", "convenience", "indirect", "package", "dynamic",
        "optional", "distributed", "consuming", "borrowing", "__consuming",
    ]

    func startsDeclaration(_ token: SwiftToken) -> Bool {
        (token.kind == .identifier && Self.declarationWords.contains(token.text)) || token.isPunctuation("@")
            || token.kind == .directive
    }

    // MARK: - Bracketed groups

    private static let closers = ["{": "}", "(": ")", "[": "]"]

    /// Skips a `{…}`, `(…)` or `[…]` group starting at the current token, nested groups included.
    mutating func skipGroup() throws(DeclarationError) {
        guard isOpener(current) else {
            advance()
            return
        }
        var stack: [(closer: String, line: Int)] = []
        repeat {
            let token = current
            if token.kind == .end, let open = stack.last {
                throw neverClosed(open.closer, line: open.line)
            }
            if token.kind == .punctuation {
                if let closer = Self.closers[token.text] {
                    stack.append((closer, token.line))
                } else if [")", "]", "}"].contains(token.text), let open = stack.last {
                    if token.text == open.closer {
                        stack.removeLast()
                    } else if token.text == "}" {
                        // A `(` or `[` still open when its block ends: the opener is the fault.
                        throw neverClosed(open.closer, line: open.line)
                    } else {
                        throw fail("\(Self.groupWords(open.closer == "}" ? token.text : open.closer)): found \(token.text) where \(open.closer) "
                                   + "closes the \(Self.opener(of: open.closer)) of line \(open.line)", line: token.line)
                    }
                }
            }
            advance()
        } while !stack.isEmpty
    }

    /// `unbalanced parentheses: the ( opened here is never closed by )` (brackets, braces alike).
    func neverClosed(_ closer: String, line: Int) -> DeclarationError {
        fail("\(Self.groupWords(closer)): the \(Self.opener(of: closer)) opened here is never closed by \(closer)", line: line)
    }

    /// `unbalanced parentheses`, `unbalanced brackets` or `unbalanced braces`, by either delimiter.
    static func groupWords(_ delimiter: String) -> String {
        switch delimiter {
        case "(", ")": "unbalanced parentheses"
        case "[", "]": "unbalanced brackets"
        default: "unbalanced braces"
        }
    }

    static func opener(of closer: String) -> String {
        switch closer {
        case "}": "{"
        case ")": "("
        default: "["
        }
    }

    func isOpener(_ token: SwiftToken) -> Bool {
        token.kind == .punctuation && Self.closers[token.text] != nil
    }

    // MARK: - Member lists

    private struct Members {
        var properties: [PropertySyntax] = []
        var cases: [CaseSyntax] = []
        var hasCustomDecoder = false
    }

    /// Declarations up to the `}` matching `opening` (consumed), or to the end of the file at top level.
    private mutating func members(scope: [String], opening: SwiftToken?, depth: Int) throws(DeclarationError) -> Members {
        guard depth <= Self.maximumDepth else {
            throw fail("types nested too deeply (more than \(Self.maximumDepth) levels)", line: current.line)
        }
        var found = Members()
        while true {
            let token = current
            if token.kind == .end {
                if let opening {
                    throw fail("unbalanced braces: the { opened here is never closed", line: opening.line)
                }
                return found
            }
            if token.isPunctuation("}") {
                guard opening != nil else { throw fail("unbalanced braces: } without a matching {", line: token.line) }
                advance()
                return found
            }
            let before = index
            try declaration(scope: scope, depth: depth, into: &found)
            if index == before { advance() }
        }
    }

    private mutating func declaration(scope: [String], depth: Int, into found: inout Members) throws(DeclarationError) {
        var isStatic = false
        // Attributes (`@available(iOS 16.1, *)`, `@MainActor`) and modifiers (`public`, `private(set)`).
        while true {
            if current.isPunctuation("@") {
                advance()
                if current.kind == .identifier { advance() }
                if current.isPunctuation("(") { try skipGroup() }
            } else if current.kind == .identifier, Self.modifiers.contains(current.text) {
                advance()
                if current.isPunctuation("(") { try skipGroup() }
            } else if current.isIdentifier("static") || (current.isIdentifier("class") && isKeyword(peek(1))) {
                isStatic = true
                advance()
            } else {
                break
            }
        }
        let token = current
        guard token.kind == .identifier else {
            if token.isPunctuation(")") || token.isPunctuation("]") {
                let opener = token.text == ")" ? "(" : "["
                throw fail("\(Self.groupWords(token.text)): \(token.text) without a matching \(opener)", line: token.line)
            }
            if isOpener(token) { try skipGroup() } else { advance() }
            return
        }
        switch token.text {
        case "import":
            advance()
            while current.line == token.line, current.kind == .identifier || current.isPunctuation(".") { advance() }
        case "struct", "enum":
            try typeDeclaration(scope: scope, depth: depth)
        case "extension":
            try extensionDeclaration(depth: depth)
        case "class", "actor", "protocol":
            advance()
            if current.kind == .identifier {
                let path = scope + [current.text]
                record(TypeDeclarationSyntax(kind: .other(token.text), path: path, line: token.line))
            }
            try skipSignature()
        case "typealias":
            try typealiasDeclaration(scope: scope)
        case "var", "let":
            advance()
            let properties = try propertyDeclaration(isLet: token.text == "let", line: token.line)
            if !isStatic { found.properties += properties }
        case "case":
            advance()
            found.cases += try caseDeclaration()
        case "init":
            if peek(1).isPunctuation("("), peek(2).isIdentifier("from"), !isStatic {
                // `init(from decoder: Decoder)` or `init(from decoder: any Swift.Decoder)`, not `init(from date: Date)`.
                var offset = 3
                while offset < 12, !peek(offset).isPunctuation(")"), peek(offset).kind != .end {
                    if peek(offset).isIdentifier("Decoder") { found.hasCustomDecoder = true }
                    offset += 1
                }
            }
            advance()
            try skipSignature()
        case "func", "deinit", "subscript", "associatedtype", "macro":
            advance()
            try skipSignature()
        default:
            advance()
        }
    }

    private func isKeyword(_ token: SwiftToken) -> Bool {
        token.kind == .identifier && ["func", "var", "let", "subscript"].contains(token.text)
    }

    /// Skips a signature and its body, if any: up to and including a `{…}` group, or up to the next declaration
    /// on a new line or the container's `}` (a requirement without a body).
    private mutating func skipSignature() throws(DeclarationError) {
        let line = current.line
        while true {
            let token = current
            if token.kind == .end || token.isPunctuation("}") { return }
            if token.isPunctuation("{") { try skipGroup(); return }
            if isOpener(token) { try skipGroup(); continue }
            if token.line > line, startsDeclaration(token) { return }
            advance()
        }
    }

    private mutating func record(_ declaration: TypeDeclarationSyntax) {
        let name = declaration.qualifiedName
        // The first declaration of a name wins (Swift refuses a redeclaration anyway).
        guard syntax.types[name] == nil else { return }
        syntax.types[name] = declaration
        syntax.order.append(name)
    }

    // MARK: - Types

    private mutating func typeDeclaration(scope: [String], depth: Int) throws(DeclarationError) {
        let keyword = current
        advance()
        guard current.kind == .identifier else { return }
        let path = scope + [current.text]
        var declaration = TypeDeclarationSyntax(kind: keyword.text == "struct" ? .structure : .enumeration, path: path, line: keyword.line)
        advance()
        if current.isPunctuation("<") {
            declaration.isGeneric = true
            try skipAngles()
        }
        if current.isPunctuation(":") {
            advance()
            declaration.inherits = try inheritance(depth: depth)
        }
        // A `where` clause or anything else before the body.
        while !current.isPunctuation("{"), !current.isPunctuation("}"), !atEnd, !(current.line > keyword.line && startsDeclaration(current)) {
            if isOpener(current) { try skipGroup() } else { advance() }
        }
        guard current.isPunctuation("{") else {
            record(declaration)
            return
        }
        let opening = current
        advance()
        // Record first, so that nested types come after their parent in source order.
        record(declaration)
        let body = try members(scope: path, opening: opening, depth: depth + 1)
        if var recorded = syntax.types[declaration.qualifiedName], recorded.line == declaration.line {
            recorded.properties = body.properties
            recorded.cases = body.cases
            recorded.hasCustomDecoder = body.hasCustomDecoder
            syntax.types[declaration.qualifiedName] = recorded
        }
    }

    private mutating func inheritance(depth: Int) throws(DeclarationError) -> [TypeSyntax] {
        var list: [TypeSyntax] = []
        while true {
            let before = index
            list.append(try type(depth: depth + 1))
            if current.isPunctuation("&") { advance(); continue }
            guard current.isPunctuation(","), index > before else { return list }
            advance()
        }
    }

    private mutating func extensionDeclaration(depth: Int) throws(DeclarationError) {
        advance()
        var path: [String] = []
        while current.kind == .identifier {
            path.append(current.text)
            advance()
            guard current.isPunctuation(".") else { break }
            advance()
        }
        var inherits: [TypeSyntax] = []
        if current.isPunctuation(":") {
            advance()
            inherits = try inheritance(depth: depth)
        }
        while !current.isPunctuation("{"), !current.isPunctuation("}"), !atEnd {
            if isOpener(current) { try skipGroup() } else { advance() }
        }
        guard current.isPunctuation("{"), !path.isEmpty else { return }
        let opening = current
        advance()
        let name = path.joined(separator: ".")
        if !inherits.isEmpty { syntax.extensionConformances[name, default: []] += inherits }
        // Stored properties cannot be declared in extensions; nested types can.
        _ = try members(scope: path, opening: opening, depth: depth + 1)
    }

    private mutating func typealiasDeclaration(scope: [String]) throws(DeclarationError) {
        let keyword = current
        advance()
        guard current.kind == .identifier else { return }
        let name = current.text
        advance()
        if current.isPunctuation("<") {
            try skipAngles()
            return
        }
        guard current.isPunctuation("=") else { return }
        advance()
        let target = try type(depth: 0)
        record(TypeDeclarationSyntax(kind: .alias(target), path: scope + [name], line: keyword.line))
    }

    /// Skips `<…>` (generic parameters), counting nested angles; stops at a brace or the end.
    private mutating func skipAngles() throws(DeclarationError) {
        var depth = 0
        repeat {
            if current.isPunctuation("<") { depth += 1 }
            if current.isPunctuation(">") { depth -= 1 }
            if atEnd || current.isPunctuation("{") || current.isPunctuation("}") { return }
            if isOpener(current) { try skipGroup(); continue }
            advance()
        } while depth > 0
    }
}

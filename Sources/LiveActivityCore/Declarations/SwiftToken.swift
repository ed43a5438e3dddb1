/// One token of Swift source, as the declaration reader sees it.
///
/// Only what declarations need is told apart: identifiers (keywords included, backticks removed), string
/// literals (with their value when it is plain), numbers, `#` directives (`#if`, `#endif`, `#Preview`) and
/// punctuation (one character each, except `->`). Comments and whitespace are dropped.
struct SwiftToken: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case identifier
        case string
        case number
        case directive
        case punctuation
        case end
    }

    var kind: Kind
    /// The identifier (without backticks), the punctuation, the number as written, the directive's name
    /// without `#`, or a string literal's value (escapes applied; each interpolation as `\(…)`).
    var text: String
    /// 1-based line where the token starts.
    var line: Int

    /// Whether this is the punctuation `text`.
    func isPunctuation(_ text: String) -> Bool { kind == .punctuation && self.text == text }

    /// Whether this is the identifier (or keyword) `text`.
    func isIdentifier(_ text: String) -> Bool { kind == .identifier && self.text == text }
}

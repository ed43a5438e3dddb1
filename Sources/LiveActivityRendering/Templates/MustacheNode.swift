/// One step of a compiled ``MustacheTemplate``: what the renderer does, in order.
enum MustacheNode: Sendable {
    /// Literal text, written as is. Text is split after each `\n`, so that each line of the template source
    /// begins with an ``indent`` node.
    case text(String)
    /// The start of a line of the template source: writes the indentation of the standalone partial tag that is
    /// being rendered (usually none).
    case indent
    /// `{{name}}` (escaped) or `{{{name}}}` / `{{& name}}` (not escaped). `path` is the dotted name split at
    /// the dots; empty for the implicit iterator `{{.}}`.
    case variable(path: [String], escaped: Bool)
    /// `{{#name}}…{{/name}}`, or `{{^name}}…{{/name}}` when `inverted`.
    case section(path: [String], inverted: Bool, children: [MustacheNode])
    /// `{{> name}}`. `indentation` is the whitespace before a standalone partial tag, nil when the tag is inline.
    case partial(name: String, indentation: String?)

    /// A dotted name split at its dots; `.` alone (the implicit iterator) is the empty path.
    static func path(_ name: String) -> [String] {
        name == "." ? [] : name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }
}

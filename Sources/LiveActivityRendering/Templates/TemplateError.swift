/// A template that could not be parsed, with where the problem is.
///
/// Thrown by ``MustacheTemplate/init(parsing:name:)``. `description` is `name:line:column: reason`, the same text
/// that `Public/js/mustache.js` puts in its `TemplateError.message` for the same template, so a template author
/// sees one message whichever renderer compiled the template.
///
/// Lines and columns count from 1. A line ends at `\n`; a column counts Unicode code points from the start
/// of the line.
public struct TemplateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The name the template was compiled with (for an activity kind, its file name such as `lock-screen.html`).
    public let templateName: String
    /// The line of the offending tag, from 1.
    public let line: Int
    /// The column of the offending tag's opening delimiter, from 1.
    public let column: Int
    /// What is wrong, in words: for example `unclosed section "items"`.
    public let reason: String

    /// Creates an error at a line and column.
    public init(templateName: String, line: Int, column: Int, reason: String) {
        self.templateName = templateName
        self.line = line
        self.column = column
        self.reason = reason
    }

    /// `name:line:column: reason`.
    public var description: String { "\(templateName):\(line):\(column): \(reason)" }

    /// An error at a UTF-8 byte offset of `source`: the line and column are worked out from it.
    static func at(_ offset: Int, in source: [UInt8], name: String, _ reason: String) -> TemplateError {
        var line = 1, lineStart = 0
        for index in 0..<min(offset, source.count) where source[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        // Code points: every byte that is not a UTF-8 continuation byte starts one.
        var column = 1
        for index in lineStart..<min(offset, source.count) where source[index] & 0xC0 != 0x80 { column += 1 }
        return TemplateError(templateName: name, line: line, column: column, reason: reason)
    }
}

import LiveActivityCore

/// The name lists show for an activity (share list, page titles), from `kind.json`'s `title` template.
///
/// Until the Mustache renderer is in, only `{{path}}` (dotted, no sections) is understood: it becomes the
/// context's string or number at that path, or nothing. A Mustache template of that form renders the same.
public enum KindTitle {
    /// Renders `template` over `context` (a ``RenderContext`` object). Unescaped: escape when writing HTML.
    public static func render(_ template: String, context: JSONValue) -> String {
        var output = ""
        var rest = Substring(template)
        while let open = rest.range(of: "{{") {
            output += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else { rest = rest[open.lowerBound...]; break }
            let path = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespaces)
            output += text(path.split(separator: ".").reduce(Optional(context)) { value, key in value?[String(key)] })
            rest = rest[close.upperBound...]
        }
        return (output + rest).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func text(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text)?: text
        case .number(let number)?: RenderContext.number(number)
        case .bigInteger(let digits)?: digits
        case .bool(let flag)?: flag ? "true" : "false"
        default: ""
        }
    }
}

import LiveActivityCore

/// A Mustache template, parsed once and rendered many times against JSON data.
///
/// Implements the Mustache spec's required modules as vendored in `Tests/fixtures/mustache-spec` (interpolation,
/// sections, inverted sections, comments, set delimiters, partials); no lambdas, no inheritance, no dynamic names.
/// `Public/js/mustache.js` implements the same semantics, so the server and the dashboard render one template
/// identically:
///
/// - `{{name}}` writes the value HTML-escaped (`&` `<` `>` `"` `'`); `{{{name}}}` and `{{& name}}` write it as is.
/// - Names: `{{a.b.c}}` (the first part is looked up through the context stack, the rest inside it) and `{{.}}`
///   (the current context). Only JSON objects have names; a name that resolves nowhere writes nothing.
/// - Values are written as text: strings as they are, numbers as JavaScript's `String(n)` writes them
///   (`3`, `3.5`, `0` for `-0`, `1e+21`), `true` / `false`; null, arrays and objects write nothing.
/// - `{{#name}}…{{/name}}` renders its body once per element of a non-empty array, once with any other value
///   except `false` and `null` (so `""` and `0` count as true, as in the spec); `{{^name}}…{{/name}}` renders
///   it only for `false`, `null`, a missing name or an empty array.
/// - `{{! comment }}`, `{{=<% %>=}}`, `{{> partial}}` (a missing partial writes nothing; a standalone partial tag's
///   indentation is written before each line of the partial) and the spec's standalone-line rules.
/// - Sections and partials nest at most ``maximumDepth`` levels when rendering (deeper ones write nothing), so
///   a partial that includes itself ends; a template whose sections nest deeper does not parse. One render
///   enters at most ``maximumExpansions`` section bodies and partials (each list element counts once); later
///   ones write nothing, so a partial that includes itself twice cannot take exponential time.
///
/// ```swift
/// let template = try MustacheTemplate(parsing: "<b>{{title}}</b>{{#done}} ✓{{/done}}", name: "compact.html")
/// template.render(.object(["title": .string("Tea & cake"), "done": .bool(true)]))  // "<b>Tea &amp; cake</b> ✓"
/// ```
public struct MustacheTemplate: Sendable {
    /// Deepest nesting of sections and partials rendered (the same limit as `Public/js/mustache.js`).
    public static let maximumDepth = 64

    /// Most section bodies (one per list element) and partials one render enters (the same limit as
    /// `Public/js/mustache.js`); past it they write nothing.
    public static let maximumExpansions = 20_000

    /// The name given when parsing, used in error messages.
    public let name: String
    let nodes: [MustacheNode]

    /// Parses a template.
    ///
    /// - Parameters:
    ///   - source: the template text.
    ///   - name: the name errors are reported under (for an activity kind, the file name).
    /// - Throws: ``TemplateError`` naming `name`, the line and the column, for a tag without its closing
    ///   delimiter, a tag without a name, a malformed set-delimiter tag, a close tag that does not match the open
    ///   section, a close tag with no open section, a section never closed, or sections nested deeper than
    ///   ``maximumDepth``.
    public init(parsing source: String, name: String) throws(TemplateError) {
        self.name = name
        let bytes = Array(source.utf8)
        let tokens = try MustacheTokenizer.tokenize(bytes, name: name)

        // One frame per open section: its token and the nodes gathered so far.
        struct Frame { var name: String; var inverted: Bool; var offset: Int; var children: [MustacheNode] }
        var frames = [Frame(name: "", inverted: false, offset: 0, children: [])]
        for token in tokens {
            switch token {
            case .text(let text): frames[frames.count - 1].children.append(.text(text))
            case .indent: frames[frames.count - 1].children.append(.indent)
            case .variable(let tagName, let escaped):
                frames[frames.count - 1].children.append(.variable(path: MustacheNode.path(tagName), escaped: escaped))
            case .partial(let tagName, let indentation):
                frames[frames.count - 1].children.append(.partial(name: tagName, indentation: indentation))
            case .open(let tagName, let inverted, let offset):
                if frames.count > Self.maximumDepth {
                    throw TemplateError.at(offset, in: bytes, name: name, "sections nest deeper than \(Self.maximumDepth) levels")
                }
                frames.append(Frame(name: tagName, inverted: inverted, offset: offset, children: []))
            case .close(let tagName, let offset):
                guard frames.count > 1 else {
                    throw TemplateError.at(offset, in: bytes, name: name, "close tag \"\(tagName)\" without an open section")
                }
                let frame = frames.removeLast()
                // Byte for byte, as JavaScript compares (Swift's == would also match other Unicode normalisations).
                guard frame.name.utf8.elementsEqual(tagName.utf8) else {
                    let opened = TemplateError.at(frame.offset, in: bytes, name: name, "")
                    throw TemplateError.at(offset, in: bytes, name: name, "close tag \"\(tagName)\" does not match "
                                           + "section \"\(frame.name)\" opened at line \(opened.line), column \(opened.column)")
                }
                frames[frames.count - 1].children.append(
                    .section(path: MustacheNode.path(frame.name), inverted: frame.inverted, children: frame.children))
            }
        }
        if frames.count > 1 {
            let frame = frames[frames.count - 1]
            throw TemplateError.at(frame.offset, in: bytes, name: name, "unclosed section \"\(frame.name)\"")
        }
        nodes = frames[0].children
    }

    /// Renders the template.
    ///
    /// - Parameters:
    ///   - context: the data; usually a JSON object, the bottom of the context stack.
    ///   - partials: templates that `{{> name}}` tags include, by name. A name that is not here writes nothing.
    /// - Returns: the text. Rendering never fails: what cannot be resolved writes nothing.
    public func render(_ context: JSONValue, partials: [String: MustacheTemplate] = [:]) -> String {
        var renderer = MustacheRenderer(context: context, partials: partials)
        renderer.render(nodes, indentation: "")
        return renderer.output
    }
}

/// What a rendering inlines: the presentations stylesheet and the SVG icons, read by the caller
/// (the server reads Public/css/presentations.css and Public/icons/*.svg at request time).
public struct RenderAssets: Sendable {
    /// The contents of Public/css/presentations.css.
    public var stylesheet: String
    /// SVG markup by icon name: `jogging`, `aerobics`, `yoga`, `workout` (fallback) and `timer`.
    public var icons: [String: String]

    /// Creates assets.
    public init(stylesheet: String, icons: [String: String]) {
        self.stylesheet = stylesheet
        self.icons = icons
    }

    /// One icon as inline SVG that takes the text colour, hidden from assistive technology.
    /// - Parameters:
    ///   - name: the icon's name; an unknown name falls back to `workout`, then to an empty SVG.
    ///   - classes: the `class` attribute to give the `<svg>` element.
    func icon(_ name: String, classes: String) -> String {
        let markup = icons[name] ?? icons["workout"] ?? #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"></svg>"#
        guard let open = markup.range(of: "<svg") else { return "" }
        let colored = markup[open.upperBound...]
            .replacingOccurrences(of: "\"#000\"", with: "\"currentColor\"")
            .replacingOccurrences(of: "\"#000000\"", with: "\"currentColor\"")
        return "<svg class=\"\(HTML.escape(classes))\" aria-hidden=\"true\" focusable=\"false\"" + colored
    }
}

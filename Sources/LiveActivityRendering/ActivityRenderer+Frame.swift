import Foundation
import LiveActivityCore

/// The frame belongs to the renderer: the Lock Screen card, the Dynamic Island's shapes and sizes, the small
/// platter and the kind's colours are drawn around whatever a template gives (docs/TEMPLATES.md, "The
/// frame"). The page draws the same frame (`framed` in `Public/js/kind-fragment.js`).
///
/// A template whose root element already is a frame (class `lock-screen`, `island-compact`, `island-minimal`,
/// `island-expanded` or `activity-small`: the built-in workout and emoji templates) is kept as it is.
extension ActivityRenderer {
    /// The frame classes a template's root may carry to draw its own frame.
    static let frameClasses: Set<String> = ["lock-screen", "island-compact", "island-minimal", "island-expanded", "activity-small"]

    /// `content` inside `presentation`'s frame, unless its root element is a frame already.
    /// - Parameters:
    ///   - content: the template's rendered markup.
    ///   - context: the render context (`activity.id`, `activity.state`, `activity.paused`, `activity.summary`).
    ///   - kind: the kind's wire name (`data-kind`, which the kind's colours select).
    static func framed(_ content: String, presentation: Presentation, context: JSONValue, kind: String) -> String {
        if drawsOwnFrame(content) { return content }
        let frame = ActivityRenderer.frame(presentation)
        let activity = context["activity"]
        var attributes = "class=\"\(frame.classes) la-frame\" data-kind=\"\(HTML.escape(kind))\""
        if frame.tag == "div" { attributes += " role=\"group\"" }
        attributes += " data-activity-id=\"\(HTML.escape(activity?["id"]?.stringValue ?? ""))\""
        attributes += " data-activity-state=\"\(HTML.escape(activity?["state"]?.stringValue ?? ""))\""
        if activity?["paused"] == .bool(true) { attributes += " data-paused=\"true\"" }
        attributes += " aria-label=\"\(HTML.escape(activity?["summary"]?.stringValue ?? ""))\""
        var extra = presentation == .compact ? "<span class=\"camera\" aria-hidden=\"true\"></span>" : ""
        // An ended activity stays on the Lock Screen until cleared: the system's button, in
        // activitySystemActionForegroundColor (kind.json), as iOS shows it beside the card.
        if presentation == .lockScreen, activity?["state"]?.stringValue == "ended" {
            extra = "<span class=\"system-action\" aria-hidden=\"true\">Clear</span>"
        }
        return "<\(frame.tag) \(attributes)><div class=\"la-content\">\(content)</div>\(extra)</\(frame.tag)>"
    }

    /// Whether the first element of `markup` carries a frame class.
    static func drawsOwnFrame(_ markup: String) -> Bool {
        guard let open = markup.range(of: "<[a-zA-Z]", options: .regularExpression),
              let close = markup[open.lowerBound...].firstIndex(of: ">") else { return false }
        let tag = String(markup[open.lowerBound..<close])
        let classes = attribute("class", in: tag) ?? ""
        return classes.split(separator: " ").contains { frameClasses.contains(String($0)) }
    }

    /// CSS giving each kind its `kind.json` colours (`[data-kind="…"]`): the card's tint, a text colour that
    /// reads on it, and the system action's colour. Empty when no kind names colours.
    static func kindColourRules(_ kinds: KindRegistry) -> String {
        kinds.all.compactMap { kind -> String? in
            let declarations = KindColours.properties(kind.metadata).map { "\($0.name): \($0.value);" }
            guard !declarations.isEmpty, kind.attributesType.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }) else { return nil }
            return "[data-kind=\"\(kind.attributesType)\"] { \(declarations.joined(separator: " ")) }"
        }.joined(separator: "\n")
    }
}

/// A kind's colours as CSS custom properties, as the page's `kindColours` (kind-fragment.js) gives them.
public enum KindColours {
    /// `--kind-tint` and `--kind-foreground` (black or white, whichever contrasts more with the tint) from
    /// `activityBackgroundTint`; `--activity-system-action-foreground` from `activitySystemActionForegroundColor`.
    public static func properties(_ metadata: KindMetadata) -> [(name: String, value: String)] {
        var out: [(String, String)] = []
        if let tint = metadata.activityBackgroundTint.flatMap(RenderingSettings.color) {
            out.append(("--kind-tint", tint))
            out.append(("--kind-foreground", foreground(on: tint)))
        }
        if let action = metadata.activitySystemActionForegroundColor.flatMap(RenderingSettings.color) {
            out.append(("--activity-system-action-foreground", action))
        }
        return out
    }

    /// `#000` or `#fff`, whichever has more contrast with `hex` (WCAG relative luminance).
    static func foreground(on hex: String) -> String {
        var digits = Array(hex.dropFirst())
        if digits.count == 3 || digits.count == 4 { digits = digits.prefix(3).flatMap { [$0, $0] } }
        let channels = stride(from: 0, to: 6, by: 2).map { index -> Double in
            let value = Double(Int(String(digits[index...index + 1]), radix: 16) ?? 0) / 255
            return value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
        }
        let luminance = 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]
        return (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05) ? "#000" : "#fff"
    }
}

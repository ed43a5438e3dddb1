import Foundation
import LiveActivityCore

/// A kind's template drawn as a static rendering: the Mustache output over the ``RenderContext``, with its
/// bound elements (docs/TEMPLATES.md) made self-contained, as the documents make no requests and hold no
/// controls:
/// - `<i data-icon="NAME"></i>` becomes the inline SVG of `Public/icons/NAME.svg` (the template's classes kept);
/// - `data-countdown="F"` (and a `data-progress="F"` bar) gains the bounds of the date field `F` (`data-start`,
///   `data-end`, `data-freeze`, in epoch milliseconds) for the live script, which ticks them;
/// - `<img data-image="F">` becomes the published thumbnail as a `data:` PNG, else the fallback icon's SVG;
///   any other `<img src="/icons/NAME.svg">` becomes that icon's SVG;
/// - a link with `data-action` (the workout's STOP capsule, `workout://stop`) becomes a plain `<span>`.
extension ActivityRenderer {
    /// The template's markup for `facts`, bound elements resolved.
    func templateFragment(_ template: MustacheTemplate, _ facts: ActivityFacts) -> String {
        var html = template.render(facts.context).trimmingCharacters(in: .whitespacesAndNewlines)
        html = replacing(#"<i\b([^>]*?)\sdata-icon="([^"]*)"([^>]*)></i>"#, in: html) { groups in
            let attributes = groups[1] + groups[3]
            return assets.icon(groups[2], classes: ("icon " + Self.classes(in: attributes)).trimmingCharacters(in: .whitespaces))
        }
        html = replacing(#"\sdata-(countdown|progress)="([^"]*)""#, in: html) { groups in
            groups[0] + countdownBounds(facts, field: groups[2])
        }
        html = replacing(#"<img\b([^>]*)>"#, in: html) { groups in
            image(attributes: groups[1], facts: facts)
        }
        html = replacing(#"<a\b([^>]*\sdata-action="[^"]*"[^>]*)>(.*?)</a>"#, in: html) { groups in
            "<span class=\"\(Self.classes(in: groups[1]))\" aria-hidden=\"true\">\(groups[2])</span>"
        }
        return html
    }

    /// ` data-start="…" data-end="…"` (and `data-freeze`) of the date or range `field` for the live script:
    /// the kind's countdown as the activity's timer has it, any other date field from its value; empty when
    /// `field` holds no date.
    private func countdownBounds(_ facts: ActivityFacts, field: String) -> String {
        var bounds = facts.startMs.flatMap { start in facts.endMs.map { (start, $0) } }
        if field != facts.kind.countdown || bounds == nil {
            bounds = facts.fields[field].flatMap { DisplayValues.dateBounds($0, startMs: facts.startDateMs) }.map { ($0.start, $0.end) }
        }
        guard let (start, end) = bounds else { return "" }
        var data = " data-start=\"\(start)\" data-end=\"\(end)\""
        if let freeze = facts.freezeMs ?? facts.endedMs { data += " data-freeze=\"\(freeze)\"" }
        if facts.state == .pending { data += " data-freeze=\"\(start)\"" }
        return data
    }

    /// An `<img>` made self-contained: the thumbnail inlined, else the icon its `src` names as inline SVG.
    private func image(attributes: String, facts: ActivityFacts) -> String {
        let classes = Self.classes(in: attributes)
        if attributes.contains("data-image="), let thumbnail = facts.thumbnail,
           let png = thumbnailPNG(ActivityThumbnail.fileName(key: thumbnail.key, scale: 2)) {
            return "<img class=\"\(classes)\" alt=\"\" src=\"data:image/png;base64,\(Data(png).base64EncodedString())\">"
        }
        let source = Self.attribute("src", in: attributes) ?? ""
        var icon = attributes.contains("data-image=") ? facts.kind.fallbackIcon : "favicon"
        if source.hasPrefix("/icons/"), source.hasSuffix(".svg") {
            icon = String(source.dropFirst("/icons/".count).dropLast(4))
        }
        let extra = attributes.contains("data-image=") ? " image-fallback" : ""
        return assets.icon(icon, classes: classes + extra)
    }

    /// The (escaped) value of `class="…"` in an attribute list, or "".
    static func classes(in attributes: String) -> String {
        attribute("class", in: attributes) ?? ""
    }

    /// The unescaped value of the attribute `name="…"` in an attribute list.
    static func attribute(_ name: String, in attributes: String) -> String? {
        guard let regex = try? NSRegularExpression(pattern: "(?:^|\\s)\(name)=\"([^\"]*)\""),
              let match = regex.firstMatch(in: attributes, range: NSRange(attributes.startIndex..., in: attributes)),
              let range = Range(match.range(at: 1), in: attributes) else { return nil }
        return String(attributes[range])
    }

    /// Replaces every match of `pattern` in `text` by what `transform` makes of its groups (0: the whole match).
    private func replacing(_ pattern: String, in text: String, _ transform: ([String]) -> String) -> String {
        guard let regex = try? NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators]) else { return text }
        var result = ""
        var last = text.startIndex
        for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            guard let whole = Range(match.range, in: text) else { continue }
            let groups = (0..<match.numberOfRanges).map { index in
                Range(match.range(at: index), in: text).map { String(text[$0]) } ?? ""
            }
            result += text[last..<whole.lowerBound]
            result += transform(groups)
            last = whole.upperBound
        }
        result += text[last...]
        return result
    }
}

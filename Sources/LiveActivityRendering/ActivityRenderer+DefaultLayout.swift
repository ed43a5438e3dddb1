import Foundation
import LiveActivityCore

/// The generated layout of a kind without a countdown or enum labels (the emoji kind today): its image
/// (the published thumbnail, else the kind's fallback icon), its title, its badge and its state's text.
/// Uses Public/css/emoji.css's class names, so the page and the renderings look alike.
extension ActivityRenderer {
    func defaultFragment(_ facts: ActivityFacts, _ presentation: Presentation, headingTag tag: String) -> String {
        let common = "data-kind=\"\(HTML.escape(facts.kind.name))\" data-activity-id=\"\(HTML.escape(facts.id))\" "
            + "data-activity-state=\"\(facts.state.rawValue)\" aria-label=\"\(HTML.escape(facts.summary))\""
        let name = HTML.escape(facts.name)
        let text = HTML.escape(facts.stateText)
        let badge = facts.badge.isEmpty ? "" : "<span class=\"badge\">\(HTML.escape(facts.badge))</span>"
        let thumb = "<span class=\"emoji-thumb\">\(image(facts))</span>"
        switch presentation {
        case .lockScreen:
            return """
            <article class="lock-screen" \(common)><div class="emoji-layout">\(thumb)\
            <span class="emoji-text"><\(tag) class="emoji-name">\(name)</\(tag)>\(badge)</span>\
            <span class="emoji-state">\(text)</span></div></article>
            """
        case .compact:
            return """
            <div class="island-compact" role="group" \(common)><span class="emoji-compact">\(thumb)\
            <span class="camera" aria-hidden="true"></span><span class="emoji-state">\(text)</span></span></div>
            """
        case .minimal:
            return "<div class=\"island-minimal\" role=\"group\" \(common)><span class=\"emoji-layout emoji-minimal\">\(thumb)</span></div>"
        case .expanded:
            return """
            <div class="island-expanded" role="group" \(common)><div class="emoji-layout emoji-expanded">\(thumb)\
            <span class="emoji-text"><span class="emoji-name">\(name)</span>\(badge)</span>\
            <span class="emoji-state">\(text)</span></div>\
            <span class="expanded-bottom"><span class="island-stop" aria-hidden="true">STOP</span></span></div>
            """
        case .small:
            return """
            <div class="activity-small" role="group" \(common)>\(thumb)<span class="emoji-name">\(name)</span>\
            <span class="emoji-state">\(text)</span></div>
            """
        }
    }

    /// The thumbnail as an inline PNG (`data:` URL), or the fallback icon as inline SVG.
    private func image(_ facts: ActivityFacts) -> String {
        if let thumbnail = facts.thumbnail, let png = thumbnailPNG(ActivityThumbnail.fileName(key: thumbnail.key, scale: 2)) {
            return "<img class=\"emoji-image\" alt=\"\" src=\"data:image/png;base64,\(Data(png).base64EncodedString())\">"
        }
        return assets.icon(facts.kind.fallbackIcon, classes: "emoji-image emoji-fallback")
    }
}

import Foundation
import LiveActivityCore

/// The generated layout of a kind without templates (or whose templates failed to parse): a plain list of the
/// kind's label (or the activity's title), each field's value and the countdown, inside the presentation's
/// frame. Drawn the same way by the page (`defaultLayout` in `Public/js/kind-fragment.js`).
extension ActivityRenderer {
    func defaultFragment(_ facts: ActivityFacts, _ presentation: Presentation, headingTag tag: String) -> String {
        let frame = Self.frame(presentation)
        let paused = facts.paused ? " data-paused=\"true\"" : ""
        let common = "class=\"\(frame.classes) default-layout\" data-kind=\"\(HTML.escape(facts.kind.name))\" "
            + "data-activity-id=\"\(HTML.escape(facts.id))\" data-activity-state=\"\(facts.state.rawValue)\"\(paused) "
            + "aria-label=\"\(HTML.escape(facts.summary))\"" + (frame.tag == "div" ? " role=\"group\"" : "")
        var items = ["<li class=\"default-title\"><\(tag) class=\"default-name\">\(HTML.escape(facts.name))</\(tag)></li>"]
        for (field, value) in Self.fieldValues(facts) {
            items.append("<li class=\"default-field\"><span class=\"field-name\">\(HTML.escape(field))</span> "
                         + "<span class=\"field-value\">\(HTML.escape(value))</span></li>")
        }
        if let field = facts.kind.countdown, facts.startMs != nil {
            var bounds = ""
            if let start = facts.startMs, let end = facts.endMs {
                bounds = " data-start=\"\(start)\" data-end=\"\(end)\""
                if let freeze = facts.freezeMs { bounds += " data-freeze=\"\(freeze)\"" }
                if facts.state == .pending { bounds += " data-freeze=\"\(start)\"" }
            }
            items.append("<li class=\"default-countdown\"><span class=\"countdown monospaced-digits\" role=\"timer\" "
                         + "data-countdown=\"\(HTML.escape(field))\"\(bounds)>\(HTML.escape(facts.countdown))</span></li>")
        }
        if !facts.badge.isEmpty {
            items.append("<li class=\"default-badge\"><span class=\"badge\">\(HTML.escape(facts.badge))</span></li>")
        }
        return "<\(frame.tag) \(common)><ul class=\"default-fields\">\(items.joined())</ul></\(frame.tag)>"
    }

    /// The element and classes of a presentation's frame (the Lock Screen card, the island's shapes).
    static func frame(_ presentation: Presentation) -> (tag: String, classes: String) {
        switch presentation {
        case .lockScreen: ("article", "lock-screen")
        case .compact: ("div", "island-compact")
        case .minimal: ("div", "island-minimal")
        case .expanded: ("div", "island-expanded")
        case .small: ("div", "activity-small")
        }
    }

    /// Each field's shown value, by field name: enum fields by label, text, numbers and booleans as they are;
    /// the countdown, `pausedAt` and nested values are left out.
    static func fieldValues(_ facts: ActivityFacts) -> [(String, String)] {
        let object = facts.context.objectValue ?? [:]
        let skipped: Set<String> = ["activity", "kind", "pausedAt", facts.kind.countdown ?? ""]
        return object.keys.sorted().filter { !skipped.contains($0) }.compactMap { field in
            guard let value = object[field] else { return nil }
            if facts.kind.enums[field] != nil, let label = value["label"]?.stringValue { return (field, label) }
            if let text = value.stringValue { return (field, text) }
            if let number = value.numberValue { return (field, RenderContext.number(number)) }
            if case .bool(let flag) = value { return (field, flag ? "true" : "false") }
            return nil
        }
    }
}

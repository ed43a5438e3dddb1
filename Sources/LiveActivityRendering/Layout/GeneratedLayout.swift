import LiveActivityCore

/// The generated layout of a declared kind as Mustache templates, one per presentation: content only, in the
/// template vocabulary of docs/TEMPLATES.md (`row`, `stack`, `spacer`, `label`, `countdown`, `progress`,
/// `icon`), over the render context's `display` values (``DisplayValues``). The renderer draws the frame
/// around it (``ActivityRenderer``'s `framed`), as it does around any content-only template. The Lock Screen's
/// and the expanded island's fields sit in a `stack fit`: a field that does not fit the frame's height is left
/// out whole (the ones after it too), so nil optionals leave room for the fields after them.
///
/// Served by `GET /kinds/{name}/templates/{presentation}` for a kind without its own template, so the page
/// renders exactly what the static renderings do; `liveactivity kinds new` writes them as a starting point.
public enum GeneratedLayout {
    /// The template text of `presentation` for `plan`.
    public static func template(_ plan: LayoutPlan, _ presentation: Presentation) -> String {
        let choice = plan.choice(for: presentation)
        let icon = "<i class=\"icon\" data-icon=\"\(plan.icon)\"></i>"
        let title = "<span class=\"label title\">\(text(plan.title))</span>"
        let badge = "{{#activity.badge}}<span class=\"badge\">{{activity.badge}}</span>{{/activity.badge}}"
        let comment = "{{! Generated from the declaration (\(presentation.title)); edit freely: docs/TEMPLATES.md. }}\n"
        switch presentation {
        case .lockScreen, .expanded:
            var lines = ["<div class=\"stack fit\">",
                         "  <div class=\"row\">\(icon)\(title)<span class=\"spacer\"></span>\(badge)\(lead(choice.countdown, large: true, oneTime: true))</div>"]
            if let status = choice.status {
                lines.append("  {{#display.\(status.key)}}<div class=\"row\"><span class=\"label headline\">{{display.\(status.key).text}}</span></div>{{/display.\(status.key)}}")
            }
            if presentation == .lockScreen, let countdown = choice.countdown {
                let key = countdown.key
                lines.append("  {{#display.\(key).near}}<progress class=\"progress\" data-progress=\"\(key)\" max=\"1000\" value=\"{{display.\(key).progress}}\"></progress>{{/display.\(key).near}}")
            }
            lines += choice.lines.map { "  " + ($0.count == 1 ? line($0[0]) : stats($0)) }
            lines.append("</div>")
            return comment + lines.joined(separator: "\n") + "\n"
        case .compact:
            let trailing = firstPresent(choice, withStatus: true, else: "<span class=\"label\">\(text(plan.title))</span>", large: false)
            return comment + "\(icon)\n<span class=\"trailing\">\(trailing)</span>\n"
        case .minimal:
            return comment + firstPresent(choice, withStatus: false, else: icon, large: false) + "\n"
        case .small:
            let second = firstPresent(choice, withStatus: true, else: badge, large: true)
            return comment + "<div class=\"stack\">\n  <div class=\"row\">\(icon)\(title)</div>\n  <div class=\"row\">\(second)</div>\n</div>\n"
        }
    }

    /// The first present of the countdown, the other dates and (`withStatus`) the status, else `fallback`: Mustache
    /// inverted sections chain them, so a nil countdown (an optional left out of a push) never leaves the
    /// presentation empty.
    static func firstPresent(_ choice: LayoutPlan.Choice, withStatus: Bool, else fallback: String, large: Bool) -> String {
        var options = ([choice.countdown].compactMap { $0 } + choice.otherDates).map { ($0.key, lead($0, large: large, oneTime: !large)) }
        if withStatus, let status = choice.status {
            options.append((status.key, "{{#display.\(status.key)}}<span class=\"label headline\">{{display.\(status.key).text}}</span>{{/display.\(status.key)}}"))
        }
        return options.reversed().reduce(fallback) { rest, option in
            rest.isEmpty ? option.1 : "\(option.1){{^display.\(option.0)}}\(rest){{/display.\(option.0)}}"
        }
    }

    /// All five templates, by presentation file name (`"lock-screen"` → text).
    public static func templates(_ plan: LayoutPlan) -> [String: String] {
        Dictionary(uniqueKeysWithValues: Presentation.allCases.map { ($0.rawValue, template(plan, $0)) })
    }

    /// The countdown while near (ticking: `data-countdown`), else the time of day: with `oneTime`, one
    /// (`display.F.short`: a range's start before it begins, else its end), where both did not fit (the compact
    /// and minimal islands cut "18:05 – 21:05" to "18:05 …"; beside the title and a badge it cut the title to
    /// "Ride …"); else a range's both times (the small presentation, on a row of its own).
    static func lead(_ field: LayoutPlan.Field?, large: Bool, oneTime: Bool) -> String {
        guard let field else { return "" }
        let key = field.key
        let size = large ? " large" : ""
        let time = oneTime ? "short" : "text"
        return "{{#display.\(key)}}{{#display.\(key).near}}<span class=\"countdown\(size)\" role=\"timer\" data-countdown=\"\(key)\">"
            + "{{display.\(key).countdown}}</span>{{/display.\(key).near}}{{^display.\(key).near}}<span class=\"label time\(size)\">"
            + "{{display.\(key).\(time)}}</span>{{/display.\(key).near}}{{/display.\(key)}}"
    }

    /// One field's line (or lines, for rows): its name in words, then its value; nothing when it is nil.
    static func line(_ field: LayoutPlan.Field) -> String {
        let key = field.key
        let name = "<span class=\"label secondary\">\(text(field.label))</span>"
        let value: String
        switch field.shape {
        case .text:
            value = "<span class=\"label value\">{{display.\(key).text}}</span>"
        case .date:
            value = "{{#display.\(key).near}}<span class=\"countdown value\" role=\"timer\" data-countdown=\"\(key)\">{{display.\(key).countdown}}</span>{{/display.\(key).near}}"
                + "{{^display.\(key).near}}<span class=\"label value\">{{display.\(key).text}}</span>{{/display.\(key).near}}"
        case .fields(let keys):
            value = "<span class=\"label value\">" + parts(keys, under: "display.\(key).fields") + "</span>"
        case .rows(let keys):
            let heading = "<div class=\"row\">\(name){{#display.\(key).more}}<span class=\"label value secondary\">{{display.\(key).more}}</span>{{/display.\(key).more}}</div>"
            let rows = "{{#display.\(key).rows}}<div class=\"row item\"><span class=\"label value\">\(parts(keys, under: "fields"))</span></div>{{/display.\(key).rows}}"
            return "{{#display.\(key)}}<div class=\"stack\">\(heading)\(rows)</div>{{/display.\(key)}}"
        }
        return "{{#display.\(key)}}<div class=\"row\">\(name)\(value)</div>{{/display.\(key)}}"
    }

    /// Short fields (numbers, `Bool`s) side by side on one line, each its name and value; a nil one is left out.
    static func stats(_ fields: [LayoutPlan.Field]) -> String {
        "<div class=\"row stats\">" + fields.map { field in
            "{{#display.\(field.key)}}<span class=\"stat\"><span class=\"label secondary\">\(text(field.label))</span>"
                + "<span class=\"label\">{{display.\(field.key).text}}</span></span>{{/display.\(field.key)}}"
        }.joined() + "</div>"
    }

    /// A struct's fields as parts of one line (`.part + .part` draws the " · " between them).
    private static func parts(_ keys: [String], under path: String) -> String {
        keys.map { "{{#\(path).\($0)}}<span class=\"part\">{{\(path).\($0)}}</span>{{/\(path).\($0)}}" }.joined()
    }

    /// Fixed text made safe in HTML and in Mustache (braces become character references).
    static func text(_ value: String) -> String {
        HTML.escape(value).replacingOccurrences(of: "{", with: "&#123;").replacingOccurrences(of: "}", with: "&#125;")
    }
}

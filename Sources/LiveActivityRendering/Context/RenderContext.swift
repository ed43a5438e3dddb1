import Foundation
import LiveActivityCore

/// The values a kind's templates see: one activity at one instant, as a JSON object.
///
/// Built the same way here and in the page's `Public/js/render-context.js` (the same inputs give the same
/// object; `Tests/fixtures/render-context/` holds the shared cases both are tested against). The shape,
/// documented in docs/TEMPLATES.md:
/// - every attribute and every state field under its own name (state fields win a clash);
/// - an enum field `F` (listed in `kind.json`'s `enums`): `{"value", "label", "icon"}`;
/// - the countdown field `F`: `{"countdown": "12:34", "range": "10:02 – 10:22", "paused": Bool,
///   "start": ISO-8601, "end": ISO-8601}` (`Text(timerInterval:pauseTime:countsDown:)`: clamped at 0:00,
///   frozen at `pausedAt` while paused and at `endDate` once ended);
/// - the image field `F`: `{"src": thumbnail or fallback icon URL, "url": the attribute, "thumbnail": Bool,
///   "logo": the logo's URL}`;
/// - `activity`: `{"id", "state", "badge", "paused", "title", "summary", "icon"}`; `kind`: `{"name", "label"}`;
/// - `display`: each field as the generated layout shows it (``DisplayValues``).
public enum RenderContext {
    /// Builds the context.
    /// - Parameters:
    ///   - activity: the activity as the protocol sends it (``Activity``'s JSON object).
    ///   - kind: the kind's metadata.
    ///   - now: the instant to show.
    ///   - timeZoneOffsetMinutes: minutes east of UTC for times of day (`range`): 0 for UTC, 60 for CET.
    /// - Returns: the context object; `.object([:])`-based, never fails (missing fields are left out).
    public static func build(_ activity: Activity, kind: KindMetadata, now: Date, timeZoneOffsetMinutes: Int = 0) -> JSONValue {
        let object = (try? JSONValue.parse(activity.encodedJSON())) ?? .object([:])
        return build(json: object, kind: kind, nowMs: milliseconds(now), timeZoneOffsetMinutes: timeZoneOffsetMinutes)
    }

    /// Builds the context from the activity's JSON object (what the page has), `nowMs` in epoch milliseconds.
    public static func build(json activity: JSONValue, kind: KindMetadata, nowMs: Int64, timeZoneOffsetMinutes: Int = 0) -> JSONValue {
        let attributes = activity["attributes"]?.objectValue ?? [:]
        let content = activity["content"]?.objectValue ?? [:]
        let state = content["state"]?.objectValue ?? [:]
        var context = attributes.merging(state) { _, fromState in fromState }

        for (field, values) in kind.enums {
            guard let raw = attributes[field] ?? state[field] else { continue }
            if let keyed = Self.keyedCase(raw, values: values, fallbackIcon: kind.fallbackIcon, offsetMinutes: timeZoneOffsetMinutes) {
                context[field] = keyed
                continue
            }
            let entry = values.first { $0.value == raw.stringValue || $0.rawValue == raw }
            let text = raw.stringValue ?? (raw.numberValue.map(Self.number) ?? "")
            context[field] = .object([
                "value": .string(entry?.value ?? text),
                "label": .string(entry?.label ?? (text.prefix(1).uppercased() + text.dropFirst())),
                "icon": .string(entry?.icon ?? kind.fallbackIcon),
            ])
        }

        let shownState = Self.state(activity, content: content, nowMs: nowMs)
        let pausedAt = state["pausedAt"]?.stringValue.flatMap(ms)
        var countdownText: String?
        if let field = kind.countdown, let bounds = Self.bounds(state[field], activity: activity) {
            var freeze = pausedAt
            if shownState == "ended" || shownState == "dismissed", let ended = activity["endDate"]?.stringValue.flatMap(ms) {
                freeze = min(freeze ?? ended, ended)
            }
            var reference = nowMs
            if let freeze { reference = min(reference, freeze) }
            reference = max(reference, bounds.start)
            let left = bounds.end - reference
            let seconds = left <= 0 ? 0 : Int((left + 999) / 1000)
            countdownText = Countdown.format(seconds)
            context[field] = .object([
                "countdown": .string(countdownText!),
                "range": .string(TimeOfDay.range(bounds.start, bounds.end, offsetMinutes: timeZoneOffsetMinutes)),
                "paused": .bool(pausedAt != nil),
                "start": .string(ISODate.format(date(bounds.start))),
                "end": .string(ISODate.format(date(bounds.end))),
            ])
        }

        if let field = kind.image {
            let thumbnail = activity["thumbnail"]?["1x"]?.stringValue.flatMap { $0.hasPrefix(ActivityThumbnail.pathPrefix) ? $0 : nil }
            context[field] = .object([
                "src": .string(thumbnail ?? "/icons/\(kind.fallbackIcon).svg"),
                "url": .string(attributes[field]?.stringValue ?? ""),
                "thumbnail": .bool(thumbnail != nil),
                "logo": .string("/icons/favicon.svg"),
            ])
        }

        var freeze = pausedAt
        if shownState == "ended" || shownState == "dismissed", let ended = activity["endDate"]?.stringValue.flatMap(ms) {
            freeze = min(freeze ?? ended, ended)
        }
        let display = DisplayValues.build(attributes.merging(state) { _, fromState in fromState }, context: context, kind: kind,
                                          nowMs: nowMs, startMs: activity["startDate"]?.stringValue.flatMap(ms), freezeMs: freeze,
                                          offsetMinutes: timeZoneOffsetMinutes)

        let paused = pausedAt != nil
        let badge = Self.badge(shownState, paused: paused)
        let title = KindTitle.render(kind.title ?? "{{kind.label}}", context: .object(context.merging(["kind": kindObject(kind)]) { $1 }))
        var summary = [title.isEmpty ? kind.label : title]
        if let countdownText { summary.append(shownState == "pending" ? "\(countdownText) planned" : "\(countdownText) left") }
        if !badge.isEmpty { summary.append(badge.lowercased()) }
        let icon = kind.enums.keys.sorted().compactMap { context[$0]?["icon"]?.stringValue }.first ?? kind.fallbackIcon

        context["activity"] = .object([
            "id": activity["id"] ?? .string(""),
            "state": .string(shownState),
            "badge": .string(badge),
            "paused": .bool(paused),
            "title": .string(title.isEmpty ? kind.label : title),
            "summary": .string(summary.joined(separator: ", ")),
            "icon": .string(icon),
        ])
        context["kind"] = kindObject(kind)
        context["display"] = display
        return .object(context)
    }

    // MARK: Parts

    /// A keyed enum's value (`{"delayed": {"minutes": 25}}`) as `{"value": "delayed", "label": "Delayed · Minutes 25",
    /// "icon"}`: the case's label, then its associated values in declaration order (``KindMetadata/AssociatedValue``),
    /// each its label and value as the layout shows it, or the value alone when unlabelled; nil for any other value.
    static func keyedCase(_ raw: JSONValue, values: [KindMetadata.EnumValue], fallbackIcon: String, offsetMinutes: Int) -> JSONValue? {
        guard case .object(let object) = raw, object.count == 1, let (name, payload) = object.first else { return nil }
        let entry = values.first { $0.value == name }
        var parts = [entry?.label ?? (name.prefix(1).uppercased() + name.dropFirst())]
        let fields = payload.objectValue ?? [:]
        // Without the declaration's order (no entry, or one that lists none): the keys sorted, unlabelled.
        let listed = entry?.associatedValues ?? []
        let order = listed.isEmpty ? fields.keys.sorted().map { KindMetadata.AssociatedValue(key: $0, label: "") } : listed
        for associated in order {
            guard let value = fields[associated.key],
                  let text = DisplayValues.labelled(value, associated.valueLabels, offsetMinutes: offsetMinutes), !text.isEmpty else { continue }
            parts.append(associated.label.isEmpty ? text : "\(associated.label) \(text)")
        }
        return .object([
            "value": .string(name),
            "label": .string(parts.joined(separator: " · ")),
            "icon": .string(entry?.icon ?? fallbackIcon),
        ])
    }

    private static func kindObject(_ kind: KindMetadata) -> JSONValue {
        .object(["name": .string(kind.name), "label": .string(kind.label)])
    }

    /// The state at `now`: as sent, except that a running activity is `stale` exactly when its stale date is
    /// not after `now`.
    private static func state(_ activity: JSONValue, content: [String: JSONValue], nowMs: Int64) -> String {
        let sent = activity["activityState"]?.stringValue ?? "active"
        guard sent == "active" || sent == "stale" else { return sent }
        guard let stale = content["staleDate"]?.stringValue.flatMap(ms) else { return "active" }
        return stale <= nowMs ? "stale" : "active"
    }

    /// "Ended", "Dismissed", "Scheduled", "Paused", "Stale" or "".
    private static func badge(_ state: String, paused: Bool) -> String {
        switch state {
        case "ended": "Ended"
        case "dismissed": "Dismissed"
        case "pending": "Scheduled"
        case _ where paused: "Paused"
        case "stale": "Stale"
        default: ""
        }
    }

    /// A countdown's bounds in epoch ms: a `{"start","end"}` range, or a `Date` counted to from `startDate`.
    private static func bounds(_ value: JSONValue?, activity: JSONValue) -> (start: Int64, end: Int64)? {
        switch value {
        case .object(let range)?:
            guard let start = range["start"]?.stringValue.flatMap(ms), let end = range["end"]?.stringValue.flatMap(ms) else { return nil }
            return (start, end)
        case .string(let text)?:
            guard let end = ms(text), let start = activity["startDate"]?.stringValue.flatMap(ms) else { return nil }
            return (min(start, end), end)
        default:
            return nil
        }
    }

    private static func ms(_ text: String) -> Int64? { ISODate.parse(text).map(milliseconds) }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    private static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }

    /// A number as JavaScript's `String(n)` writes whole numbers (no `.0`).
    static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

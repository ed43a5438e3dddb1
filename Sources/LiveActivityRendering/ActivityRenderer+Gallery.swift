import Foundation
import LiveActivityCore

/// The gallery (`GET /gallery`): every presentation of synthetic activities for every kind the server has
/// (each workout in each state, then each other kind), like Xcode's previews of a Live Activity. Built here,
/// never from the live store.
extension ActivityRenderer {
    /// One previewed situation.
    public struct GalleryCase: Sendable {
        /// The section it is shown in, e.g. "Yoga" or "Emoji".
        public var group: String
        /// Stable id used in the page (`yoga-paused`), so tests can find each figure (`#yoga-paused-minimal`).
        public var id: String
        /// What the row is called, e.g. "Paused".
        public var title: String
        /// The synthetic activity.
        public var activity: Activity
    }

    /// The workout situations shown, relative to `now`: for each workout active, stale, paused, pending,
    /// ended and a timer over an hour; then one with a long name.
    /// - Parameters:
    ///   - now: the instant the cases are built around.
    ///   - workouts: the workout kind's values (`Kinds/workout/kind.json`), in order.
    public static func galleryCases(now: Date, workouts: [String]) -> [GalleryCase] {
        func at(_ seconds: TimeInterval) -> Date { now.addingTimeInterval(seconds) }
        func make(_ id: String, workout: String, start: TimeInterval, end: TimeInterval, state: ActivityState = .active,
                  stale: TimeInterval? = nil, pausedAt: TimeInterval? = nil, ended: TimeInterval? = nil,
                  startDate: TimeInterval? = nil) -> Activity {
            let timer = TimerRange(start: at(start), end: at(end), pausedAt: pausedAt.map(at))
            var timerState: [String: JSONValue] = ["workoutTimer": .object([
                "start": .string(ISODate.format(timer.start)), "end": .string(ISODate.format(timer.end)),
            ])]
            if let paused = timer.pausedAt { timerState["pausedAt"] = .string(ISODate.format(paused)) }
            let content = ActivityContent(state: .object(timerState), staleDate: stale.map(at) ?? timer.end)
            return Activity(id: "gallery-\(id)", attributesType: ClientMessage.defaultAttributesType,
                            attributes: .object(["workout": .string(workout)]), content: content, timer: timer,
                            activityState: state, startDate: at(startDate ?? start), endDate: ended.map(at),
                            dismissalDate: ended.map { at($0 + 4 * 3600) }, endReason: ended == nil ? nil : .request)
        }
        var cases: [GalleryCase] = []
        for workout in workouts {
            cases += [
                GalleryCase(group: ActivityFacts.name(ofWorkout: workout), id: "\(workout)-active", title: "Active",
                            activity: make("\(workout)-active", workout: workout, start: -20, end: 50)),
                GalleryCase(group: ActivityFacts.name(ofWorkout: workout), id: "\(workout)-stale", title: "Stale (its stale date has passed)",
                            activity: make("\(workout)-stale", workout: workout, start: -40, end: 30, state: .stale, stale: -5)),
                GalleryCase(group: ActivityFacts.name(ofWorkout: workout), id: "\(workout)-paused", title: "Paused",
                            activity: make("\(workout)-paused", workout: workout, start: -30, end: 40, pausedAt: -15)),
                GalleryCase(group: ActivityFacts.name(ofWorkout: workout), id: "\(workout)-pending", title: "Pending (scheduled to start in 5 minutes)",
                            activity: make("\(workout)-pending", workout: workout, start: 300, end: 370, state: .pending)),
                GalleryCase(group: ActivityFacts.name(ofWorkout: workout), id: "\(workout)-ended", title: "Ended",
                            activity: make("\(workout)-ended", workout: workout, start: -80, end: -10, state: .ended, ended: -10)),
                GalleryCase(group: ActivityFacts.name(ofWorkout: workout), id: "\(workout)-long-timer", title: "Timer over an hour",
                            activity: make("\(workout)-long-timer", workout: workout, start: -60, end: 3723)),
            ]
        }
        cases.append(GalleryCase(group: "Other", id: "long-name", title: "Long name",
                                 activity: make("long-name", workout: "extraordinarily long interval training session",
                                                start: -20, end: 50)))
        return cases
    }

    /// The situations of every kind other than the workout, relative to `now`: active and ended, and paused
    /// for a kind with a countdown, each built from the declaration's example values
    /// (``ActivityDeclaration/example(of:now:)``). A kind whose example does not validate is left out.
    public static func galleryCases(now: Date, kinds: KindRegistry) -> [GalleryCase] {
        var cases: [GalleryCase] = []
        for kind in kinds.all where kind.attributesType != ClientMessage.defaultAttributesType {
            guard let declared = kind as? DeclaredKind,
                  let attributes = try? kind.attributes(from: declared.declaration.example(of: .attributes, now: now), field: "attributes"),
                  let (state, timer) = try? kind.state(from: declared.declaration.example(of: .contentState, now: now), field: "content.state")
            else { continue }
            let name = kind.attributesType
            func make(_ suffix: String, _ title: String, state activityState: ActivityState = .active, timer: TimerRange?, ended: Bool = false) -> GalleryCase {
                let content = ActivityContent(state: timer.map { kind.state(state, with: $0) } ?? state, staleDate: timer?.end)
                let activity = Activity(id: "gallery-\(name)-\(suffix)", attributesType: name, attributes: attributes, content: content,
                                        timer: timer, activityState: activityState, startDate: now.addingTimeInterval(-20),
                                        endDate: ended ? now.addingTimeInterval(-10) : nil,
                                        dismissalDate: ended ? now.addingTimeInterval(4 * 3600) : nil, endReason: ended ? .request : nil)
                return GalleryCase(group: kind.metadata.label, id: "\(name)-\(suffix)", title: title, activity: activity)
            }
            cases.append(make("active", "Active", timer: timer))
            if var paused = timer {
                paused.pausedAt = now.addingTimeInterval(-15)
                cases.append(make("paused", "Paused", timer: paused))
            }
            cases.append(make("ended", "Ended", state: .ended, timer: timer, ended: true))
        }
        return cases
    }

    /// The workout kind's values, in `kind.json` order.
    var workoutValues: [String] {
        (kinds.metadata(named: ClientMessage.defaultAttributesType)?.enums[ClientMessage.defaultAttributesType] ?? []).map(\.value)
    }

    /// The whole gallery as one document.
    /// - Parameters:
    ///   - options: theme, scale and settings (no live script: the gallery is synthetic).
    ///   - now: the instant the synthetic activities are built around (the request time, or `?now=`).
    ///   - query: extra query text kept on the theme links (already URL-encoded, e.g. `now=…&token=…`).
    public func gallery(options: RenderOptions, now: Date, query: String = "") -> String {
        var options = options
        options.live = false
        let keep = query.isEmpty ? "" : "&amp;" + HTML.escape(query)
        var body = """
        <main class="gallery">
        <h1>Live Activity previews</h1>
        <p class="gallery-intro">Every presentation of each kind of Live Activity the server has, for each workout and state, at \
        \(HTML.escape(ISODate.format(now))). Appearance: <a href="?theme=light\(keep)">light</a> · \
        <a href="?theme=dark\(keep)">dark</a>.</p>

        """
        var currentGroup = ""
        let cases = Self.galleryCases(now: now, workouts: workoutValues) + Self.galleryCases(now: now, kinds: kinds)
        for item in cases {
            let group = item.group
            if group != currentGroup {
                if !currentGroup.isEmpty { body += "</section>\n" }
                let groupID = "group-" + String(group.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
                body += "<section aria-labelledby=\"\(groupID)\"><h2 id=\"\(groupID)\">\(HTML.escape(group))</h2>\n"
                currentGroup = group
            }
            let facts = self.facts(item.activity, now: now)
            let caseID = HTML.escape(item.id)
            body += "<div class=\"gallery-case\" id=\"\(caseID)\" data-activity-state=\"\(facts.state.rawValue)\">"
            body += "<h3>\(HTML.escape(facts.name)) · \(HTML.escape(item.title))</h3><div class=\"gallery-row\">"
            for presentation in Presentation.allCases where presentation != .small {
                let kind = presentation == .lockScreen ? " class=\"lock\"" : ""
                body += "<figure id=\"\(caseID)-\(presentation.rawValue)\"\(kind)>"
                body += fragment(facts, presentation, headingTag: "p")
                body += "<figcaption>\(presentation.title)</figcaption></figure>"
            }
            body += "</div></div>\n"
        }
        body += "</section>\n"
        // The small family (iOS 18) in a section of its own at the end, so the rows above keep their layout.
        body += "<section aria-labelledby=\"group-small\"><h2 id=\"group-small\">\(Presentation.small.title)</h2>"
        body += "<div class=\"gallery-row\">"
        for item in cases {
            let facts = self.facts(item.activity, now: now)
            body += "<figure id=\"\(HTML.escape(item.id))-small\">\(fragment(facts, .small, headingTag: "p"))"
            body += "<figcaption>\(HTML.escape(facts.name)) · \(HTML.escape(item.title))</figcaption></figure>"
        }
        body += "</div></section>\n</main>"
        return page(title: "Live Activity previews", bodyClass: "gallery-page", body: body, options: options, now: now)
    }
}

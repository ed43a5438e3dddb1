import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityRendering
import KindFixtures

/// The kinds' templates as the static renderings draw them, and the fallback when they cannot be used.
struct KindTemplatesTests {
    /// 2026-11-29T17:00:00Z.
    let t0 = Date(timeIntervalSince1970: 1_795_971_600)
    let assets = RenderAssets(stylesheet: "", icons: [
        "yoga": #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle r="1"/></svg>"#,
        "timer": #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M1 1"/></svg>"#,
        "xmark": #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M2 2"/></svg>"#])

    func yoga(pausedAt: TimeInterval? = nil) -> Activity {
        let timer = TimerRange(start: t0, end: t0 + 1200, pausedAt: pausedAt.map { t0 + $0 })
        return Activity(id: "a1", attributesType: "workout", attributes: .object(["workout": .string("yoga")]),
                        content: ActivityContent(state: timerState(timer), staleDate: nil), timer: timer,
                        activityState: .active, startDate: t0, endDate: nil)
    }

    @Test func repositoryTemplatesAllParse() {
        #expect(repositoryTemplates.errors.isEmpty)
        for kind in ["workout", "emoji"] {
            for presentation in Presentation.allCases {
                #expect(repositoryTemplates.template(kind: kind, presentation: presentation) != nil, "\(kind) \(presentation)")
            }
        }
    }

    @Test func workoutLockScreenShowsNameThenCountdownThenIconAndTheSlogan() {
        let renderer = ActivityRenderer(assets: assets, kinds: .builtIn, templates: repositoryTemplates)
        let html = renderer.fragment(for: yoga(), presentation: .lockScreen, now: t0 + 60)
        let name = html.range(of: ">Yoga<")!.lowerBound
        let countdown = html.range(of: ">19:00<")!.lowerBound
        let icon = html.range(of: "<circle r=\"1\"/>")!.lowerBound
        #expect(name < countdown && countdown < icon)
        #expect(html.contains("Keep it going!!!"))
        #expect(html.contains(#"data-countdown="workoutTimer" data-start=""#))   // bounds for the live script
        #expect(!html.contains("data-icon="))
    }

    @Test func workoutMinimalShowsTheDateRange() {
        let renderer = ActivityRenderer(assets: assets, kinds: .builtIn, templates: repositoryTemplates)
        let html = renderer.fragment(for: yoga(), presentation: .minimal, now: t0 + 60)
        #expect(html.contains(">17:00 – 17:20<"))
    }

    @Test func expandedStopIsNoLinkInAStaticRendering() {
        let renderer = ActivityRenderer(assets: assets, kinds: .builtIn, templates: repositoryTemplates)
        let html = renderer.fragment(for: yoga(pausedAt: 30), presentation: .expanded, now: t0 + 60)
        #expect(!html.contains("href=") && html.contains("STOP") && html.contains(#"data-paused="true""#))
        #expect(html.contains(">19:30<"))
    }

    @Test func aBrokenTemplateNamesFileLineColumnAndItsKindFallsBack() {
        let templates = KindTemplates(parsing: ["workout": ("Kinds/workout", ["lock-screen": "<p>\n  {{#open}}</p>",
                                                                             "compact": "<p>{{workout.label}}</p>"])])
        #expect(templates.errors.map(\.description) == [#"Kinds/workout/lock-screen.html:2:3: unclosed section "open""#])
        #expect(templates.template(kind: "workout", presentation: .compact) == nil)
        let renderer = ActivityRenderer(assets: assets, kinds: .builtIn, templates: templates)
        let html = renderer.fragment(for: yoga(), presentation: .lockScreen, now: t0 + 60)
        // The generated layout (the kind is declared), in the renderer's frame: the status and the countdown.
        #expect(html.contains("la-frame") && html.contains(">Yoga<") && html.contains(">19:00<"))
    }

    @Test func defaultLayoutOfAnUnknownKindListsLabelAndFields() {
        let renderer = ActivityRenderer(assets: assets, kinds: .builtIn)
        var activity = yoga()
        activity.attributesType = "mystery"
        var state = timerState(activity.timer!).objectValue!
        state["heartRate"] = .number(120)
        state["note"] = .string("<b>")
        activity.content = ActivityContent(state: .object(state), staleDate: nil)
        let html = renderer.fragment(for: activity, presentation: .compact, now: t0)
        #expect(html.contains(#"<span class="field-name">heartRate</span> <span class="field-value">120</span>"#))
        #expect(html.contains("&lt;b&gt;") && html.contains(">Mystery<"))
    }
}

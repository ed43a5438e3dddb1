import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityRendering
import KindFixtures

/// A fixed instant: 2026-11-29T17:00:00Z.
private let t0 = Date(timeIntervalSince1970: 1_795_971_600)

private let assets = RenderAssets(
    stylesheet: ".lock-screen { color: red; } /* </style><script>alert(1)</script> */",
    icons: ["yoga": ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" stroke="#000"><circle r="1"/></svg>"##,
            "workout": #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M0 0"/></svg>"#,
            "timer": #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M1 1"/></svg>"#])

private func workout(_ name: String, start: TimeInterval = 0, end: TimeInterval = 70, state: ActivityState = .active,
                     stale: TimeInterval? = nil, pausedAt: TimeInterval? = nil, ended: TimeInterval? = nil) -> Activity {
    let timer = TimerRange(start: t0 + start, end: t0 + end, pausedAt: pausedAt.map { t0 + $0 })
    return Activity(id: "a1", attributesType: "workout", attributes: .object(["workout": .string(name)]),
                    content: ActivityContent(state: timerState(timer), staleDate: stale.map { t0 + $0 }), timer: timer,
                    activityState: state, startDate: t0 + start, endDate: ended.map { t0 + $0 })
}

/// The workout's content state for a timer, as the protocol sends it: `workoutTimer` and `pausedAt`.
func timerState(_ timer: TimerRange) -> JSONValue {
    var state: [String: JSONValue] = ["workoutTimer": .object(["start": .string(ISODate.format(timer.start)),
                                                               "end": .string(ISODate.format(timer.end))])]
    if let paused = timer.pausedAt { state["pausedAt"] = .string(ISODate.format(paused)) }
    return .object(state)
}

struct CountdownTests {
    @Test(arguments: [(0, "0:00"), (9, "0:09"), (70, "1:10"), (599, "9:59"), (3599, "59:59"), (3600, "1:00:00"),
                      (3723, "1:02:03"), (-5, "0:00")])
    func formatsMinutesAndHours(seconds: Int, text: String) {
        #expect(Countdown.format(seconds) == text)
    }

    @Test func noCountdownIsDashes() {
        #expect(Countdown.format(nil) == "--:--")
    }

    @Test func remainingRoundsUpFreezesWhenPausedOrEndedAndShowsFullLengthBeforeStart() {
        #expect(Countdown.remainingSeconds(workout("yoga"), at: t0 + 0.001) == 70)
        #expect(Countdown.remainingSeconds(workout("yoga"), at: t0 + 100) == 0)
        #expect(Countdown.remainingSeconds(workout("yoga", pausedAt: 30), at: t0 + 59) == 40)
        #expect(Countdown.remainingSeconds(workout("yoga", state: .ended, ended: 50), at: t0 + 59) == 20)
        #expect(Countdown.remainingSeconds(workout("yoga", start: 600, end: 670), at: t0) == 70)
    }
}

/// The repository's kind templates (`Kinds/`), parsed as the server parses them.
let repositoryTemplates: KindTemplates = {
    let kinds = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Kinds")
    var sources: [String: (path: String, templates: [String: String])] = [:]
    for kind in ["workout", "emoji"] {
        var templates: [String: String] = [:]
        for presentation in Presentation.allCases {
            let url = kinds.appendingPathComponent(kind).appendingPathComponent("\(presentation.rawValue).html")
            templates[presentation.rawValue] = try? String(contentsOf: url, encoding: .utf8)
        }
        sources[kind] = ("Kinds/\(kind)", templates)
    }
    return KindTemplates(parsing: sources)
}()

struct RendererTests {
    let renderer = ActivityRenderer(assets: assets, kinds: .builtIn, templates: repositoryTemplates)

    @Test func lockScreenDocumentShowsNameAndTimeWithoutScripts() {
        let html = renderer.document(for: workout("yoga"), presentation: .lockScreen, options: RenderOptions(), now: t0 + 20)
        #expect(html.hasPrefix("<!doctype html>"))
        #expect(html.contains(#"<h1 class="visually-hidden">Yoga workout</h1>"#))
        #expect(html.contains(#"<p class="workout-name serif-24-italic-bold">Yoga</p>"#))
        #expect(html.contains(">0:50</span>"))
        #expect(html.contains(#"data-activity-state="active""#))
        #expect(!html.contains("<script nonce"))
        // Self-contained: the only <link> is the empty data: icon (no stylesheet, and no /favicon.ico request).
        #expect(html.components(separatedBy: "<link").count == 2)
        #expect(html.contains(#"<link rel="icon" href="data:,">"#))
        #expect(html.contains(#"stroke="currentColor""#))      // the icon takes the text colour
    }

    @Test func stylesheetCannotCloseTheStyleElement() {
        let html = renderer.document(for: workout("yoga"), presentation: .compact, options: RenderOptions(), now: t0)
        #expect(!html.contains("</style><script>"))
        #expect(html.components(separatedBy: "</style>").count == 2)
    }

    @Test func everyActivityStringIsEscaped() {
        var activity = workout("<img src=x onerror=alert(1)>&\"'")
        activity.id = "\"><script>x</script>"
        for presentation in Presentation.allCases {
            let html = renderer.document(for: activity, presentation: presentation, options: RenderOptions(), now: t0)
            #expect(!html.contains("<img"))
            #expect(!html.contains("<script>x"))
            #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;&amp;&quot;&#39;"))
        }
        let missing = renderer.notFoundDocument(id: "<b>id</b>", options: RenderOptions(), now: t0)
        #expect(missing.contains("&lt;b&gt;id&lt;/b&gt;") && !missing.contains("<b>id"))
    }

    @Test func statesRenderAsSuch() {
        let stale = renderer.fragment(for: workout("jogging", stale: 10), presentation: .lockScreen, now: t0 + 20)
        #expect(stale.contains(#"data-activity-state="stale""#) && stale.contains(">Stale<"))
        let paused = renderer.fragment(for: workout("jogging", pausedAt: 30), presentation: .lockScreen, now: t0 + 50)
        #expect(paused.contains(">Paused<") && paused.contains(">0:40<") && paused.contains(#"data-paused="true""#))
        let ended = renderer.fragment(for: workout("jogging", state: .ended, ended: 60), presentation: .expanded, now: t0 + 99)
        #expect(ended.contains(#"data-activity-state="ended""#) && ended.contains(">0:10<"))
        let dismissed = renderer.fragment(for: workout("jogging", state: .dismissed, ended: 60), presentation: .lockScreen, now: t0 + 99)
        #expect(dismissed.contains(">Dismissed<"))
        let pending = renderer.fragment(for: workout("jogging", start: 300, end: 370, state: .pending), presentation: .compact, now: t0)
        #expect(pending.contains(">1:10<"))
        let long = renderer.fragment(for: workout("jogging", end: 3723), presentation: .minimal, now: t0)
        #expect(long.contains(">17:00 – 18:02<"))   // minimal: the date range, as Text(ClosedRange<Date>) shows it
        let compact = renderer.fragment(for: workout("jogging", end: 3723), presentation: .compact, now: t0)
        #expect(compact.contains(">1:02:03<"))
    }

    @Test func optionsSetThemeScaleSettingsAndTheLiveScript() {
        let options = RenderOptions(theme: .dark, scale: 9, live: true, nonce: "abc123",
                                    settings: RenderingSettings(activityBackgroundTint: "#00FF00", keylineTint: "red;}body{",
                                                                widgetURL: "javascript:alert(1)"))
        let html = renderer.document(for: workout("aerobics"), presentation: .expanded, options: options, now: t0)
        #expect(html.contains(#"data-theme="dark""#))
        #expect(html.contains("scale-3"))                        // clamped to 3
        #expect(html.contains("--activity-background-tint: #00ff00;"))
        #expect(!html.contains("body{"))                         // an invalid colour is dropped
        #expect(!html.contains("javascript:"))                   // so is a non-http widget URL
        #expect(html.contains(#"<script nonce="abc123">"#))
        let linked = renderer.document(for: workout("aerobics"), presentation: .lockScreen,
                                       options: RenderOptions(settings: RenderingSettings(widgetURL: "https://example.com/w?a=1&b=2")), now: t0)
        #expect(linked.contains(#"href="https://example.com/w?a=1&amp;b=2""#))
    }

    @Test func galleryHasEveryPresentationForEveryWorkoutAndState() {
        let html = renderer.gallery(options: RenderOptions(theme: .light), now: t0)
        for workout in ["jogging", "aerobics", "yoga"] {
            for state in ["active", "stale", "paused", "pending", "ended", "long-timer"] {
                for presentation in Presentation.allCases {
                    #expect(html.contains("id=\"\(workout)-\(state)-\(presentation.rawValue)\""))
                }
            }
        }
        #expect(html.contains(#"id="long-name-lock-screen""#))
        #expect(html.contains(">1:02:03<"))
        #expect(!html.contains("<script nonce"))
        // Every other kind the server has, from its declaration's example values: the emoji kind has no countdown,
        // so no paused case.
        #expect(html.contains(#"<h2 id="group-emoji">Emoji</h2>"#))
        for state in ["active", "ended"] {
            for presentation in Presentation.allCases { #expect(html.contains("id=\"emoji-\(state)-\(presentation.rawValue)\"")) }
        }
        #expect(!html.contains(#"id="emoji-paused""#))
    }

    @Test func galleryShowsADeclaredKindWithItsCountdownPausedToo() throws {
        let source = """
        import ActivityKit
        struct IntervalWorkoutAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable {
                var heartRate: Int
                var interval: ClosedRange<Date>
                var note: String?
            }
            var athlete: String
        }
        """
        let folder = try KindFolder.make(name: "interval", path: "k/interval",
                                         files: ["Attributes.swift": source, "kind.json": #"{"name": "interval", "label": "Interval workout"}"#])
        let kinds = KindRegistry(KindRegistry.builtIn.all + [try KindRegistry.kind(for: folder)])
        let cases = ActivityRenderer.galleryCases(now: t0, kinds: kinds).filter { $0.group == "Interval workout" }
        #expect(cases.map(\.id) == ["interval-active", "interval-paused", "interval-ended"])
        #expect(cases[0].activity.attributes == .object(["athlete": .string("Athlete")]))
        #expect(cases[1].activity.timer?.pausedAt != nil)
        let html = ActivityRenderer(assets: renderer.assets, kinds: kinds).gallery(options: RenderOptions(theme: .light), now: t0)
        #expect(html.contains(#"<h2 id="group-interval-workout">Interval workout</h2>"#))
    }
}

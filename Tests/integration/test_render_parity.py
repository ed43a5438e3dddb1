"""One markup, two renderers: for each kind and presentation, the server's static rendering of a kind's template
(Swift: MustacheTemplate over RenderContext) equals the page's (Public/js/kind-fragment.js: mustache.js over
render-context.js) in Chromium, for the same activity state at a fixed instant.

Both outputs are put in one canonical form in the browser before they are compared: whitespace collapsed, class
lists sorted, headings as `p`, and the bound elements that each renderer resolves its own way (docs/TEMPLATES.md)
reduced to what they are: a picture (an icon or image as inline SVG, a `data:` PNG, a URL, or a not yet
resolved `<i data-icon>`), the STOP link
(a `<span>` in a static rendering, which holds no controls), and the countdown's `data-start` / `data-end` /
`data-freeze` (the static renderings' live script). Everything else (text, the countdown's text at the fixed
clock, the date range, structure, classes and other attributes) must be the same.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from support import iso_s as _iso
from test_render import DAY, browser, start_activities, timer  # noqa: F401 (browser: the Chromium fixture)
from wsclient import run

NOW = f"{DAY}T12:00:20Z"

CANON = """
const DROPPED = new Set(["class", "data-start", "data-end", "data-freeze", "href", "data-action", "aria-hidden", "src", "alt", "focusable"]);
function canon(node) {
  if (node.nodeType === Node.TEXT_NODE) { const t = node.textContent.replace(/\\s+/g, " ").trim(); return t ? JSON.stringify(t) : ""; }
  if (node.nodeType !== Node.ELEMENT_NODE) return "";
  const classes = [...node.classList].filter((c) => c !== "icon" && c !== "image-fallback").sort().join(" ");
  let tag = node.localName;
  // A picture either way: an icon inlined or still to load, a thumbnail inlined or by URL.
  if (tag === "svg" || tag === "img" || (tag === "i" && node.hasAttribute("data-icon"))) return `<picture class="${classes}">`;
  if (tag === "a" && node.hasAttribute("data-action")) tag = "span";
  if (/^h[1-6]$/.test(tag)) tag = "p";
  const attributes = [...node.attributes].filter((a) => !DROPPED.has(a.name)).map((a) => `${a.name}="${a.value}"`).sort();
  const children = [...node.childNodes].map(canon).filter(Boolean).join("");
  return `<${tag} class="${classes}" ${attributes.join(" ")}>${children}</${tag}>`;
}
"""

SCRIPT = CANON + """
const [ids, nowIso] = arguments;
const done = arguments[arguments.length - 1];
(async () => {
  const { fetchTemplates, renderFragment, resolveIcons, PRESENTATIONS } = await import("/js/kind-fragment.js");
  const kinds = (await (await fetch("/kinds")).json()).kinds;
  const nowMs = Date.parse(nowIso);
  const out = {};
  for (const [name, id] of Object.entries(ids)) {
    const activity = await (await fetch(`/api/activities/${id}`)).json();
    const kind = kinds.find((k) => k.name === activity.attributesType);
    const templates = await fetchTemplates(kind);
    for (const presentation of PRESENTATIONS) {
      const text = await (await fetch(`/activities/${id}/render/${presentation}?now=${nowIso}`)).text();
      const main = new DOMParser().parseFromString(text, "text/html").querySelector("main");
      main.querySelector("h1.visually-hidden")?.remove();
      const page = document.createElement("div");
      page.innerHTML = renderFragment(templates[presentation], activity, kind, presentation, nowMs, 0);
      await resolveIcons(page);
      out[`${name}/${presentation}`] = { server: canon(main.firstElementChild), page: canon(page.firstElementChild),
                                         templated: Boolean(templates[presentation]) };
    }
  }
  return out;
})().then(done, (error) => done({ error: String(error && error.stack || error) }));
"""


def test_server_and_page_render_every_template_alike(server, browser):
    start = datetime.fromisoformat(f"{DAY}T12:00:00+00:00")
    ids = run(start_activities(server.ws_url, {
        "yoga": {"attributes": {"workout": "yoga"}, "content": timer(f"{DAY}T12:00:00Z", f"{DAY}T12:01:10Z")},
        "paused": {"attributes": {"workout": "jogging"},
                   "content": {"state": {"workoutTimer": {"start": f"{DAY}T12:00:00Z", "end": f"{DAY}T12:20:00Z"},
                                         "pausedAt": f"{DAY}T12:00:10Z"}, "relevanceScore": 0}},
        "emoji": {"attributesType": "emoji",
                  "attributes": {"startTime": _iso(start), "endTime": _iso(start + timedelta(hours=1)), "name": "Morning <run>"},
                  "content": {"state": {"emoji": "🏃"}, "relevanceScore": 0}},
    }))
    browser.set_script_timeout(30)
    browser.get(server.url + "/")
    result = browser.execute_async_script(SCRIPT, ids, NOW)
    assert "error" not in result, result.get("error")
    assert len(result) == 3 * 5
    for key, both in result.items():
        assert both["templated"], f"{key}: the page found no template"
        assert both["server"] == both["page"], f"{key}\nserver: {both['server']}\npage:   {both['page']}"
    # The fixed clock is shown, not the wall clock: 12:00:20 of a 12:00–12:01:10 timer; paused at 12:00:10.
    assert '"0:50"' in result["yoga/lock-screen"]["page"]
    assert '"19:50"' in result["paused/compact"]["page"]
    assert '"12:00 – 12:01"' in result["yoga/minimal"]["page"]


def test_workout_lock_screen_is_name_countdown_icon_then_the_slogan(server, browser):
    ids = run(start_activities(server.ws_url, {
        "yoga": {"attributes": {"workout": "yoga"}, "content": timer(f"{DAY}T12:00:00Z", f"{DAY}T12:01:10Z")}}))
    browser.get(f"{server.url}/activities/{ids['yoga']}/render/lock-screen?now={NOW}")
    order = browser.execute_script("""
        const row = document.querySelector('.lock-screen .lock-row');
        return [...row.children].map((e) => e.classList.contains('workout-name') ? 'name:' + e.textContent
          : e.classList.contains('countdown') ? 'countdown:' + e.textContent
          : e.classList.contains('workout-icon') ? 'icon:' + e.localName : 'spacer');""")
    assert order == ["name:Yoga", "countdown:0:50", "icon:svg", "spacer"], order
    motto = browser.execute_script("""
        const m = document.querySelector('.lock-screen .motto'), s = getComputedStyle(m);
        return [m.textContent, s.fontStyle, s.fontSize, s.fontFamily];""")
    assert motto[0] == "Keep it going!!!" and motto[1] == "italic" and motto[2] == "14px" and "Georgia" in motto[3], motto
    name = browser.execute_script("""
        const s = getComputedStyle(document.querySelector('.lock-screen .workout-name'));
        return [s.fontStyle, s.fontWeight, s.fontSize, s.fontFamily];""")
    assert name[0] == "italic" and name[1] == "700" and name[2] == "24px" and "Georgia" in name[3], name


def test_workout_minimal_shows_the_date_range(server, browser):
    ids = run(start_activities(server.ws_url, {
        "yoga": {"attributes": {"workout": "yoga"}, "content": timer(f"{DAY}T12:00:00Z", f"{DAY}T12:01:10Z")}}))
    browser.get(f"{server.url}/activities/{ids['yoga']}/render/minimal?now={NOW}")
    assert browser.find_element("css selector", ".island-minimal .date-range").text.replace("\n", " ") == "12:00 – 12:01"


def test_a_broken_template_is_logged_and_its_kind_falls_back_to_the_generated_layout(start_server, tmp_path):
    import shutil
    import urllib.error
    import urllib.request
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    shutil.copytree(repo / "Public", tmp_path / "Public")
    shutil.copytree(repo / "Kinds", tmp_path / "Kinds")
    (tmp_path / "Kinds" / "workout" / "lock-screen.html").write_text("<p>\n  {{#workout}}never closed</p>\n")
    srv = start_server(public=tmp_path / "Public")

    def status(path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(srv.url + path, timeout=5) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    # The whole kind falls back to its generated layout, which the page is served too (both sides draw it).
    for presentation in ("lock-screen", "compact"):
        code, text = status(f"/kinds/workout/templates/{presentation}")
        assert code == 200 and "Generated from the declaration" in text, (presentation, text)
    code, text = status("/kinds/emoji/templates/lock-screen")
    assert code == 200 and 'data-kind="emoji"' in text               # the other kinds keep their templates
    ids = run(start_activities(srv.ws_url, {
        "yoga": {"attributes": {"workout": "yoga"}, "content": timer(f"{DAY}T12:00:00Z", f"{DAY}T12:01:10Z")}}))
    code, document = status(f"/activities/{ids['yoga']}/render/lock-screen?now={NOW}")
    assert code == 200 and "la-frame" in document and ">Yoga<" in document and ">0:50<" in document
    assert "lock-screen.html:2:3" in srv.output(), srv.output()[-2000:]
    assert status("/healthz")[0] == 200


def test_page_ticker_clamps_at_zero_and_freezes_while_paused(server, browser):
    browser.get(server.url + "/")
    texts = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import("/js/kind-fragment.js").then(({ tickCountdowns }) => {
          const root = document.createElement("div");
          root.innerHTML = '<span data-countdown="workoutTimer"></span>';
          const at = (iso) => Date.parse(iso);
          const running = { activityState: "active", content: { state: { workoutTimer:
            { start: "2026-12-03T12:00:00Z", end: "2026-12-03T12:01:10Z" } } } };
          const paused = { activityState: "active", content: { state: { workoutTimer:
            { start: "2026-12-03T12:00:00Z", end: "2026-12-03T12:01:10Z" }, pausedAt: "2026-12-03T12:00:30Z" } } };
          const out = [];
          for (const [activity, now] of [[running, "2026-12-03T12:00:20.5Z"], [running, "2026-12-03T12:05:00Z"],
                                         [paused, "2026-12-03T12:00:50Z"], [running, "2026-12-03T11:00:00Z"]]) {
            tickCountdowns(root, activity, at(now));
            out.push(root.textContent);
          }
          done(out);
        }, (error) => done(String(error)));""")
    # Rounded up; clamped at 0:00; frozen at pausedAt; the whole length before it starts.
    assert texts == ["0:50", "0:00", "0:40", "1:10"], texts

"""One markup, two renderers, on the live dashboard (issue 17): a kind that is none of ours, an interval workout
declared in a folder given with `serve --kinds DIR`, started over WebSocket, shows on the dashboard in all five
presentations (Lock Screen, Dynamic Island compact / minimal / expanded, and small) drawn from its own templates
(minimal has none: the generated layout, in the renderer's frame), and each of the dashboard's fragments equals the server's
static rendering of the same activity at the same content. It follows an update and the end; the expanded
template's STOP link (`<a data-action="end">`) ends its activity from the keyboard, without navigating.

The comparison reuses test_render_parity.py's canonical form; what differs by the instant each side rendered at
is left out: the countdown's text (`[data-countdown]`, ticking) and the `m:ss` in the accessible summary.
"""
from __future__ import annotations

import json
import re
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from test_declared_kinds import ATTRIBUTES_SWIFT
from test_page import assert_clean_console, browser, open_dashboard, wait_for  # noqa: F401 (browser: a fixture)
from support import iso_s as iso
from test_render_parity import CANON
from wsclient import connect, recv_until, request, run

PRESENTATIONS = ["lock-screen", "compact", "minimal", "expanded", "small"]

KIND_JSON = {
    "name": "interval", "label": "Intervals", "swiftNames": ["IntervalWorkoutAttributes"],
    "countdown": "interval", "title": "{{athlete}}: {{plan.label}}", "fallbackIcon": "workout",
    "enums": {
        "plan": [{"value": "5x5", "label": "Five by five", "icon": "aerobics"},
                 {"value": "pyramid", "label": "Pyramid", "icon": "yoga"},
                 {"value": "tabata", "label": "Tabata", "icon": "jogging"}],
        "phase": [{"value": "warm-up", "label": "Warm-up", "icon": "yoga"},
                  {"value": "work", "label": "Work", "icon": "jogging"},
                  {"value": "rest", "label": "Rest", "icon": "timer"}],
    },
}

ROOT = ('data-activity-id="{{activity.id}}" data-activity-state="{{activity.state}}"'
        '{{#activity.paused}} data-paused="true"{{/activity.paused}} aria-label="{{activity.summary}}"')

TEMPLATES = {  # no minimal.html: the generated layout
    "lock-screen": f"""{{{{! An interval workout on the Lock Screen: icon, text, countdown (the frame's three columns). }}}}
<article class="lock-screen kind-interval" {ROOT}>
  <i class="interval-icon workout-icon" data-icon="{{{{phase.icon}}}}"></i>
  <div class="interval-text">
    <h3 class="interval-athlete workout-name">{{{{athlete}}}} · {{{{plan.label}}}}</h3>
    <span class="interval-stats"><span class="heart-rate">{{{{heartRate}}}} bpm</span> <span class="distance">{{{{distance}}}} km</span> <span class="phase">{{{{phase.label}}}}</span>{{{{#note}}}} <span class="note">{{{{note}}}}</span>{{{{/note}}}}</span>
  </div>
  <span class="countdown" role="timer" data-countdown="interval">{{{{interval.countdown}}}}</span>
  {{{{#activity.badge}}}}<span class="badge">{{{{activity.badge}}}}</span>{{{{/activity.badge}}}}
</article>
""",
    "compact": f"""<div class="island-compact kind-interval" role="group" {ROOT}>
  <span class="compact-leading heart-rate">{{{{heartRate}}}}</span>
  <span class="camera" aria-hidden="true"></span>
  <span class="compact-trailing countdown" role="timer" data-countdown="interval">{{{{interval.countdown}}}}</span>
</div>
""",
    "expanded": f"""<div class="island-expanded kind-interval" role="group" {ROOT}>
  <i class="expanded-leading" data-icon="{{{{plan.icon}}}}"></i>
  <span class="expanded-center interval-athlete">{{{{athlete}}}} ({{{{phase.label}}}})</span>
  <span class="expanded-trailing"><span class="countdown" role="timer" data-countdown="interval">{{{{interval.countdown}}}}</span></span>
  <span class="expanded-bottom"><a class="island-stop" href="interval://stop" data-action="end"><i data-icon="xmark"></i> STOP</a></span>
</div>
""",
    "small": f"""<div class="activity-small kind-interval" role="group" {ROOT}>
  <span class="small-leading"><span class="heart-rate">{{{{heartRate}}}} bpm</span></span>
  <span class="countdown" role="timer" data-countdown="interval">{{{{interval.countdown}}}}</span>
</div>
""",
}

# The dashboard's fragments and the server's static renderings of one activity, in canonical form.
SCRIPT = CANON + """
const [id, presentations] = arguments;
const done = arguments[arguments.length - 1];
function reduced(element) {
  const copy = element.cloneNode(true);
  for (const c of copy.querySelectorAll("[data-countdown]")) c.textContent = "#";  // ticking: not compared
  return canon(copy).replace(/\\d+:\\d\\d(:\\d\\d)?/g, "#");                      // the summary's time left
}
(async () => {
  const out = {};
  for (const presentation of presentations) {
    const host = presentation === "lock-screen"
      ? document.querySelector(`.lock-item[data-activity-id="${id}"] > .fragment`)
      : document.querySelector(`#island[data-activity-id="${id}"] .fragment[data-presentation="${presentation}"]`);
    const text = await (await fetch(`/activities/${id}/render/${presentation}`)).text();
    const main = new DOMParser().parseFromString(text, "text/html").querySelector("main");
    main.querySelector("h1.visually-hidden")?.remove();
    out[presentation] = { server: reduced(main.firstElementChild),
                          page: host?.firstElementChild ? reduced(host.firstElementChild) : null };
  }
  return out;
})().then(done, (error) => done({ error: String(error && error.stack || error) }));
"""


def write_kind(root: Path) -> Path:
    folder = root / "kinds" / "interval"
    folder.mkdir(parents=True)
    (folder / "Attributes.swift").write_text(ATTRIBUTES_SWIFT)
    (folder / "kind.json").write_text(json.dumps(KIND_JSON))
    for presentation, text in TEMPLATES.items():
        (folder / f"{presentation}.html").write_text(text)
    return folder.parent


def state(heart: int, phase: str, **extra) -> dict:
    now = datetime.now(timezone.utc).replace(microsecond=0)
    return {"heartRate": heart, "distance": 1.25, "phase": phase,
            "interval": {"start": iso(now), "end": iso(now + timedelta(minutes=4))}, **extra}


async def send(ws_url: str, message: dict) -> dict:
    async with connect(ws_url) as ws:
        await recv_until(ws, lambda m: m.get("type") == "snapshot")
        answer = await request(ws, {"requestId": "r", **message})
        assert answer["type"] == "ack", answer
        return answer


def api_activity(url: str, activity_id: str) -> dict | None:
    try:
        with urllib.request.urlopen(f"{url}/api/activities/{activity_id}", timeout=5) as response:
            return json.load(response)
    except urllib.error.HTTPError:
        return None


@pytest.fixture
def srv(start_server, tmp_path):
    return start_server("--kinds", str(write_kind(tmp_path)))


def fragments(driver, activity_id: str) -> dict:
    driver.set_script_timeout(20)
    result = driver.execute_async_script(SCRIPT, activity_id, PRESENTATIONS)
    assert "error" not in result, result.get("error")
    return result


def assert_same(driver, activity_id: str, when: str) -> dict:
    """Waits until every dashboard fragment equals the server's static rendering (the page may still be applying
    the event), then returns them."""
    last = {}

    def alike():
        nonlocal last
        last = fragments(driver, activity_id)
        return all(v["page"] is not None and v["page"] == v["server"] for v in last.values()) and last

    try:
        return wait_for(f"the dashboard's fragments to equal the static renderings ({when})", alike, timeout=6)
    except BaseException:
        for presentation, both in last.items():
            if both["page"] != both["server"]:
                print(f"{when} {presentation}\nserver: {both['server']}\npage:   {both['page']}")
        raise


def test_a_declared_kind_on_the_dashboard_renders_like_the_server(srv, browser):
    kinds = [k["name"] for k in json.load(urllib.request.urlopen(f"{srv.url}/kinds", timeout=5))["kinds"]]
    assert "interval" in kinds, kinds
    open_dashboard(browser, srv.url)
    aid = run(send(srv.ws_url, {"type": "start", "attributesType": "interval",
                                "attributes": {"athlete": "Ada", "plan": "5x5"},
                                "content": {"state": state(140, "work"), "relevanceScore": 0}}))["activityId"]

    # All five presentations, from the kind's templates (minimal: the generated layout).
    row = wait_for("the interval's Lock Screen", lambda: browser.find_element(
        By.CSS_SELECTOR, f'.lock-item[data-activity-id="{aid}"]'))
    wait_for("its template", lambda: row.find_elements(By.CSS_SELECTOR, ".lock-screen.kind-interval"))
    wait_for("the island", lambda: browser.find_element(By.ID, "island").get_attribute("data-activity-id") == aid)
    island = browser.find_element(By.ID, "island")
    for selector in (".island-compact.kind-interval", ".island-minimal.la-frame", ".island-expanded.kind-interval",
                     ".activity-small.kind-interval"):
        wait_for(selector, lambda s=selector: island.find_elements(By.CSS_SELECTOR, s))
    lock = row.find_element(By.CSS_SELECTOR, ".lock-screen")
    assert "Ada · Five by five" in lock.text, lock.text and "140 bpm" in lock.text and "Work" in lock.text
    wait_for("the phase's icon, inlined", lambda: lock.find_elements(By.CSS_SELECTOR, "svg.interval-icon"))  # the phase's icon, inlined
    minimal = island.find_element(By.CSS_SELECTOR, ".island-minimal")  # the generated layout: the countdown
    assert minimal.find_elements(By.CSS_SELECTOR, '[data-countdown="interval"]') and re.fullmatch(r"\d+:\d\d", minimal.text), minimal.text
    # A kind with a countdown gets the page's controls under its Lock Screen; they name its title (no "workout").
    assert row.find_element(By.CSS_SELECTOR, "button.control-pause").accessible_name == "Pause Ada: Five by five"
    # The countdown ticks on the dashboard.
    countdown = lock.find_element(By.CSS_SELECTOR, ".countdown")
    first = wait_for("a countdown", lambda: re.fullmatch(r"[34]:\d\d", countdown.text) and countdown.text)
    wait_for("the countdown to move", lambda: countdown.text != first, timeout=3)
    assert lock.is_displayed()  # the same element: ticking does not render the fragment again

    assert_clean_console(browser)  # the dashboard's own (parsing the static renderings below may log CSP notes)
    started = assert_same(browser, aid, "started")
    assert "la-frame" in started["minimal"]["page"] and "kind-interval" in started["expanded"]["page"]

    # An update: the dashboard follows, still as the server renders it.
    run(send(srv.ws_url, {"type": "update", "activityId": aid,
                          "content": {"state": state(171, "rest", note="last one"), "relevanceScore": 0}}))
    wait_for("the update", lambda: "171 bpm" in browser.find_element(
        By.CSS_SELECTOR, f'.lock-item[data-activity-id="{aid}"] .lock-screen').text)
    updated = assert_same(browser, aid, "updated")
    assert '"last one"' in updated["lock-screen"]["page"] and '"Rest"' in updated["lock-screen"]["page"]

    # The end (default dismissal: it stays, ended, its countdown frozen).
    run(send(srv.ws_url, {"type": "end", "activityId": aid, "dismissalPolicy": "default"}))
    wait_for("the ended state", lambda: browser.find_element(
        By.CSS_SELECTOR, f'.lock-item[data-activity-id="{aid}"]').get_attribute("data-activity-state") == "ended")
    ended = assert_same(browser, aid, "ended")
    assert '"Ended"' in ended["lock-screen"]["page"]
    assert not browser.find_element(By.CSS_SELECTOR, f'.lock-item[data-activity-id="{aid}"] .lock-actions').is_displayed()


def test_the_expanded_stop_link_ends_its_activity(srv, browser):
    open_dashboard(browser, srv.url)
    aid = run(send(srv.ws_url, {"type": "start", "attributesType": "interval",
                                "attributes": {"athlete": "Grace", "plan": "tabata"},
                                "content": {"state": state(120, "warm-up"), "relevanceScore": 0}}))["activityId"]
    link = wait_for("the expanded STOP link", lambda: browser.find_elements(
        By.CSS_SELECTOR, f'#island[data-activity-id="{aid}"] .island-expanded a.island-stop[data-action="end"]'))[0]
    page = browser.current_url
    link.send_keys(Keys.ENTER)  # keyboard: a link, focusable, Enter follows it (here: ends the activity)
    wait_for("the island to hide", lambda: browser.find_element(By.ID, "island").get_attribute("hidden") is not None)
    wait_for("the activity ended", lambda: (a := api_activity(srv.url, aid)) is None
             or a.get("activityState") in ("ended", "dismissed"))
    assert not browser.find_elements(By.CSS_SELECTOR, f'.lock-item[data-activity-id="{aid}"]')
    assert browser.current_url == page  # interval://stop was not followed
    assert browser.find_element(By.ID, "error").text == ""

    # Clicked with the pointer, on the built-in workout kind's template.
    browser.find_element(By.CSS_SELECTOR, 'button[data-workout="yoga"]').click()
    browser.find_element(By.ID, "start").click()
    wait_for("the workout's island", lambda: browser.find_elements(
        By.CSS_SELECTOR, "#island .island-expanded.kind-workout a.island-stop[data-action=end]"))[0].click()
    wait_for("the island to hide again", lambda: browser.find_element(By.ID, "island").get_attribute("hidden") is not None)
    assert browser.current_url == page
    assert_clean_console(browser)

"""The face of every kind (issue 27, items 1 and 2): three public-looking `ActivityAttributes` declarations
nobody here wrote (Tests/fixtures/kinds: a food-delivery tracker, a pizza delivery with a `ClosedRange<Date>`
and two `ActivityAttributes` structs, school sports results with nested structs, arrays and optionals) are
accepted by `kinds check`, started over WebSocket, and rendered by the server in all five presentations with
the generated layout inside the renderer's frame. Measured in Chromium: nothing is cut mid-line (a line
ellipsises, a field that does not fit is left out whole), every non-nil top-level value of the content state is
visible on the Lock Screen, the kind's colours are drawn, and `data-countdown` ticks in the static renderings
and on the dashboard alike. Waits for states, never for time."""
from __future__ import annotations

import json
import subprocess
from datetime import datetime, timedelta, timezone

import pytest
from selenium.webdriver.common.by import By

from face_support import FIXTURE_KINDS, MEASURE, PRESENTATIONS, VISIBLE_STATE, first, start_all
from test_page import assert_clean_console, browser, open_dashboard, wait_for  # noqa: F401 (browser: a fixture)
from wsclient import run


@pytest.fixture
def srv(start_server):
    return start_server("--kinds", str(FIXTURE_KINDS))


def test_kinds_check_accepts_the_three_declarations():
    from conftest import liveactivity_bin
    out = subprocess.run([str(liveactivity_bin()), "kinds", "check", str(FIXTURE_KINDS)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert [line.split("\t")[0] for line in out.stdout.splitlines()] == ["ok"] * 3, out.stdout


def test_every_presentation_shows_the_values_whole(srv, browser):
    ids = run(start_all(srv.ws_url, datetime.now(timezone.utc)))
    for kind, aid in ids.items():
        for presentation in PRESENTATIONS:
            browser.get(f"{srv.url}/activities/{aid}/render/{presentation}?theme=light")
            main = wait_for("the rendering", lambda: first(browser, "main"))
            measured = browser.execute_script(MEASURE, main)
            assert measured, f"{kind} {presentation}: no frame"
            assert measured["cut"] == [], f"{kind} {presentation}: cut mid-line: {measured['cut']}"
            assert measured["texts"], f"{kind} {presentation}: nothing visible"
            if presentation == "lock-screen":
                assert measured["frame"]["h"] <= 160.5, measured["frame"]          # iOS's maximum height
                visible = " | ".join(measured["texts"])
                for field, expected in VISIBLE_STATE[kind].items():
                    if expected == "countdown":
                        assert browser.find_elements(By.CSS_SELECTOR, f'[data-countdown="{field}"]'), (kind, field)
                    elif expected == "time":
                        assert browser.find_elements(By.CSS_SELECTOR, ".la-frame .label.time"), (kind, field)
                    else:
                        assert expected in visible, (kind, field, visible)
                assert "Attributes" not in visible and "T0" not in visible, visible  # no struct name, no ISO strings
            if presentation == "minimal":
                assert measured["frame"]["w"] <= 45.5, measured["frame"]            # iOS's minimal width
    # The kind's colours (kind.json's activityBackgroundTint): the card is drawn in them, text in white on it.
    browser.get(f"{srv.url}/activities/{ids['pizza-delivery']}/render/lock-screen?theme=light")
    colours = browser.execute_script("const s = getComputedStyle(document.querySelector('.la-frame'));"
                                     "return [s.backgroundColor, s.color];")
    assert colours == ["rgb(179, 38, 30)", "rgb(255, 255, 255)"], colours


def test_data_countdown_ticks_in_the_static_renderings(srv, browser):
    ids = run(start_all(srv.ws_url, datetime.now(timezone.utc)))
    for kind, field in (("food-delivery", "estimatedDeliveryTime"), ("pizza-delivery", "deliveryTimer")):
        browser.get(f"{srv.url}/activities/{ids[kind]}/render/lock-screen")
        countdown = browser.find_element(By.CSS_SELECTOR, f'[data-countdown="{field}"]')
        assert countdown.get_attribute("data-end"), "the live script needs the field's bounds"
        before = countdown.text
        wait_for(f"{kind}'s countdown to tick", lambda: countdown.text != before, timeout=3)
    # A template's own data-countdown on any date field ticks too (not only the kind's countdown, nor only .countdown).
    progress = browser.find_elements(By.CSS_SELECTOR, 'progress[data-progress="deliveryTimer"]')
    assert progress and int(progress[0].get_attribute("value")) > 0


def test_the_dashboard_draws_the_same_face_and_ticks(srv, browser):
    open_dashboard(browser, srv.url)
    ids = run(start_all(srv.ws_url, datetime.now(timezone.utc)))
    aid = ids["food-delivery"]
    row = wait_for("the delivery's Lock Screen", lambda: first(browser, f'.lock-item[data-activity-id="{aid}"] .lock-screen.la-frame'))
    measured = browser.execute_script(MEASURE, row)
    assert measured["cut"] == [], measured["cut"]
    assert "Your courier is on the way" in measured["texts"] and "Sam" in measured["texts"], measured["texts"]
    countdown = row.find_element(By.CSS_SELECTOR, '[data-countdown="estimatedDeliveryTime"]')
    before = wait_for("a countdown", lambda: countdown.text)
    wait_for("the page's countdown to tick", lambda: countdown.text != before, timeout=3)
    # The pizza's colours reach the page too (on the fragment's host, through CSSOM: the CSP allows no style attributes).
    pizza = wait_for("the pizza's Lock Screen", lambda: first(browser, f'.lock-item[data-activity-id="{ids["pizza-delivery"]}"] .lock-screen.la-frame'))
    wait_for("the pizza's tint", lambda: browser.execute_script(
        "return getComputedStyle(arguments[0]).backgroundColor", pizza) == "rgb(179, 38, 30)")
    assert_clean_console(browser)


def test_kinds_new_writes_a_folder_of_the_generated_layout(tmp_path, start_server, browser):
    from conftest import liveactivity_bin
    cli = lambda *args: subprocess.run([str(liveactivity_bin()), "kinds", *args], capture_output=True, text=True, timeout=60)
    kinds = tmp_path / "kinds"
    out = cli("new", str(kinds / "meet"), "--from", str(FIXTURE_KINDS / "sports-results" / "Attributes.swift"))
    assert out.returncode == 0, out.stderr
    written = sorted(p.name for p in (kinds / "meet").iterdir())
    assert written == sorted(["Attributes.swift", "kind.json", "lock-screen.html", "compact.html", "minimal.html",
                              "expanded.html", "small.html"]), written
    assert len(out.stdout.splitlines()) == 7
    kind = json.loads((kinds / "meet" / "kind.json").read_text())
    assert kind["name"] == "meet" and kind["label"] == "Meet results" and kind["swiftNames"] == ["MeetResultsAttributes"]
    assert {"value": "in_progress", "label": "In progress"} in kind["enums"]["eventStatus"]
    assert "data-countdown" in (kinds / "meet" / "minimal.html").read_text()
    # Overwrites nothing; two ActivityAttributes structs need --swift-name, which the message says.
    again = cli("new", str(kinds / "meet"), "--from", str(FIXTURE_KINDS / "sports-results" / "Attributes.swift"))
    assert again.returncode == 1 and "not empty" in again.stderr, again.stderr
    two = cli("new", str(kinds / "pizza"), "--from", str(FIXTURE_KINDS / "pizza-delivery" / "Attributes.swift"))
    assert two.returncode == 1 and "--swift-name" in two.stderr, two.stderr
    ok = cli("new", str(kinds / "pizza"), "--from", str(FIXTURE_KINDS / "pizza-delivery" / "Attributes.swift"),
             "--swift-name", "PizzaDeliveryAttributes")
    assert ok.returncode == 0, ok.stderr
    check = cli("check", str(kinds))
    assert check.returncode == 0 and check.stdout.count("ok\t") == 2, check.stdout + check.stderr
    # The server draws the folder's templates (its own now) in the frame: the enum label from kind.json.
    srv = start_server("--kinds", str(kinds))
    from face_support import payloads
    from wsclient import connect, recv_until, request

    async def go():
        async with connect(srv.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            body = payloads(datetime.now(timezone.utc))["sports-results"]
            ack = await request(ws, {"type": "start", "requestId": "m", "attributesType": "meet",
                                     "attributes": body["attributes"], "content": {"state": body["state"]}})
            assert ack["type"] == "ack", ack
            return ack["activityId"]
    aid = run(go())
    browser.get(f"{srv.url}/activities/{aid}/render/lock-screen?theme=light")
    measured = browser.execute_script(MEASURE, first(browser, "main"))
    assert measured["cut"] == [] and "In progress" in measured["texts"] and "Maya Lopez" in measured["texts"], measured


def test_both_renderers_draw_the_same_face(srv, browser):
    """The page's renderer (kind-fragment.js over render-context.js's `display`) gives the server's markup for the
    generated layout and frame of every declared kind and presentation, at one fixed instant."""
    from test_render_parity import SCRIPT
    now = datetime.now(timezone.utc).replace(microsecond=0)
    ids = run(start_all(srv.ws_url, now))
    browser.get(srv.url + "/")
    browser.set_script_timeout(30)
    result = browser.execute_async_script(SCRIPT, ids, now.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert "error" not in result, result.get("error")
    assert len(result) == 3 * len(PRESENTATIONS)
    for name, both in result.items():
        assert both["templated"], name  # the generated layout is served as the kind's template
        assert both["server"] == both["page"], f"{name}\nserver: {both['server']}\npage:   {both['page']}"


def test_the_walkthrough_template_renders_whole(start_server, browser):
    """docs/TEMPLATES.md's walkthrough (examples/kinds/delivery: a Lock Screen and a compact template of a few
    lines, the rest generated) is drawn in the frame, in the kind's colours, nothing cut, its countdown ticking."""
    srv = start_server("--kinds", str(FIXTURE_KINDS.parents[2] / "examples" / "kinds"))
    from face_support import payloads
    from wsclient import connect, recv_until, request

    async def go():
        async with connect(srv.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            body = payloads(datetime.now(timezone.utc))["food-delivery"]
            ack = await request(ws, {"type": "start", "requestId": "d", "attributesType": "delivery",
                                     "attributes": body["attributes"], "content": {"state": body["state"]}})
            assert ack["type"] == "ack", ack
            return ack["activityId"]
    aid = run(go())
    for presentation in PRESENTATIONS:
        browser.get(f"{srv.url}/activities/{aid}/render/{presentation}?theme=light")
        measured = browser.execute_script(MEASURE, first(browser, "main"))
        assert measured and measured["cut"] == [], (presentation, measured)
        if presentation == "lock-screen":
            texts = " | ".join(measured["texts"])
            for expected in ("Luigi's Trattoria", "Your courier is on the way", "A-1042 · Margherita, Pepperoni +2", "Sam"):
                assert expected in texts, (expected, texts)
            colour = browser.execute_script("return getComputedStyle(document.querySelector('.la-frame')).backgroundColor")
            assert colour == "rgb(31, 59, 45)", colour
        if presentation == "expanded":  # kind.json's layout chose and ordered these fields
            texts = measured["texts"]
            assert texts.index("Items") < texts.index("Courier name") and "Restaurant name" not in texts, texts
        if presentation in ("lock-screen", "compact"):
            countdown = first(browser, '[data-countdown="estimatedDeliveryTime"]')
            before = countdown.text
            wait_for("the countdown to tick", lambda: countdown.text != before, timeout=3)


def test_a_date_that_comes_near_turns_into_a_countdown(srv, browser):
    """A date more than an hour away shows as a time of day; once it is within the hour it counts down, on the
    dashboard and in a live static rendering alike (each draws the activity again when a date comes near)."""
    from face_support import iso, payloads
    from wsclient import connect, recv_until, request

    async def start_far() -> str:
        now = datetime.now(timezone.utc)
        body = payloads(now)["food-delivery"]
        body["state"]["estimatedDeliveryTime"] = iso(now + timedelta(hours=1, seconds=3))
        async with connect(srv.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "far", "attributesType": "food-delivery",
                                     "attributes": body["attributes"], "content": {"state": body["state"]}})
            assert ack["type"] == "ack", ack
            return ack["activityId"]

    open_dashboard(browser, srv.url)
    aid = run(start_far())
    card = f'.lock-item[data-activity-id="{aid}"] .la-frame'
    wait_for("the dashboard's time of day", lambda: first(browser, f"{card} .label.time"))
    assert not first(browser, f'{card} [data-countdown="estimatedDeliveryTime"]')
    wait_for("the dashboard's countdown", lambda: first(browser, f'{card} [data-countdown="estimatedDeliveryTime"]'), timeout=8)

    aid = run(start_far())
    browser.get(f"{srv.url}/activities/{aid}/render/lock-screen")
    assert first(browser, ".la-frame .label.time") and not first(browser, '[data-countdown="estimatedDeliveryTime"]')
    wait_for("the static rendering's countdown", lambda: first(browser, '[data-countdown="estimatedDeliveryTime"]'), timeout=15)


def test_display_values_script_matches_the_shared_cases():
    """Public/js/display-values.js against the cases the Swift DisplayValues is unit-tested with (equal outputs)."""
    import shutil
    repo = FIXTURE_KINDS.parents[2]
    node = shutil.which("node")
    assert node, "node is needed to run the page's modules"
    script = (
        "import { readFileSync } from 'node:fs';"
        f"import {{ displayValues }} from '{repo / 'Public/js/display-values.js'}';"
        f"const cases = JSON.parse(readFileSync('{repo / 'Tests/fixtures/render-context/display-cases.json'}', 'utf8'));"
        "const bad = cases.filter((c) => JSON.stringify(displayValues(c.fields, c.context ?? {}, c.kind, c.nowMs, c.startMs,"
        " c.freezeMs, c.offsetMinutes)) !== JSON.stringify(c.expected)).map((c) => c.name);"
        "console.log(JSON.stringify({count: cases.length, bad}));"
    )
    out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["count"] >= 3 and result["bad"] == [], result


def test_an_ended_card_shows_the_system_action_in_the_kinds_colour(srv, browser):
    """An ended activity's Lock Screen card keeps its content within 160 pt and shows the system's Clear button in
    kind.json's activitySystemActionForegroundColor; both renderers draw it."""
    from test_render_parity import SCRIPT
    from wsclient import connect, recv_until, request
    now = datetime.now(timezone.utc).replace(microsecond=0)
    ids = run(start_all(srv.ws_url, now))

    async def end(activity_id: str):
        async with connect(srv.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            ack = await request(ws, {"type": "end", "requestId": "e", "activityId": activity_id, "dismissalPolicy": "default"})
            assert ack["type"] == "ack", ack
    run(end(ids["pizza-delivery"]))
    browser.get(f"{srv.url}/activities/{ids['pizza-delivery']}/render/lock-screen?theme=light")
    measured = browser.execute_script(MEASURE, first(browser, "main"))
    assert measured["cut"] == [] and measured["frame"]["h"] <= 160.5, measured
    action = first(browser, ".la-frame > .system-action")
    assert action and action.text == "Clear"
    assert browser.execute_script("return getComputedStyle(arguments[0]).color", action) == "rgb(255, 255, 255)"
    browser.get(srv.url + "/")
    browser.set_script_timeout(30)
    later = datetime.now(timezone.utc).replace(microsecond=0)
    result = browser.execute_async_script(SCRIPT, {"pizza": ids["pizza-delivery"]}, later.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert "error" not in result, result.get("error")
    both = result["pizza/lock-screen"]
    assert both["server"] == both["page"] and "Clear" in both["page"], both


def test_kinds_new_takes_the_folder_names_kinds_check_takes_and_names_a_missing_file(tmp_path):
    """`kinds new` accepts a Swift-like folder name (`DeliveryTracker`), as `kinds check` and the server do (it
    refused capitals), and a missing `--from` file is "no such file" (it said "cannot be read as UTF-8 text").
    Found by the new-user trial."""
    from support import liveactivity_bin
    cli = lambda *args: subprocess.run([str(liveactivity_bin()), "kinds", *args], capture_output=True, text=True, timeout=60)
    source = FIXTURE_KINDS / "food-delivery" / "Attributes.swift"
    made = cli("new", str(tmp_path / "DeliveryTracker"), "--from", str(source))
    assert made.returncode == 0, made.stderr
    check = cli("check", str(tmp_path))
    assert check.returncode == 0 and "ok\t" in check.stdout, check.stdout + check.stderr
    missing = cli("new", str(tmp_path / "other"), "--from", str(tmp_path / "nowhere.swift"))
    assert missing.returncode == 1 and "no such file" in missing.stderr, missing.stderr
    bad = cli("new", str(tmp_path / "no good"), "--from", str(source))
    assert bad.returncode == 1 and "wire name" in bad.stderr, bad.stderr


def test_a_rendering_title_does_not_repeat_the_kinds_label(tmp_path, start_server):
    """A kind whose kind.json lists enums (as `kinds new` writes it) and whose title is its label: the page title is
    "Meet results · Lock Screen", not "Meet results meet results · …". From the new-user trial ("Ride ride")."""
    import re
    import urllib.request
    from support import liveactivity_bin
    from face_support import payloads
    from wsclient import connect, recv_until, request, run
    kinds = tmp_path / "kinds"
    made = subprocess.run([str(liveactivity_bin()), "kinds", "new", str(kinds / "meet"), "--from",
                           str(FIXTURE_KINDS / "sports-results" / "Attributes.swift")], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    srv = start_server("--kinds", str(kinds), "--memory")
    body = payloads(datetime.now(timezone.utc))["sports-results"]

    async def go() -> str:
        async with connect(srv.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "m", "attributesType": "meet",
                                     "attributes": body["attributes"], "content": {"state": body["state"]}})
            assert ack["type"] == "ack", ack
            return ack["activityId"]
    aid = run(go())
    with urllib.request.urlopen(f"{srv.url}/activities/{aid}/render/lock-screen") as r:
        title = re.search(r"<title>(.*?)</title>", r.read().decode()).group(1)
    assert title.startswith("Meet results · "), title

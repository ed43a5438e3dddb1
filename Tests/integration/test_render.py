"""Static renderings (GET /activities/{id}/render/{presentation}, GET /gallery) and the dashboard's accessibility.

- Visual regression in headless Chromium: every presentation x workout x state of the gallery (synthetic
  activities) and of real activities created over the WebSocket with explicit content dates, all rendered at a
  fixed instant (`?now=`, never the wall clock), compared with the PNGs in Tests/visual/reference/ with a small
  per-pixel tolerance. A mismatch writes the actual image and a diff image to Tests/artifacts/visual/.
  `UPDATE_REFERENCE=1 pytest Tests/integration/test_render.py` rewrites the references.
- The renderings fetched with JavaScript off (plain urllib, and Chromium with scripts disabled): name and
  remaining time are in the text; no external requests.
- The dashboard (with its History panel), the push inspector and a share link's page checked with axe-core
  4.12 (from the axe-playwright-python wheel, injected through Selenium): no violations of critical or
  serious impact. Keyboard use: test_keyboard.py.
"""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone
from io import BytesIO
from pathlib import Path

import pytest

os.environ.setdefault("SE_OFFLINE", "true")  # before selenium is imported: Selenium Manager must not go online

from PIL import Image, ImageChops  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from support import http_get  # noqa: E402
from wsclient import connect, recv_until, run, send_json  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "Tests" / "visual" / "reference"
ARTIFACTS = Path(os.environ.get("LIVEACTIVITY_ARTIFACTS", REPO / "Tests" / "artifacts")) / "visual"
UPDATE = os.environ.get("UPDATE_REFERENCE") == "1"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# A fixed time of day two days after the tests run: later than they run, so the server keeps the activities
# running, and inside the window of dates the server accepts (at most 366 days ahead, docs/PROTOCOL.md).
DAY = (datetime.now(timezone.utc) + timedelta(days=2)).strftime("%Y-%m-%d")
NOW = f"{DAY}T12:00:00Z"
WORKOUTS = ["jogging", "aerobics", "yoga"]
STATES = ["active", "stale", "paused", "pending", "ended", "long-timer"]
PRESENTATIONS = ["lock-screen", "compact", "minimal", "expanded"]
# A pixel "differs" when a channel moves by more than CHANNEL_TOLERANCE; an image fails when more than
# PIXEL_FRACTION of its pixels differ (anti-aliasing noise stays far below both).
CHANNEL_TOLERANCE = 24
PIXEL_FRACTION = 0.002


# -- fixtures -------------------------------------------------------------------------------------

def _driver(scripts: bool = True) -> webdriver.Chrome:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (Path(path).exists() or shutil.which(path)):
            pytest.skip(f"{path} not installed (apt-get install chromium chromium-driver)")
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-extensions",
                "--no-first-run", "--password-store=basic", "--hide-scrollbars", "--force-color-profile=srgb",
                "--font-render-hinting=none"):
        options.add_argument(arg)
    if not scripts:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(15)
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    return driver


@pytest.fixture
def browser():
    driver = _driver()
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def browser_without_scripts():
    driver = _driver(scripts=False)
    try:
        yield driver
    finally:
        driver.quit()


# -- helpers --------------------------------------------------------------------------------------

def get(url: str, token: str | None = None) -> tuple[int, dict[str, str], str]:
    r = http_get(url, headers={"Authorization": f"Bearer {token}"} if token else {}, timeout=5)
    return r.status, r.headers, r.text()


def visible_text(document: str) -> str:
    """The text a browser without scripts or styles shows (tags, <style> and <script> removed)."""
    body = re.sub(r"(?is)<(style|script)\b.*?</\1>", " ", document)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"(?s)<[^>]+>", " ", body))).strip()


def compare(name: str, png: bytes) -> str | None:
    """Compares a screenshot with its reference; returns a failure message, or None when it matches."""
    reference = REFERENCE / f"{name}.png"
    actual = Image.open(BytesIO(png)).convert("RGB")
    if UPDATE or not reference.exists():
        if not UPDATE:
            return f"{name}: no reference {reference.relative_to(REPO)} (run with UPDATE_REFERENCE=1 to create it)"
        reference.parent.mkdir(parents=True, exist_ok=True)
        actual.save(reference, optimize=True)
        return None
    expected = Image.open(reference).convert("RGB")
    (ARTIFACTS / name).parent.mkdir(parents=True, exist_ok=True)
    resized = expected.size != actual.size
    if resized:  # compare on a common canvas, so the diff image shows what moved
        size = (max(expected.width, actual.width), max(expected.height, actual.height))
        expected, actual = (_on_canvas(image, size) for image in (expected, actual))
    diff = ImageChops.difference(expected, actual)
    red, green, blue = (band.point(lambda v: 255 if v > CHANNEL_TOLERANCE else 0) for band in diff.split())
    mask = ImageChops.lighter(ImageChops.lighter(red, green), blue)  # 255 where any channel is off
    bad = mask.histogram()[255]
    if resized or bad > PIXEL_FRACTION * actual.size[0] * actual.size[1]:
        actual.save(ARTIFACTS / f"{name}-actual.png")
        highlight = expected.copy()
        highlight.paste((255, 0, 255), mask=mask)
        highlight.save(ARTIFACTS / f"{name}-diff.png")
        what = "size changed" if resized else f"{bad} pixels differ"
        return f"{name}: {what} (see Tests/artifacts/visual/{name}-diff.png)"
    return None


def _on_canvas(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    canvas = Image.new("RGB", size, (255, 0, 255))
    canvas.paste(image, (0, 0))
    return canvas


def check_screenshots(shots: dict[str, bytes]) -> None:
    failures = [m for name, png in shots.items() if (m := compare(name, png))]
    assert not failures, f"{len(failures)} of {len(shots)} renderings differ:\n" + "\n".join(failures)


async def start_activities(ws_url: str, specs: dict[str, dict], token: str | None = None) -> dict[str, str]:
    """Starts activities (and pauses / ends as the spec says); returns name -> activity id."""
    ids = {}
    async with connect(ws_url + (f"?token={token}" if token else "")) as ws:
        await recv_until(ws, lambda m: m.get("type") == "snapshot")
        for name, spec in specs.items():
            body = {k: v for k, v in spec.items() if k not in ("then",)}
            await send_json(ws, {"type": "start", "requestId": name, **body})
            ack = await recv_until(ws, lambda m, n=name: m.get("requestId") == n and m["type"] in ("ack", "error"))
            assert ack["type"] == "ack", ack
            ids[name] = ack["activityId"]
            for step, extra in spec.get("then", []):
                rid = f"{name}-{step}"
                await send_json(ws, {"type": step, "requestId": rid, "activityId": ids[name], **extra})
                reply = await recv_until(ws, lambda m, r=rid: m.get("requestId") == r and m["type"] in ("ack", "error"))
                assert reply["type"] == "ack", reply
    return ids


def timer(start: str, end: str, stale: str | None = None) -> dict:
    return {"state": {"workoutTimer": {"start": start, "end": end}}, "staleDate": stale or end, "relevanceScore": 0}


# -- visual regression ----------------------------------------------------------------------------

@pytest.mark.parametrize("theme", ["light", "dark"])
def test_gallery_matches_reference_pngs(server, browser, theme):
    """Every presentation x workout x state of the gallery, at a fixed instant, against the reference PNGs."""
    browser.get(f"{server.url}/gallery?now={NOW}&theme={theme}")
    cases = [f"{w}-{s}" for w in WORKOUTS for s in STATES] + ["long-name"]
    if theme == "dark":
        cases = [c for c in cases if c.startswith("yoga-") or c == "long-name"]  # dark: one workout is enough
    shots = {}
    for case in cases:
        for presentation in PRESENTATIONS:
            figure = browser.find_element(By.ID, f"{case}-{presentation}")
            shots[f"gallery-{theme}/{case}-{presentation}"] = figure.screenshot_as_png
    assert browser.find_element(By.CSS_SELECTOR, "#yoga-long-timer-lock-screen .countdown").text == "1:02:03"
    assert browser.find_element(By.CSS_SELECTOR, "#jogging-paused-compact .countdown").text == "0:55"
    # Minimal is Text(workoutTimer): the date range, not a countdown.
    assert re.fullmatch(r"\d\d:\d\d – \d\d:\d\d", browser.find_element(By.CSS_SELECTOR, "#jogging-paused-minimal .date-range").text)
    check_screenshots(shots)


def test_live_activity_renderings_match_reference_pngs(server, browser):
    """Real activities with explicit dates, rendered at a fixed instant with ?now=, against the reference PNGs."""
    ids = run(start_activities(server.ws_url, {
        "active": {"attributes": {"workout": "jogging"},
                   "content": timer(f"{DAY}T11:59:40Z", f"{DAY}T12:00:50Z")},
        "stale": {"attributes": {"workout": "aerobics"},
                  "content": timer(f"{DAY}T11:59:00Z", f"{DAY}T12:00:30Z", stale=f"{DAY}T11:59:55Z")},
        "hour": {"attributes": {"workout": "yoga"},
                 "content": timer(f"{DAY}T11:59:00Z", f"{DAY}T13:02:03Z")},
    }))
    shots = {}
    for name, activity_id in ids.items():
        for presentation in PRESENTATIONS:
            browser.get(f"{server.url}/activities/{activity_id}/render/{presentation}?now={NOW}&theme=light")
            stage = browser.find_element(By.TAG_NAME, "main")
            assert stage.get_attribute("data-activity-state") == ("stale" if name == "stale" else "active")
            shots[f"render/{name}-{presentation}"] = stage.screenshot_as_png
    check_screenshots(shots)
    # Scale 2 doubles the size of what is drawn.
    sizes = {}
    for scale in (1, 2):
        browser.get(f"{server.url}/activities/{ids['active']}/render/compact?now={NOW}&scale={scale}")
        page = Image.open(BytesIO(browser.get_screenshot_as_png())).convert("RGB")
        background = Image.new("RGB", page.size, page.getpixel((page.width - 1, page.height - 1)))
        left, top, right, bottom = ImageChops.difference(page, background).getbbox()
        sizes[scale] = (right - left, bottom - top)  # the drawn island
    assert all(abs(2 * a - b) <= 3 for a, b in zip(sizes[1], sizes[2])), sizes


# -- text with scripts off ------------------------------------------------------------------------

def test_renderings_are_complete_without_javascript(server, browser_without_scripts):
    """Fetched with urllib and shown in Chromium with scripts disabled: name and remaining time are there."""
    ids = run(start_activities(server.ws_url, {
        "yoga": {"attributes": {"workout": "yoga"}, "content": timer(f"{DAY}T12:00:00Z", f"{DAY}T12:01:10Z")},
        "live": {"attributes": {"workout": "jogging"}, "durationSeconds": 600},
        "ended": {"attributes": {"workout": "aerobics"}, "durationSeconds": 600,
                  "then": [("end", {"dismissalPolicy": "default"})]},
    }))
    for presentation in PRESENTATIONS:
        status, headers, document = get(f"{server.url}/activities/{ids['yoga']}/render/{presentation}?now={DAY}T12:00:20Z")
        assert status == 200 and headers["content-type"].startswith("text/html")
        text = visible_text(document)
        # Minimal is Text(workoutTimer): the date range; the others count down.
        shown = "12:00 – 12:01" if presentation == "minimal" else "0:50"
        assert "Yoga" in text and shown in text, (presentation, text)
        # Self-contained: no scripts for a fixed instant, nothing loaded from anywhere. The one <link> is an
        # empty data: icon, which keeps browsers from asking for /favicon.ico (a request, and a CSP report).
        icon = '<link rel="icon" href="data:,">'
        assert document.count(icon) == 1, presentation
        document = document.replace(icon, "")
        assert "<script" not in document and "<link" not in document
        assert not re.search(r"""(?i)\b(src|href)\s*=|url\(|@import""", re.sub(r"(?s)/\*.*?\*/", "", document)), presentation
        assert "frame-ancestors" not in headers["content-security-policy"] and "x-frame-options" not in headers

    # Live (no ?now=): the server's own clock; the countdown text is there before any script runs.
    status, headers, document = get(f"{server.url}/activities/{ids['live']}/render/lock-screen")
    assert status == 200 and "'nonce-" in headers["content-security-policy"]
    browser_without_scripts.get(f"{server.url}/activities/{ids['live']}/render/lock-screen?theme=dark")
    body = browser_without_scripts.find_element(By.TAG_NAME, "body").text
    assert "Jogging" in body and re.search(r"\b(10:00|9:[45]\d)\b", body), body

    status, _, document = get(f"{server.url}/activities/{ids['ended']}/render/lock-screen")
    assert status == 200 and 'data-activity-state="ended"' in document and "Ended" in visible_text(document)

    status, _, document = get(f"{server.url}/activities/no-such-id/render/compact")
    assert status == 404 and "No Live Activity" in visible_text(document) and "no-such-id" in document
    status, _, _ = get(f"{server.url}/activities/{ids['yoga']}/render/sideways")
    assert status == 404
    status, _, document = get(f"{server.url}/activities/{ids['yoga']}/render/compact?now=yesterday")
    # The page names the parameter, not a missing activity.
    assert status == 400 and "Bad request" in visible_text(document), visible_text(document)
    assert 'now: expected an ISO-8601 date such as 2026-11-29T17:00:00Z, got "yesterday"' in visible_text(document)
    assert "There is no activity" not in visible_text(document)


def test_renderings_need_a_viewer_token_when_the_server_has_one(start_server):
    srv = start_server("--controller-token", "ctl-secret", "--viewer-token", "view-secret")
    ids = run(start_activities(srv.ws_url, {"j": {"attributes": {"workout": "jogging"}, "durationSeconds": 90}},
                               token="ctl-secret"))
    url = f"{srv.url}/activities/{ids['j']}/render/expanded"
    assert get(url)[0] == 401
    assert get(url + "?token=wrong")[0] == 401
    status, _, document = get(url + "?token=view-secret")  # works in an iframe src
    assert status == 200 and "Jogging" in visible_text(document)
    assert get(url, token="view-secret")[0] == 200
    assert get(f"{srv.url}/gallery")[0] == 200  # synthetic data only: no token needed


def test_live_rendering_runs_its_script_under_its_csp(server, browser):
    """With scripts on, the nonce'd script ticks the countdown, and the console has no CSP violation."""
    ids = run(start_activities(server.ws_url, {"a": {"attributes": {"workout": "aerobics"}, "durationSeconds": 120}}))
    browser.get(f"{server.url}/activities/{ids['a']}/render/compact")
    countdown = browser.find_element(By.CSS_SELECTOR, ".countdown")
    first = countdown.text
    for _ in range(40):
        if countdown.text != first:
            break
        browser.execute_script("return 0")
        import time
        time.sleep(0.05)
    assert countdown.text != first and re.match(r"^1:[0-5]\d$", countdown.text), (first, countdown.text)
    severe = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    assert not severe, severe


# -- accessibility --------------------------------------------------------------------------------

def axe_source() -> str:
    try:
        import axe_playwright_python
    except ImportError:
        pytest.skip("axe-playwright-python not installed (pip install -r Tests/integration/requirements.txt)")
    return (Path(axe_playwright_python.__file__).parent / "axe.min.js").read_text()


def run_axe(driver) -> list[dict]:
    driver.execute_script(axe_source())
    result = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ['violations']}).then((r) => done(JSON.stringify(r.violations)))
          .catch((e) => done(JSON.stringify([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}])));
    """)
    return [v for v in json.loads(result) if v.get("impact") in ("critical", "serious")]


def describe(violations: list[dict]) -> str:
    return "\n".join(f"{v['id']} ({v['impact']}): {v['help']} -> "
                     + "; ".join(n.get("target", [""])[0] if n.get("target") else "" for n in v["nodes"][:5])
                     for v in violations)


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_dashboard_has_no_serious_accessibility_violations(server, browser, scheme):
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
    run(start_activities(server.ws_url, {
        "y": {"attributes": {"workout": "yoga"}, "durationSeconds": 600, "relevanceScore": 10},
        "p": {"attributes": {"workout": "jogging"}, "durationSeconds": 300, "then": [("pause", {})]},
    }))
    browser.get(server.url + "/")
    for _ in range(100):
        if browser.find_elements(By.CSS_SELECTOR, ".lock-screen") and browser.find_element(By.ID, "island").is_displayed():
            break
        import time
        time.sleep(0.05)
    violations = run_axe(browser)
    assert not violations, describe(violations)


def test_gallery_and_renderings_have_no_serious_accessibility_violations(server, browser):
    ids = run(start_activities(server.ws_url, {"y": {"attributes": {"workout": "yoga"}, "durationSeconds": 600}}))
    for url in (f"/gallery?now={NOW}&theme=dark", f"/gallery?now={NOW}&theme=light",
                f"/activities/{ids['y']}/render/lock-screen?theme=dark",
                f"/activities/{ids['y']}/render/expanded?theme=light"):
        browser.get(server.url + url)
        violations = run_axe(browser)
        assert not violations, url + "\n" + describe(violations)


def wait_until(what: str, probe, timeout: float = 10.0):
    """Polls `probe` until it returns something truthy (a state, not a fixed time); fails with `what`."""
    import time
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}", pytrace=False)
        time.sleep(0.05)


@pytest.mark.parametrize("scheme", ["dark", "light"])
def test_history_panel_has_no_serious_accessibility_violations(server, browser, scheme):
    """Issue 19, item 4: the History panel with entries (table, chart and its table), and an emoji activity."""
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
    now = datetime.now(timezone.utc)
    from support import iso_ms0 as iso_ms
    run(start_activities(server.ws_url, {
        "stopped": {"attributes": {"workout": "yoga"}, "durationSeconds": 600, "then": [("end", {})]},
        "gone": {"attributes": {"workout": "jogging"}, "durationSeconds": 300,
                 "then": [("end", {"dismissalPolicy": "immediate"})]},
        "emoji": {"attributesType": "emoji", "attributes": {"startTime": iso_ms(now), "name": "Morning run",
                                                            "endTime": iso_ms(now + timedelta(hours=1))},
                  "content": {"state": {"emoji": "🏃"}}, "then": [("end", {})]},
        "running": {"attributes": {"workout": "aerobics"}, "durationSeconds": 900},
    }))
    browser.get(server.url + "/")
    wait_until("three history rows and the chart's table", lambda: browser.execute_script(
        "return document.querySelectorAll('#history-rows tr').length === 3"
        " && document.querySelectorAll('#history-chart-rows tr').length > 0"
        " && document.querySelectorAll('.lock-screen').length === 3"))
    violations = run_axe(browser)
    assert not violations, describe(violations)


def test_inspector_and_share_page_have_no_serious_accessibility_violations(server, browser):
    """Issue 19, item 4: the push inspector (records, an opened record, an activity's timeline) and a share
    link's page, in both colour schemes."""
    ids = run(start_activities(server.ws_url, {
        "y": {"attributes": {"workout": "yoga"}, "durationSeconds": 600, "then": [("pause", {}), ("resume", {})]},
    }))

    async def share() -> str:
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m.get("type") == "snapshot")
            await send_json(ws, {"type": "share", "requestId": "sh", "activityId": ids["y"], "expiresIn": 600})
            reply = await recv_until(ws, lambda m: m.get("requestId") == "sh")
            return reply["shares"][0]["url"]

    share_path = run(share())
    for scheme in ("dark", "light"):
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
        browser.get(server.url + "/inspector")
        wait_until("the inspector's records", lambda: browser.execute_script(
            "return document.querySelectorAll('#inspections li.inspection').length >= 3"))
        browser.find_element(By.CSS_SELECTOR, "#inspections li.inspection button.summary").click()
        browser.execute_script("const s = document.getElementById('filter-activity'); s.value = arguments[0];"
                               "s.dispatchEvent(new Event('change'))", ids["y"])
        wait_until("the timeline", lambda: browser.execute_script(
            "return !document.getElementById('timeline').hidden"
            " && document.querySelectorAll('#timeline .timeline-event').length > 0"))
        violations = run_axe(browser)
        assert not violations, f"/inspector ({scheme})\n" + describe(violations)

        browser.get(server.url + share_path)
        wait_until("the shared Lock Screen", lambda: browser.find_elements(By.CSS_SELECTOR, ".lock-screen .countdown"))
        violations = run_axe(browser)
        assert not violations, f"{share_path} ({scheme})\n" + describe(violations)


def test_an_unknown_presentation_is_named_not_taken_for_an_unknown_activity(server):
    ids = run(start_activities(server.ws_url, {"yoga": {"attributes": {"workout": "yoga"}, "content": timer(f"{DAY}T12:00:00Z", f"{DAY}T12:01:10Z")}}))
    request = urllib.request.Request(f"{server.url}/activities/{ids['yoga']}/render/bogus")
    try:
        urllib.request.urlopen(request, timeout=5)
        raise AssertionError("an unknown presentation was rendered")
    except urllib.error.HTTPError as error:
        page = html.unescape(error.read().decode())
        assert error.code == 404
    assert 'There is no presentation "bogus"' in page and "lock-screen, compact, minimal, expanded, small" in page, page
    assert "There is no activity" not in page

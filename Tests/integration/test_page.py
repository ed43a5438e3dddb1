"""The dashboard (Public/) in real headless Chromium against the real server.

Uses Debian's /usr/bin/chromium and /usr/bin/chromedriver through Selenium 4 (no network: SE_OFFLINE=true).
Screenshots go to Tests/artifacts/ (dashboard.png, with a running Yoga workout, is used in the README).

The DOM contract checked here is documented in Public/index.html and Public/js/view.js:
picker `button[data-workout][aria-pressed]`, `input#duration`, `button#start`, `button#stop`,
`#status[data-state][data-extensions]`, `#error[role=alert]`, `.lock-item[data-activity-id][data-activity-state]`
(the row: the kind's rendered `.lock-screen` with `.workout-name` and `.countdown`, then the page's controls), and
`#island[data-activity-id]` holding the kind's rendered `.island-compact`, `.island-minimal`, `.island-expanded`
and `.activity-small` (the workout's minimal shows the date range, the others a `.countdown`) and the expanded
template's STOP link `a.island-stop[data-action=end]`.
"""
from __future__ import annotations

import os
import re
import shutil
import socket
import threading
import time
import urllib.request
from pathlib import Path
from typing import Callable, TypeVar

import pytest

os.environ.setdefault("SE_OFFLINE", "true")  # before selenium is imported: Selenium Manager must not go online

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402

from wsclient import connect, recv_until, run, send_json  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(os.environ.get("LIVEACTIVITY_ARTIFACTS",
                                Path(__file__).resolve().parents[2] / "Tests" / "artifacts"))
DESKTOP = {"width": 1280, "height": 820}
PHONE = {"width": 393, "height": 852}
COUNTDOWN_RE = re.compile(r"^\d+:[0-5]\d$")  # m:ss (the tests' workouts are shorter than an hour)

T = TypeVar("T")


# -- fixtures -------------------------------------------------------------------------------------

@pytest.fixture
def browser():
    """A headless Chromium with a 1280x820 viewport that keeps the browser console log."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (Path(path).exists() or shutil.which(path)):
            pytest.skip(f"{path} not installed (apt-get install chromium chromium-driver)")
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-extensions",
                "--no-first-run", "--password-store=basic"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(15)
    set_viewport(driver, **DESKTOP)
    try:
        yield driver
    finally:
        driver.quit()


def set_viewport(driver: WebDriver, width: int, height: int, mobile: bool = False) -> None:
    """Exact CSS viewport (window sizes are off by the browser UI; see platform-notes.md section 1)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


# -- helpers --------------------------------------------------------------------------------------

def wait_for(what: str, probe: Callable[[], T], timeout: float = 5.0, interval: float = 0.05) -> T:
    """Polls `probe` until it returns something truthy; fails with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while True:
        try:
            last = probe()
        except StaleElementReferenceException:
            last = None
        if last:
            return last
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what} (last value: {last!r})", pytrace=False)
        time.sleep(interval)


def wait_settled(driver: WebDriver, what: str, element, timeout: float = 5.0):
    """Waits until no CSS animation or transition runs on `element` or inside it, and returns the element.

    Read text, opacity or geometry of something that animates in (the alert banner's 0.35 s slide-in from
    above the viewport, the Lock Screen's opacity transition) only after this: mid-animation Selenium's
    `.text` leaves out the parts still outside the viewport or transparent, and computed styles are a frame
    of the animation. Waits for the animations' state (`Element.getAnimations({subtree: true})`), not for time.
    """
    script = ("return arguments[0].getAnimations({subtree: true})"
              ".every((a) => !a.pending && a.playState !== 'running')")
    wait_for(f"{what} to finish animating", lambda: driver.execute_script(script, element), timeout=timeout)
    return element


def css(driver: WebDriver, selector: str):
    return driver.find_elements(By.CSS_SELECTOR, selector)


def status_state(driver: WebDriver) -> str:
    return driver.find_element(By.ID, "status").get_attribute("data-state") or ""


def open_dashboard(driver: WebDriver, url: str) -> None:
    driver.get(url + "/")
    try:
        wait_for("#status[data-state=open]", lambda: status_state(driver) == "open", timeout=10)
    except pytest.fail.Exception:
        console = "\n".join(f"{e['level']} {e['message']}" for e in driver.get_log("browser"))
        status = driver.find_element(By.ID, "status").get_attribute("outerHTML")
        pytest.fail(f"the page did not connect within 10 s\n{status}\nconsole:\n{console}", pytrace=False)


def lock_screens(driver: WebDriver) -> list:
    return css(driver, ".lock-item")


def island_visible(driver: WebDriver) -> bool:
    island = driver.find_element(By.ID, "island")
    return island.get_attribute("hidden") is None and island.is_displayed()


def start_workout(driver: WebDriver, workout: str, duration: int | None = None) -> None:
    button = driver.find_element(By.CSS_SELECTOR, f'button[data-workout="{workout}"]')
    button.click()
    assert button.get_attribute("aria-pressed") == "true"
    others = css(driver, f'button[data-workout]:not([data-workout="{workout}"])')
    assert [b.get_attribute("aria-pressed") for b in others] == ["false", "false"]
    if duration is not None:
        field = driver.find_element(By.ID, "duration")
        field.clear()
        field.send_keys(str(duration))
    driver.find_element(By.ID, "start").click()


def severe_console_entries(driver: WebDriver, ignore: Callable[[str], bool] = lambda _m: False) -> list[dict]:
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE" and not ignore(e.get("message", ""))]


def assert_clean_console(driver: WebDriver) -> None:
    """No CSP violations, 404/415s, uncaught exceptions or failed WebSockets in the console."""
    severe = severe_console_entries(driver)
    assert not severe, "browser console has SEVERE entries:\n" + "\n".join(e["message"] for e in severe)


def screenshot(driver: WebDriver, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    driver.save_screenshot(str(path))
    return path


# -- tests ----------------------------------------------------------------------------------------

def test_start_yoga_shows_lock_screen_and_island(server, browser):
    """(1) START Yoga: a Lock Screen view and the island appear and count down in m:ss; (3) clean console."""
    open_dashboard(browser, server.url)
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "en"
    assert browser.title
    assert browser.find_element(By.ID, "error").get_attribute("role") == "alert"
    assert browser.find_element(By.ID, "duration").get_attribute("value") == "70"
    assert lock_screens(browser) == [] and not island_visible(browser)

    # Chromium must negotiate permessage-deflate with the server.
    extensions = browser.find_element(By.ID, "status").get_attribute("data-extensions") or ""
    assert "permessage-deflate" in extensions

    start_workout(browser, "yoga")
    [screen] = wait_for("one .lock-screen", lambda: lock_screens(browser))
    activity_id = screen.get_attribute("data-activity-id")
    assert activity_id
    assert screen.get_attribute("data-activity-state") == "active"
    assert "yoga" in screen.find_element(By.CSS_SELECTOR, ".workout-name").text.lower()
    assert "Keep it going!!!" in screen.text

    wait_for("the island", lambda: island_visible(browser))
    island = browser.find_element(By.ID, "island")
    assert island.get_attribute("data-activity-id") == activity_id
    for part in (".island-compact", ".island-expanded", ".activity-small"):
        assert island.find_elements(By.CSS_SELECTOR, f"{part} .countdown"), f"{part} has no .countdown"
    assert re.match(r"^\d\d:\d\d – \d\d:\d\d$", island.find_element(By.CSS_SELECTOR, ".island-minimal .date-range").text)
    assert "yoga" in island.find_element(By.CSS_SELECTOR, ".island-expanded .workout-name").text.lower()
    stop = island.find_element(By.CSS_SELECTOR, ".island-expanded a.island-stop[data-action=end]")
    assert stop.is_displayed()

    countdown = screen.find_element(By.CSS_SELECTOR, ".countdown")
    first = wait_for("a countdown", lambda: countdown.text)
    assert COUNTDOWN_RE.match(first), first
    assert first in ("1:10", "1:09", "1:08"), f"a 70 s workout should start near 1:10, shows {first}"
    second = wait_for("the countdown to change", lambda: countdown.text != first and countdown.text, timeout=3.0)
    assert COUNTDOWN_RE.match(second), second
    assert second < first  # same width m:ss, so string order is time order

    # The island's countdowns (compact, expanded, small) show the same time as the Lock Screen (within one tick).
    times = [e.text for e in island.find_elements(By.CSS_SELECTOR, ".countdown")]
    assert len(times) == 3 and all(COUNTDOWN_RE.match(t) for t in times), times

    # Geometry from the HIG table for a 393 pt phone (1 pt = 1 CSS px).
    rect = screen.find_element(By.CSS_SELECTOR, ".lock-screen").rect
    assert 330 <= rect["width"] <= 365 and rect["height"] <= 160, rect
    expanded = island.find_element(By.CSS_SELECTOR, ".island-expanded").rect
    assert 360 <= expanded["width"] <= 380 and 84 <= expanded["height"] <= 160, expanded
    minimal = island.find_element(By.CSS_SELECTOR, ".island-minimal").rect
    assert 36 <= minimal["width"] <= 46 and 36 <= minimal["height"] <= 38, minimal

    # The kinds' own styles apply on the dashboard as in the static renderings (Kinds/workout, workout.css):
    # the Lock Screen's name, countdown and icon share one row, in that order, above the slogan; the
    # expanded island's icons are drawn in their template's colour (indigo), not in the SVG's own black.
    layout = browser.execute_script("""
      const card = arguments[0].querySelector('.lock-screen');
      const box = (s) => card.querySelector(s).getBoundingClientRect();
      const [name, countdown, icon, motto] = ['.workout-name', '.countdown', '.workout-icon', '.motto'].map(box);
      const leading = document.querySelector('#island .island-expanded .expanded-leading');
      return {row: [name, countdown, icon].map((r) => Math.round(r.top + r.height / 2)), left: [name.left, countdown.left, icon.left],
              mottoTop: motto.top, rowBottom: Math.max(name.bottom, countdown.bottom, icon.bottom),
              stroke: leading.getAttribute('stroke'), color: getComputedStyle(leading).color};""", screen)
    assert max(layout["row"]) - min(layout["row"]) <= 8, layout
    assert layout["left"] == sorted(layout["left"]) and layout["mottoTop"] >= layout["rowBottom"] - 1, layout
    assert layout["stroke"] == "currentColor" and layout["color"] == "rgb(141, 139, 255)", layout

    set_viewport(browser, width=1280, height=440)  # just the content, for the README
    time.sleep(0.3)
    screenshot(browser, "dashboard.png")
    set_viewport(browser, **PHONE, mobile=True)
    time.sleep(0.3)
    screenshot(browser, "dashboard-phone.png")
    assert_clean_console(browser)


def test_island_stop_ends_that_activity(server, browser):
    """(2) The expanded island's STOP ends the activity: Lock Screen and island disappear."""
    open_dashboard(browser, server.url)
    start_workout(browser, "jogging", duration=30)
    [screen] = wait_for("one .lock-screen", lambda: lock_screens(browser))
    assert "jogging" in screen.find_element(By.CSS_SELECTOR, ".workout-name").text.lower()
    wait_for("the island", lambda: island_visible(browser))

    browser.find_element(By.CSS_SELECTOR, "#island .island-expanded a.island-stop[data-action=end]").click()
    wait_for("no .lock-screen", lambda: not lock_screens(browser))
    wait_for("the island to hide", lambda: not island_visible(browser))
    assert browser.find_element(By.ID, "island").get_attribute("hidden") is not None
    assert browser.find_element(By.ID, "error").text == ""
    assert_clean_console(browser)


def test_several_activities_order_and_stop_all(server, browser):
    """Newest first at equal relevance; the island follows the top one; STOP ends them all."""
    open_dashboard(browser, server.url)
    start_workout(browser, "aerobics")
    wait_for("one .lock-screen", lambda: len(lock_screens(browser)) == 1)
    time.sleep(0.05)  # distinct startDates (milliseconds)
    start_workout(browser, "jogging", duration=120)
    screens = wait_for("two .lock-screens", lambda: len(lock_screens(browser)) == 2 and lock_screens(browser))
    names = [s.find_element(By.CSS_SELECTOR, ".workout-name").text.lower() for s in screens]
    assert names == ["jogging", "aerobics"], names
    island = browser.find_element(By.ID, "island")
    assert island.get_attribute("data-activity-id") == screens[0].get_attribute("data-activity-id")

    browser.find_element(By.ID, "stop").click()
    wait_for("no .lock-screen", lambda: not lock_screens(browser))
    wait_for("the island to hide", lambda: not island_visible(browser))
    assert_clean_console(browser)


def test_other_clients_changes_relevance_and_alert(server, browser):
    """Activities started/updated by another client appear; higher relevanceScore goes first; alerts show."""
    open_dashboard(browser, server.url)
    start_workout(browser, "yoga")
    wait_for("one .lock-screen", lambda: len(lock_screens(browser)) == 1)

    async def other_client() -> str:
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m.get("type") == "snapshot")
            await send_json(ws, {"type": "start", "requestId": "t1", "attributes": {"workout": "aerobics"},
                                 "durationSeconds": 600, "relevanceScore": 50})
            ack = await recv_until(ws, lambda m: m.get("type") in ("ack", "error") and m.get("requestId") == "t1")
            assert ack["type"] == "ack", ack
            await send_json(ws, {"type": "update", "requestId": "t2", "activityId": ack["activityId"],
                                 "durationSeconds": 3700, "alert": {"title": "Halfway", "body": "Keep going"}})
            ack2 = await recv_until(ws, lambda m: m.get("type") in ("ack", "error") and m.get("requestId") == "t2")
            assert ack2["type"] == "ack", ack2
            return ack["activityId"]

    other_id = run(other_client())
    screens = wait_for("two .lock-screens", lambda: len(lock_screens(browser)) == 2 and lock_screens(browser))
    assert screens[0].get_attribute("data-activity-id") == other_id
    assert browser.find_element(By.ID, "island").get_attribute("data-activity-id") == other_id
    banner = wait_for("the alert banner", lambda: browser.find_element(By.ID, "banner").is_displayed()
                      and browser.find_element(By.ID, "banner"))
    wait_settled(browser, "the alert banner", banner)  # its title is above the viewport while it slides in
    assert "Halfway" in banner.text and "Keep going" in banner.text
    # 3700 s is more than an hour: h:mm:ss.
    countdown = screens[0].find_element(By.CSS_SELECTOR, ".countdown")
    wait_for("an h:mm:ss countdown", lambda: re.match(r"^1:0[01]:[0-5]\d$", countdown.text))
    assert_clean_console(browser)


def test_a_compressed_event_reaches_the_page(server, browser):
    """Chromium negotiates permessage-deflate (keeping its context, as browsers do); the events the server
    compressed once for every deflate client (RSV1 set, issue 20) are inflated by the browser and rendered. The
    other client is plain, so every compressed write the server counts went to the page."""
    open_dashboard(browser, server.url)
    assert "permessage-deflate" in (browser.find_element(By.ID, "status").get_attribute("data-extensions") or "")
    body = "Compressed once for every viewer, whatever it keeps between messages. " * 8

    def compressed() -> int:
        with urllib.request.urlopen(f"{server.url}/metrics", timeout=5) as response:
            text = response.read().decode()
        return int(re.search(r"^liveactivity_sent_compressed_messages_total (\d+)$", text, re.MULTILINE).group(1))

    async def other_client() -> int:
        async with connect(server.ws_url, compression=None) as ws:
            await recv_until(ws, lambda m: m.get("type") == "snapshot")
            before = compressed()
            await send_json(ws, {"type": "start", "requestId": "d1", "attributes": {"workout": "aerobics"},
                                 "durationSeconds": 600})
            ack = await recv_until(ws, lambda m: m.get("type") in ("ack", "error") and m.get("requestId") == "d1")
            assert ack["type"] == "ack", ack
            await send_json(ws, {"type": "update", "requestId": "d2", "activityId": ack["activityId"],
                                 "durationSeconds": 900, "alert": {"title": "Deflated", "body": body}})
            ack2 = await recv_until(ws, lambda m: m.get("type") in ("ack", "error") and m.get("requestId") == "d2")
            assert ack2["type"] == "ack", ack2
            return before

    before = run(other_client())
    wait_for("one .lock-screen", lambda: len(lock_screens(browser)) == 1)
    banner = wait_for("the alert banner", lambda: browser.find_element(By.ID, "banner").is_displayed()
                      and browser.find_element(By.ID, "banner"))
    wait_settled(browser, "the alert banner", banner)
    assert "Deflated" in banner.text and body[:40] in banner.text, banner.text
    # The started and updated events (over 500 bytes each) went to the page compressed.
    assert compressed() - before >= 2
    assert status_state(browser) == "open"
    assert_clean_console(browser)


def test_stale_paused_and_ended_states(server, browser):
    """Stale is dimmed with a badge, a paused countdown freezes, ended keeps its content until dismissed."""
    open_dashboard(browser, server.url)

    async def setup() -> dict[str, str]:
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m.get("type") == "snapshot")
            ids = {}
            now = time.time()
            from support import iso_s as iso
            starts = {
                "stale": {"attributes": {"workout": "jogging"}, "relevanceScore": 10,
                          "content": {"state": {"workoutTimer": {"start": iso(now - 5), "end": iso(now + 300)}},
                                      "staleDate": iso(now - 1), "relevanceScore": 10}},
                "paused": {"attributes": {"workout": "aerobics"}, "durationSeconds": 600, "relevanceScore": 5},
                "ended": {"attributes": {"workout": "yoga"}, "durationSeconds": 90, "relevanceScore": 1},
            }
            for name, body in starts.items():
                await send_json(ws, {"type": "start", "requestId": name, **body})
                ack = await recv_until(ws, lambda m, n=name: m.get("requestId") == n and m["type"] in ("ack", "error"))
                assert ack["type"] == "ack", ack
                ids[name] = ack["activityId"]
            for req, body in (("p", {"type": "pause", "activityId": ids["paused"]}),
                              ("e", {"type": "end", "activityId": ids["ended"], "dismissalPolicy": "default"})):
                await send_json(ws, {**body, "requestId": req})
                ack = await recv_until(ws, lambda m, r=req: m.get("requestId") == r and m["type"] in ("ack", "error"))
                assert ack["type"] == "ack", ack
            return ids

    ids = run(setup())
    screen = lambda name: browser.find_element(  # noqa: E731
        By.CSS_SELECTOR, f'.lock-item[data-activity-id="{ids[name]}"]')
    wait_for("three .lock-screens", lambda: len(lock_screens(browser)) == 3)
    assert [s.get_attribute("data-activity-id") for s in lock_screens(browser)] == [
        ids["stale"], ids["paused"], ids["ended"]]  # relevanceScore order
    wait_for("stale state", lambda: screen("stale").get_attribute("data-activity-state") == "stale")
    wait_settled(browser, "the stale Lock Screen", screen("stale"))  # its opacity is a 0.3 s transition
    assert screen("stale").find_element(By.CSS_SELECTOR, ".badge").text.lower() == "stale"
    assert float(screen("stale").find_element(By.CSS_SELECTOR, ".lock-screen").value_of_css_property("opacity")) < 1
    assert screen("ended").get_attribute("data-activity-state") == "ended"
    assert screen("ended").find_element(By.CSS_SELECTOR, ".badge").text.lower() == "ended"
    assert "yoga" in screen("ended").find_element(By.CSS_SELECTOR, ".workout-name").text.lower()
    assert screen("paused").find_element(By.CSS_SELECTOR, ".badge").text.lower() == "paused"
    frozen = screen("paused").find_element(By.CSS_SELECTOR, ".countdown").text
    ended_text = screen("ended").find_element(By.CSS_SELECTOR, ".countdown").text
    time.sleep(1.3)
    assert screen("paused").find_element(By.CSS_SELECTOR, ".countdown").text == frozen
    assert screen("ended").find_element(By.CSS_SELECTOR, ".countdown").text == ended_text
    assert browser.find_element(By.ID, "island").get_attribute("data-activity-id") == ids["stale"]
    screenshot(browser, "states.png")

    # Ending the ended one again with "immediate" dismisses it (the dismissed event removes it).
    async def dismiss() -> None:
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m.get("type") == "snapshot")
            await send_json(ws, {"type": "end", "requestId": "d", "activityId": ids["ended"],
                                 "dismissalPolicy": "immediate"})
            await recv_until(ws, lambda m: m.get("requestId") == "d")

    run(dismiss())
    wait_for("the ended activity to leave", lambda: len(lock_screens(browser)) == 2)
    assert_clean_console(browser)


def test_pure_logic_in_the_browser(server, browser):
    """time.js / store.js / socket.js helpers, run as the page's own ES modules in Chromium."""
    browser.get(server.url + "/")
    result = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        Promise.all([import('/js/time.js'), import('/js/store.js'), import('/js/socket.js')]).then(([t, s, k]) => {
          const act = (id, score, start, extra = {}) => ({id, startDate: start, activityState: 'active',
            content: {relevanceScore: score, state: {workoutTimer: {start: start, end: '2026-11-29T17:01:10.000Z'}}},
            ...extra});
          const a = act('a', 0, '2026-11-29T17:00:00.000Z');
          const b = act('b', 0, '2026-11-29T17:00:01.000Z');
          const c = act('c', 50, '2026-11-29T16:00:00.000Z');
          const clock = new t.ClockSync();
          clock.sample('2026-11-29T17:00:00.000Z', Date.parse('2026-11-29T16:59:58.000Z'));
          clock.sample('2026-11-29T17:00:01.000Z', Date.parse('2026-11-29T16:59:59.500Z'));  // 0.5 s late
          const at = (iso) => Date.parse(iso);
          const paused = act('p', 0, '2026-11-29T17:00:00Z');
          paused.content.state.pausedAt = '2026-11-29T17:00:30.000Z';
          const ended = act('e', 0, '2026-11-29T17:00:00Z', {activityState: 'ended', endDate: '2026-11-29T17:00:50Z'});
          const store = new s.Store();
          store.apply({type: 'snapshot', serverTime: '2026-11-29T17:00:05Z', sequence: 7, role: 'viewer',
                       activities: [a, b]}, Date.now());
          const old = store.apply({type: 'activity', event: 'dismissed', sequence: 7, activity: a}, Date.now());
          const gap = store.apply({type: 'activity', event: 'started', sequence: 9, activity: c}, Date.now());
          const gone = store.apply({type: 'activity', event: 'dismissed', sequence: 10, activity: b}, Date.now());
          done({
            fmt: [0, 9, 70, 599, 3599, 3600, 3723, -5, null].map(t.formatCountdown),
            remaining: [t.remainingSeconds(at('2026-11-29T17:00:00Z'), at('2026-11-29T17:01:10Z'), at('2026-11-29T17:00:00.001Z')),
                        t.remainingSeconds(at('2026-11-29T17:00:00Z'), at('2026-11-29T17:01:10Z'), at('2026-11-29T17:05:00Z')),
                        t.remainingSeconds(at('2026-11-29T18:00:00Z'), at('2026-11-29T18:01:10Z'), at('2026-11-29T17:00:00Z'))],
            offset: clock.offsetMs,
            order: [a, b, c].sort(s.compareActivities).map((x) => x.id),
            paused: s.countdownSeconds(paused, at('2026-11-29T17:00:59Z')),
            ended: s.countdownSeconds(ended, at('2026-11-29T17:00:59Z')),
            duration: ['70', ' 5 ', '0', '-3', '1.5', 'abc', ''].map(t.parseDurationSeconds),
            backoff: [0, 1, 2, 3, 4, 10].map(k.backoffMs),
            url: [k.socketUrl(new URL('https://x.example:8443/?a=1')), k.socketUrl(new URL('http://127.0.0.1:8080/'))],
            token: [k.tokenFromLocation(new URL('http://h/#token=abc')), k.tokenFromLocation(new URL('http://h/?token=q')),
                    k.tokenFromLocation(new URL('http://h/'))],
            store: {role: store.role, oldChanged: old.changed, gapResync: gap.resync, goneChanged: gone.changed,
                    ids: store.ordered().map((x) => x.id), top: store.top().id, sequence: store.sequence},
          });
        }).catch((e) => done({error: String(e)}));
    """)
    assert "error" not in result, result
    assert result["fmt"] == ["0:00", "0:09", "1:10", "9:59", "59:59", "1:00:00", "1:02:03", "0:00", "--:--"]
    assert result["remaining"] == [70, 0, 70]  # rounded up; never negative; a future start shows the whole length
    assert result["offset"] == 2000  # the least delayed sample wins
    assert result["order"] == ["c", "b", "a"]  # relevanceScore first, then newest startDate
    assert result["paused"] == 40 and result["ended"] == 20
    assert result["duration"] == [70, 5, None, None, None, None, None]
    assert result["backoff"] == [500, 1000, 2000, 4000, 5000, 5000]
    assert result["url"] == ["wss://x.example:8443/ws", "ws://127.0.0.1:8080/ws"]
    assert result["token"] == ["abc", "q", None]
    assert result["store"] == {"role": "viewer", "oldChanged": False, "gapResync": True, "goneChanged": True,
                               "ids": ["c", "a"], "top": "c", "sequence": 10}
    assert_clean_console(browser)


def test_roles_viewer_cannot_control_and_token_makes_controller(start_server, browser):
    """With --controller-token, the page is a viewer (buttons disabled) until it presents the token in `hello`."""
    srv = start_server("--controller-token", "s3cret-token")
    open_dashboard(browser, srv.url)
    wait_for("role viewer", lambda: browser.find_element(By.ID, "status").get_attribute("data-role") == "viewer")
    assert "view only" in browser.find_element(By.ID, "status").text.lower()
    assert not browser.find_element(By.ID, "start").is_enabled()
    assert not browser.find_element(By.ID, "stop").is_enabled()

    browser.get(srv.url + "/#token=s3cret-token")
    browser.refresh()  # a hash-only navigation does not reload the page
    wait_for("role controller", lambda: browser.find_element(By.ID, "status").get_attribute("data-role") == "controller"
             and status_state(browser) == "open")
    start_workout(browser, "yoga")
    wait_for("one .lock-screen", lambda: len(lock_screens(browser)) == 1)
    assert browser.find_element(By.ID, "error").text == ""
    assert_clean_console(browser)


class TcpProxy:
    """Forwards 127.0.0.1:<port> to a target port that can change (so the page's origin survives a restart).

    `url` is the proxy's http:// address; `target_port` may be reassigned at any time (new connections use it).
    Subclasses see the first bytes of each client connection through `_first_client_chunk`.
    """

    def __init__(self, target_port: int):
        self.target_port = target_port
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closed = False
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=2)
                upstream.settimeout(None)
            except OSError:
                client.close()  # server down: the page sees a failed connection and backs off
                continue
            with self._lock:
                self._conns += [client, upstream]
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _first_client_chunk(self, data: bytes) -> None:
        """Called with the first bytes a client sends on each connection; does nothing here."""

    def _pump(self, src: socket.socket, dst: socket.socket, from_client: bool) -> None:
        try:
            first = True
            while data := src.recv(65536):
                if from_client and first:
                    self._first_client_chunk(data)
                    first = False
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        with self._lock:
            for s in self._conns:
                s.close()


def test_page_reconnects_after_server_restart(start_server, browser):
    """(4) The page reconnects by itself and takes the new server's snapshot as the truth."""
    first = start_server()
    proxy = TcpProxy(first.port)
    try:
        url = proxy.url
        open_dashboard(browser, url)
        start_workout(browser, "yoga")
        wait_for("one .lock-screen", lambda: len(lock_screens(browser)) == 1)
        # Let the island's icons finish loading: a fetch cut off by the restart would be a (legitimate) SEVERE entry.
        wait_for("the icons to load", lambda: browser.execute_script(
            "const done = performance.getEntriesByType('resource').filter(e => e.responseEnd > 0).map(e => e.name);"
            "return ['/icons/yoga.svg', '/icons/timer.svg'].every(i => done.some(n => n.endsWith(i)));"))

        assert first.stop() == 0
        wait_for("#status to leave 'open'", lambda: status_state(browser) in ("closed", "connecting"))
        assert "reconnecting" in browser.find_element(By.ID, "status").text.lower()
        second = start_server(cwd=first.cwd)  # same working directory: whatever it persists is still there
        proxy.target_port = second.port
        wait_for("#status[data-state=open] again", lambda: status_state(browser) == "open", timeout=12)
        assert "permessage-deflate" in (browser.find_element(By.ID, "status").get_attribute("data-extensions") or "")

        async def snapshot_ids() -> set[str]:
            async with connect(second.ws_url) as ws:
                snap = await recv_until(ws, lambda m: m.get("type") == "snapshot")
                return {a["id"] for a in snap["activities"]}

        truth = run(snapshot_ids())
        wait_for("the page to show the new server's snapshot",
                 lambda: {s.get_attribute("data-activity-id") for s in lock_screens(browser)} == truth)

        # The new connection works both ways.
        start_workout(browser, "aerobics")
        wait_for("a new aerobics .lock-screen",
                 lambda: any("aerobics" in s.find_element(By.CSS_SELECTOR, ".workout-name").text.lower()
                             for s in lock_screens(browser)))
        # The console has the expected failed-reconnect errors while the server was down, nothing else.
        severe = severe_console_entries(browser, ignore=lambda m: "WebSocket connection" in m)
        assert not severe, "\n".join(e["message"] for e in severe)
    finally:
        proxy.close()

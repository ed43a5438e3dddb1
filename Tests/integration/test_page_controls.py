"""The dashboard's workout controls, resuming and access, in real headless Chromium against the real server.

- Issue 9: PAUSE / RESUME and +1 min / −1 min on every running workout (Lock Screen and expanded island),
  the paused mark and frozen time in every presentation, pending (scheduled) activities as upcoming.
- Issue 10: after a reconnect the page resumes with `/ws?since=N` (replayed events, then `caughtUp`), and takes
  a `snapshot` with `reset: true` as the whole truth.
- Issue 4: the page asks for a token when the server needs one (sessionStorage, sent again on reconnect), and
  user-supplied text never becomes markup.

Fixtures and helpers come from test_page.py (browser) and conftest.py (server, start_server).
"""
from __future__ import annotations

import calendar
import json
import re
import time
import urllib.request

import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver

from support import iso_s as iso
from test_page import (  # noqa: F401  (browser is a fixture)
    TcpProxy, assert_clean_console, browser, css, island_visible, lock_screens, open_dashboard, screenshot,
    severe_console_entries, start_workout, status_state, wait_for, wait_settled,
)
from wsclient import connect, recv_until, request, run

XSS = "<img src=x onerror=alert(1)>"


# -- helpers --------------------------------------------------------------------------------------

def seconds(text: str) -> int:
    """'m:ss' or 'h:mm:ss' → seconds."""
    assert re.match(r"^\d+(:[0-5]\d){1,2}$", text), f"not a countdown: {text!r}"
    total = 0
    for part in text.split(":"):
        total = total * 60 + int(part)
    return total


def screen_for(driver: WebDriver, activity_id: str):
    return driver.find_element(By.CSS_SELECTOR, f'.lock-item[data-activity-id="{activity_id}"]')


def countdown_texts(driver: WebDriver, activity_id: str) -> list[str]:
    """The Lock Screen countdown, then the island's compact, expanded and small ones (all read in one go)."""
    return driver.execute_script("""
        const id = arguments[0];
        const lock = document.querySelector(`.lock-item[data-activity-id="${id}"] .countdown`);
        const island = [...document.querySelectorAll('#island .countdown')].map((e) => e.textContent);
        return [lock ? lock.textContent : null, ...island];
    """, activity_id)


def mark_of(driver: WebDriver, selector: str) -> dict:
    """The ::before mark drawn in front of a countdown: its `content` and width in px."""
    return driver.execute_script("""
        const el = document.querySelector(arguments[0]);
        const st = getComputedStyle(el, '::before');
        return {content: st.content, width: parseFloat(st.width) || 0, display: st.display};
    """, selector)


def has_mark(driver: WebDriver, selector: str) -> bool:
    m = mark_of(driver, selector)
    return m["content"] not in ("none", "normal") and m["display"] != "none" and m["width"] > 0


ISLAND_COUNTDOWNS = ("#island .island-compact .countdown", "#island .island-expanded .countdown",
                     "#island .activity-small .countdown")


def api_activity(server_url: str, activity_id: str) -> dict:
    with urllib.request.urlopen(f"{server_url}/api/activities/{activity_id}", timeout=5) as r:
        return json.load(r)


def session_token(driver: WebDriver):
    return driver.execute_script("return sessionStorage.getItem('liveactivity.token');")


def wait_icons_loaded(driver: WebDriver, *icons: str) -> None:
    """A fetch cut off by a server restart would be a (legitimate) SEVERE console entry: let them finish first."""
    wait_for("the icons to load", lambda: driver.execute_script(
        "const done = performance.getEntriesByType('resource').filter(e => e.responseEnd > 0).map(e => e.name);"
        "return arguments[0].every(i => done.some(n => n.endsWith(i)));", list(icons)), timeout=10)


class RecordingProxy(TcpProxy):
    """Forwards 127.0.0.1:<port> to a target port that can change, and records each connection's request line.

    The page's origin stays the same across server restarts; `request_lines` shows what it asked for.
    """

    def __init__(self, target_port: int):
        self.request_lines: list[str] = []
        super().__init__(target_port)

    def ws_request_lines(self) -> list[str]:
        """The recorded request lines of WebSocket connections (`GET /ws...`), in arrival order."""
        with self._lock:
            return [line for line in self.request_lines if line.startswith("GET /ws")]

    def _first_client_chunk(self, data: bytes) -> None:
        line = data.split(b"\r\n", 1)[0].decode("latin-1")
        with self._lock:
            self.request_lines.append(line)


# -- issue 9: pause / resume / extend ----------------------------------------------------------------

def test_pause_resume_and_extend(server, browser):
    """PAUSE freezes every presentation (with a mark), RESUME counts on from the same value, ±1 min moves the end."""
    open_dashboard(browser, server.url)
    start_workout(browser, "yoga", duration=300)
    [screen] = wait_for("one .lock-screen", lambda: lock_screens(browser))
    aid = screen.get_attribute("data-activity-id")
    wait_for("the island", lambda: island_visible(browser))

    # Buttons on the Lock Screen view and on the expanded island, with accessible names.
    pause = screen.find_element(By.CSS_SELECTOR, "button[data-action=pause]")
    plus, minus = (screen.find_element(By.CSS_SELECTOR, f'button[data-action=extend][data-seconds="{s}"]')
                   for s in ("60", "-60"))
    assert pause.text == "PAUSE" and pause.accessible_name == "Pause Yoga workout"
    assert plus.accessible_name == "Add 1 minute to Yoga workout"
    assert minus.accessible_name == "Take 1 minute off Yoga workout"
    # The expanded figure: the rendered template, then the page's controls under it (a template holds none).
    expanded = browser.find_element(By.CSS_SELECTOR, "#island .presentation-expanded")
    island_pause = expanded.find_element(By.CSS_SELECTOR, ".expanded-controls button.control-pause")
    assert island_pause.accessible_name == "Pause Yoga workout" and island_pause.is_displayed()
    assert {b.accessible_name for b in expanded.find_elements(By.CSS_SELECTOR, "button[data-action=extend]")} == {
        "Add 1 minute to Yoga workout", "Take 1 minute off Yoga workout"}
    assert all(b.tag_name == "button" and b.get_attribute("type") == "button"
               for b in (pause, plus, minus, island_pause))
    # Running: no paused mark yet. The Lock Screen still fits the HIG's 160 pt, the expanded island too.
    assert not any(has_mark(browser, sel) for sel in ISLAND_COUNTDOWNS)
    lock_rect = screen.find_element(By.CSS_SELECTOR, ".lock-screen").rect
    expanded_rect = expanded.find_element(By.CSS_SELECTOR, ".island-expanded").rect
    assert lock_rect["height"] <= 160 and expanded_rect["height"] <= 160, (lock_rect, expanded_rect)

    # PAUSE (mouse, Lock Screen): every presentation freezes and shows the paused mark.
    pause.click()
    wait_for("the paused state", lambda: screen.get_attribute("data-paused") == "true"
             and browser.find_element(By.ID, "island").get_attribute("data-paused") == "true")
    wait_for("RESUME", lambda: pause.text == "RESUME" and pause.get_attribute("data-action") == "resume")
    assert pause.accessible_name == "Resume Yoga workout"
    assert island_pause.accessible_name == "Resume Yoga workout"
    assert screen.find_element(By.CSS_SELECTOR, ".badge").text.lower() == "paused"
    for sel in ISLAND_COUNTDOWNS:  # compact and small included
        assert has_mark(browser, sel), f"{sel} shows no paused mark: {mark_of(browser, sel)}"
    frozen = countdown_texts(browser, aid)
    assert len(set(frozen)) == 1, frozen
    frozen_s = seconds(frozen[0])
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:  # the displayed time must not change for 3 s
        assert countdown_texts(browser, aid) == frozen, "a paused countdown changed"
        time.sleep(0.1)
    screenshot(browser, "controls-paused.png")

    # RESUME (keyboard, expanded island): it counts again from the same value (±1 s).
    island_pause.send_keys(Keys.ENTER)
    wait_for("the resumed state", lambda: screen.get_attribute("data-paused") is None
             and browser.find_element(By.ID, "island").get_attribute("data-paused") is None)
    resumed = seconds(countdown_texts(browser, aid)[0])
    assert abs(resumed - frozen_s) <= 1, (frozen_s, resumed)
    wait_for("the countdown to run again",
             lambda: seconds(countdown_texts(browser, aid)[0]) < min(resumed, frozen_s), timeout=4)
    assert island_pause.text == "PAUSE" and not has_mark(browser, ISLAND_COUNTDOWNS[1])

    # +1 min (Lock Screen): about a minute more.
    before = seconds(countdown_texts(browser, aid)[0])
    plus.click()
    wait_for("+1 min", lambda: 56 <= seconds(countdown_texts(browser, aid)[0]) - before <= 61, timeout=6)

    # −1 min (keyboard, expanded island): about a minute less.
    before = seconds(countdown_texts(browser, aid)[0])
    expanded.find_element(By.CSS_SELECTOR, 'button[data-action=extend][data-seconds="-60"]').send_keys(Keys.SPACE)
    wait_for("-1 min", lambda: 59 <= before - seconds(countdown_texts(browser, aid)[0]) <= 64, timeout=6)
    texts = countdown_texts(browser, aid)
    assert all(abs(seconds(t) - seconds(texts[0])) <= 1 for t in texts), texts
    assert browser.find_element(By.ID, "error").text == ""
    assert_clean_console(browser)


def test_control_errors_show_in_error(server, browser):
    """A refused control (pausing a finished countdown: `invalid_state`) is reported in #error."""
    open_dashboard(browser, server.url)

    async def finished_workout() -> str:
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m.get("type") == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "jogging"},
                                     "durationSeconds": 1})
            assert ack["type"] == "ack", ack
            await recv_until(ws, lambda m: m.get("event") == "timerFinished", timeout=5)
            return ack["activityId"]

    aid = run(finished_workout())
    screen = wait_for("the finished workout", lambda: screen_for(browser, aid))
    pause = screen.find_element(By.CSS_SELECTOR, ".control-pause")
    wait_for("PAUSE", lambda: pause.is_displayed() and pause.is_enabled())
    pause.click()
    error = browser.find_element(By.ID, "error")
    wait_for("the error", lambda: "finished" in error.text)
    assert error.get_attribute("role") == "alert" and error.is_displayed()
    assert_clean_console(browser)


def test_pending_activity_shows_as_upcoming(server, browser):
    """START with "Start at" schedules it: every presentation shows its planned length with the scheduled mark
    (as the static renderings do), the page counts down to its start beside them ("Starts in"), no PAUSE."""
    open_dashboard(browser, server.url)
    # A time of day about two minutes ahead, as the time field gives it ("HH:MM", the browser's time zone).
    browser.execute_script("""
        const d = new Date(Date.now() + 150000);
        const pad = (n) => String(n).padStart(2, '0');
        const input = document.getElementById('start-at');
        input.value = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
        input.dispatchEvent(new Event('input', {bubbles: true}));
    """)
    assert browser.find_element(By.ID, "start-at").accessible_name.startswith("Start at")
    start_workout(browser, "aerobics", duration=60)
    [screen] = wait_for("one .lock-screen", lambda: lock_screens(browser))
    aid = screen.get_attribute("data-activity-id")
    assert screen.get_attribute("data-activity-state") == "pending"
    assert browser.find_element(By.ID, "start-at").get_attribute("value") == ""  # a one-off: cleared once sent
    activity = api_activity(server.url, aid)
    assert activity["activityState"] == "pending", activity
    starts_at = calendar.timegm(time.strptime(activity["startDate"][:19], "%Y-%m-%dT%H:%M:%S"))
    assert 80 <= starts_at - time.time() <= 155, activity["startDate"]

    assert screen.find_element(By.CSS_SELECTOR, ".badge").text.lower() == "scheduled"
    assert "starts in" in screen.text.lower()
    assert not screen.find_element(By.CSS_SELECTOR, ".control-pause").is_displayed()  # pausing pending: invalid_state
    assert screen.find_element(By.CSS_SELECTOR, 'button[data-action=extend][data-seconds="60"]').is_displayed()
    wait_for("the island", lambda: island_visible(browser))
    island = browser.find_element(By.ID, "island")
    assert island.get_attribute("data-activity-state") == "pending"
    assert not island.find_element(By.CSS_SELECTOR, ".expanded-controls .control-pause").is_displayed()

    # Every presentation shows the planned minute, with the scheduled mark; the rows count down to the start.
    assert countdown_texts(browser, aid) == ["1:00"] * 4, countdown_texts(browser, aid)
    for sel in ISLAND_COUNTDOWNS:
        assert has_mark(browser, sel), f"{sel} shows no scheduled mark: {mark_of(browser, sel)}"

    def to_start() -> list[int]:
        return [seconds(t.removeprefix("Starts in ")) for t in browser.execute_script(
            "return [...document.querySelectorAll('.lock-item .starts-in, #island .starts-in')].map((e) => e.textContent)")]

    values = wait_for("countdowns to the start", lambda: (v := to_start()) and max(v) - min(v) <= 1 and v)
    expected = starts_at - time.time()
    assert len(values) == 2 and all(abs(v - expected) <= 2 for v in values), (values, expected)
    wait_for("the countdown to the start to run", lambda: to_start()[0] < values[0], timeout=3)
    screenshot(browser, "controls-pending.png")

    # One scheduled by another client for a few seconds ahead becomes active at its start, here too.
    async def schedule_soon() -> str:
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m.get("type") == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                     "durationSeconds": 120, "relevanceScore": 50, "startDate": iso(time.time() + 4)})
            assert ack["type"] == "ack", ack
            return ack["activityId"]

    soon = run(schedule_soon())
    wait_for("the island to show it pending", lambda: island.get_attribute("data-activity-id") == soon
             and island.get_attribute("data-activity-state") == "pending")
    assert has_mark(browser, "#island .island-compact .countdown")
    assert seconds(browser.find_element(By.CSS_SELECTOR, "#island .starts-in").text.removeprefix("Starts in ")) <= 5
    wait_for("it to start", lambda: island.get_attribute("data-activity-state") == "active", timeout=10)
    wait_for("a running 2-minute countdown", lambda: 115 <= seconds(countdown_texts(browser, soon)[2]) <= 120)
    assert not has_mark(browser, "#island .island-compact .countdown")
    assert screen_for(browser, soon).find_element(By.CSS_SELECTOR, ".control-pause").is_displayed()
    assert browser.find_element(By.ID, "error").text == ""
    assert_clean_console(browser)


# -- issue 10: resume with ?since= -------------------------------------------------------------------

def test_page_resumes_with_since_after_restart(start_server, browser):
    """Dropped while another client makes changes (server restarted on the same data): `?since=` replays them."""
    first = start_server()
    proxy = RecordingProxy(first.port)
    try:
        open_dashboard(browser, proxy.url)
        start_workout(browser, "yoga", duration=600)
        [screen] = wait_for("one .lock-screen", lambda: lock_screens(browser))
        yoga = screen.get_attribute("data-activity-id")
        wait_icons_loaded(browser, "/icons/yoga.svg", "/icons/timer.svg")
        assert proxy.ws_request_lines() == ["GET /ws HTTP/1.1"]  # the first connection asks for a snapshot
        with urllib.request.urlopen(first.url + "/healthz", timeout=5) as r:
            sequence = json.load(r)["sequence"]

        assert first.stop() == 0
        wait_for("#status to leave 'open'", lambda: status_state(browser) in ("closed", "connecting"))
        second = start_server(cwd=first.cwd)  # same working directory, so the same ./data

        async def change_while_away() -> str:
            async with connect(second.ws_url) as ws:
                await recv_until(ws, lambda m: m.get("type") == "snapshot")
                ack = await request(ws, {"type": "pause", "requestId": "p", "activityId": yoga})
                assert ack["type"] == "ack", ack
                ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "jogging"},
                                         "durationSeconds": 900, "relevanceScore": 10})
                assert ack["type"] == "ack", ack
                return ack["activityId"]

        jogging = run(change_while_away())  # while the page cannot reach the new server
        assert status_state(browser) != "open"
        proxy.target_port = second.port
        wait_for("#status[data-state=open] again", lambda: status_state(browser) == "open", timeout=15)

        wait_for("the changes made while away", lambda: [s.get_attribute("data-activity-id")
                                                         for s in lock_screens(browser)] == [jogging, yoga])
        wait_for("yoga paused", lambda: screen_for(browser, yoga).get_attribute("data-paused") == "true")
        assert browser.find_element(By.ID, "island").get_attribute("data-activity-id") == jogging
        assert proxy.ws_request_lines()[-1].startswith(f"GET /ws?since={sequence}&log="), proxy.ws_request_lines()
        assert all(line != "GET /ws HTTP/1.1" for line in proxy.ws_request_lines()[1:])  # never a fresh snapshot
        # The role survives the resume (a resumed connection is not told it again): controls stay enabled.
        assert browser.find_element(By.ID, "status").get_attribute("data-role") == "controller"
        assert browser.find_element(By.ID, "start").is_enabled()

        # Live events after `caughtUp` still arrive, and the page's own controls work on the new connection.
        resume = screen_for(browser, yoga).find_element(By.CSS_SELECTOR, ".control-pause")
        assert resume.text == "RESUME"
        resume.click()
        wait_for("yoga running again", lambda: screen_for(browser, yoga).get_attribute("data-paused") is None)
        severe = severe_console_entries(browser, ignore=lambda m: "WebSocket connection" in m)
        assert not severe, "\n".join(e["message"] for e in severe)
    finally:
        proxy.close()


def test_page_takes_reset_snapshot_from_a_fresh_server(start_server, browser):
    """A fresh server (empty data) is behind the page's sequence: it answers `?since=` with `reset: true`."""
    first = start_server()
    proxy = RecordingProxy(first.port)
    try:
        open_dashboard(browser, proxy.url)
        start_workout(browser, "yoga", duration=600)
        wait_for("one .lock-screen", lambda: len(lock_screens(browser)) == 1)
        start_workout(browser, "jogging", duration=600)
        wait_for("two .lock-screens", lambda: len(lock_screens(browser)) == 2)
        wait_icons_loaded(browser, "/icons/yoga.svg", "/icons/jogging.svg", "/icons/timer.svg")

        assert first.stop() == 0
        wait_for("#status to leave 'open'", lambda: status_state(browser) in ("closed", "connecting"))
        fresh = start_server()  # another working directory: no data, sequence 0

        async def one_activity() -> str:
            async with connect(fresh.ws_url) as ws:
                await recv_until(ws, lambda m: m.get("type") == "snapshot")
                ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "aerobics"},
                                         "durationSeconds": 300})
                assert ack["type"] == "ack", ack
                # What the page will get: the server is behind its `since`, so a reset snapshot.
                async with connect(fresh.ws_url + "?since=2") as probe:
                    snap = await recv_until(probe, lambda m: m.get("type") in ("snapshot", "caughtUp"))
                    assert snap["type"] == "snapshot" and snap.get("reset") is True, snap
                return ack["activityId"]

        aerobics = run(one_activity())
        proxy.target_port = fresh.port
        wait_for("#status[data-state=open] again", lambda: status_state(browser) == "open", timeout=15)
        wait_for("only the fresh server's activity",
                 lambda: [s.get_attribute("data-activity-id") for s in lock_screens(browser)] == [aerobics])
        assert proxy.ws_request_lines()[-1].startswith("GET /ws?since=2&log="), proxy.ws_request_lines()
        assert browser.find_element(By.ID, "island").get_attribute("data-activity-id") == aerobics
        # The page follows the new numbering: a later change shows up (no duplicate or gap handling gone wrong).
        start_workout(browser, "yoga", duration=60)
        wait_for("the new yoga", lambda: len(lock_screens(browser)) == 2)
        severe = severe_console_entries(browser, ignore=lambda m: "WebSocket connection" in m)
        assert not severe, "\n".join(e["message"] for e in severe)
    finally:
        proxy.close()


# -- issue 4: tokens and text ------------------------------------------------------------------------

def test_alert_text_is_never_markup(server, browser):
    """An alert whose title/body look like HTML shows those characters literally: no <img>, no dialog."""
    open_dashboard(browser, server.url)

    async def hostile_update() -> str:
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m.get("type") == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                     "durationSeconds": 300})
            assert ack["type"] == "ack", ack
            upd = await request(ws, {"type": "update", "requestId": "u", "activityId": ack["activityId"],
                                     "durationSeconds": 300, "alert": {"title": XSS, "body": XSS}})
            assert upd["type"] == "ack", upd
            return ack["activityId"]

    run(hostile_update())
    banner = browser.find_element(By.ID, "banner")
    wait_for("the alert banner", lambda: banner.is_displayed())
    wait_settled(browser, "the alert banner", banner)  # its title is above the viewport while it slides in
    title = banner.find_element(By.CSS_SELECTOR, ".banner-title")
    body = banner.find_element(By.CSS_SELECTOR, ".banner-body")
    assert title.text == XSS and body.text == XSS
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    assert browser.execute_script(  # the text is text: no element was made from it
        "return ['.banner-title', '.banner-body'].every((s) => document.querySelector('#banner ' + s).childElementCount === 0)"
        " && !document.querySelector('img, #banner script, [onerror]')")
    deadline = time.monotonic() + 1.0  # an onerror handler would have fired by now; make sure none opens later
    while time.monotonic() < deadline:
        with pytest.raises(NoAlertPresentException):
            browser.switch_to.alert.text  # noqa: B018
        time.sleep(0.1)
    assert_clean_console(browser)


def test_token_prompt_with_viewer_token(start_server, browser):
    """--viewer-token: the page asks for a token, rejects a wrong one, remembers a good one for the session."""
    args = ("--viewer-token", "watch-me", "--controller-token", "run-me")
    first = start_server(*args)

    async def started_by_controller(url: str) -> str:
        async with connect(url + "?token=run-me") as ws:
            await recv_until(ws, lambda m: m.get("type") == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                     "durationSeconds": 600})
            assert ack["type"] == "ack", ack
            return ack["activityId"]

    yoga = run(started_by_controller(first.ws_url))
    proxy = RecordingProxy(first.port)
    try:
        open_dashboard(browser, proxy.url)
        form = browser.find_element(By.ID, "token-form")
        wait_for("the token form", lambda: form.is_displayed())
        field = browser.find_element(By.ID, "token-input")
        assert field.get_attribute("type") == "password"
        assert field.accessible_name == "Token"
        assert form.accessible_name == "Access token"
        assert "needs an access token" in browser.find_element(By.ID, "token-message").text
        assert lock_screens(browser) == [] and not browser.find_element(By.ID, "start").is_enabled()
        screenshot(browser, "token-prompt.png")

        # A wrong token: refused, not remembered, the form says so.
        field.send_keys("nope", Keys.ENTER)
        wait_for("the refusal", lambda: "not accepted" in browser.find_element(By.ID, "token-message").text)
        assert session_token(browser) is None and form.is_displayed()
        assert browser.switch_to.active_element == field

        # The viewer token: the activity shows; view only, so the form asks for the controller token.
        field.send_keys("watch-me")
        browser.find_element(By.ID, "token-submit").click()
        wait_for("the activity", lambda: [s.get_attribute("data-activity-id") for s in lock_screens(browser)] == [yoga])
        wait_for("role viewer", lambda: browser.find_element(By.ID, "status").get_attribute("data-role") == "viewer")
        assert session_token(browser) == "watch-me"
        assert "view only" in browser.find_element(By.ID, "token-message").text.lower()
        assert not browser.find_element(By.ID, "start").is_enabled()
        assert not screen_for(browser, yoga).find_element(By.CSS_SELECTOR, ".control-pause").is_enabled()
        assert "watch-me" not in browser.page_source  # the token never reaches the DOM

        # A reload in the same tab sends the remembered token again by itself.
        browser.refresh()
        wait_for("the activity after a reload",
                 lambda: [s.get_attribute("data-activity-id") for s in lock_screens(browser)] == [yoga], timeout=10)

        # The controller token: the form goes away and the controls work.
        field = browser.find_element(By.ID, "token-input")
        wait_for("the view-only prompt", lambda: field.is_displayed())
        field.send_keys("run-me", Keys.ENTER)
        wait_for("role controller",
                 lambda: browser.find_element(By.ID, "status").get_attribute("data-role") == "controller")
        wait_for("the form to hide", lambda: not browser.find_element(By.ID, "token-form").is_displayed())
        assert session_token(browser) == "run-me"
        wait_icons_loaded(browser, "/icons/yoga.svg", "/icons/timer.svg")

        # A reconnect (server restarted on the same data) presents the remembered token again.
        assert first.stop() == 0
        wait_for("#status to leave 'open'", lambda: status_state(browser) in ("closed", "connecting"))
        second = start_server(*args, cwd=first.cwd)
        proxy.target_port = second.port
        wait_for("#status[data-state=open] again", lambda: status_state(browser) == "open", timeout=15)
        wait_for("role controller again",
                 lambda: browser.find_element(By.ID, "status").get_attribute("data-role") == "controller")
        wait_for("the form to stay hidden", lambda: not browser.find_element(By.ID, "token-form").is_displayed())
        screen_for(browser, yoga).find_element(By.CSS_SELECTOR, ".control-pause").click()
        wait_for("yoga paused", lambda: screen_for(browser, yoga).get_attribute("data-paused") == "true")
        assert browser.find_element(By.ID, "error").text == ""
        severe = severe_console_entries(browser, ignore=lambda m: "WebSocket connection" in m)
        assert not severe, "\n".join(e["message"] for e in severe)
    finally:
        proxy.close()


def test_pure_logic_resume_tokens_and_schedule(server, browser):
    """socket.js / store.js / time.js / token.js additions, run as the page's own ES modules in Chromium."""
    browser.get(server.url + "/")
    result = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        Promise.all([import('/js/time.js'), import('/js/store.js'), import('/js/socket.js'), import('/js/token.js')])
        .then(([t, s, k, tk]) => {
          const act = (id, state, extra = {}) => ({id, activityState: state, startDate: '2026-11-29T17:00:00.000Z',
            content: {relevanceScore: 0, state: {workoutTimer: {start: '2026-11-29T17:00:00.000Z',
                                                                end: '2026-11-29T17:01:10.000Z'}, ...extra}}});
          const at = (iso) => Date.parse(iso);
          const store = new s.Store();
          store.apply({type: 'snapshot', serverTime: '2026-11-29T17:00:05Z', sequence: 3, role: 'viewer',
                       activities: [act('a', 'active')]}, Date.now());
          store.resetRole();  // the socket closed
          const replayed = store.apply({type: 'activity', event: 'paused', sequence: 4,
                                        activity: act('a', 'active', {pausedAt: '2026-11-29T17:00:30Z'})}, Date.now());
          const caught = store.apply({type: 'caughtUp', serverTime: '2026-11-29T17:00:06Z', sequence: 4}, Date.now());
          const roleAfterResume = store.role;
          const short = store.apply({type: 'caughtUp', serverTime: '2026-11-29T17:00:06Z', sequence: 6}, Date.now());
          const reset = store.apply({type: 'snapshot', reset: true, serverTime: '2026-11-29T17:00:07Z', sequence: 1,
                                     activities: [act('b', 'pending')]}, Date.now());
          const err = store.apply({type: 'error', code: 'unauthorized', requestId: 'web-1', message: 'm'}, Date.now());
          const mem = new Map();
          const storage = {getItem: (k) => mem.get(k) ?? null, setItem: (k, v) => mem.set(k, v),
                           removeItem: (k) => mem.delete(k)};
          const fromUrl = new tk.TokenKeeper(storage, 'url-token');
          const again = new tk.TokenKeeper(storage, null);
          const remembered = again.current;
          const afterSet = (again.set('typed'), new tk.TokenKeeper(storage, null).current);
          again.forget();
          const broken = new tk.TokenKeeper({getItem() { throw new Error('x'); }, setItem() { throw new Error('x'); },
                                             removeItem() { throw new Error('x'); }}, null);
          broken.set('mem');
          const now = new Date(2026, 10, 29, 17, 0, 30).getTime();  // local 17:00:30
          const local = (ms) => { const d = new Date(ms); return [d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds()]; };
          done({
            resumeUrl: [k.resumeUrl('ws://h:1/ws', null), k.resumeUrl('ws://h:1/ws', 0), k.resumeUrl('ws://h:1/ws', 42),
                        k.resumeUrl('ws://h:1/ws?x=1', 7)],
            replayedChanged: replayed.changed, caughtUp: caught.caughtUp, caughtResync: caught.resync,
            roleAfterResume, shortResync: short.resync,
            reset: reset.reset, resetIds: store.ordered().map((a) => a.id), resetRole: store.role, sequence: store.sequence,
            errRequestId: err.error.requestId,
            pending: [s.isPending(act('p', 'pending')), s.startsInSeconds(act('p', 'pending'), at('2026-11-29T16:58:59.500Z')),
                      s.displaySeconds(act('p', 'pending'), at('2026-11-29T16:59:00Z')),
                      s.displaySeconds(act('r', 'active'), at('2026-11-29T17:01:00Z'))],
            controls: ['active', 'stale', 'pending', 'ended'].map((st) => s.availableControls(act('x', st))),
            pausedControls: s.availableControls(act('x', 'active', {pausedAt: '2026-11-29T17:00:30Z'})),
            tokens: [fromUrl.current, remembered, afterSet, mem.get(tk.TOKEN_KEY) ?? null, broken.current],
            times: [local(t.nextTimeOfDayMs('18:15', now)), local(t.nextTimeOfDayMs('17:00', now)),
                    local(t.nextTimeOfDayMs('16:00', now)), local(t.nextTimeOfDayMs('07:05:09', now)),
                    ['', '25:00', '7:5', 'noon'].map((x) => t.nextTimeOfDayMs(x, now))],
          });
        }).catch((e) => done({error: String(e && e.stack || e)}));
    """)
    assert "error" not in result, result
    assert result["resumeUrl"] == ["ws://h:1/ws", "ws://h:1/ws?since=0", "ws://h:1/ws?since=42",
                                   "ws://h:1/ws?x=1&since=7"]
    assert result["replayedChanged"] and result["caughtUp"] and not result["caughtResync"]
    assert result["roleAfterResume"] == "viewer"  # a resumed connection keeps the previous role
    assert result["shortResync"]  # caughtUp ahead of what was applied: ask for the whole state
    assert result["reset"] and result["resetIds"] == ["b"] and result["sequence"] == 1
    assert result["resetRole"] == "viewer"
    assert result["errRequestId"] == "web-1"
    assert result["pending"] == [True, 61, 60, 10]
    run_ = {"pause": True, "resume": False, "extend": True}
    assert result["controls"] == [run_, run_, {"pause": False, "resume": False, "extend": True},
                                  {"pause": False, "resume": False, "extend": False}]
    assert result["pausedControls"] == {"pause": False, "resume": True, "extend": True}
    assert result["tokens"] == ["url-token", "url-token", "typed", None, "mem"]
    assert result["times"] == [[29, 18, 15, 0], [29, 17, 0, 0], [30, 16, 0, 0], [30, 7, 5, 9], [None] * 4]
    assert_clean_console(browser)

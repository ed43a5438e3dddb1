"""Issue 19, item 4: every control on the dashboard and the push inspector is reachable with Tab and works
from the keyboard (Enter, Space, arrows, typing), in headless Chromium against the real server.

Reachability: every visible, enabled control the page offers (buttons, fields, selects, links, anything
with a tabindex ≥ 0) receives the focus while Tab walks the page. Use: each kind of control is operated
with keys only — reached with Tab first — and the page (and the server) must show the effect.
"""
from __future__ import annotations

import json
import urllib.request

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from test_page import (  # noqa: F401  (browser is a fixture)
    assert_clean_console, browser, lock_screens, open_dashboard, wait_for,
)
from wsclient import connect, recv_until, request, run

# Controls a keyboard user must be able to reach: what the browser puts in the Tab order.
CANDIDATES = """
    const visible = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden'
      && !e.closest('[hidden], [inert]');
    const all = [...document.querySelectorAll('a[href], button, input, select, textarea, summary, [tabindex]')]
      .filter((e) => !e.disabled && e.tabIndex >= 0 && visible(e));
    all.forEach((e, i) => { e.dataset.kb = String(i); });
    return all.map((e) => e.id || `${e.tagName.toLowerCase()}.${e.className}[${e.dataset.action || e.dataset.workout
      || e.dataset.kind || e.dataset.shareId || ''}] ${e.getAttribute('aria-label') || e.textContent.trim()}`);
"""


def focused(driver) -> dict:
    return driver.execute_script("""
        const e = document.activeElement;
        return {kb: e && e.dataset ? e.dataset.kb ?? null : null, id: e ? e.id : '', tag: e ? e.tagName : ''};
    """)


def press(driver, *keys: str) -> None:
    ActionChains(driver).send_keys(*keys).perform()


def tab_to(driver, selector: str, limit: int = 120):
    """Presses Tab until the focused element matches `selector` (proving it is reachable); returns it."""
    for _ in range(limit):
        if driver.execute_script("return !!document.activeElement && document.activeElement.matches(arguments[0])",
                                 selector):
            return driver.switch_to.active_element
        press(driver, Keys.TAB)
    pytest.fail(f"Tab never reached {selector} in {limit} presses", pytrace=False)


def assert_every_control_reachable(driver, where: str) -> int:
    """Walks the Tab order from the current focus until it has seen every candidate; returns their number."""
    names = driver.execute_script(CANDIDATES)
    seen: set[str] = set()
    for _ in range(3 * len(names) + 10):
        press(driver, Keys.TAB)
        kb = focused(driver)["kb"]
        if kb is not None:
            seen.add(kb)
        if len(seen) == len(names):
            return len(names)
    missed = [name for i, name in enumerate(names) if str(i) not in seen]
    pytest.fail(f"{where}: Tab never reaches {len(missed)} of {len(names)} controls: {missed}", pytrace=False)


def api_activity(url: str, activity_id: str) -> dict:
    with urllib.request.urlopen(f"{url}/api/activities/{activity_id}", timeout=5) as r:
        return json.load(r)


def test_dashboard_works_from_the_keyboard(server, browser):
    open_dashboard(browser, server.url)

    # Picker (Space), duration (typing), START (Enter in the field submits the form).
    tab_to(browser, 'button[data-workout="jogging"]')
    press(browser, Keys.SPACE)
    wait_for("Jogging picked", lambda: browser.execute_script(
        "return document.querySelector('button[data-workout=jogging]').getAttribute('aria-pressed') === 'true'"))
    tab_to(browser, "#duration")
    press(browser, Keys.CONTROL + "a", "300", Keys.ENTER)
    [screen] = wait_for("the jogging Lock Screen", lambda: lock_screens(browser))
    activity = screen.get_attribute("data-activity-id")
    assert "Jogging" in screen.text

    # PAUSE (Enter), RESUME (Space) on the Lock Screen; +1 min (Enter) moves the end by a minute.
    pause = f'.lock-item[data-activity-id="{activity}"] button.control-pause'
    tab_to(browser, pause)
    press(browser, Keys.ENTER)
    wait_for("paused", lambda: api_activity(server.url, activity)["content"]["state"].get("pausedAt"))
    wait_for("RESUME shown", lambda: browser.execute_script(
        "return document.querySelector(arguments[0]).textContent === 'RESUME'", pause))
    tab_to(browser, pause)
    press(browser, Keys.SPACE)
    wait_for("running again", lambda: "pausedAt" not in api_activity(server.url, activity)["content"]["state"])
    end_before = api_activity(server.url, activity)["content"]["state"]["workoutTimer"]["end"]
    tab_to(browser, f'.lock-item[data-activity-id="{activity}"] button[data-action=extend][data-seconds="60"]')
    press(browser, Keys.ENTER)
    wait_for("the end a minute later",
             lambda: api_activity(server.url, activity)["content"]["state"]["workoutTimer"]["end"] != end_before)

    # The kind switch (Enter shows the emoji fields, Space goes back).
    tab_to(browser, 'button[data-kind="emoji"]')
    press(browser, Keys.ENTER)
    wait_for("the emoji fields", lambda: browser.execute_script(
        "return !document.querySelector('.emoji-fields').hidden"))
    tab_to(browser, "#emoji-name")
    tab_to(browser, 'button[data-kind="workout"]')
    press(browser, Keys.SPACE)
    wait_for("the workout fields", lambda: browser.execute_script(
        "return document.querySelector('.emoji-fields').hidden"))

    # Sharing: pick the workout (arrows), Share (Enter), Copy (Enter).
    tab_to(browser, "#share-activity")
    press(browser, Keys.HOME)
    tab_to(browser, "#share-create")
    press(browser, Keys.ENTER)
    wait_for("the new link", lambda: browser.execute_script("return document.getElementById('share-link').value"))
    tab_to(browser, "#share-copy")
    press(browser, Keys.ENTER)
    wait_for("the share listed", lambda: browser.execute_script(
        "return document.querySelectorAll('#share-rows button[data-share-id]').length === 1"))

    # Now every kind of control is on screen: Tab reaches each one.
    count = assert_every_control_reachable(browser, "dashboard")
    assert count >= 20, count

    # Revoke (Enter), the island's STOP (Enter), then START (Enter) and STOP (Space).
    tab_to(browser, "#share-rows button[data-share-id]")
    press(browser, Keys.ENTER)
    wait_for("the share revoked", lambda: browser.execute_script(
        "return document.querySelectorAll('#share-rows tr').length === 0"))
    tab_to(browser, "#island .island-stop")
    press(browser, Keys.ENTER)
    wait_for("the workout ended", lambda: not lock_screens(browser))
    tab_to(browser, "#start")
    press(browser, Keys.ENTER)
    wait_for("a new workout", lambda: len(lock_screens(browser)) == 1)
    tab_to(browser, "#stop")
    press(browser, Keys.SPACE)
    wait_for("all stopped", lambda: not lock_screens(browser))
    wait_for("both in the history", lambda: browser.execute_script(
        "return document.querySelectorAll('#history-rows tr').length === 2"))
    assert_clean_console(browser)


def test_token_form_works_from_the_keyboard(start_server, browser):
    srv = start_server("--controller-token", "kb-secret")
    open_dashboard(browser, srv.url)
    wait_for("the token form (view only)", lambda: browser.execute_script(
        "return !document.getElementById('token-form').hidden"))
    tab_to(browser, "#token-input")
    press(browser, "kb-secret", Keys.ENTER)
    wait_for("the controller role", lambda: browser.execute_script(
        "return document.getElementById('status').dataset.role === 'controller'"))
    assert_every_control_reachable(browser, "dashboard (after the token)")
    assert_clean_console(browser)


def test_inspector_works_from_the_keyboard(server, browser):
    async def traffic() -> str:
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                     "durationSeconds": 600})
            await request(ws, {"type": "pause", "requestId": "p", "activityId": ack["activityId"]})
            await request(ws, {"type": "pause", "requestId": "p2", "activityId": ack["activityId"]})  # refused
            return ack["activityId"]

    activity = run(traffic())
    browser.get(server.url + "/inspector")
    wait_for("the records", lambda: browser.execute_script(
        "return document.querySelectorAll('#inspections li.inspection').length === 3"), timeout=10)

    # A verdict filter (arrows), "Pushes only" (Space), back (Space).
    tab_to(browser, "#filter-verdict")
    press(browser, Keys.ARROW_DOWN)  # "Applied"
    wait_for("applied only", lambda: browser.execute_script(
        "return [...document.querySelectorAll('#inspections li.inspection')].filter((li) => !li.hidden)"
        ".every((li) => li.dataset.verdict === 'applied')"
        " && document.getElementById('filter-verdict').value === 'applied'"))
    press(browser, Keys.HOME)  # "All verdicts"
    wait_for("all verdicts", lambda: browser.execute_script(
        "return document.getElementById('filter-verdict').value === ''"))
    tab_to(browser, "#filter-pushes")
    press(browser, Keys.SPACE)
    wait_for("pushes only", lambda: browser.execute_script("return document.getElementById('filter-pushes').checked"))
    press(browser, Keys.SPACE)
    wait_for("everything again", lambda: browser.execute_script(
        "return !document.getElementById('filter-pushes').checked"))

    # A record opens with Enter and closes with Space.
    summary = "#inspections li.inspection button.summary"
    tab_to(browser, summary)
    press(browser, Keys.ENTER)
    wait_for("the record open", lambda: browser.execute_script(
        "return document.activeElement.getAttribute('aria-expanded') === 'true'"))
    press(browser, Keys.SPACE)
    wait_for("the record closed", lambda: browser.execute_script(
        "return document.activeElement.getAttribute('aria-expanded') === 'false'"))
    press(browser, Keys.ENTER)

    # The activity filter (arrows) shows its timeline: an event (Enter) and the slider (Home / End).
    tab_to(browser, "#filter-activity")
    press(browser, Keys.ARROW_DOWN)
    wait_for("the timeline", lambda: browser.execute_script(
        "return document.getElementById('filter-activity').value === arguments[0]"
        " && !document.getElementById('timeline').hidden", activity), timeout=10)
    tab_to(browser, "#timeline .timeline-event")
    press(browser, Keys.ENTER)
    tab_to(browser, "#scrub")
    press(browser, Keys.HOME)
    wait_for("the slider at the start", lambda: browser.execute_script("return document.getElementById('scrub').value === '0'"))
    press(browser, Keys.END)
    wait_for("the slider at the end", lambda: browser.execute_script(
        "return document.getElementById('scrub').value === document.getElementById('scrub').max"))

    count = assert_every_control_reachable(browser, "inspector")
    assert count >= 8, count

    # The link back to the dashboard (Enter).
    tab_to(browser, 'a[href="/"]')
    press(browser, Keys.ENTER)
    wait_for("the dashboard", lambda: browser.execute_script("return location.pathname === '/' && !!document.getElementById('start-form')"))
    assert_clean_console(browser)

"""Share links in the browser (issue 12): the dashboard's Sharing panel makes, lists and revokes links; the
link opens a live, read-only page of that one activity; `?presentation=` makes it an OBS-style source."""
from __future__ import annotations

import re
import time

from selenium.webdriver.common.by import By

from test_page import (  # noqa: F401  (browser is a fixture)
    assert_clean_console, browser, css, open_dashboard, screenshot, start_workout, wait_for,
)


def _countdown_seconds(text: str) -> int:
    parts = [int(p) for p in text.strip().split(":")]
    return parts[0] * 60 + parts[1] if len(parts) == 2 else parts[0] * 3600 + parts[1] * 60 + parts[2]


def test_dashboard_shares_a_workout_and_revokes_it(server, browser):
    open_dashboard(browser, server.url)
    start_workout(browser, "jogging", 600)
    wait_for("the jogging Lock Screen", lambda: len(css(browser, ".lock-screen")) == 1)
    panel = browser.find_element(By.ID, "shares-panel")
    wait_for("the Sharing panel (controller)", panel.is_displayed)
    wait_for("the workout in the share picker", lambda: browser.find_element(By.ID, "share-activity").get_attribute("value"))
    browser.find_element(By.ID, "share-create").click()
    link = wait_for("the new link", lambda: browser.find_element(By.ID, "share-link").get_attribute("value"))
    assert re.fullmatch(re.escape(server.url) + r"/s/[A-Za-z0-9_-]{30,}", link), link
    wait_for("the share listed", lambda: len(css(browser, "#share-rows tr")) == 1)
    dashboard = browser.current_window_handle

    # The link, as a viewer would open it: the Lock Screen and the island, counting down, read-only.
    browser.switch_to.new_window("tab")
    browser.get(link)
    name = wait_for("the shared Lock Screen", lambda: browser.find_element(By.CSS_SELECTOR, ".lock-screen .workout-name").text)
    assert "Jogging" in name
    countdown = browser.find_element(By.CSS_SELECTOR, ".lock-screen .countdown")
    first = _countdown_seconds(countdown.text)
    wait_for("the shared countdown to move", lambda: _countdown_seconds(countdown.text) < first, timeout=4)
    assert not css(browser, "button"), "a share page has no controls"
    screenshot(browser, "share-page.png")
    assert_clean_console(browser)

    # The dashboard sees one viewer, then revokes: the share page says it has ended.
    browser.switch_to.window(dashboard)
    wait_for("one viewer listed", lambda: css(browser, "#share-rows tr td")[2].text == "1", timeout=15)
    css(browser, "#share-rows button")[0].click()
    wait_for("the share gone from the list", lambda: not css(browser, "#share-rows tr"))
    browser.switch_to.window(browser.window_handles[-1])
    wait_for("the ended page", lambda: "share has ended" in browser.find_element(By.TAG_NAME, "h1").text.lower(), timeout=10)


def test_share_link_as_an_obs_source_is_transparent_and_live(server, browser):
    open_dashboard(browser, server.url)
    start_workout(browser, "yoga", 600)
    wait_for("the Sharing panel (controller)", browser.find_element(By.ID, "shares-panel").is_displayed)
    wait_for("the workout in the share picker", lambda: browser.find_element(By.ID, "share-activity").get_attribute("value"))
    browser.find_element(By.ID, "share-create").click()
    link = wait_for("the new link", lambda: browser.find_element(By.ID, "share-link").get_attribute("value"))
    browser.get(link + "?presentation=lock-screen&scale=2")
    countdown = wait_for("the Lock Screen countdown", lambda: browser.find_element(By.CSS_SELECTOR, ".countdown"))
    backgrounds = browser.execute_script(
        "return [getComputedStyle(document.documentElement).backgroundColor, getComputedStyle(document.body).backgroundColor]")
    assert all(b in ("rgba(0, 0, 0, 0)", "transparent") for b in backgrounds), backgrounds
    assert not css(browser, ".island-expanded"), "one presentation only"
    first = _countdown_seconds(countdown.text)
    time.sleep(2.2)
    assert _countdown_seconds(browser.find_element(By.CSS_SELECTOR, ".countdown").text) < first
    assert_clean_console(browser)


def test_sharing_list_names_activities_by_what_they_show_and_says_when_they_ended(server, browser):
    """Issue 19, item 5: an emoji activity is listed by its emoji and name (not "Workout (E7B8B07C)"); an
    ended activity that is still shown says so, in the Sharing list and on its Lock Screen view."""
    from datetime import datetime, timedelta, timezone

    from wsclient import connect, recv_until, request, run

    from support import iso_ms0 as iso

    async def setup() -> dict[str, str]:
        now = datetime.now(timezone.utc)
        async with connect(server.ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            emoji = await request(ws, {"type": "start", "requestId": "e", "attributesType": "emoji",
                                       "attributes": {"startTime": iso(now), "endTime": iso(now + timedelta(hours=1)),
                                                      "name": "Morning run"},
                                       "content": {"state": {"emoji": "🏃"}, "relevanceScore": 5}})
            yoga = await request(ws, {"type": "start", "requestId": "y", "attributes": {"workout": "yoga"},
                                      "durationSeconds": 600})
            for rid, aid in (("ey", yoga["activityId"]), ("ee", emoji["activityId"])):
                ended = await request(ws, {"type": "end", "requestId": rid, "activityId": aid, "dismissalPolicy": "default"})
                assert ended["type"] == "ack", ended
            return {"emoji": emoji["activityId"], "yoga": yoga["activityId"]}

    open_dashboard(browser, server.url)
    ids = run(setup())
    options = wait_for("both activities in the share picker", lambda: (lambda o: o if len(o) == 2 else None)(
        browser.execute_script("return [...document.querySelectorAll('#share-activity option')]"
                               ".map((o) => [o.value, o.textContent])")))
    labels = dict(options)
    assert re.fullmatch(r"🏃 Morning run, ended \(started \d{1,2}:\d{2}( [AP]M)?\)", labels[ids["emoji"]]), labels
    assert re.fullmatch(r"Yoga, ended \(started \d{1,2}:\d{2}( [AP]M)?\)", labels[ids["yoga"]]), labels
    assert not any(ids[k][:8] in v for k, v in ((k, labels[ids[k]]) for k in ids)), "no id fragments"
    emoji_screen = browser.find_element(By.CSS_SELECTOR, f'.lock-item[data-activity-id="{ids["emoji"]}"]')
    wait_for("the emoji Lock Screen to say it ended",
             lambda: emoji_screen.find_element(By.CSS_SELECTOR, ".badge").get_attribute("textContent") == "Ended")
    yoga_screen = browser.find_element(By.CSS_SELECTOR, f'.lock-item[data-activity-id="{ids["yoga"]}"]')
    assert yoga_screen.find_element(By.CSS_SELECTOR, ".badge").get_attribute("textContent") == "Ended"
    # A link to an ended activity is listed with the same name.
    browser.execute_script("document.getElementById('share-activity').value = arguments[0]", ids["emoji"])
    browser.find_element(By.ID, "share-create").click()
    row = wait_for("the share listed", lambda: css(browser, "#share-rows tr"))[0]
    assert row.find_elements(By.TAG_NAME, "td")[0].text == labels[ids["emoji"]]
    assert css(browser, "#share-rows button")[0].accessible_name == f"Revoke the link to {labels[ids['emoji']]}"
    assert_clean_console(browser)

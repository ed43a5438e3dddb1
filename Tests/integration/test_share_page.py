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

"""Issue 19, item 2: the dashboard's History panel in headless Chromium against the real server.

- End three workouts — one that ran its countdown out ("Finished"), one ended early ("Stopped"), and one the
  server ended at the 8-hour cap ("Lifetime cap"; seeded into the server's SQLite history, since nobody waits
  8 hours): the panel lists them newest first, live, with the durations and endings `GET /api/history` gives,
  and the chart's table has the right minutes per day.
- Paging: with more past workouts than one `history` page holds, "Show older workouts" (pressed with the
  keyboard) reaches the oldest through the protocol's cursor (`before` + `beforeId`).
"""
from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import urllib.request
import uuid
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from face_support import FIXTURE_KINDS, start_all
from support import iso
from wsclient import connect, recv_until, request
from test_page import (  # noqa: F401  (browser is a fixture)
    assert_clean_console, browser, lock_screens, open_dashboard, screenshot, start_workout, wait_for,
)

UTC = timezone.utc


# -- helpers --------------------------------------------------------------------------------------

def api_history(url: str, limit: int = 500) -> list[dict]:
    with urllib.request.urlopen(f"{url}/api/history?limit={limit}", timeout=5) as r:
        return json.load(r)["workouts"]


def format_duration(seconds: float | None) -> str:
    """history.js formatDuration, in Python."""
    if seconds is None:
        return "—"
    total = max(0, int(seconds + 0.5))
    if total < 60:
        return f"{total} s"
    h, m, s = total // 3600, (total % 3600) // 60, total % 60
    if h:
        return f"{h} h {m} min" if m else f"{h} h"
    return f"{m} min {s} s" if s else f"{m} min"


def seed(db: Path, entries: list[tuple[str, datetime, datetime, str]]) -> list[str]:
    """Adds finished workouts to the server's history table: (workout, start, end, endReason) each.

    Written in the store's own form (the activity's wire object plus `timerFinished`), as the server writes
    them when an activity ends. Returns the new ids.
    """
    ids = []
    with sqlite3.connect(db, timeout=5) as conn:
        for workout, start, end, reason in entries:
            activity_id = str(uuid.uuid4()).upper()
            timer_end = start + timedelta(hours=1)
            activity = {
                "id": activity_id, "attributesType": "workout", "attributes": {"workout": workout},
                "content": {"state": {"workoutTimer": {"start": iso(start), "end": iso(timer_end)}},
                            "staleDate": iso(timer_end), "relevanceScore": 0},
                "activityState": "ended", "startDate": iso(start), "endDate": iso(end),
                "dismissalDate": iso(end + timedelta(hours=4)), "endReason": reason, "timerFinished": False,
            }
            conn.execute("INSERT INTO history (id, end_date, json) VALUES (?, ?, ?)",
                         (activity_id, end.timestamp(), json.dumps(activity)))
            ids.append(activity_id)
    return ids


def history_rows(driver) -> list[dict]:
    return driver.execute_script("""
        return [...document.querySelectorAll('#history-rows tr')].map((tr) => ({
          id: tr.dataset.activityId, outcome: tr.dataset.outcome,
          name: tr.querySelector('.history-name').textContent, kind: tr.querySelector('.history-kind').textContent,
          started: tr.querySelector('time').getAttribute('datetime'),
          planned: tr.querySelector('.history-planned').textContent,
          plannedSeconds: tr.querySelector('.history-planned').dataset.seconds ?? null,
          actual: tr.querySelector('.history-actual').textContent,
          actualSeconds: tr.querySelector('.history-actual').dataset.seconds,
          ended: tr.querySelector('.history-outcome').textContent}));
    """)


def chart_table(driver) -> dict[str, float]:
    return driver.execute_script("""
        const out = {};
        for (const tr of document.querySelectorAll('#history-chart-rows tr[data-day]')) {
          out[tr.dataset.day] = Number(tr.querySelector('td').textContent);
        }
        return out;
    """)


def expected_minutes(entries: list[dict]) -> dict[str, float]:
    """Minutes per local day of each entry's start, for the last 28 days (history.js minutesPerDay)."""
    today = datetime.now().astimezone().date()
    seconds: dict[str, float] = defaultdict(float)
    for e in entries:
        start = datetime.fromisoformat(e["startDate"].replace("Z", "+00:00")).astimezone()
        if 0 <= (today - start.date()).days < 28:
            seconds[start.date().isoformat()] += e["actualDurationSeconds"]
    return {day: m for day, s in seconds.items() if (m := round(s / 6) / 10) > 0}


# -- tests ----------------------------------------------------------------------------------------

def test_history_lists_three_endings_newest_first_live_with_the_chart_table(start_server, browser, tmp_path):
    srv = start_server(cwd=tmp_path)  # the SQLite store in tmp_path/data
    now = datetime.now(UTC)
    [capped] = seed(tmp_path / "data" / "liveactivity.sqlite",
                    [("aerobics", now - timedelta(hours=9), now - timedelta(hours=1), "lifetimeLimit")])
    open_dashboard(browser, srv.url)
    wait_for("the capped workout in the history", lambda: [r["id"] for r in history_rows(browser)] == [capped])

    # Finished: a 1-second yoga countdown runs out, then STOP.
    start_workout(browser, "yoga", duration=1)
    [screen] = wait_for("the yoga Lock Screen", lambda: lock_screens(browser))
    yoga = screen.get_attribute("data-activity-id")
    wait_for("the yoga countdown to run out",
             lambda: screen.find_element(By.CSS_SELECTOR, ".countdown").text == "0:00", timeout=5)
    browser.find_element(By.ID, "stop").click()
    wait_for("the yoga workout in the history", lambda: [r["id"] for r in history_rows(browser)][:1] == [yoga])

    # Stopped: a 10-minute jogging workout ended at once.
    start_workout(browser, "jogging", duration=600)
    [screen] = wait_for("the jogging Lock Screen", lambda: lock_screens(browser))
    jogging = screen.get_attribute("data-activity-id")
    browser.find_element(By.ID, "stop").click()
    rows = wait_for("three workouts, newest first", lambda: (lambda r: r if [x["id"] for x in r] == [
        jogging, yoga, capped] else None)(history_rows(browser)))

    truth = {e["id"]: e for e in api_history(srv.url)}
    assert [truth[r["id"]]["outcome"] for r in rows] == ["stopped", "completed", "expired"]
    assert [r["ended"] for r in rows] == ["Stopped", "Finished", "Lifetime cap (8 h)"]
    assert [r["outcome"] for r in rows] == ["stopped", "completed", "expired"]
    assert [(r["name"], r["kind"]) for r in rows] == [("Jogging", "Workout"), ("Yoga", "Workout"),
                                                      ("Aerobics", "Workout")]
    for r in rows:
        e = truth[r["id"]]
        assert r["started"] == e["startDate"]
        assert float(r["actualSeconds"]) == e["actualDurationSeconds"]
        assert r["actual"] == format_duration(e["actualDurationSeconds"]), (r, e)
        assert float(r["plannedSeconds"]) == e["plannedDurationSeconds"]
        assert r["planned"] == format_duration(e["plannedDurationSeconds"]), (r, e)
    assert rows[0]["planned"] == "10 min" and rows[1]["planned"] == "1 s" and rows[2]["actual"] == "8 h"

    # The chart: one bar per day of the last 4 weeks, and a table a screen reader reads instead.
    assert browser.execute_script("return document.querySelectorAll('#history-chart rect.chart-bar').length") == 28
    assert browser.find_element(By.ID, "history-chart").get_attribute("aria-hidden") == "true"
    want = expected_minutes(list(truth.values()))
    wait_for("the chart's table", lambda: chart_table(browser) == want)
    assert sum(want.values()) >= 480  # the capped workout ran 8 hours
    screenshot(browser, "history.png")
    assert_clean_console(browser)


def test_history_pages_back_with_the_cursor(start_server, browser, tmp_path):
    srv = start_server(cwd=tmp_path)
    base = datetime.now(UTC) - timedelta(days=40)  # before the chart's window: only the table pages
    # 105 workouts, more than one page (100); two of them end at the same instant (the cursor's beforeId).
    entries = [("jogging", base + timedelta(minutes=i), base + timedelta(minutes=i, seconds=30), "request")
               for i in range(104)]
    entries.append(("yoga", base + timedelta(minutes=3), base + timedelta(minutes=3, seconds=30), "request"))
    ids = seed(tmp_path / "data" / "liveactivity.sqlite", entries)
    open_dashboard(browser, srv.url)
    wait_for("the first 10 rows", lambda: len(history_rows(browser)) == 10)
    more = browser.find_element(By.ID, "history-more")
    assert more.is_displayed() and more.text == "Show older workouts"
    more.send_keys(Keys.ENTER)  # keyboard first
    wait_for("20 rows", lambda: len(history_rows(browser)) == 20)
    assert browser.switch_to.active_element.tag_name == "th", "focus moves to the first new row"
    while browser.find_element(By.ID, "history-more").is_displayed():
        count = len(history_rows(browser))
        browser.find_element(By.ID, "history-more").send_keys(Keys.SPACE)
        wait_for("more rows, or the last page", lambda: len(history_rows(browser)) > count
                 or not browser.find_element(By.ID, "history-more").is_displayed(), timeout=5)
    rows = history_rows(browser)
    assert len(rows) == 105 and sorted(r["id"] for r in rows) == sorted(ids)
    assert [r["id"] for r in rows] == [e["id"] for e in api_history(srv.url)]
    # The page asked for the second page with the cursor (the inspector records every client message).
    with urllib.request.urlopen(f"{srv.url}/api/inspections", timeout=5) as r:
        inspections = json.load(r)["inspections"]
    paged = [i["raw"] for i in inspections if i.get("type") == "history" and "before" in (i.get("raw") or {})]
    assert paged and all("beforeId" in raw for raw in paged), paged
    assert_clean_console(browser)


def test_history_names_a_declared_kind_by_its_title_not_workout(start_server, browser, tmp_path):
    """Trial (s22): every ended activity of a declared kind was listed as "Workout", its kind's name under it.
    Now a row shows the kind's title (kind.json's `title`, from the attributes) with the kind's label under it,
    or the label alone for a kind without a title."""
    kinds = tmp_path / "kinds"
    shutil.copytree(FIXTURE_KINDS, kinds)
    pizza = kinds / "pizza-delivery" / "kind.json"
    pizza.write_text(json.dumps({**json.loads(pizza.read_text()), "title": "Order {{orderNumber}}"}))
    srv = start_server("--kinds", str(kinds), cwd=tmp_path)
    ws_url = srv.url.replace("http://", "ws://") + "/ws"
    ids = asyncio.run(start_all(ws_url, datetime.now(UTC)))

    async def end_all() -> None:
        async with connect(ws_url) as ws:
            await recv_until(ws, lambda m: m["type"] == "snapshot")
            for kind, activity_id in ids.items():
                ack = await request(ws, {"type": "end", "requestId": f"end-{kind}", "activityId": activity_id})
                assert ack["type"] == "ack", ack
    asyncio.run(end_all())

    with urllib.request.urlopen(f"{srv.url}/kinds", timeout=5) as r:
        labels = {k["name"]: k["label"] for k in json.load(r)["kinds"]}
    want = {ids["pizza-delivery"]: ("Order PZ-77", "Pizza delivery"),
            ids["food-delivery"]: (labels["food-delivery"], ""),
            ids["sports-results"]: (labels["sports-results"], "")}
    open_dashboard(browser, srv.url)

    def named() -> dict | None:
        rows = {r["id"]: (r["name"], r["kind"]) for r in history_rows(browser) if r["id"] in want}
        return rows if len(rows) == 3 else None
    got = wait_for("the three ended activities in the history", named)
    assert got == want, got
    assert all(name != "Workout" for name, _ in got.values())
    screenshot(browser, "history-declared-kinds.png")
    assert_clean_console(browser)

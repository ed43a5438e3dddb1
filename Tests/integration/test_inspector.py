"""The push inspector (issue 11) against the real server: verdicts over WebSocket and HTTP, the inspector's
records (`GET /api/inspections`, `inspect` → `inspection`), timelines, `?at=` renderings, budget emulation, and
the page `/inspector` in headless Chromium.

Payloads are in Apple's shape (push_helpers): Unix-second `timestamp` / `stale-date`, `content-state` dates as
seconds since 2001. All WebSocket traffic is validated against docs/schemas (schema_check.checked).
"""
from __future__ import annotations

import asyncio
import json
import re
import time
from datetime import datetime, timezone

import pytest

from push_helpers import REFERENCE_EPOCH, http_push, push_to_start_token
from schema_check import checked, validate_server
from support import http_get
from wsclient import connect, recv_json, recv_until, run, send_json

UTC = timezone.utc


def get_json(url: str) -> tuple[int, dict]:
    r = http_get(url, timeout=5)
    return r.status, json.loads(r.body or b"{}")


def get_text(url: str) -> tuple[int, str, dict]:
    r = http_get(url, timeout=5)
    return r.status, r.text(), r.headers


def timer(start: float, seconds: float) -> dict:
    """A workout content-state: `workoutTimer` as [lower, upper] in seconds since 2001."""
    return {"workoutTimer": [start - REFERENCE_EPOCH, start - REFERENCE_EPOCH + seconds]}


def start_payload(ts: int, now: float, seconds: float = 600, **aps) -> dict:
    return {"aps": {"timestamp": ts, "event": "start", "attributes-type": "WorkoutWidgetAttributes",
                    "attributes": {"workout": 2}, "content-state": timer(now, seconds),
                    "alert": {"title": "Workout started", "body": "Yoga"}, **aps}}


def update_payload(ts: int, now: float, seconds: float = 600, **aps) -> dict:
    return {"aps": {"timestamp": ts, "event": "update", "content-state": timer(now, seconds), **aps}}


class Transport:
    """Sends pushes over one transport; answers as (status, verdict, cause, activityId)."""

    def __init__(self, kind: str, server, ws=None):
        self.kind, self.server, self.ws, self.count = kind, server, ws, 0

    async def push(self, token: str, payload: dict, priority: int | None = None) -> dict:
        self.count += 1
        if self.kind == "websocket":
            rid = f"p{self.count}"
            msg = {"type": "push", "requestId": rid, "pushToken": token, "payload": payload}
            if priority is not None:
                msg["priority"] = priority
            await send_json(self.ws, msg)
            m = await recv_until(self.ws, lambda m: m.get("requestId") == rid and m["type"] in ("pushResult", "error"))
            assert m["type"] == "pushResult", m
            validate_server(m)
            return {"status": m["status"], "verdict": m.get("verdict"), "cause": m.get("cause") or m.get("reason"),
                    "activityId": m.get("activityId"), "warning": m.get("warning")}
        headers = {"apns-priority": str(priority)} if priority is not None else None
        r = await asyncio.to_thread(http_push, self.server.url, token, payload, headers=headers)
        if r.status == 200:
            assert r.body == b""
            return {"status": 200, "verdict": r.headers["liveactivity-verdict"], "cause": r.headers.get("liveactivity-cause"),
                    "activityId": r.headers.get("liveactivity-activity-id"), "warning": r.headers.get("liveactivity-warning")}
        return {"status": r.status, "verdict": None, "cause": r.json["reason"], "activityId": None, "warning": None}


async def cause_table(t: Transport, start_token: str) -> list[tuple]:
    """One push per cause; returns (name, status, verdict, cause) for each."""
    now = time.time()
    ts = int(now)
    out = []

    async def send(name, token, payload):
        r = await t.push(token, payload)
        out.append((name, r["status"], r["verdict"], r["cause"]))
        return r

    started = await send("applied start", start_token, start_payload(ts, now))
    pid = started["activityId"]
    _, activity = await asyncio.to_thread(get_json, f"{t.server.url}/api/activities/{pid}")
    token = activity["pushToken"]
    await send("applied update", token, update_payload(ts + 1, now, 900))
    await send("old timestamp", token, update_payload(ts - 30, now))
    await send("future timestamp", token, update_payload(ts + 9 * 3600, now))
    await send("milliseconds timestamp", token, update_payload(ts * 1000, now))
    await send("undecodable content-state", token, {"aps": {"timestamp": ts + 2, "event": "update",
                                                            "content-state": {"workoutTimer": ["2026-11-29T17:00:00Z", "2026-11-29T17:10:00Z"]}}})
    await send("swapped", token, {"aps": {"timestamp": ts + 3, "event": "update", "content-state": {"workout": 2}}})
    await send("unknown attributes type", start_token, start_payload(ts, now, **{"attributes-type": "PizzaDeliveryAttributes"}))
    no_alert = start_payload(ts, now)
    del no_alert["aps"]["alert"]
    await send("missing alert", start_token, no_alert)
    stale = await send("stale date in the past", token, update_payload(ts + 4, now, 900, **{"stale-date": ts - 60}))
    assert stale["warning"] and "stale" in stale["warning"], stale
    big = update_payload(ts + 5, now, alert={"title": "x" * 4200, "body": "b"})
    await send("payload over 4 KB", token, big)
    await send("end", token, {"aps": {"timestamp": ts + 6, "event": "end", "dismissal-date": ts + 600}})
    await send("update after end", token, update_payload(ts + 7, now))
    return out


EXPECTED = [
    ("applied start", 200, "applied", None),
    ("applied update", 200, "applied", None),
    ("old timestamp", 200, "ignored", "oldTimestamp"),
    ("future timestamp", 200, "dropped", "futureTimestamp"),
    ("milliseconds timestamp", 200, "dropped", "futureTimestamp"),
    ("undecodable content-state", 200, "dropped", "undecodableContentState"),
    ("swapped", 200, "dropped", "swappedAttributesAndContentState"),
    ("unknown attributes type", 200, "dropped", "unknownAttributesType"),
    ("missing alert", 200, "dropped", "missingAlert"),
    ("stale date in the past", 200, "applied", "staleDateInPast"),
    ("payload over 4 KB", 413, None, "PayloadTooLarge"),
    ("end", 200, "applied", None),
    ("update after end", 200, "ignored", "activityEnded"),
]


def test_same_payloads_give_the_same_verdicts_over_websocket_and_http(server):
    start_token = push_to_start_token(server)

    async def body():
        # pushes go out unchecked: several payloads here are deliberately wrong; every reply is validated
        async with connect(server.ws_url) as ws:
            await recv_json(ws)  # snapshot
            async with connect(server.ws_url) as raw_watcher:
                watcher = checked(raw_watcher)
                await recv_json(watcher)
                await send_json(watcher, {"type": "inspect", "requestId": "i1"})
                await recv_until(watcher, lambda m: m["type"] == "ack" and m.get("requestId") == "i1")
                over_ws = await cause_table(Transport("websocket", server, ws), start_token)
                over_http = await cause_table(Transport("http", server), start_token)
                # the watcher saw every push live, each an `inspection` valid against its schema
                seen = []
                while len(seen) < len(over_ws) + len(over_http):
                    m = await recv_until(watcher, lambda m: m["type"] == "inspection", timeout=5)
                    if m["inspection"]["source"] == "push":
                        seen.append(m["inspection"])
                return over_ws, over_http, seen

    over_ws, over_http, seen = run(body())
    assert over_ws == EXPECTED, over_ws
    assert over_http == over_ws
    assert [(s["transport"], s["verdict"]) for s in seen] == (
        [("websocket", e[2] or "refused") for e in EXPECTED] + [("http", e[2] or "refused") for e in EXPECTED])

    status, listing = get_json(server.url + "/api/inspections")
    assert status == 200 and listing["type"] == "inspections" and listing["budgetEmulation"] is False
    pushes = [r for r in listing["inspections"] if r["source"] == "push"]
    assert [r["id"] for r in pushes] == [s["id"] for s in seen]
    by_cause = {r.get("cause"): r for r in pushes}
    undecodable = by_cause["undecodableContentState"]
    assert "aps.content-state: typeMismatch Double at workoutTimer[0]" in undecodable["detail"]
    lens = {d["path"]: d for d in undecodable["dates"]}
    assert any("is a string" in w for w in lens["aps.content-state.workoutTimer[0]"]["warnings"])
    ms = by_cause["futureTimestamp"]
    assert ms["dates"][0]["path"] == "aps.timestamp"
    applied_update = [r for r in pushes if r.get("event") == "update" and r["verdict"] == "applied"][0]
    assert [c["path"] for c in applied_update["diff"]] == ["state.workoutTimer.end"], applied_update["diff"]
    assert applied_update["decoded"]["state"]["workoutTimer"]["end"] == applied_update["diff"][0]["after"]
    assert all("throttled" not in r for r in pushes)  # emulation is off by default


def test_date_lens_flags_unix_seconds_where_swift_reads_seconds_since_2001(server):
    start_token = push_to_start_token(server)
    now = time.time()
    payload = start_payload(int(now), now)
    payload["aps"]["content-state"] = {"workoutTimer": [now, now + 600]}  # Unix seconds: 31 years off
    r = http_push(server.url, start_token, payload)
    assert r.status == 200 and r.verdict == "applied"  # iOS decodes it: the countdown just ends in 2057
    _, listing = get_json(server.url + "/api/inspections")
    record = listing["inspections"][-1]
    lens = {d["path"]: d for d in record["dates"]}
    entry = lens["aps.content-state.workoutTimer[1]"]
    assert entry["iso"].startswith("2057-"), entry
    assert entry["referenceSeconds"] == pytest.approx(now + 600)
    assert entry["unixSeconds"] == pytest.approx(now + 600 + REFERENCE_EPOCH)
    assert any("looks like Unix seconds" in w and "31 years off" in w for w in entry["warnings"]), entry
    assert lens["aps.timestamp"]["warnings"] == []


def test_native_messages_are_inspected_and_no_op_updates_flagged(server):
    async def body():
        async with connect(server.ws_url) as raw:
            ws = checked(raw)
            await recv_json(ws)
            await send_json(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "jogging"}, "durationSeconds": 60})
            ack = await recv_until(ws, lambda m: m.get("requestId") == "s")
            activity = await recv_until(ws, lambda m: m["type"] == "activity" and m["event"] == "started")
            content = activity["activity"]["content"]
            for rid in ("u1", "u2"):
                await send_json(ws, {"type": "update", "requestId": rid, "activityId": ack["activityId"], "content": content})
                await recv_until(ws, lambda m: m.get("requestId") == rid)
            await ws.send_invalid(json.dumps({"type": "update", "requestId": "bad", "activityId": ack["activityId"],
                                              "content": {"state": {"workoutTimer": {"start": 1, "end": 2}}}}))
            await recv_until(ws, lambda m: m.get("requestId") == "bad" and m["type"] == "error")
            return ack["activityId"]

    activity_id = run(body())
    _, listing = get_json(server.url + "/api/inspections")
    messages = [r for r in listing["inspections"] if r["source"] == "message"]
    assert [(r["type"], r["verdict"]) for r in messages] == [("start", "applied"), ("update", "applied"),
                                                            ("update", "applied"), ("update", "refused")]
    assert [r["noOp"] for r in messages] == [False, True, True, False]
    assert messages[-1]["cause"] == "invalid_field" and messages[-1]["activityId"] == activity_id
    assert any("is a number" in w for d in messages[-1]["dates"] for w in d["warnings"])


def test_timeline_and_renderings_at_an_instant(server):
    start_token = push_to_start_token(server)
    now = time.time()
    ts = int(now)
    r = http_push(server.url, start_token, start_payload(ts, now, 600))
    pid = r.headers["liveactivity-activity-id"]
    token = get_json(f"{server.url}/api/activities/{pid}")[1]["pushToken"]
    time.sleep(1.1)
    assert http_push(server.url, token, update_payload(ts + 1, now, 1200)).verdict == "applied"
    assert http_push(server.url, token, update_payload(ts - 5, now, 60)).verdict == "ignored"

    status, timeline = get_json(f"{server.url}/api/activities/{pid}/timeline")
    assert status == 200 and timeline["type"] == "timeline"
    assert [e["event"] for e in timeline["events"]] == ["started", "updated"]
    assert [p["verdict"] for p in timeline["inspections"]] == ["applied", "applied", "ignored"]
    start = datetime.fromisoformat(timeline["startDate"].replace("Z", "+00:00"))
    cap = datetime.fromisoformat(timeline["capDate"].replace("Z", "+00:00"))
    assert (cap - start).total_seconds() == 8 * 3600

    started_at = timeline["events"][0]["at"]
    countdown = re.compile(r'countdown[^"]*"[^>]*>(\d+:\d\d)<')
    s, html, headers = get_text(f"{server.url}/activities/{pid}/render/lock-screen?at={started_at}")
    assert s == 200 and countdown.search(html).group(1) == "10:00", html[:300]
    assert "x-frame-options" not in headers
    s, html, _ = get_text(f"{server.url}/activities/{pid}/render/lock-screen?at={timeline['events'][1]['at']}")
    assert countdown.search(html).group(1) in ("19:59", "20:00")
    s, _, _ = get_text(f"{server.url}/activities/{pid}/render/lock-screen?at=2001-01-01T00:00:00Z")
    assert s == 404  # not started yet then
    s, _, _ = get_text(f"{server.url}/activities/{pid}/render/lock-screen?at=yesterday")
    assert s == 400
    assert get_json(f"{server.url}/api/activities/nope/timeline")[0] == 404


def test_budget_emulation_marks_without_changing_the_dashboard(start_server):
    server = start_server("--memory", "--emulate-budget", "--budget-per-hour", "2", "--render-floor-seconds", "15")
    start_token = push_to_start_token(server)
    now = time.time()
    ts = int(now)
    pid = http_push(server.url, start_token, start_payload(ts, now)).headers["liveactivity-activity-id"]
    token = get_json(f"{server.url}/api/activities/{pid}")[1]["pushToken"]
    verdicts = [http_push(server.url, token, update_payload(ts + i, now, 600 + i), headers=h).verdict
                for i, h in enumerate([None, {"apns-priority": "10"}, {"apns-priority": "10"}, {"apns-priority": "5"}], start=1)]
    assert verdicts == ["applied"] * 4  # the dashboard still gets every update
    assert get_json(f"{server.url}/api/activities/{pid}")[1]["content"]["state"]["workoutTimer"]["end"]
    _, listing = get_json(server.url + "/api/inspections")
    assert listing["budgetEmulation"] is True
    updates = [r for r in listing["inspections"] if r.get("event") == "update"]
    assert [r.get("priority") for r in updates] == [None, 10, 10, 5]
    throttled = [r.get("throttled") or [] for r in updates]
    assert throttled[0] == []  # first update: within budget, nothing before it
    assert any("render" in t for t in throttled[1])  # < 15 s after the previous one
    assert any("budget" in t for t in throttled[2])  # third priority-10 push in the hour, budget 2
    assert not any("budget" in t for t in throttled[3]) and any("render" in t for t in throttled[3])  # priority 5
    assert http_push(server.url, token, update_payload(ts + 9, now), headers={"apns-priority": "7"}).json["reason"] == "BadPriority"


def test_inspections_need_a_viewer_token(start_server):
    server = start_server("--memory", "--controller-token", "c" * 24, "--viewer-token", "v" * 24)
    assert get_json(server.url + "/api/inspections")[0] == 401
    assert get_json(server.url + "/api/inspections?token=" + "v" * 24)[0] == 200
    status, html, headers = get_text(server.url + "/inspector")
    assert status == 200 and "Push inspector" in html
    assert "frame-src 'self'" in headers["content-security-policy"]


# -- the page in Chromium ---------------------------------------------------------------------------

from test_page import assert_clean_console, browser, css, wait_for  # noqa: E402,F401  (fixture re-used)
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402


def test_inspector_page_lists_verdicts_and_scrubs_the_timeline(server, browser):
    start_token = push_to_start_token(server)
    browser.get(server.url + "/inspector")
    wait_for("#status[data-state=open]", lambda: browser.find_element(By.ID, "status").get_attribute("data-state") == "open", 10)

    now = time.time()
    ts = int(now)
    r = http_push(server.url, start_token, start_payload(ts, now, 600))
    assert r.verdict == "applied"
    pid = r.headers["liveactivity-activity-id"]
    token = get_json(f"{server.url}/api/activities/{pid}")[1]["pushToken"]
    assert http_push(server.url, token, update_payload(ts - 10, now, 60)).verdict == "ignored"
    undecodable = {"aps": {"timestamp": ts + 1, "event": "update", "content-state": {"workoutTimer": "ten minutes"}}}
    assert http_push(server.url, token, undecodable).verdict == "dropped"

    rows = wait_for("three rows", lambda: (lambda r: r if len(r) == 3 else None)(css(browser, "li.inspection[data-source=push]")))
    assert [row.get_attribute("data-verdict") for row in rows] == ["dropped", "ignored", "applied"]  # newest first
    assert [row.get_attribute("data-cause") for row in rows[:2]] == ["undecodableContentState", "oldTimestamp"]
    assert "Dropped" in rows[0].text and "Ignored" in rows[1].text and "Applied" in rows[2].text

    # keyboard: open the dropped one with Enter; its reason names the key path; copy-as-curl is there
    summary = rows[0].find_element(By.CSS_SELECTOR, "button.summary")
    summary.send_keys(Keys.ENTER)
    wait_for("expanded", lambda: summary.get_attribute("aria-expanded") == "true")
    details = rows[0].find_element(By.CSS_SELECTOR, ".details")
    assert details.is_displayed()
    assert "aps.content-state.workoutTimer" in details.text
    curl = details.find_element(By.CSS_SELECTOR, "pre.curl").text
    assert f"/3/device/{token}" in curl and "apns-push-type: liveactivity" in curl and "ten minutes" in curl
    assert json.loads(details.find_element(By.CSS_SELECTOR, "pre.raw").text) == undecodable

    # a later applied update, then the timeline of that activity
    time.sleep(1.1)
    assert http_push(server.url, token, update_payload(ts + 2, now, 1200)).verdict == "applied"
    wait_for("four rows", lambda: len(css(browser, "li.inspection[data-source=push]")) == 4)
    select = browser.find_element(By.ID, "filter-activity")
    wait_for("activity option", lambda: css(browser, f'#filter-activity option[value="{pid}"]'))
    browser.execute_script("arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('change'))", select, pid)
    wait_for("timeline events", lambda: len(css(browser, "#timeline .timeline-event[data-event]")) == 2)

    def lock_countdown() -> str | None:
        frame = browser.find_element(By.ID, "frame-lock")
        browser.switch_to.frame(frame)
        try:
            found = browser.find_elements(By.CSS_SELECTOR, ".countdown")
            return found[0].text.strip() if found else None
        finally:
            browser.switch_to.default_content()

    latest = wait_for("latest rendering", lambda: (lambda c: c if c and c.startswith(("19:", "20:")) else None)(lock_countdown()), 10)
    assert latest
    started = browser.find_element(By.CSS_SELECTOR, '#timeline .timeline-event[data-event="started"]')
    started.send_keys(Keys.ENTER)
    earlier = wait_for("earlier rendering", lambda: (lambda c: c if c in ("10:00", "9:59") else None)(lock_countdown()), 10)
    assert earlier
    src = browser.find_element(By.ID, "frame-lock").get_attribute("src")
    assert "at=" in src and f"/activities/{pid}/render/lock-screen" in src
    # the slider moves with the keyboard too: End shows the latest again
    browser.find_element(By.ID, "scrub").send_keys(Keys.END)
    wait_for("latest again", lambda: (lambda c: c if c and c.startswith(("19:", "20:")) else None)(lock_countdown()), 10)
    assert_clean_console(browser)

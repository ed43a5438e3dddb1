"""Protocol tests for LiveActivityServer, against the real binary and the real `websockets` client.

The reference is docs/PROTOCOL.md (v1). Each test gets a fresh server (see conftest.py), whose clean
exit (status 0 on SIGTERM within 5 s) is asserted at teardown.
"""
from __future__ import annotations

import asyncio
import http.client
import json
import math
import re
import signal
import socket
import time
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from wsclient import (collect_non_ticks, connect, expect_silence, recv_json, recv_non_tick, recv_until, request,
                      run, send_json, send_text, two_clients)

from hostile_support import read_until_closed
from protocol_checks import (FOUR_HOURS, UTC, check_activity, check_error, check_event, check_snapshot, is_int,
                             list_snapshot, near, out_date, start_activity, start_msg, timer)
from support import http_request, iso, now


# ---------------------------------------------------------------------------------------------------
# connect / start / tick / update / end
# ---------------------------------------------------------------------------------------------------
def test_snapshot_on_connect(server):
    async def body():
        async with connect(server.ws_url) as ws:
            m = check_snapshot(await recv_json(ws, 3))
            assert m["activities"] == []
            assert near(out_date(m["serverTime"]), now())
            assert "requestId" not in m or m["requestId"] is None
    run(body())


def test_start_is_acked_and_broadcast_to_every_client(server):
    async def body():
        async with connect(server.ws_url) as a, connect(server.ws_url) as b:
            sa, sb = check_snapshot(await recv_json(a)), check_snapshot(await recv_json(b))
            assert sa["sequence"] == sb["sequence"]
            before = now()
            ack, ev = await start_activity(a, [b], workout="jogging", duration=70, rid="r1")
            assert ev["sequence"] == sa["sequence"] + 1
            act = ev["activity"]
            assert act["id"] == ack["activityId"]
            assert act["attributesType"] == "workout"          # default attributesType
            assert act["attributes"] == {"workout": "jogging"}
            start, end = timer(act)
            assert end - start == timedelta(seconds=70), act["content"]
            assert act["content"]["staleDate"] == act["content"]["state"]["workoutTimer"]["end"]
            assert act["content"]["relevanceScore"] == 0
            assert act["activityState"] == "active"
            assert act["endDate"] is None and act["dismissalDate"] is None
            assert near(out_date(act["startDate"]), before, 2) and near(start, before, 2)
            # A later list (from the other client) shows it, with the same sequence.
            snap = await list_snapshot(b, "r-list-b")
            assert snap["sequence"] == ev["sequence"]
            assert [x["id"] for x in snap["activities"]] == [act["id"]]
            assert snap["activities"][0]["attributes"] == act["attributes"]
            assert snap["activities"][0]["content"] == act["content"]
        # A client connecting now gets it in its initial snapshot.
        async with connect(server.ws_url) as c:
            snap = check_snapshot(await recv_json(c))
            assert [x["id"] for x in snap["activities"]] == [act["id"]]
            assert snap["sequence"] == ev["sequence"]
    run(body())


def test_request_id_is_echoed_unchanged(server):
    async def body():
        async with connect(server.ws_url) as a:
            await recv_json(a)
            ack, _ = await start_activity(a, rid=12345)
            assert ack["requestId"] == 12345 and is_int(ack["requestId"]), ack
            snap = await list_snapshot(a, rid=7.5)
            assert snap["requestId"] == 7.5
    run(body())


def test_ticks_count_down_once_per_second(server):
    async def body():
        async with two_clients(server.ws_url) as (a, b):
            ack, ev = await start_activity(a, [b], duration=70)
            aid = ack["activityId"]
            _, end = timer(ev["activity"])
            ticks = []  # (arrival monotonic, message, remaining)
            deadline = time.monotonic() + 5
            while len(ticks) < 3:
                assert time.monotonic() < deadline, f"only {len(ticks)} ticks in 5 s"
                m = await recv_until(b, lambda m: m["type"] == "tick", 2.5, include_ticks=True)
                t_at = time.monotonic()
                # Written when made (or up to 100 ms later, while events flow), not at the next timer: a tick
                # released in the timer callback once waited for lws's poll, a whole second.
                late = time.time() - out_date(m["serverTime"], "tick.serverTime").timestamp()
                assert late < 0.6, f"tick arrived {late:.3f} s after its serverTime: {m}"
                assert isinstance(m["timers"], list), m
                mine = [t for t in m["timers"] if t.get("activityId") == aid]
                assert len(mine) == 1, f"tick without exactly one entry for {aid}: {m}"
                rem = mine[0]["remainingSeconds"]
                assert is_int(rem), f"remainingSeconds must be an integer: {m}"
                assert 0 <= rem <= 70, m
                # "the seconds left, rounded up"
                left = (end - out_date(m["serverTime"])).total_seconds()
                frac = left - math.floor(left)
                if 0.05 < frac < 0.95:
                    assert rem == math.ceil(left), f"remainingSeconds {rem} != ceil({left:.3f}) in {m}"
                ticks.append((t_at, m, rem))
            for (t0, m0, r0), (t1, m1, r1) in zip(ticks, ticks[1:]):
                assert r0 - r1 == 1, f"consecutive ticks {r0} -> {r1}"
                dt_server = (out_date(m1["serverTime"]) - out_date(m0["serverTime"])).total_seconds()
                assert 0.9 <= dt_server <= 1.1, f"ticks {dt_server:.3f} s apart (server time)"
                assert 0.5 <= t1 - t0 <= 1.5, f"ticks arrived {t1 - t0:.3f} s apart"
    run(body())


def test_no_tick_comes_after_an_event_made_later(server):
    """A scheduled start: the ticks before it say `startsInSeconds`, and once `started` is received no tick
    says it any more (a tick waits up to 100 ms for an event to carry it, and is written before it, never
    after an event made later than the tick). The end likewise: no tick lists the activity after `ended`."""
    async def body():
        async with connect(server.ws_url) as ws:
            await recv_json(ws)
            start = datetime.now(timezone.utc) + timedelta(seconds=1.5)
            await send_json(ws, start_msg(duration=30, rid="sched", startDate=iso(start)))
            seen = []  # (kind, message) in arrival order: "tick" or the event's name
            ticks_after_start = 0
            deadline = time.monotonic() + 8
            while ticks_after_start < 2:
                assert time.monotonic() < deadline, f"no started event with two ticks after it: {seen}"
                m = await recv_json(ws, 3)
                if m["type"] == "tick":
                    seen.append(("tick", m))
                    ticks_after_start += any(k == "started" for k, _ in seen)
                elif m["type"] == "activity":
                    seen.append((m["event"], m))
            kinds = [k for k, _ in seen]
            assert any("startsInSeconds" in t for k, m in seen[:kinds.index("started")] if k == "tick"
                       for t in m["timers"]), f"no tick while pending: {seen}"
            after = [m for k, m in seen[kinds.index("started") + 1:] if k == "tick"]
            assert all("startsInSeconds" not in t for m in after for t in m["timers"]), seen
            aid = seen[kinds.index("started")][1]["activity"]["id"]
            await send_json(ws, {"type": "end", "requestId": "end", "activityId": aid, "dismissalPolicy": "immediate"})
            rest = []
            while not any(m.get("event") == "dismissed" for m in rest):
                rest.append(await recv_json(ws, 3))
            ended = next(i for i, m in enumerate(rest) if m.get("event") == "ended")
            for m in rest[ended:]:
                assert m["type"] != "tick" or all(t["activityId"] != aid for t in m["timers"]), rest
    run(body())


def test_update_with_alert_reaches_every_client(server):
    async def body():
        async with two_clients(server.ws_url) as (a, b):
            ack, started = await start_activity(a, [b], duration=70)
            aid = ack["activityId"]
            alert = {"title": "Halfway", "body": "Keep going"}
            await send_json(a, {"type": "update", "requestId": "u1", "activityId": aid,
                                "durationSeconds": 30, "alert": alert})
            got = await collect_non_ticks(a, 2)
            acks = [m for m in got if m["type"] == "ack"]
            evs = [m for m in got if m["type"] == "activity"]
            assert len(acks) == 1 and len(evs) == 1, got
            assert acks[0]["requestId"] == "u1"
            assert acks[0].get("activityId") == aid, acks[0]
            ev_b = await recv_non_tick(b)
            for ev in (evs[0], ev_b):
                check_event(ev, "updated", aid)
                assert ev["sequence"] == started["sequence"] + 1
                got_alert = ev.get("alert")
                assert isinstance(got_alert, dict), f"updated event without alert: {ev}"
                assert {k: got_alert.get(k) for k in ("title", "body")} == alert, got_alert
                assert set(got_alert) <= {"title", "body", "sound"}, got_alert
                act = ev["activity"]
                s, e = timer(act)
                assert e - s == timedelta(seconds=30)
                assert act["content"]["staleDate"] == act["content"]["state"]["workoutTimer"]["end"]
                assert act["activityState"] == "active"
                assert act["startDate"] == started["activity"]["startDate"]
                assert act["attributes"] == started["activity"]["attributes"]
            assert evs[0]["activity"] == ev_b["activity"]
            # An update without alert carries none.
            await send_json(a, {"type": "update", "requestId": "u2", "activityId": aid, "durationSeconds": 40})
            ev = await recv_non_tick(b)
            check_event(ev, "updated", aid)
            assert ev.get("alert") is None, ev
    run(body())


def test_start_with_explicit_content_and_offset_dates(server):
    async def body():
        async with connect(server.ws_url) as a:
            await recv_json(a)
            t0 = now().replace(microsecond=0) + timedelta(seconds=5)
            t1 = t0 + timedelta(minutes=10)
            plus1 = timezone(timedelta(hours=1))
            content = {"state": {"workoutTimer": {"start": iso(t0, plus1, millis=False),
                                                  "end": iso(t1, plus1, millis=True)}},
                       "staleDate": None, "relevanceScore": 50}
            await send_json(a, {"type": "start", "requestId": "c1", "attributesType": "workout",
                                "attributes": {"workout": "aerobics"}, "content": content})
            got = await collect_non_ticks(a, 2)
            ev = next(m for m in got if m["type"] == "activity")
            check_event(ev, "started")
            act = ev["activity"]
            assert act["attributes"] == {"workout": "aerobics"}
            assert act["content"]["state"]["workoutTimer"] == {"start": iso(t0), "end": iso(t1)}, act["content"]
            assert act["content"]["staleDate"] is None
            assert act["content"]["relevanceScore"] == 50
            assert act["activityState"] == "active"
    run(body())


def test_end_immediate_gives_ended_then_dismissed(server):
    async def body():
        async with two_clients(server.ws_url) as (a, b):
            ack, started = await start_activity(a, [b], duration=70)
            aid = ack["activityId"]
            before = now()
            await send_json(a, {"type": "end", "requestId": "e1", "activityId": aid,
                                "dismissalPolicy": "immediate"})
            got_a = await collect_non_ticks(a, 3)
            acks = [m for m in got_a if m["type"] == "ack"]
            assert len(acks) == 1 and acks[0]["requestId"] == "e1" and acks[0].get("activityId") == aid, got_a
            evs_a = [m for m in got_a if m["type"] == "activity"]
            evs_b = await collect_non_ticks(b, 2)
            for evs in (evs_a, evs_b):
                assert [m.get("event") for m in evs] == ["ended", "dismissed"], evs
                ended, dismissed = check_event(evs[0], "ended", aid), check_event(evs[1], "dismissed", aid)
                assert ended["sequence"] == started["sequence"] + 1
                assert dismissed["sequence"] == ended["sequence"] + 1
                e = ended["activity"]
                assert e["activityState"] == "ended"
                end_date = out_date(e["endDate"])
                assert near(end_date, before, 2)
                assert out_date(e["dismissalDate"]) - end_date <= timedelta(seconds=1), e
                assert e["content"] == started["activity"]["content"]  # no final content given
                assert dismissed["activity"]["activityState"] == "dismissed", dismissed
                assert dismissed["activity"]["endDate"] == e["endDate"]
            assert evs_a[0]["activity"] == evs_b[0]["activity"]
            snap = await list_snapshot(a)
            assert snap["activities"] == []
            assert snap["sequence"] == evs_b[1]["sequence"]
    run(body())


@pytest.mark.parametrize("raw,name", [(0, "jogging"), (1, "aerobics"), (2, "yoga"), ("yoga", "yoga")])
def test_workout_integer_raw_values(server, raw, name):
    async def body():
        async with connect(server.ws_url) as a:
            await recv_json(a)
            _, ev = await start_activity(a, workout=raw)
            assert ev["activity"]["attributes"] == {"workout": name}
    run(body())


def test_stop_alias_with_default_dismissal_keeps_activity_listed(server):
    async def body():
        async with two_clients(server.ws_url) as (a, b):
            ack, started = await start_activity(a, [b])
            aid = ack["activityId"]
            final = {"state": {"workoutTimer": {"start": started["activity"]["content"]["state"]["workoutTimer"]["start"],
                                                "end": iso(now())}},
                     "staleDate": None, "relevanceScore": 5}
            await send_json(a, {"type": "stop", "requestId": "s1", "activityId": aid,
                                "content": final, "dismissalPolicy": "default"})
            got = await collect_non_ticks(a, 2)
            assert sorted(m["type"] for m in got) == ["ack", "activity"], got
            ev = check_event(next(m for m in got if m["type"] == "activity"), "ended", aid)
            assert ev["sequence"] == started["sequence"] + 1
            ev_b = check_event(await recv_non_tick(b), "ended", aid)
            assert ev_b["activity"] == ev["activity"]
            act = ev["activity"]
            assert act["activityState"] == "ended"
            assert act["content"]["relevanceScore"] == 5 and act["content"]["staleDate"] is None, act  # final content
            assert out_date(act["dismissalDate"]) - out_date(act["endDate"]) == FOUR_HOURS, act
            await expect_silence(b, 0.5)  # no dismissed event
            snap = await list_snapshot(a)
            assert [x["id"] for x in snap["activities"]] == [aid]
            listed = snap["activities"][0]
            assert listed["activityState"] == "ended"
            assert listed["endDate"] == act["endDate"] and listed["dismissalDate"] == act["dismissalDate"]
            # No more ticks for an ended activity.
            m = None
            try:
                m = await recv_until(a, lambda m: m["type"] == "tick" and
                                     any(t.get("activityId") == aid for t in m["timers"]), 1.5, include_ticks=True)
            except AssertionError:
                pass
            assert m is None, f"tick for an ended activity: {m}"
            # Ending it again only re-applies the policy: dismissed, no second ended.
            await send_json(a, {"type": "end", "requestId": "s2", "activityId": aid, "dismissalPolicy": "immediate"})
            got = await collect_non_ticks(a, 2)
            assert sorted(m["type"] for m in got) == ["ack", "activity"], got
            d = check_event(next(m for m in got if m["type"] == "activity"), "dismissed", aid)
            assert d["sequence"] == ev["sequence"] + 1
            assert check_event(await recv_non_tick(b), "dismissed", aid)["sequence"] == d["sequence"]
            assert (await list_snapshot(b))["activities"] == []
    run(body())


def test_end_defaults_to_default_dismissal(server):
    async def body():
        async with connect(server.ws_url) as a:
            await recv_json(a)
            ack, _ = await start_activity(a)
            await send_json(a, {"type": "end", "requestId": "e", "activityId": ack["activityId"]})
            got = await collect_non_ticks(a, 2)
            ev = check_event(next(m for m in got if m["type"] == "activity"), "ended", ack["activityId"])
            assert out_date(ev["activity"]["dismissalDate"]) - out_date(ev["activity"]["endDate"]) == FOUR_HOURS
            await expect_silence(a, 0.5)
    run(body())


def test_end_all_with_past_after_date_dismisses_at_once(server):
    async def body():
        async with two_clients(server.ws_url) as (a, b):
            ack1, _ = await start_activity(a, [b], rid="s1")
            ack2, _ = await start_activity(a, [b], rid="s2", workout="yoga")
            id1, id2 = ack1["activityId"], ack2["activityId"]
            await send_json(a, {"type": "stop", "requestId": "x", "activityId": id1})
            await collect_non_ticks(a, 2)
            ended1 = check_event(await recv_non_tick(b), "ended", id1)
            past = iso(now() - timedelta(hours=1))
            await send_json(a, {"type": "end", "requestId": "all", "all": True, "dismissalPolicy": {"after": past}})
            # a: ack + ended(id2) + dismissed(id1) + dismissed(id2)
            got = await collect_non_ticks(a, 4)
            acks = [m for m in got if m["type"] == "ack"]
            assert len(acks) == 1 and acks[0]["requestId"] == "all", got
            assert sorted(acks[0].get("activityIds") or []) == sorted([id1, id2]), acks[0]
            evs_b = await collect_non_ticks(b, 3)
            for evs in ([m for m in got if m["type"] == "activity"], evs_b):
                pairs = [(m["event"], m["activity"]["id"]) for m in evs]
                assert sorted(pairs) == sorted([("ended", id2), ("dismissed", id2), ("dismissed", id1)]), pairs
                assert pairs.index(("ended", id2)) < pairs.index(("dismissed", id2)), pairs
                assert [m["sequence"] for m in evs] == [ended1["sequence"] + i for i in (1, 2, 3)], evs
                for m in evs:
                    check_event(m, m["event"])
            await expect_silence(b, 0.3)
            assert (await list_snapshot(a))["activities"] == []
    run(body())


@pytest.mark.parametrize("kind", ["end", "stop"])
def test_end_with_activity_id_and_all_is_refused_and_ends_nothing(server, kind):
    """activityId and "all": true are alternatives: both is invalid_field naming all, never "end every one"."""
    async def body():
        async with two_clients(server.ws_url) as (a, b):
            ack1, _ = await start_activity(a, [b], rid="s1")
            ack2, started2 = await start_activity(a, [b], rid="s2", workout="yoga")
            id1, id2 = ack1["activityId"], ack2["activityId"]
            await send_json(a, {"type": kind, "requestId": "both", "activityId": id1, "all": True})
            err = check_error(await recv_non_tick(a), "invalid_field", "all", "both")
            assert err["message"] == "all: activityId and all are mutually exclusive; give one of them", err
            snap = await list_snapshot(a, "after")
            assert snap["sequence"] == started2["sequence"], snap
            assert sorted(x["id"] for x in snap["activities"]) == sorted([id1, id2]), snap
            assert all(x["activityState"] == "active" for x in snap["activities"]), snap
            await expect_silence(b, 0.2)  # no ended event was broadcast
    run(body())


def test_end_after_future_date_is_capped_at_four_hours(server):
    async def body():
        async with connect(server.ws_url) as a:
            await recv_json(a)
            ack1, _ = await start_activity(a, rid="s1")
            ack2, _ = await start_activity(a, rid="s2")
            in_one_hour = now().replace(microsecond=123000) + timedelta(hours=1)
            await send_json(a, {"type": "end", "requestId": "e1", "activityId": ack1["activityId"],
                                "dismissalPolicy": {"after": iso(in_one_hour, timezone(timedelta(hours=-5)))}})
            got = await collect_non_ticks(a, 2)
            ev = check_event(next(m for m in got if m["type"] == "activity"), "ended", ack1["activityId"])
            assert out_date(ev["activity"]["dismissalDate"]) == in_one_hour, ev["activity"]
            await send_json(a, {"type": "end", "requestId": "e2", "activityId": ack2["activityId"],
                                "dismissalPolicy": {"after": iso(now() + timedelta(hours=10))}})
            got = await collect_non_ticks(a, 2)
            ev = check_event(next(m for m in got if m["type"] == "activity"), "ended", ack2["activityId"])
            act = ev["activity"]
            assert out_date(act["dismissalDate"]) - out_date(act["endDate"]) == FOUR_HOURS, act
            await expect_silence(a, 0.3)
            assert len((await list_snapshot(a))["activities"]) == 2
    run(body())


def test_short_timer_goes_stale_and_finishes(server):
    async def body():
        async with two_clients(server.ws_url) as (a, b):
            ack, started = await start_activity(a, [b], duration=2)
            aid = ack["activityId"]
            _, end = timer(started["activity"])
            assert started["activity"]["content"]["staleDate"] == iso(end)
            evs = await collect_non_ticks(b, 2, timeout=5)
            by_event = {m["event"]: m for m in evs}
            assert set(by_event) == {"stale", "timerFinished"}, evs
            assert sorted(m["sequence"] for m in evs) == [started["sequence"] + 1, started["sequence"] + 2], evs
            stale = check_event(by_event["stale"], "stale", aid)
            check_event(by_event["timerFinished"], "timerFinished", aid)
            assert stale["activity"]["activityState"] == "stale"
            assert out_date(stale["serverTime"]) >= end - timedelta(milliseconds=50), stale
            assert out_date(stale["serverTime"]) <= end + timedelta(seconds=1.5), stale
            # Both are due at the same instant; whichever comes second sees the stale state.
            tf = by_event["timerFinished"]
            expected_tf_state = "stale" if tf["sequence"] > stale["sequence"] else "active"
            assert tf["activity"]["activityState"] == expected_tf_state, evs
            # The other client saw the same events.
            evs_a = await collect_non_ticks(a, 2)
            assert sorted((m["event"], m["sequence"]) for m in evs_a) == \
                sorted((m["event"], m["sequence"]) for m in evs)
            # timerFinished only once, and no more ticks for it.
            try:
                extra = await recv_until(b, lambda m: m["type"] != "tick" or
                                         any(t.get("activityId") == aid for t in m["timers"]),
                                         1.5, include_ticks=True)
            except AssertionError:
                extra = None
            assert extra is None, f"unexpected message after timerFinished: {extra}"
            snap = await list_snapshot(b)
            assert [(x["id"], x["activityState"]) for x in snap["activities"]] == [(aid, "stale")]
            # An update makes a stale activity active again.
            await send_json(a, {"type": "update", "requestId": "u", "activityId": aid, "durationSeconds": 60})
            ev = check_event(await recv_non_tick(b), "updated", aid)
            assert ev["activity"]["activityState"] == "active", ev
    run(body())


def test_snapshot_order_relevance_then_newest(server):
    async def body():
        async with connect(server.ws_url) as a:
            await recv_json(a)
            ids = {}
            for name, score in (("low", 10), ("high", 50), ("old0", 0), ("new0", 0)):
                ack, ev = await start_activity(a, rid=name, relevanceScore=score)
                assert ev["activity"]["content"]["relevanceScore"] == score
                ids[ack["activityId"]] = name
                await asyncio.sleep(0.02)  # distinct startDates
            snap = await list_snapshot(a)
            assert [ids[x["id"]] for x in snap["activities"]] == ["high", "low", "new0", "old0"]
    run(body())


# ---------------------------------------------------------------------------------------------------
# bad input
# ---------------------------------------------------------------------------------------------------
BAD_TIMER_CONTENT = {"state": {"workoutTimer": {"start": "2026-11-29T17:00:00Z", "end": "not a date"}},
                     "staleDate": None, "relevanceScore": 0}
REVERSED_TIMER_CONTENT = {"state": {"workoutTimer": {"start": "2026-11-29T17:10:00Z", "end": "2026-11-29T17:00:00Z"}},
                          "staleDate": None, "relevanceScore": 0}
UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"
_NOW = now()


def _timer_content(start: str, end: str, stale: str | None = None, paused: str | None = None) -> dict:
    state: dict = {"workoutTimer": {"start": start, "end": end}}
    if paused is not None:
        state["pausedAt"] = paused
    return {"state": state, "staleDate": stale, "relevanceScore": 0}


def _start_with(content: dict, **extra) -> dict:
    return {"type": "start", "requestId": "bad", "attributes": {"workout": "yoga"}, "content": content, **extra}


_SOON, _LATER = iso(_NOW), iso(_NOW + timedelta(minutes=10))
# Dates that do not exist, and real dates outside the window (12 h back, 366 days ahead; docs/PROTOCOL.md).
BAD_DATES = [
    ("date-feb-30", _start_with(_timer_content(_SOON, "2026-02-30T10:00:00Z")), "invalid_field",
     "content.state.workoutTimer.end"),
    ("date-24-61", _start_with(_timer_content("2026-11-29T24:61:00Z", _LATER)), "invalid_field",
     "content.state.workoutTimer.start"),
    ("date-second-60", _start_with(_timer_content(_SOON, _LATER, stale="2026-11-29T23:59:60Z")), "invalid_field",
     "content.staleDate"),
    ("date-year-9999", _start_with(_timer_content(_SOON, "9999-12-31T23:59:59Z")), "invalid_field",
     "content.state.workoutTimer.end"),
    ("date-year-0001", _start_with(_timer_content("0001-01-01T00:00:00Z", _LATER)), "invalid_field",
     "content.state.workoutTimer.start"),
    ("date-stale-two-years", _start_with(_timer_content(_SOON, _LATER, stale=iso(_NOW + timedelta(days=731)))),
     "invalid_field", "content.staleDate"),
    ("date-stale-last-week", _start_with(_timer_content(_SOON, _LATER, stale=iso(_NOW - timedelta(days=7)))),
     "invalid_field", "content.staleDate"),
    ("date-paused-year-0001", _start_with(_timer_content(_SOON, _LATER, paused="0001-01-01T00:00:00Z")),
     "invalid_field", "content.state.pausedAt"),
    ("date-start-year-9999", start_msg(rid="bad", startDate="9999-01-01T00:00:00Z"), "invalid_field", "startDate"),
    ("date-start-feb-29-2027", start_msg(rid="bad", startDate="2027-02-29T10:00:00Z"), "invalid_field", "startDate"),
    ("date-update-year-9999", {"type": "update", "requestId": "bad", "activityId": "$ID",
                               "content": _timer_content(_SOON, "9999-01-01T00:00:00Z")},
     "invalid_field", "content.state.workoutTimer.end"),
    ("date-dismissal-year-0001", {"type": "end", "requestId": "bad", "activityId": "$ID",
                                  "dismissalPolicy": {"after": "0001-01-01T00:00:00Z"}}, "invalid_field",
     "dismissalPolicy.after"),
    ("date-dismissal-apr-31", {"type": "end", "requestId": "bad", "activityId": "$ID",
                               "dismissalPolicy": {"after": "2026-04-31T10:00:00Z"}}, "invalid_field",
     "dismissalPolicy.after"),
    ("date-emoji-end-year-2999", {"type": "start", "requestId": "bad", "attributesType": "emoji",
                                  "attributes": {"startTime": _SOON, "endTime": "2999-01-01T00:00:00Z", "name": "x"},
                                  "content": {"state": {"emoji": "x"}}}, "invalid_field", "attributes.endTime"),
]

# (id, message: str (raw text) or dict (JSON), code, field(s) or None). "$ID" is replaced by a real activity id.
BAD_INPUT = [
    ("invalid-json", "{not json", "invalid_json", None),
    ("truncated-json", '{"type":"list"', "invalid_json", None),
    ("json-array", "[1,2,3]", "invalid_json", None),
    ("json-string", '"list"', "invalid_json", None),
    ("trailing-comma", '{"type":"list",}', "invalid_json", None),
    ("trailing-comma-in-array", '{"type":"end","activityIds":["a",],"all":true}', "invalid_json", None),
    ("unknown-type", {"type": "explode", "requestId": "bad"}, "unknown_type", "type"),
    ("missing-type", {"requestId": "bad"}, "missing_field", "type"),
    ("workout-swimming", start_msg("swimming", rid="bad"), "invalid_field", "attributes.workout"),
    ("workout-7", start_msg(7, rid="bad"), "invalid_field", "attributes.workout"),
    ("workout-negative", start_msg(-1, rid="bad"), "invalid_field", "attributes.workout"),
    ("duration-negative", start_msg(duration=-5, rid="bad"), "invalid_field", "durationSeconds"),
    ("duration-string", start_msg(duration="abc", rid="bad"), "invalid_field", "durationSeconds"),
    ("relevance-string", start_msg(rid="bad", relevanceScore="high"), "invalid_field",
     ("relevanceScore", "content.relevanceScore")),
    ("attributes-type", start_msg(rid="bad", attributesType="pizza"), "invalid_field", "attributesType"),
    ("no-content", start_msg(duration=None, rid="bad"), "missing_field", ("content", "durationSeconds")),
    ("timer-end-not-date", {"type": "start", "requestId": "bad", "attributes": {"workout": "yoga"},
                            "content": BAD_TIMER_CONTENT}, "invalid_field", "content.state.workoutTimer.end"),
    ("timer-end-before-start", {"type": "start", "requestId": "bad", "attributes": {"workout": "yoga"},
                                "content": REVERSED_TIMER_CONTENT}, "invalid_field",
     ("content.state.workoutTimer", "content.state.workoutTimer.end", "content.state.workoutTimer.start")),
    ("update-unknown-id", {"type": "update", "requestId": "bad", "activityId": UNKNOWN_ID, "durationSeconds": 5},
     "unknown_activity", None),
    ("end-unknown-id", {"type": "end", "requestId": "bad", "activityId": UNKNOWN_ID}, "unknown_activity", None),
    ("stop-unknown-id", {"type": "stop", "requestId": 99, "activityId": "nope"}, "unknown_activity", None),
    ("update-missing-id", {"type": "update", "requestId": "bad", "durationSeconds": 5}, "missing_field", "activityId"),
    ("end-missing-id", {"type": "end", "requestId": "bad"}, "missing_field", "activityId"),
    ("update-bad-content", {"type": "update", "requestId": "bad", "activityId": "$ID", "content": BAD_TIMER_CONTENT},
     "invalid_field", "content.state.workoutTimer.end"),
    ("end-bad-policy", {"type": "end", "requestId": "bad", "activityId": "$ID", "dismissalPolicy": "sometimes"},
     "invalid_field", "dismissalPolicy"),
    ("end-bad-after", {"type": "end", "requestId": "bad", "activityId": "$ID", "dismissalPolicy": {"after": "soon"}},
     "invalid_field", "dismissalPolicy.after"),
    # content and durationSeconds are alternatives (docs/PROTOCOL.md): both is an error naming durationSeconds.
    ("start-content-and-duration", start_msg(rid="bad", duration=60, content=_timer_content(_SOON, _LATER)),
     "invalid_field", "durationSeconds"),
    ("update-content-and-duration", {"type": "update", "requestId": "bad", "activityId": "$ID", "durationSeconds": 60,
                                     "content": _timer_content(_SOON, _LATER)}, "invalid_field", "durationSeconds"),
    ("end-content-and-duration", {"type": "end", "requestId": "bad", "activityId": "$ID", "durationSeconds": 60,
                                  "content": _timer_content(_SOON, _LATER)}, "invalid_field", "durationSeconds"),
] + BAD_DATES


def _subst(obj, aid):
    if isinstance(obj, dict):
        return {k: _subst(v, aid) for k, v in obj.items()}
    return aid if obj == "$ID" else obj


@pytest.mark.parametrize("case", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_gives_error_and_changes_nothing(server, case):
    _, message, code, field = case

    async def body():
        async with two_clients(server.ws_url) as (a, b):
            ack, started = await start_activity(b, [a], workout="aerobics", rid="keep")
            aid = ack["activityId"]
            before = await list_snapshot(b, "before")
            if isinstance(message, str):
                await send_text(a, message)
                rid = None
            else:
                msg = _subst(message, aid)
                rid = msg.get("requestId")
                await send_json(a, msg)
            err = await recv_non_tick(a)
            check_error(err, code, field, rid)
            if case[0].endswith("content-and-duration"):
                assert err["message"] == ("durationSeconds: content and durationSeconds are mutually exclusive; "
                                          "give one of them"), err
            if code == "unknown_activity":
                assert err.get("field") in (None, "activityId"), err
            # The connection still works, and the next reply is the snapshot (nothing else was sent).
            after = await list_snapshot(a, "after")
            assert after["sequence"] == started["sequence"] == before["sequence"]
            assert [x["id"] for x in after["activities"]] == [aid]
            assert after["activities"][0]["content"] == started["activity"]["content"]
            assert after["activities"][0]["activityState"] == "active"
            await expect_silence(b, 0.2)  # no event was broadcast
    run(body())


def test_date_errors_say_what_is_wrong(server):
    """An impossible date says which part does not exist; a date out of the window says how far off it is."""
    async def body():
        async with connect(server.ws_url) as ws:
            await recv_json(ws)
            cases = [
                (_start_with(_timer_content(_SOON, "2026-02-30T10:00:00Z")),
                 'content.state.workoutTimer.end: "2026-02-30T10:00:00Z" is not a real date and time: '
                 "day 30 does not exist in February 2026"),
                (start_msg(rid="bad", startDate="2026-11-29T24:61:00Z"),
                 'startDate: "2026-11-29T24:61:00Z" is not a real date and time: hour 24 does not exist'),
                (_start_with(_timer_content(_SOON, "9999-12-31T23:59:59Z")),
                 'content.state.workoutTimer.end: date "9999-12-31T23:59:59Z" is outside the dates this server accepts'),
                (start_msg(rid="bad", startDate="0001-01-01T00:00:00Z"), "startDate: the date is 2026 years in the past"),
            ]
            for i, (msg, text) in enumerate(cases):
                msg["requestId"] = i
                await send_json(ws, msg)
                err = await recv_non_tick(ws)
                check_error(err, "invalid_field", None, i)
                assert err["message"].startswith(text), err
            # Within the window: a stale date an hour ago is accepted (stale at once), a start a month ahead is pending.
            await send_json(ws, _start_with(_timer_content(_SOON, _LATER, stale=iso(now() - timedelta(hours=1))),
                                            requestId="ok1"))
            assert (await recv_until(ws, lambda m: m.get("requestId") == "ok1"))["type"] == "ack"
            await send_json(ws, start_msg(rid="ok2", startDate=iso(now() + timedelta(days=30))))
            assert (await recv_until(ws, lambda m: m.get("requestId") == "ok2"))["type"] == "ack"
    run(body())


LEAKS = ("Swift", "CodingKeys", "DecodingError", "Dictionary<", "Debug description", "Error Domain", "keyNotFound",
         "typeMismatch", "Path:")
MALFORMED = ['{not json', '{"type":"list","a":01}', '{"type":"list","a":1e400}', '{"type": 1e999}', '{"type":"list","a":-}',
             '{"type":"list","a":"\\x"}', '{"type":"list","a":{"b":[1,1.]}}', '{"type":"list","a":"\u0001"}', '[01]',
             '{"type":"start","attributes":{"workout":"yoga"},"durationSeconds":1e400}', '{"type":"list"} x', '',
             '{"type":"start","attributes":{"workout":"yoga"},"content":{"state":{"workoutTimer":{"start":01}}}}']


def test_a_broken_document_is_located_by_line_and_column(server):
    """A truncated message says where it breaks and what was expected there, not Foundation's one-liner."""
    async def body():
        async with connect(server.ws_url) as ws:
            await recv_json(ws)
            await send_text(ws, '{"type":"start",')
            err = await recv_non_tick(ws)
            assert err["code"] == "invalid_json" and "field" not in err, err
            assert err["message"] == ("message is not valid JSON: expected a member name in double quotes "
                                      "at line 1, column 17 (byte 16), found end of message"), err
    run(body())


def test_malformed_messages_get_errors_without_swift_internals(server):
    """Malformed JSON over WebSocket and HTTP: a plain message naming the field, never the decoder's description."""
    async def body():
        async with connect(server.ws_url) as ws:
            await recv_json(ws)
            ack, _ = await start_activity(ws, [], rid="keep")
            for text in MALFORMED:
                await send_text(ws, text)
                err = await recv_non_tick(ws)
                assert err["type"] == "error" and err["code"] == "invalid_json", (text, err)
                assert not any(leak in err["message"] for leak in LEAKS), (text, err)
                if err.get("field"):
                    assert err["message"].startswith(err["field"] + ": the message is not valid JSON here"), err
            await send_text(ws, '{"type":"list","a":01}')
            assert (await recv_non_tick(ws)).get("field") == "a"
            # The connection carries on, and the activity is untouched.
            after = await list_snapshot(ws, "after")
            assert [a["id"] for a in after["activities"]] == [ack["activityId"]]
            pushed = []
            for text in MALFORMED[:6]:
                req = urllib.request.Request(f"{server.url}/3/device/{'0' * 64}", data=text.encode(), method="POST",
                                             headers={"apns-push-type": "liveactivity"})
                try:
                    urllib.request.urlopen(req, timeout=5)
                except urllib.error.HTTPError as e:
                    pushed.append((text, e.code, json.loads(e.read())))
            for text, status, answer in pushed:
                assert status == 400 and answer["reason"] in ("BadPayload", "PayloadEmpty"), (text, answer)
                assert not any(leak in answer.get("detail", "") for leak in LEAKS), (text, answer)
            assert len(pushed) == 6
            for query in ("limit=abc", "before=2026-02-30T00:00:00Z", "limit=1e999", "before=yesterday"):
                try:
                    urllib.request.urlopen(f"{server.url}/api/history?{query}", timeout=5)
                    raise AssertionError(query)
                except urllib.error.HTTPError as e:
                    answer = json.loads(e.read())
                    assert e.code == 400 and not any(leak in answer["message"] for leak in LEAKS), (query, answer)
                    assert answer["field"] in ("limit", "before"), answer
    run(body())


def test_update_of_ended_activity_is_refused(server):
    async def body():
        async with two_clients(server.ws_url) as (a, b):
            ack, _ = await start_activity(a, [b])
            aid = ack["activityId"]
            await send_json(a, {"type": "end", "requestId": "e", "activityId": aid})
            await collect_non_ticks(a, 2)
            ended = check_event(await recv_non_tick(b), "ended", aid)
            err = await request(a, {"type": "update", "requestId": "late", "activityId": aid, "durationSeconds": 9})
            check_error(err, "activity_ended", None, "late")
            await expect_silence(b, 0.3)
            snap = await list_snapshot(a)
            assert snap["sequence"] == ended["sequence"]
            assert snap["activities"] == [ended["activity"]]
    run(body())


# ---------------------------------------------------------------------------------------------------
# transport: size limit, compression, subprotocol
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["deflate", "no-compression", "fragmented"])
def test_message_over_64k_closes_with_1009(server, mode):
    async def body():
        kw = {"compression": None} if mode == "no-compression" else {}
        async with two_clients(server.ws_url, kw) as (a, b):
            # Just under the limit is fine (and the requestId comes back unchanged).
            rid = "r" * (60 * 1024)
            snap = await list_snapshot(a, rid)
            assert snap["requestId"] == rid
            big = '{"type":"list","requestId":"' + "x" * (70 * 1024) + '"}'
            if mode == "fragmented":
                await a.send([big[i:i + 8192] for i in range(0, len(big), 8192)])
            else:
                await a.send(big)
            with pytest.raises(ConnectionClosed) as exc:
                await recv_until(a, lambda m: False, 5)
            rcvd = exc.value.rcvd
            assert rcvd is not None, f"server closed without a close frame: {exc.value!r}"
            assert rcvd.code == 1009, f"close code {rcvd.code} ({rcvd.reason!r}), expected 1009"
            assert a.close_code == 1009
            # The other client is unaffected.
            assert (await list_snapshot(b, "b-still-ok"))["activities"] == []
            await start_activity(b)
    run(body())


def test_permessage_deflate_is_negotiated(server):
    async def body():
        async with connect(server.ws_url) as ws:
            ext = ws.response.headers.get("Sec-WebSocket-Extensions")
            assert ext is not None, f"no Sec-WebSocket-Extensions in {dict(ws.response.headers)}"
            assert ext.split(";")[0].strip().lower() == "permessage-deflate", ext
            assert any(type(e).__name__ == "PerMessageDeflate" for e in ws.protocol.extensions)
            check_snapshot(await recv_json(ws))
            rid = "compressible " * 2000
            assert (await list_snapshot(ws, rid))["requestId"] == rid
            await start_activity(ws)
    run(body())


def test_client_without_compression_works(server):
    async def body():
        async with connect(server.ws_url, compression=None) as ws:
            assert ws.response.headers.get("Sec-WebSocket-Extensions") is None
            assert ws.protocol.extensions == []
            check_snapshot(await recv_json(ws))
            await start_activity(ws)
            await list_snapshot(ws)
    run(body())


def test_subprotocol_liveactivity_v1(server):
    async def body():
        async with connect(server.ws_url, subprotocols=["liveactivity.v1"]) as ws:
            assert ws.subprotocol == "liveactivity.v1"
            check_snapshot(await recv_json(ws))
            await start_activity(ws)
        async with connect(server.ws_url) as ws:  # none asked: none chosen
            assert ws.subprotocol is None
            check_snapshot(await recv_json(ws))
    run(body())


# ---------------------------------------------------------------------------------------------------
# HTTP static files
# ---------------------------------------------------------------------------------------------------
CONTENT_TYPES = {
    ".html": ("text/html",),
    ".css": ("text/css",),
    ".js": ("text/javascript", "application/javascript"),
    ".mjs": ("text/javascript", "application/javascript"),
    ".svg": ("image/svg+xml",),
    ".json": ("application/json",),
    ".webmanifest": ("application/manifest+json", "application/json"),
    ".png": ("image/png",),
    ".ico": ("image/x-icon", "image/vnd.microsoft.icon"),
    ".txt": ("text/plain",),
}


def http_get(url: str) -> tuple[int, str, bytes]:
    r = http_request("GET", url, timeout=5)
    return r.status, r.headers.get("content-type", ""), r.body


def raw_get(port: int, path: str) -> tuple[int, bytes]:
    """GET with the path sent byte-for-byte (no client-side normalisation)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", f"127.0.0.1:{port}")
        conn.endheaders()
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def mime(ct: str) -> str:
    return ct.split(";")[0].strip().lower()


def test_static_files_from_public(server):
    public = Path(__file__).resolve().parents[2] / "Public"
    status, ct, body = http_get(server.url + "/")
    assert status == 200 and ct.replace(" ", "").lower() == "text/html;charset=utf-8", (status, ct)
    assert body == (public / "index.html").read_bytes()
    checked = set()
    for f in sorted(public.rglob("*")):
        if not f.is_file() or f.suffix not in CONTENT_TYPES:
            continue
        rel = f.relative_to(public).as_posix()
        status, ct, body = http_get(f"{server.url}/{rel}")
        assert status == 200, f"/{rel}: {status}"
        assert mime(ct) in CONTENT_TYPES[f.suffix], f"/{rel}: Content-Type {ct!r}"
        if f.suffix in (".html", ".css", ".js", ".svg"):  # text: the charset is said, not left to a guess
            assert "charset=utf-8" in ct.replace(" ", "").lower(), f"/{rel}: Content-Type {ct!r} has no charset"
        assert body == f.read_bytes(), f"/{rel}: body differs from the file"
        checked.add(f.suffix)
    assert {".css", ".js"} <= checked, f"Public/ should hold .css and .js files; checked {checked}"
    status, _, _ = http_get(server.url + "/no-such-file.css")
    assert status == 404
    status, _, _ = http_get(server.url + "/js/no-such-module.js")
    assert status == 404


def test_static_content_types_and_404(start_server, tmp_path):
    pub = tmp_path / "pub"
    (pub / "css").mkdir(parents=True)
    (pub / "js").mkdir()
    (pub / "icons").mkdir()
    files = {
        "index.html": b"<!doctype html><title>t</title>",
        "css/app.css": b"body{color:red}",
        "js/app.js": b"console.log(1)",
        "icons/run.svg": b'<svg xmlns="http://www.w3.org/2000/svg"/>',
    }
    for rel, data in files.items():
        (pub / rel).write_bytes(data)
    srv = start_server(public=pub)
    for rel, data in files.items():
        status, ct, body = http_get(f"{srv.url}/{rel}")
        assert status == 200 and body == data, (rel, status)
        assert mime(ct) in CONTENT_TYPES[Path(rel).suffix], (rel, ct)
    status, ct, body = http_get(srv.url + "/")
    assert (status, mime(ct), body) == (200, "text/html", files["index.html"])
    assert http_get(srv.url + "/missing.html")[0] == 404
    assert http_get(srv.url + "/icons/missing.svg")[0] == 404


ESCAPES = [
    "/../etc/passwd",
    "/../../../../../../etc/passwd",
    "/%2e%2e/%2e%2e/etc/passwd",
    "/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/..%2f..%2f..%2f..%2fetc%2fpasswd",
    "/css/../../Package.swift",
    "/css/%2e%2e/%2e%2e/Package.swift",
    "/%2e%2e/Package.swift",
    "//etc/passwd",
    "/css/..%5c..%5cPackage.swift",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_path_escape_never_leaves_public(server, path):
    status, body = raw_get(server.port, path)
    assert b"root:" not in body and b"swift-tools-version" not in body and b"PackageDescription" not in body, \
        f"{path} returned a file outside Public (status {status})"
    assert 400 <= status < 500, f"{path}: expected a 4xx, got {status}"


def test_path_escape_raw_socket(start_server, tmp_path):
    pub = tmp_path / "pub"
    pub.mkdir()
    (pub / "index.html").write_text("<!doctype html><title>x</title>")
    (tmp_path / "secret.txt").write_text("TOP-SECRET-MARKER")
    srv = start_server(public=pub)
    for path in ("/../secret.txt", "/%2e%2e/secret.txt", "/./../secret.txt", "/%2E%2E%2Fsecret.txt"):
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            data = read_until_closed(s)
        assert b"TOP-SECRET-MARKER" not in data, f"{path} leaked a file outside the public folder"
        status_line = data.split(b"\r\n", 1)[0]
        assert re.match(rb"HTTP/1\.[01] 4\d\d", status_line), f"{path}: {status_line!r}"


# ---------------------------------------------------------------------------------------------------
# shutdown
# ---------------------------------------------------------------------------------------------------
def test_sigterm_with_connected_clients_exits_cleanly(start_server):
    srv = start_server()

    async def body():
        async with two_clients(srv.ws_url, b_options={"compression": None}) as (a, b):
            await start_activity(a, [b])
            t0 = time.monotonic()
            code = await asyncio.to_thread(srv.stop, signal.SIGTERM)
            assert code == 0, f"exit status {code} after SIGTERM\n{srv.output()}"
            assert time.monotonic() - t0 < 5
            for ws in (a, b):
                with pytest.raises(ConnectionClosed):
                    await recv_until(ws, lambda m: False, 3)
    run(body())



def test_sigterm_right_after_listening_line_exits_cleanly(start_server):
    """The 'Listening on' line promises a running server: SIGTERM at once must still exit 0, promptly."""
    for _ in range(8):
        srv = start_server()
        code = srv.stop(signal.SIGTERM)
        assert code == 0, f"exit status {code} for SIGTERM sent right after the Listening line\n{srv.output()}"

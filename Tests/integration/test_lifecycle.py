"""Protocol tests for the later parts of docs/PROTOCOL.md: pause/resume/extend, scheduled (pending) starts,
resuming after a disconnect (`/ws?since=N`, `catchUp`), `history`, the HTTP read API, durability across
restarts, and binary frames. Real server, real `websockets` client.
"""
from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest

from protocol_checks import (check_error, check_event, check_snapshot, is_int, list_snapshot, near,
                             out_date, start_activity, timer)
from support import http_get, iso, now
from wsclient import (collect_non_ticks, connect, expect_silence, recv_json, recv_non_tick, recv_until, request,
                      run, send_json, two_clients)


async def act_request(ws, msg: dict, event: str, observers=()) -> dict:
    """Send a request that changes one activity; expect ack + one `event` (also on observers). Returns the event."""
    await send_json(ws, msg)
    got = await collect_non_ticks(ws, 2)
    acks = [m for m in got if m["type"] == "ack"]
    evs = [m for m in got if m["type"] == "activity"]
    assert len(acks) == 1 and len(evs) == 1, f"expected ack + {event}, got {got}"
    assert acks[0]["requestId"] == msg["requestId"], acks[0]
    ev = check_event(evs[0], event, msg.get("activityId"))
    for o in observers:
        ev_o = check_event(await recv_non_tick(o), event, msg.get("activityId"))
        assert ev_o["sequence"] == ev["sequence"] and ev_o["activity"] == ev["activity"]
    return ev


async def ticks_for(ws, aid: str, count: int, timeout: float = 4.0) -> list[dict]:
    """The timer entries for `aid` from the next `count` ticks that mention it."""
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < count:
        m = await recv_until(ws, lambda m: m["type"] == "tick" and any(t.get("activityId") == aid for t in m["timers"]),
                             max(0.05, deadline - time.monotonic()), include_ticks=True)
        out.append(next(t for t in m["timers"] if t["activityId"] == aid) | {"serverTime": m["serverTime"]})
    return out


def http_json(url: str) -> tuple[int, str, object]:
    r = http_get(url, timeout=5)
    return r.status, r.headers.get("content-type", ""), r.json()


# ---------------------------------------------------------------------------------------------------
# pause / resume / extend
# ---------------------------------------------------------------------------------------------------
def test_pause_freezes_and_resume_shifts_the_end(server):
    async def body():
        async with two_clients(server.ws_url) as (a, b):
            ack, started = await start_activity(a, [b], duration=70)
            aid = ack["activityId"]
            _, end0 = timer(started["activity"])
            paused = await act_request(a, {"type": "pause", "requestId": "p", "activityId": aid}, "paused", [b])
            assert paused["sequence"] == started["sequence"] + 1
            pact = paused["activity"]
            paused_at = out_date(pact["content"]["state"].get("pausedAt"), "pausedAt")
            assert near(paused_at, now(), 2)
            assert timer(pact)[1] == end0, "pause must not move the end"
            ticks = await ticks_for(b, aid, 2)
            for t in ticks:
                assert t.get("paused") is True, t
                assert is_int(t["remainingSeconds"]), t
            assert ticks[0]["remainingSeconds"] == ticks[1]["remainingSeconds"], f"paused countdown moved: {ticks}"
            # the frozen value is the time left at the pause instant, rounded up
            left = (end0 - paused_at).total_seconds()
            assert ticks[0]["remainingSeconds"] in (int(left), int(left) + 1) and ticks[0]["remainingSeconds"] >= left - 1e-9
            await asyncio.sleep(0.3)
            resumed = await act_request(a, {"type": "resume", "requestId": "r", "activityId": aid}, "resumed", [b])
            ract = resumed["activity"]
            assert ract["content"]["state"].get("pausedAt") is None, ract
            _, end1 = timer(ract)
            shift = (end1 - end0).total_seconds()
            paused_for = (out_date(resumed["serverTime"]) - paused_at).total_seconds()
            assert shift > 1.0, f"end moved by {shift}s after a pause of ~{paused_for}s"
            assert abs(shift - paused_for) < 0.25, f"end moved by {shift}s, paused for {paused_for}s"
            assert ract["content"]["staleDate"] == ract["content"]["state"]["workoutTimer"]["end"], \
                "a staleDate equal to the old end moves with it"
            t = (await ticks_for(b, aid, 1))[0]
            assert not t.get("paused"), t
    run(body())


def test_extend_moves_end_and_stale_date(server):
    async def body():
        async with two_clients(server.ws_url) as (a, b):
            ack, started = await start_activity(a, [b], duration=70)
            aid = ack["activityId"]
            s0, end0 = timer(started["activity"])
            ev = await act_request(a, {"type": "extend", "requestId": "x", "activityId": aid, "seconds": 60},
                                   "extended", [b])
            s1, end1 = timer(ev["activity"])
            assert (s1, end1 - end0) == (s0, timedelta(seconds=60)), ev["activity"]["content"]
            assert ev["activity"]["content"]["staleDate"] == iso(end1)
            assert ev["sequence"] == started["sequence"] + 1
            # negative shortens, but never below now
            ev = await act_request(a, {"type": "extend", "requestId": "y", "activityId": aid, "seconds": -30},
                                   "extended", [b])
            assert timer(ev["activity"])[1] - end1 == timedelta(seconds=-30)
            t_req = now()
            ev = await act_request(a, {"type": "extend", "requestId": "z", "activityId": aid, "seconds": -10000},
                                   "extended", [b])
            end3 = timer(ev["activity"])[1]
            assert near(end3, t_req, 1.0) and end3 >= t_req - timedelta(milliseconds=50), \
                f"end {end3} should be clamped to now ({t_req})"
    run(body())


def test_pause_resume_extend_errors(server):
    async def body():
        async with two_clients(server.ws_url) as (a, b):
            ack, started = await start_activity(a, [b], duration=70)
            aid = ack["activityId"]
            check_error(await request(a, {"type": "resume", "requestId": 1, "activityId": aid}), "invalid_state", None, 1)
            await act_request(a, {"type": "pause", "requestId": "p", "activityId": aid}, "paused", [b])
            check_error(await request(a, {"type": "pause", "requestId": 2, "activityId": aid}), "invalid_state", None, 2)
            check_error(await request(a, {"type": "extend", "requestId": 3, "activityId": aid}),
                        "missing_field", "seconds", 3)
            check_error(await request(a, {"type": "extend", "requestId": 4, "activityId": aid, "seconds": "abc"}),
                        "invalid_field", "seconds", 4)
            check_error(await request(a, {"type": "pause", "requestId": 5}), "missing_field", "activityId", 5)
            check_error(await request(a, {"type": "pause", "requestId": 6, "activityId": "nope"}),
                        "unknown_activity", None, 6)
            await expect_silence(b, 0.2)
            snap = await list_snapshot(a)
            assert snap["sequence"] == started["sequence"] + 1  # only the pause
            # a finished countdown cannot be paused
            ack2, _ = await start_activity(a, [b], duration=1, rid="short")
            await recv_until(b, lambda m: m.get("event") == "timerFinished" and m["activity"]["id"] == ack2["activityId"], 4)
            check_error(await request(a, {"type": "pause", "requestId": 7, "activityId": ack2["activityId"]}),
                        "invalid_state", None, 7)
    run(body())


def test_paused_countdown_does_not_finish(server):
    async def body():
        async with connect(server.ws_url) as a:
            await recv_json(a)
            ack, _ = await start_activity(a, duration=2)
            aid = ack["activityId"]
            await act_request(a, {"type": "pause", "requestId": "p", "activityId": aid}, "paused")
            # The stale date still applies, but no timerFinished fires while paused.
            try:
                m = await recv_until(a, lambda m: m.get("event") == "timerFinished", 3.0)
            except AssertionError:
                m = None
            assert m is None, f"timerFinished while paused: {m}"
            snap = await list_snapshot(a)
            assert snap["activities"][0]["activityState"] == "stale", snap
    run(body())


# ---------------------------------------------------------------------------------------------------
# scheduled (pending) starts
# ---------------------------------------------------------------------------------------------------
def test_scheduled_start_is_pending_then_started(server):
    async def body():
        async with two_clients(server.ws_url) as (a, b):
            at = (now() + timedelta(seconds=2)).replace(microsecond=0)
            await send_json(a, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                "durationSeconds": 3, "startDate": iso(at)})
            got = await collect_non_ticks(a, 2)
            ack = next(m for m in got if m["type"] == "ack")
            aid = ack["activityId"]
            sched = check_event(next(m for m in got if m["type"] == "activity"), "scheduled", aid)
            assert check_event(await recv_non_tick(b), "scheduled", aid)["sequence"] == sched["sequence"]
            assert sched["activity"]["activityState"] == "pending"
            assert out_date(sched["activity"]["startDate"]) == at
            t = (await ticks_for(b, aid, 1))[0]
            assert is_int(t.get("startsInSeconds")) and 0 <= t["startsInSeconds"] <= 2, t
            st = check_event(await recv_until(b, lambda m: m.get("event") == "started", 4), "started", aid)
            assert st["sequence"] == sched["sequence"] + 1
            assert st["activity"]["activityState"] == "active"
            assert out_date(st["serverTime"]) >= at - timedelta(milliseconds=50)
            s, e = timer(st["activity"])
            assert (s, e - s) == (at, timedelta(seconds=3)), st["activity"]["content"]
    run(body())


def test_past_start_date_starts_at_once_and_pending_end_dismisses(server):
    async def body():
        async with connect(server.ws_url) as a:
            await recv_json(a)
            _, ev = await start_activity(a, rid="past", startDate=iso(now() - timedelta(minutes=5)))
            assert ev["activity"]["activityState"] == "active"
            await send_json(a, {"type": "start", "requestId": "future", "attributes": {"workout": "jogging"},
                                "durationSeconds": 30, "startDate": iso(now() + timedelta(hours=1))})
            got = await collect_non_ticks(a, 2)
            aid = next(m for m in got if m["type"] == "ack")["activityId"]
            await send_json(a, {"type": "end", "requestId": "e", "activityId": aid, "dismissalPolicy": "default"})
            got = await collect_non_ticks(a, 3)
            evs = [m for m in got if m["type"] == "activity"]
            assert [m["event"] for m in evs] == ["ended", "dismissed"], got
            assert len((await list_snapshot(a))["activities"]) == 1
    run(body())


# ---------------------------------------------------------------------------------------------------
# resume after a disconnect, history, HTTP API
# ---------------------------------------------------------------------------------------------------
def test_resume_with_since_replays_missed_events(server):
    async def body():
        async with connect(server.ws_url) as a:
            s0 = check_snapshot(await recv_json(a))["sequence"]
            ack, _ = await start_activity(a)
            aid = ack["activityId"]
            await act_request(a, {"type": "update", "requestId": "u", "activityId": aid, "durationSeconds": 20}, "updated")
            await send_json(a, {"type": "end", "requestId": "e", "activityId": aid, "dismissalPolicy": "immediate"})
            await collect_non_ticks(a, 3)
            last = (await list_snapshot(a))["sequence"]
            assert last == s0 + 4
        async with connect(f"{server.ws_url}?since={s0 + 1}") as c:
            got = await collect_non_ticks(c, 4)
            assert [m["type"] for m in got] == ["activity"] * 3 + ["caughtUp"], got
            assert [m["sequence"] for m in got[:3]] == [s0 + 2, s0 + 3, s0 + 4]
            assert [m["event"] for m in got[:3]] == ["updated", "ended", "dismissed"]
            assert got[3]["sequence"] == last
            out_date(got[3]["serverTime"])
            # then live events
            ack, ev = await start_activity(c, rid="live")
            assert ev["sequence"] == last + 1
            # catchUp as a message
            await send_json(c, {"type": "catchUp", "requestId": "cu", "since": last - 1})
            got = await collect_non_ticks(c, 3)
            assert [(m["type"], m.get("sequence")) for m in got] == \
                [("activity", last), ("activity", last + 1), ("caughtUp", last + 1)], got
        # too far ahead: a snapshot with reset
        async with connect(f"{server.ws_url}?since={last + 1000}") as d:
            m = check_snapshot(await recv_non_tick(d))
            assert m.get("reset") is True, m
            assert m["sequence"] == last + 1
        async with connect(server.ws_url) as e:
            m = check_snapshot(await recv_non_tick(e))
            assert not m.get("reset"), m
    run(body())


def test_history_lists_finished_workouts(server):
    async def body():
        async with connect(server.ws_url) as a:
            await recv_json(a)
            ack1, _ = await start_activity(a, duration=70, workout="yoga", rid="h1")
            await send_json(a, {"type": "end", "requestId": "e1", "activityId": ack1["activityId"]})
            await collect_non_ticks(a, 2)
            ack2, _ = await start_activity(a, duration=1, workout=0, rid="h2")
            await recv_until(a, lambda m: m.get("event") == "timerFinished", 4)
            await asyncio.sleep(0.1)
            await send_json(a, {"type": "end", "requestId": "e2", "activityId": ack2["activityId"]})
            await collect_non_ticks(a, 2)
            h = await request(a, {"type": "history", "requestId": "h"},
                              lambda m: m.get("requestId") == "h")
            assert h["type"] == "history", h
            w = h["workouts"]
            assert [x["id"] for x in w] == [ack2["activityId"], ack1["activityId"]], "newest end first"
            for x in w:
                for k in ("startDate", "endDate"):
                    out_date(x[k], k)
                assert x["attributesType"] == "workout" and x["endReason"] == "request", x
            assert w[0]["attributes"] == {"workout": "jogging"} and w[0]["outcome"] == "completed", w[0]
            assert w[0]["plannedDurationSeconds"] == 1
            assert w[1]["attributes"] == {"workout": "yoga"} and w[1]["outcome"] == "stopped", w[1]
            assert w[1]["plannedDurationSeconds"] == 70
            assert 0 <= w[1]["actualDurationSeconds"] <= 5, w[1]
            h = await request(a, {"type": "history", "requestId": "h1", "limit": 1}, lambda m: m.get("requestId") == "h1")
            assert [x["id"] for x in h["workouts"]] == [ack2["activityId"]]
            h = await request(a, {"type": "history", "requestId": "h2", "before": w[0]["endDate"]},
                              lambda m: m.get("requestId") == "h2")
            assert [x["id"] for x in h["workouts"]] == [ack1["activityId"]]
            for bad in (0, 501, "x"):
                check_error(await request(a, {"type": "history", "requestId": "bad", "limit": bad}),
                            "invalid_field", "limit", "bad")
            check_error(await request(a, {"type": "history", "requestId": "bad", "before": "yesterday"}),
                        "invalid_field", "before", "bad")
            # HTTP read API
            status, ct, body_ = http_json(server.url + "/api/history?limit=1")
            assert status == 200 and ct.split(";")[0] == "application/json", (status, ct)
            assert [x["id"] for x in body_["workouts"]] == [ack2["activityId"]]
            status, ct, body_ = http_json(server.url + "/api/history?limit=abc")
            assert status == 400 and body_["type"] == "error" and body_["code"] == "invalid_field", body_
    run(body())


def test_http_api_activities_matches_snapshot(server):
    async def body():
        async with connect(server.ws_url) as a:
            await recv_json(a)
            await start_activity(a, workout="aerobics")
            snap = await list_snapshot(a)
            status, ct, api = http_json(server.url + "/api/activities")
            assert status == 200 and ct.split(";")[0] == "application/json", (status, ct)
            check_snapshot(api)
            assert api["activities"] == snap["activities"] and api["sequence"] == snap["sequence"]
            status, _, err = http_json(server.url + "/api/nope")
            assert status == 404 and err["type"] == "error", (status, err)
    run(body())


def test_binary_frame_is_refused_and_connection_stays(server):
    async def body():
        async with connect(server.ws_url) as a:
            await recv_json(a)
            await a.send(b'{"type":"list"}')
            check_error(await recv_non_tick(a), "unsupported_frame")
            await list_snapshot(a)
    run(body())


# ---------------------------------------------------------------------------------------------------
# durability
# ---------------------------------------------------------------------------------------------------
def test_activities_and_sequence_survive_a_restart(start_server):
    first = start_server()

    async def before():
        async with connect(first.ws_url) as a:
            await recv_json(a)
            ack, _ = await start_activity(a, workout="yoga", duration=600, relevanceScore=7)
            await act_request(a, {"type": "update", "requestId": "u", "activityId": ack["activityId"],
                                  "durationSeconds": 300, "alert": {"title": "t", "body": "b"}}, "updated")
            ack2, _ = await start_activity(a, duration=1, rid="short")
            return await list_snapshot(a), ack2["activityId"]
    snap1, short_id = run(before())
    assert first.stop() == 0, first.output()
    time.sleep(1.5)  # the short countdown's deadlines pass while the server is down
    second = start_server(cwd=first.cwd)

    async def after():
        async with connect(second.ws_url) as b:
            snap2 = check_snapshot(await recv_json(b))
            ids1 = [x["id"] for x in snap1["activities"]]
            assert sorted(x["id"] for x in snap2["activities"]) == sorted(ids1)
            by_id = {x["id"]: x for x in snap2["activities"]}
            long_id = next(i for i in ids1 if i != short_id)
            old = next(x for x in snap1["activities"] if x["id"] == long_id)
            assert by_id[long_id] == old, "a restored activity must be identical"
            # the deadlines that passed while down were applied, with their events (stale + timerFinished)
            assert by_id[short_id]["activityState"] == "stale", by_id[short_id]
            assert snap2["sequence"] == snap1["sequence"] + 2, (snap1["sequence"], snap2["sequence"])
            _, ev = await start_activity(b, rid="next")
            assert ev["sequence"] == snap2["sequence"] + 1
    run(after())


def test_memory_mode_keeps_nothing(start_server, tmp_path):
    first = start_server("--memory", cwd=tmp_path)

    async def add():
        async with connect(first.ws_url) as a:
            await recv_json(a)
            await start_activity(a)
    run(add())
    assert first.stop() == 0
    assert not (tmp_path / "data").exists(), "--memory wrote a data directory"
    second = start_server("--memory", cwd=tmp_path)

    async def check():
        async with connect(second.ws_url) as b:
            m = check_snapshot(await recv_json(b))
            assert m["activities"] == [] and m["sequence"] == 0
    run(check())

"""Issue 10, "Nothing lost": durability of the SQLite store, resuming clients, storage faults, deadlines that
pass while the server is down, and workout history (docs/PROTOCOL.md: "Resuming after a disconnect",
`history`, `storage_unavailable`, "Durability").

- crash: 4 concurrent controllers pipeline start/update/end; the server is SIGKILLed at a random
  acknowledgement and restarted on the same data directory; every acknowledged change and every broadcast
  event must be there, nothing unacknowledged half-applied, and `sequence` gapless and duplicate-free.
  `LIVEACTIVITY_CRASH_SEED` replays a run (the seed is in every failure message).
- resume: `/ws?since=N`, `catchUp`, `reset` for a log that no longer reaches back and for `since` ahead.
- fault: a full file system (a 2 MiB tmpfs, root only) gives `storage_unavailable` with nothing applied or
  broadcast; reads go on; the server recovers once space is back. A data directory that cannot be opened
  makes `serve` exit 1 naming it.
- downtime: deadlines (stale, timerFinished, dismissal, scheduled start) passed while down are applied at
  start-up, with consecutive sequences, and replayed to a client resuming with `?since=`.
- history: WebSocket `history` and `GET /api/history` (newest first, `limit`, `before` paging, 400s),
  across a restart.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from protocol_checks import OUT_DATE_RE, check_error, check_snapshot, out_date
from support import http_json, iso, liveactivity_bin, now
from wsclient import (connect, expect_silence, recv_json, recv_non_tick, recv_until, request,
                      run, send_json)

FAST = ("--rate", "100000", "--burst", "100000")
CRASH_ARGS = ("--max-activities", "1000", *FAST)


def data_args(data_dir: Path, *extra: str) -> tuple[str, ...]:
    return ("--data-dir", str(data_dir), *extra)


def strip_time(ev: dict) -> dict:
    """An event without its `serverTime` (a replay is stamped with the time it is sent)."""
    return {k: v for k, v in ev.items() if k != "serverTime"}


# Known server bug (see test_restart_restores_dates_exactly): the store re-reads its ISO-8601 dates with a
# parse/format pair that is not round-trip stable, so about half of all dates come back 1 ms earlier. The
# crash test compares dates with this tolerance so that it checks everything else; the exact test fails.
DATE_SLACK = timedelta(milliseconds=1)


def same_json(a, b) -> bool:
    """Equal JSON, except that server dates may differ by DATE_SLACK."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if isinstance(a, str) and isinstance(b, str) and a != b and OUT_DATE_RE.match(a) and OUT_DATE_RE.match(b):
        return abs(out_date(a) - out_date(b)) <= DATE_SLACK
    return a == b


def same_event(a: dict, b: dict) -> bool:
    return same_json(strip_time(a), strip_time(b))


def start_req(rid: str, duration: float, workout: object = "yoga", **extra) -> dict:
    return {"type": "start", "requestId": rid, "attributes": {"workout": workout}, "durationSeconds": duration, **extra}


async def read_resume(ws, timeout: float = 10.0) -> tuple[list[dict], dict]:
    """The `activity` events of a resume, then its `caughtUp` (or a `snapshot` with reset)."""
    events = []
    deadline = time.monotonic() + timeout
    while True:
        m = await recv_non_tick(ws, max(0.05, deadline - time.monotonic()))
        if m["type"] == "activity":
            events.append(m)
        elif m["type"] in ("caughtUp", "snapshot"):
            return events, m
        else:
            raise AssertionError(f"unexpected message during a resume: {m}")


async def request_events(ws, msg: dict, n_events: int, timeout: float = 5.0) -> tuple[dict, list[dict]]:
    """Send a control request; return its ack and the next `n_events` activity events on this connection."""
    await send_json(ws, msg)
    ack, events = None, []
    deadline = time.monotonic() + timeout
    while ack is None or len(events) < n_events:
        m = await recv_non_tick(ws, max(0.05, deadline - time.monotonic()))
        if m["type"] == "activity":
            events.append(m)
        elif m.get("requestId") == msg["requestId"]:
            assert m["type"] == "ack", f"{msg} -> {m}"
            ack = m
        else:
            raise AssertionError(f"unexpected {m} while waiting for the reply to {msg}")
    return ack, events


# ===================================================================================================
# 1. crash: kill -9 at a random moment under concurrent load
# ===================================================================================================
ROUNDS = 4
# 2,000 requests in all, spread over the rounds (each round is cut short by its kill; scale up for a soak
# run with LIVEACTIVITY_CRASH_REQUESTS=2000, i.e. 2,000 per round).
REQUESTS_PER_ROUND = int(os.environ.get("LIVEACTIVITY_CRASH_REQUESTS", 2000 // ROUNDS))
WORKERS = 4
LIVE_PER_WORKER = 15          # 60 live at most
WINDOW = 6                    # requests in flight per connection


@dataclass
class Req:
    rid: str
    op: str                   # start | update | end
    worker: int
    aid: str | None = None    # update/end: the activity
    score: int | None = None  # start/update: the unique relevanceScore that identifies the content
    policy: object = None     # end: dismissalPolicy
    order: int = 0            # per-activity order of content changes (start = 0)


@dataclass
class Round:
    seed: int
    kill_after: int
    reqs: dict[str, Req] = field(default_factory=dict)
    by_score: dict[int, Req] = field(default_factory=dict)
    acks: dict[str, dict] = field(default_factory=dict)
    errors: list[dict] = field(default_factory=list)
    live_events: dict[int, dict] = field(default_factory=dict)
    killed_at: float | None = None

    def why(self) -> str:
        return f"[seed {self.seed}, killed after {self.kill_after} acks]"


async def crash_round(srv, rnd: Round, next_score: list[int]) -> None:
    """Drive WORKERS pipelined controllers until the kill_after-th ack, then SIGKILL the server."""
    rng = random.Random(rnd.seed)
    acked = [0]
    killed = asyncio.Event()

    def on_message(m: dict) -> None:
        if m["type"] == "activity":
            seq = m["sequence"]
            old = rnd.live_events.get(seq)
            assert old is None or strip_time(old) == strip_time(m), \
                f"{rnd.why()} two different events with sequence {seq}: {old} / {m}"
            rnd.live_events[seq] = m
        elif m["type"] == "ack":
            rnd.acks[m["requestId"]] = m
            acked[0] += 1
            if acked[0] == rnd.kill_after and not killed.is_set():
                os.kill(srv.pid, signal.SIGKILL)   # at once, with other requests in flight
                rnd.killed_at = time.monotonic()
                killed.set()
        elif m["type"] == "error":
            rnd.errors.append(m)

    async def worker(wid: int) -> None:
        wrng = random.Random(rng.random())
        async with connect(srv.ws_url, max_queue=None) as ws:
            snap = await recv_json(ws, 10)
            assert snap["type"] == "snapshot", snap
            inflight = asyncio.Semaphore(WINDOW)
            waiting: dict[str, asyncio.Future] = {}
            live: list[str] = []            # acked starts not yet ended
            starting = [0]
            content_order: dict[str, int] = {}

            async def reader() -> None:
                try:
                    while True:
                        raw = await ws.recv()
                        m = json.loads(raw)
                        on_message(m)
                        fut = waiting.pop(m.get("requestId"), None) if m["type"] in ("ack", "error") else None
                        if fut is not None and not fut.done():
                            fut.set_result(m)
                except ConnectionClosed:
                    pass
                finally:
                    for fut in waiting.values():
                        if not fut.done():
                            fut.set_result(None)

            def done(req: Req, fut: asyncio.Future) -> None:
                inflight.release()
                m = fut.result()
                if req.op == "start":
                    starting[0] -= 1
                    if m is not None and m["type"] == "ack":
                        live.append(m["activityId"])
                        content_order[m["activityId"]] = 0

            read_task = asyncio.create_task(reader())
            sent = 0
            try:
                while not killed.is_set() and sent < REQUESTS_PER_ROUND // WORKERS:
                    await inflight.acquire()
                    if killed.is_set() or read_task.done():
                        break
                    r = wrng.random()
                    rid = f"w{wid}-{sent}-{rnd.seed}"
                    if not live or (len(live) + starting[0] < LIVE_PER_WORKER and r < 0.4):
                        if len(live) + starting[0] >= LIVE_PER_WORKER:
                            # nothing acked to update/end yet and the quota is full: wait for acks
                            inflight.release()
                            await asyncio.sleep(0.002)
                            continue
                        score = next_score[0]
                        next_score[0] += 1
                        req = Req(rid, "start", wid, score=score)
                        msg = {"type": "start", "requestId": rid, "attributes": {"workout": wrng.choice([0, 1, 2])},
                               "durationSeconds": wrng.choice([1, 2, 3, 5]), "relevanceScore": score}
                        starting[0] += 1
                    elif r < 0.75:
                        aid = wrng.choice(live)
                        score = next_score[0]
                        next_score[0] += 1
                        content_order[aid] += 1
                        req = Req(rid, "update", wid, aid=aid, score=score, order=content_order[aid])
                        msg = {"type": "update", "requestId": rid, "activityId": aid,
                               "durationSeconds": wrng.choice([1, 2, 4]), "relevanceScore": score}
                    else:
                        aid = live.pop(wrng.randrange(len(live)))
                        policy = wrng.choice(["immediate", "immediate", "default",
                                              {"after": iso(now() + timedelta(seconds=1))}])
                        req = Req(rid, "end", wid, aid=aid, policy=policy)
                        msg = {"type": "end", "requestId": rid, "activityId": aid, "dismissalPolicy": policy}
                    rnd.reqs[rid] = req
                    if req.score is not None:
                        rnd.by_score[req.score] = req
                    fut = asyncio.get_running_loop().create_future()
                    fut.add_done_callback(lambda f, req=req: done(req, f))
                    waiting[rid] = fut
                    try:
                        await ws.send(json.dumps(msg))
                    except ConnectionClosed:
                        break
                    sent += 1
                await killed.wait()
            finally:
                await asyncio.wait_for(read_task, 15)

    # killer_fallback kills at once if every request was answered before the chosen ack
    await asyncio.wait_for(asyncio.gather(*(worker(i) for i in range(WORKERS)),
                                          killer_fallback(srv, killed, rnd, acked)), 60)


async def killer_fallback(srv, killed: asyncio.Event, rnd: Round, acked: list[int]) -> None:
    """Kills the server if the round's requests all got answered before the chosen ack count."""
    while not killed.is_set():
        await asyncio.sleep(0.05)
        if len(rnd.acks) + len(rnd.errors) >= REQUESTS_PER_ROUND - 1:
            os.kill(srv.pid, signal.SIGKILL)
            rnd.kill_after = acked[0]
            killed.set()


async def capture_all(srv, since: int = 0, message: bool = False) -> tuple[list[dict], dict, dict]:
    """After a restart: every logged event after `since` (`?since=`, or a `catchUp` message), its `caughtUp`,
    and a snapshot at the same sequence."""
    async with connect(srv.ws_url if message else f"{srv.ws_url}?since={since}", max_queue=None) as ws:
        if message:
            check_snapshot(await recv_json(ws, 10))
            await send_json(ws, {"type": "catchUp", "requestId": "all", "since": since})
        events, caught = await read_resume(ws, 30)
        assert caught["type"] == "caughtUp", f"since={since} on a log that holds it gave {caught}"
        if message:
            # Deadlines may fire between the snapshot and the catchUp request: those events arrive live,
            # before the replay (which then includes them again, in order). Keep the replay.
            first = next((i for i, e in enumerate(events) if e["sequence"] == since + 1), len(events))
            early, events = events[:first], events[first:]
            replayed = {e["sequence"] for e in events}
            assert all(e["sequence"] in replayed for e in early), "a live event is missing from the replay"
        await send_json(ws, {"type": "list", "requestId": "cap"})
        while True:  # deadlines may fire in between: they arrive live before the list reply
            m = await recv_non_tick(ws, 10)
            if m["type"] == "activity":
                events.append(m)
            elif m.get("requestId") == "cap":
                return events, caught, check_snapshot(m)
            else:
                raise AssertionError(f"unexpected {m}")


def replay(events: list[dict]) -> dict[str, dict]:
    state: dict[str, dict] = {}
    for ev in events:
        a = ev["activity"]
        if ev["event"] == "dismissed":
            state.pop(a["id"], None)
        else:
            state[a["id"]] = a
    return state


def check_gapless(events: list[dict], since: int, what: str) -> None:
    seqs = [e["sequence"] for e in events]
    want = list(range(since + 1, since + 1 + len(seqs)))
    assert seqs == want, f"{what}: the restored log after {since} is not a gapless, duplicate-free run: " \
        f"first differences {[(s, w) for s, w in zip(seqs, want) if s != w][:10]} (of {len(seqs)})"


def verify_round(rnd: Round, events: list[dict], snap: dict, round_start: int) -> None:
    """`events`: the log after `round_start` (when nothing was live), `snap`: the state at its end."""
    why = rnd.why()
    assert not rnd.errors, f"{why} errors during the run: {rnd.errors[:5]}"
    check_gapless(events, round_start, why)
    assert events, f"{why} no events were restored"
    last = events[-1]["sequence"]
    assert snap["sequence"] == last, f"{why} snapshot sequence {snap['sequence']} != last logged {last}"
    if rnd.live_events:
        assert max(rnd.live_events) <= snap["sequence"], \
            f"{why} clients saw sequence {max(rnd.live_events)} before the crash, restarted server says {snap['sequence']}"
        assert min(rnd.live_events) > round_start, f"{why} {min(rnd.live_events)} <= {round_start}"
    # every event broadcast before the crash was committed, identically
    by_seq = {e["sequence"]: e for e in events}
    for seq, ev in rnd.live_events.items():
        assert seq in by_seq and same_event(by_seq[seq], ev), \
            f"{why} event {seq} was broadcast but is not in the restored log as sent: {ev} / {by_seq.get(seq)}"
    # the stored activities are exactly what the log says
    expected = replay(events)
    got = {a["id"]: a for a in snap["activities"]}
    assert got.keys() == expected.keys(), \
        f"{why} activities after restart differ from the log: extra {got.keys() - expected.keys()}, " \
        f"missing {expected.keys() - got.keys()}"
    for aid, a in got.items():
        assert same_json(a, expected[aid]), f"{why} activity {aid} differs from its last logged event:\n{a}\n{expected[aid]}"

    # this round's events: each one is a whole request (or a server deadline)
    started: dict[str, Req] = {}
    updated: set[str] = set()
    ended: dict[str, int] = {}
    dismissed: dict[str, int] = {}
    round_events = [e for e in events if e["sequence"] > round_start]
    for ev in round_events:
        kind, a, seq = ev["event"], ev["activity"], ev["sequence"]
        aid = a["id"]
        assert aid not in dismissed, f"{why} event {kind} ({seq}) for {aid} after it was dismissed"
        if kind == "started":
            req = rnd.by_score.get(a["content"]["relevanceScore"])
            assert req is not None and req.op == "start", f"{why} started event for no start request: {ev}"
            assert aid not in started and req.rid not in {r.rid for r in started.values()}, \
                f"{why} start {req.rid} applied twice: {ev}"
            started[aid] = req
            if req.rid in rnd.acks:
                assert rnd.acks[req.rid]["activityId"] == aid, f"{why} ack {rnd.acks[req.rid]} vs event {ev}"
        elif kind == "updated":
            req = rnd.by_score.get(a["content"]["relevanceScore"])
            assert req is not None and req.op == "update" and req.aid == aid, \
                f"{why} updated event for no update request: {ev} (request {req})"
            assert req.rid not in updated, f"{why} update {req.rid} applied twice"
            assert aid in started and aid not in ended, f"{why} update of an activity not live: {ev}"
            updated.add(req.rid)
        elif kind == "ended":
            assert aid in started and aid not in ended, f"{why} ended twice or before started: {ev}"
            ends = [r for r in rnd.reqs.values() if r.op == "end" and r.aid == aid]
            assert len(ends) == 1, f"{why} ended event without its end request: {ev}"
            assert a["activityState"] == "ended" and a.get("endReason") == "request", ev
            ended[aid] = seq
            if ends[0].policy == "immediate":
                nxt = by_seq.get(seq + 1)
                assert nxt is not None and nxt["event"] == "dismissed" and nxt["activity"]["id"] == aid, \
                    f"{why} immediate end half-applied: ended at {seq} but next event is {nxt}"
        elif kind == "dismissed":
            assert aid in ended, f"{why} dismissed before ended: {ev}"
            dismissed[aid] = seq
        elif kind in ("stale", "timerFinished"):
            assert aid in started and aid not in ended, f"{why} {kind} for {aid} not running: {ev}"
        else:
            raise AssertionError(f"{why} unexpected event kind in the log: {ev}")

    # every acknowledged change is there
    for rid, ack in rnd.acks.items():
        req = rnd.reqs[rid]
        if req.op == "start":
            assert ack["activityId"] in started and started[ack["activityId"]].rid == rid, \
                f"{why} acknowledged start {rid} ({ack['activityId']}) is missing after the crash"
        elif req.op == "update":
            assert rid in updated, f"{why} acknowledged update {rid} of {req.aid} is missing after the crash"
        else:
            assert req.aid in ended, f"{why} acknowledged end {rid} of {req.aid} is missing after the crash"
            if req.policy == "immediate":
                assert req.aid in dismissed and req.aid not in got, \
                    f"{why} acknowledged immediate end {rid}: {req.aid} not dismissed"
            elif req.aid in got:
                assert got[req.aid]["activityState"] == "ended", got[req.aid]
    # acknowledged content is current unless a later request replaced it
    for aid, a in got.items():
        if aid not in started:
            continue
        cur = rnd.by_score[a["content"]["relevanceScore"]]
        acked_orders = [r.order for r in rnd.reqs.values()
                        if r.aid == aid and r.op == "update" and r.rid in rnd.acks]
        if started[aid].rid in rnd.acks:
            acked_orders.append(0)
        if acked_orders:
            cur_order = 0 if cur.op == "start" else cur.order
            assert cur_order >= max(acked_orders), \
                f"{why} {aid}: current content is from {cur.rid} (order {cur_order}) but a later change " \
                f"(order {max(acked_orders)}) was acknowledged"


def server_cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return -1.0


def test_crash_at_random_moments_loses_nothing(start_server, tmp_path):
    seed = int(os.environ.get("LIVEACTIVITY_CRASH_SEED", time.time_ns() % 1_000_000))
    rng = random.Random(seed)
    data_dir = tmp_path / "data"
    args = data_args(data_dir, *CRASH_ARGS)
    srv = start_server(*args)
    captured: dict[int, dict] = {}
    next_score = [1]
    started_at = time.monotonic()
    summary = []
    for r in range(ROUNDS):
        # start each round with nothing live
        async def clear():
            async with connect(srv.ws_url) as ws:
                await recv_json(ws, 10)
                await send_json(ws, {"type": "end", "requestId": "clear", "all": True, "dismissalPolicy": "immediate"})
                await recv_until(ws, lambda m: m.get("requestId") == "clear", 10)
                snap = await request(ws, {"type": "list", "requestId": "l"}, timeout=10)
                assert snap["activities"] == [], snap
                return snap["sequence"]
        round_start = run(clear())
        margin = REQUESTS_PER_ROUND // 10
        rnd = Round(seed=rng.randrange(1 << 30), kill_after=rng.randrange(margin, REQUESTS_PER_ROUND - margin))
        t0 = time.monotonic()
        run(crash_round(srv, rnd, next_score))
        t1 = time.monotonic()
        cpu = server_cpu_seconds(srv.pid)
        srv.kill()
        srv = start_server(*args, cwd=srv.cwd)
        t2 = time.monotonic()
        events, caught, snap = run(capture_all(srv, round_start))
        t3 = time.monotonic()
        verify_round(rnd, events, snap, round_start)
        t4 = time.monotonic()
        summary.append((rnd.kill_after, len(rnd.reqs), len(rnd.acks), len(rnd.live_events), snap["sequence"],
                        f"load {t1 - t0:.1f}s (server cpu {cpu:.1f}s) restart {t2 - t1:.1f}s "
                        f"capture {t3 - t2:.1f}s verify {t4 - t3:.1f}s"))
        captured.update((e["sequence"], e) for e in events)
    # the whole log, from the first event: gapless, duplicate-free, and what each round restored
    events, _, snap = run(capture_all(srv, 0, message=True))
    check_gapless(events, 0, f"seed {seed}, whole log")
    assert events[-1]["sequence"] == snap["sequence"]
    for e in events:
        if e["sequence"] in captured:
            assert same_event(e, captured[e["sequence"]]), f"seed {seed}: event changed: {captured[e['sequence']]} / {e}"
    elapsed = time.monotonic() - started_at
    print(f"crash seed {seed}: (kill after, sent, acked, events seen, sequence) per round {summary}; {elapsed:.1f}s")
    assert elapsed < 90, f"crash test too slow: {elapsed:.1f}s"


def test_restart_restores_dates_exactly(start_server, tmp_path):
    """A restored activity and a replayed event carry exactly the dates that were broadcast."""
    args = data_args(tmp_path / "data", *FAST)
    first = start_server(*args)

    async def make():
        async with connect(first.ws_url) as ws:
            await recv_json(ws)
            seen = []
            for i in range(20):  # 20 start instants: ~half of all millisecond values do not round-trip
                _, evs = await request_events(ws, start_req(f"s{i}", 600), 1)
                seen += evs
            return seen
    seen = run(make())
    assert first.stop() == 0
    second = start_server(*args, cwd=first.cwd)

    async def check():
        async with connect(f"{second.ws_url}?since=0") as ws:
            replayed, _ = await read_resume(ws)
            snap = await request(ws, {"type": "list", "requestId": "l"})
        return replayed, snap
    replayed, snap = run(check())
    by_id = {a["id"]: a for a in snap["activities"]}
    bad_events = [(e["activity"]["startDate"], r["activity"]["startDate"])
                  for e, r in zip(seen, replayed) if strip_time(e) != strip_time(r)]
    bad_activities = [(e["activity"]["startDate"], by_id[e["activity"]["id"]]["startDate"])
                      for e in seen if by_id[e["activity"]["id"]] != e["activity"]]
    assert not bad_events and not bad_activities, (
        f"dates change across a restart (broadcast -> after restart): {len(bad_events)}/20 replayed events, "
        f"{len(bad_activities)}/20 restored activities differ, e.g. {(bad_events or bad_activities)[:3]}")


def test_a_moved_dismissal_date_survives_a_crash(start_server, tmp_path):
    """Ending an ended activity again with a later `after` moves its dismissal date: the `ended` event comes again
    with it, and it survives `kill -9` (found by a new user: it was acknowledged and applied, but never stored, so
    the restart put back the date 4 hours after the end)."""
    args = data_args(tmp_path / "data", *FAST)
    first = start_server(*args)

    async def make() -> tuple[dict, dict]:
        async with connect(first.ws_url) as ws:
            await recv_json(ws)
            ack, _ = await request_events(ws, start_req("s", 600), 1)
            aid = ack["activityId"]
            _, (ended,) = await request_events(ws, {"type": "end", "requestId": "e1", "activityId": aid}, 1)
            later = iso(now() + timedelta(minutes=30))
            _, (again,) = await request_events(ws, {"type": "end", "requestId": "e2", "activityId": aid,
                                                    "dismissalPolicy": {"after": later}}, 1)
            return ended, again
    ended, again = run(make())
    assert again["event"] == "ended" and again["sequence"] == ended["sequence"] + 1, again
    moved = again["activity"]
    assert moved["endDate"] == ended["activity"]["endDate"], (moved, ended)
    assert moved["dismissalDate"] != ended["activity"]["dismissalDate"], moved
    first.kill()
    second = start_server(*args, cwd=first.cwd)

    async def check() -> dict:
        async with connect(second.ws_url) as ws:
            return check_snapshot(await recv_json(ws))
    snap = run(check())
    (restored,) = snap["activities"]
    assert restored["dismissalDate"] == moved["dismissalDate"], (restored["dismissalDate"], moved["dismissalDate"])
    assert snap["sequence"] == again["sequence"]


# ===================================================================================================
# 2. resume: ?since=, catchUp, reset
# ===================================================================================================
async def fifty_changes(ws, tag: str) -> list[dict]:
    """Exactly 50 activity events from 50 requests (10 starts, 30 updates, 10 ends with default dismissal)."""
    events, ids = [], []
    for i in range(10):
        ack, evs = await request_events(ws, start_req(f"{tag}s{i}", 600, workout=i % 3), 1)
        ids.append(ack["activityId"])
        events += evs
    for i in range(30):
        _, evs = await request_events(ws, {"type": "update", "requestId": f"{tag}u{i}", "activityId": ids[i % 10],
                                           "durationSeconds": 300 + i, "alert": {"title": f"t{i}", "body": "b"}}, 1)
        events += evs
    for i in range(10):
        _, evs = await request_events(ws, {"type": "end", "requestId": f"{tag}e{i}", "activityId": ids[i]}, 1)
        events += evs
    assert [e["event"] for e in events] == ["started"] * 10 + ["updated"] * 30 + ["ended"] * 10, events
    return events


def test_resume_replays_exactly_the_missed_events(start_server, tmp_path):
    srv = start_server(*data_args(tmp_path / "data", *FAST))

    async def body():
        async with connect(srv.ws_url) as b:
            await recv_json(b)
            await request_events(b, start_req("first", 600), 1)
            # A watches, then leaves, remembering the last sequence it saw
            async with connect(srv.ws_url) as a:
                n = check_snapshot(await recv_json(a))["sequence"]
            missed = await fifty_changes(b, "x")
            assert [e["sequence"] for e in missed] == list(range(n + 1, n + 51))
            # ?since=N: exactly those 50, in order, then caughtUp, then live events
            async with connect(f"{srv.ws_url}?since={n}") as a:
                got, caught = await read_resume(a)
                assert len(got) == 50 and all(map(same_event, got, missed)), \
                    f"replay != what B saw: {[(g, m) for g, m in zip(got, missed) if not same_event(g, m)][:2]}"
                assert caught["type"] == "caughtUp" and caught["sequence"] == n + 50, caught
                out_date(caught["serverTime"])
                _, live = await request_events(b, start_req("live", 600), 1)
                m = await recv_non_tick(a)
                assert strip_time(m) == strip_time(live[0]) and m["sequence"] == n + 51, m
                await expect_silence(a, 0.3)
                m2 = n + 51
            # the same with a catchUp message on a new connection
            more = await fifty_changes(b, "y")
            async with connect(srv.ws_url) as a:
                snap = check_snapshot(await recv_json(a))
                assert snap["sequence"] == m2 + 50
                await send_json(a, {"type": "catchUp", "requestId": "cu", "since": m2})
                got, caught = await read_resume(a)
                assert len(got) == 50 and all(map(same_event, got, more)), "catchUp replay != what B saw"
                assert caught == caught | {"type": "caughtUp", "sequence": m2 + 50, "requestId": "cu"}, caught
                # since = the current sequence: nothing to replay
                await send_json(a, {"type": "catchUp", "requestId": "cu2", "since": m2 + 50})
                got, caught = await read_resume(a)
                assert got == [] and caught["type"] == "caughtUp" and caught["sequence"] == m2 + 50, caught
                # since ahead of the server: a snapshot with reset, by message and by URL
                await send_json(a, {"type": "catchUp", "requestId": "ahead", "since": m2 + 51})
                got, reset = await read_resume(a)
                assert got == [] and reset["type"] == "snapshot" and reset.get("reset") is True, reset
                assert reset["requestId"] == "ahead" and reset["sequence"] == m2 + 50, reset
            async with connect(f"{srv.ws_url}?since={m2 + 1000}") as a:
                reset = check_snapshot(await recv_non_tick(a))
                assert reset.get("reset") is True and reset["sequence"] == m2 + 50, reset
                listed = await request(a, {"type": "list", "requestId": "l"})
                assert reset["activities"] == listed["activities"]
    run(body())


def test_resume_from_before_the_retained_log_gets_a_reset(start_server, tmp_path):
    args = data_args(tmp_path / "data", "--log-events", "10", *FAST)
    srv = start_server(*args)

    async def changes(ws, count: int):
        ack, _ = await request_events(ws, start_req("s", 3600), 1)
        for i in range(count - 1):  # one record (one event) per request; the store prunes every 100 records
            await request_events(ws, {"type": "update", "requestId": f"u{i}", "activityId": ack["activityId"],
                                      "durationSeconds": 3600 + i}, 1)

    async def body(s):
        async with connect(s.ws_url) as b:
            await recv_json(b)
            await changes(b, 120)
            last = (await request(b, {"type": "list", "requestId": "l"}))["sequence"]
            assert last == 120
        for since in (0, 1, 50, last - 100):
            async with connect(f"{s.ws_url}?since={since}") as a:
                got, reset = await read_resume(a)
                assert got == [] and reset["type"] == "snapshot" and reset.get("reset") is True, \
                    f"since={since} with --log-events 10 after {last} events: {reset}"
                assert reset["sequence"] == last and len(reset["activities"]) == 1, reset
                await send_json(a, {"type": "catchUp", "requestId": "c", "since": since})
                got, reset = await read_resume(a)
                assert got == [] and reset.get("reset") is True and reset["requestId"] == "c", reset
        # the retained tail still resumes
        async with connect(f"{s.ws_url}?since={last - 5}") as a:
            got, caught = await read_resume(a)
            assert [e["sequence"] for e in got] == list(range(last - 4, last + 1)), got
            assert caught["type"] == "caughtUp" and caught["sequence"] == last
    run(body(srv))
    # and the same after a restart (the pruned log is what is on disk)
    assert srv.stop() == 0

    async def after(s):
        async with connect(f"{s.ws_url}?since=3") as a:
            got, reset = await read_resume(a)
            assert reset.get("reset") is True and reset["sequence"] == 120, reset
        async with connect(f"{s.ws_url}?since=117") as a:
            got, caught = await read_resume(a)
            assert [e["sequence"] for e in got] == [118, 119, 120] and caught["type"] == "caughtUp", (got, caught)
    run(after(start_server(*args, cwd=srv.cwd)))


# ===================================================================================================
# 3. storage faults
# ===================================================================================================
@pytest.fixture
def small_tmpfs(tmp_path):
    """A 2 MiB tmpfs (root only): the data directory's file system, to be filled up by the test."""
    mnt = tmp_path / "fs"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs (chmod cannot make a directory unwritable for root, and "
                    "a full file system is the portable way to make SQLite writes fail)")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2M", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (no CAP_SYS_ADMIN?): {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill_up(directory: Path) -> Path:
    """Write zeros to directory/fill until the file system is full."""
    fill = directory / "fill"
    r = subprocess.run(["dd", "if=/dev/zero", f"of={fill}", "bs=4k"], capture_output=True, text=True)
    assert r.returncode != 0 and "No space left" in r.stderr, f"dd did not fill the file system: {r.stderr}"
    st = os.statvfs(directory)
    assert st.f_bavail == 0, f"still {st.f_bavail} blocks free"
    return fill


def test_full_disk_refuses_changes_keeps_reads_and_recovers(small_tmpfs, start_server):
    data_dir = small_tmpfs / "data"
    args = data_args(data_dir, *FAST)
    srv = start_server(*args)

    async def body():
        async with connect(srv.ws_url) as a, connect(srv.ws_url) as b:
            await recv_json(a)
            await recv_json(b)
            ack, evs = await request_events(a, start_req("before", 3600), 1)
            aid = ack["activityId"]
            await recv_non_tick(b)
            before = await request(a, {"type": "list", "requestId": "l0"})
            fill = fill_up(small_tmpfs)
            # every change is refused, not acknowledged and not broadcast
            for msg in (start_req("full-start", 600),
                        {"type": "update", "requestId": "full-update", "activityId": aid, "durationSeconds": 5},
                        {"type": "end", "requestId": "full-end", "activityId": aid, "dismissalPolicy": "immediate"}):
                await send_json(a, msg)
                err = await recv_non_tick(a, 10)
                check_error(err, "storage_unavailable", request_id=msg["requestId"])
                # The store's own error text (SQLite's message, the file path) stays in the server's log.
                assert "SQLITE" not in err["message"].upper() and str(small_tmpfs) not in err["message"], err
                await expect_silence(a, 0.2)
                await expect_silence(b, 0.3)
            # reads go on, and nothing changed
            after = await request(a, {"type": "list", "requestId": "l1"})
            assert after["sequence"] == before["sequence"] and after["activities"] == before["activities"], after
            status, api = http_json(srv.url + "/api/activities")
            assert status == 200 and api["activities"] == before["activities"], (status, api)
            status, health = http_json(srv.url + "/healthz")
            assert status == 200 and health["sequence"] == before["sequence"], health
            # space is back: the next change works and the sequence has no gap
            fill.unlink()
            ack2, evs2 = await request_events(a, start_req("after", 600), 1)
            assert evs2[0]["sequence"] == before["sequence"] + 1, evs2
            m = await recv_non_tick(b, 5)
            assert m["type"] == "activity" and m["sequence"] == before["sequence"] + 1, m
            _, evs3 = await request_events(a, {"type": "update", "requestId": "u", "activityId": aid,
                                               "durationSeconds": 100}, 1)
            assert evs3[0]["sequence"] == before["sequence"] + 2
            return before["sequence"] + 2, aid, ack2["activityId"]
    last, aid, aid2 = run(body())
    # what is on disk: the accepted changes only
    assert srv.stop() == 0, srv.output()
    srv2 = start_server(*args, cwd=srv.cwd)

    async def check():
        async with connect(f"{srv2.ws_url}?since=0") as ws:
            events, caught = await read_resume(ws)
            check_gapless(events, 0, "after the full-disk episode")
            assert caught["sequence"] == last, caught
            assert [e["event"] for e in events] == ["started", "started", "updated"], events
            assert {e["activity"]["id"] for e in events} == {aid, aid2}
            snap = await request(ws, {"type": "list", "requestId": "l"})
            assert sorted(x["id"] for x in snap["activities"]) == sorted([aid, aid2])
    run(check())
    assert srv2.stop() == 0, srv2.output()


def run_serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    return subprocess.run([str(liveactivity_bin()), "serve", "--port", "0", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=30, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, SWIFT_BACKTRACE="enable=no,interactive=no"))


def test_unusable_data_dir_exits_1_naming_it(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n")
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "liveactivity.sqlite").write_bytes(b"this is not an SQLite database\n" * 200)
    for data_dir in (blocker / "data", garbage):
        r = run_serve(tmp_path, "--data-dir", str(data_dir))
        assert r.returncode == 1, f"--data-dir {data_dir}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
        assert "Listening" not in r.stdout, r.stdout
        assert str(data_dir) in r.stderr and "data directory" in r.stderr, \
            f"the message should name the data directory {data_dir}: {r.stderr!r}"
        assert len(r.stderr.strip().splitlines()) <= 3, f"expected a short, clear message: {r.stderr!r}"
        assert "NSCocoaErrorDomain" not in r.stderr and "UserInfo" not in r.stderr, r.stderr


def test_immutable_data_dir_exits_1_naming_it(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    if subprocess.run(["chattr", "+i", str(locked)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not supported here (needed: root cannot be kept out by chmod)")
    try:
        r = run_serve(tmp_path, "--data-dir", str(locked))
    finally:
        subprocess.run(["chattr", "-i", str(locked)], capture_output=True)
    assert r.returncode == 1, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert str(locked) in r.stderr and "Listening" not in r.stdout, r.stderr


# ===================================================================================================
# 4. deadlines that pass while the server is down
# ===================================================================================================
def test_deadlines_passed_while_down_are_applied_at_restart(start_server, tmp_path):
    args = data_args(tmp_path / "data", *FAST)
    first = start_server(*args)

    async def before():
        async with connect(first.ws_url) as ws:
            await recv_json(ws)
            t0 = now()
            a, _ = await request_events(ws, start_req("short", 2), 1)
            b, _ = await request_events(ws, start_req("ending", 600), 1)
            _, ev = await request_events(ws, {"type": "end", "requestId": "e", "activityId": b["activityId"],
                                              "dismissalPolicy": {"after": iso(t0 + timedelta(seconds=2))}}, 1)
            assert ev[0]["event"] == "ended"
            c, ev = await request_events(ws, start_req("later", 60, startDate=iso(t0 + timedelta(seconds=2))), 1)
            assert ev[0]["event"] == "scheduled" and ev[0]["activity"]["activityState"] == "pending", ev
            snap = await request(ws, {"type": "list", "requestId": "l"})
            return t0, a["activityId"], b["activityId"], c["activityId"], snap["sequence"]
    t0, short, ending, later, n = run(before())
    assert first.stop() == 0, first.output()
    time.sleep(max(0.0, (t0 + timedelta(seconds=3) - now()).total_seconds()))
    second = start_server(*args, cwd=first.cwd)

    async def after():
        async with connect(f"{second.ws_url}?since={n}") as ws:
            events, caught = await read_resume(ws)
            assert caught["type"] == "caughtUp", caught
            assert [e["sequence"] for e in events] == list(range(n + 1, n + 1 + len(events))), events
            assert caught["sequence"] == n + len(events)
            got = sorted((e["event"], e["activity"]["id"]) for e in events)
            assert got == sorted([("timerFinished", short), ("stale", short), ("dismissed", ending),
                                  ("started", later)]), f"events applied at restart: {got}"
            by = {(e["event"], e["activity"]["id"]): e["activity"] for e in events}
            assert by[("stale", short)]["activityState"] == "stale"
            assert by[("started", later)]["activityState"] == "active"
            snap = await request(ws, {"type": "list", "requestId": "l"})
            assert snap["sequence"] == caught["sequence"], "deadlines applied again after the restart"
            state = {x["id"]: x for x in snap["activities"]}
            assert ending not in state and state[short]["activityState"] == "stale"
            assert state[later]["activityState"] == "active"
            start, end = (out_date(state[later]["content"]["state"]["workoutTimer"][k]) for k in ("start", "end"))
            assert abs((start - (t0 + timedelta(seconds=2))).total_seconds()) < 0.01 and \
                abs((end - start).total_seconds() - 60) < 0.01, state[later]
            # no second round of the same events
            await expect_silence(ws, 1.2)
    run(after())


# ===================================================================================================
# 5. history
# ===================================================================================================
HISTORY_KEYS = {"id", "attributesType", "attributes", "startDate", "endDate", "plannedDurationSeconds",
                "actualDurationSeconds", "outcome", "endReason"}


def history_http(srv, **query) -> tuple[int, object]:
    return http_json(srv.url + "/api/history" + ("?" + urllib.parse.urlencode(query) if query else ""))


def page_through(fetch, limit: int) -> list[dict]:
    """Pages newest-first with the (before, beforeId) cursor of the previous page's last entry."""
    out, cursor = [], None
    for _ in range(50):
        page = fetch(limit, cursor)
        assert len(page) <= limit
        out += page
        if len(page) < limit:
            return out
        cursor = {"before": page[-1]["endDate"], "beforeId": page[-1]["id"]}
    raise AssertionError("paging does not end")


def test_history_newest_first_pages_and_survives_restart(start_server, tmp_path):
    args = data_args(tmp_path / "data", *FAST)
    first = start_server(*args)

    async def make():
        async with connect(first.ws_url) as ws:
            await recv_json(ws)
            ids = []
            w1, _ = await request_events(ws, start_req("w1", 70, workout="yoga"), 1)
            await asyncio.sleep(0.05)
            await request_events(ws, {"type": "end", "requestId": "e1", "activityId": w1["activityId"]}, 1)
            w2, _ = await request_events(ws, start_req("w2", 1, workout=0), 1)
            await recv_until(ws, lambda m: m.get("event") == "timerFinished", 5)
            await request_events(ws, {"type": "end", "requestId": "e2", "activityId": w2["activityId"],
                                      "dismissalPolicy": "immediate"}, 2)
            w3, _ = await request_events(ws, start_req("w3", 600, workout="aerobics"), 1)
            await asyncio.sleep(0.05)
            await request_events(ws, {"type": "end", "requestId": "e3", "activityId": w3["activityId"],
                                      "dismissalPolicy": {"after": iso(now() + timedelta(hours=1))}}, 1)
            for i in range(4):
                w, _ = await request_events(ws, start_req(f"m{i}", 300 + i), 1)
                await asyncio.sleep(0.01)
                await request_events(ws, {"type": "end", "requestId": f"me{i}", "activityId": w["activityId"]}, 1)
                ids.append(w["activityId"])
            live, _ = await request_events(ws, start_req("still-running", 600), 1)
            ids = list(reversed(ids)) + [w3["activityId"], w2["activityId"], w1["activityId"]]
            h = await request(ws, {"type": "history", "requestId": "h"}, lambda m: m.get("requestId") == "h")
            return ids, live["activityId"], h
    ids, live_id, h = run(make())
    w = h["workouts"]
    assert h["type"] == "history" and [x["id"] for x in w] == ids, "newest end first; running ones not listed"
    for x in w:
        assert HISTORY_KEYS <= x.keys(), x
        assert x["endReason"] == "request" and x["attributesType"] == "workout", x
        assert out_date(x["endDate"]) >= out_date(x["startDate"])
        assert abs((out_date(x["endDate"]) - out_date(x["startDate"])).total_seconds()
                   - x["actualDurationSeconds"]) < 0.01, x
    assert live_id not in [x["id"] for x in w]
    by = {x["id"]: x for x in w}
    assert by[ids[-1]]["outcome"] == "stopped" and by[ids[-1]]["plannedDurationSeconds"] == 70
    assert by[ids[-1]]["attributes"] == {"workout": "yoga"}
    assert by[ids[-2]]["outcome"] == "completed" and by[ids[-2]]["plannedDurationSeconds"] == 1
    assert by[ids[-2]]["actualDurationSeconds"] >= 1
    assert by[ids[-3]]["outcome"] == "stopped" and by[ids[-3]]["attributes"] == {"workout": "aerobics"}
    assert first.stop() == 0, first.output()
    srv = start_server(*args, cwd=first.cwd)

    async def ws_history(limit, before):
        async with connect(srv.ws_url) as ws:
            await recv_json(ws)
            q = {"type": "history", "requestId": "p", "limit": limit} | (before or {})
            m = await request(ws, q, lambda m: m.get("requestId") == "p")
            assert m["type"] == "history", m
            return m["workouts"]

    def http_history(limit, before):
        status, body = history_http(srv, limit=limit, **(before or {}))
        assert status == 200 and body["type"] == "history", (status, body)
        return body["workouts"]

    # the same after a restart, over both APIs, whole and paged
    status, body = history_http(srv)
    assert status == 200 and same_json(body["workouts"], w), f"history changed across a restart:\n{w}\n{body}"
    for limit in (1, 2, 3, 500):
        assert [x["id"] for x in page_through(http_history, limit)] == ids, f"HTTP paging by {limit}"
    assert [x["id"] for x in page_through(lambda l, b: run(ws_history(l, b)), 2)] == ids, "WebSocket paging"
    assert [x["id"] for x in http_history(3, None)] == ids[:3]
    # bad parameters: 400 naming the parameter
    for bad in ("0", "501", "abc", "-1", "2.5", ""):
        status, body = history_http(srv, limit=bad)
        assert status == 400, f"limit={bad!r}: {status} {body}"
        check_error(body, "invalid_field", "limit")
        assert "limit" in body["message"], body
    status, body = history_http(srv, before="yesterday")
    assert status == 400, (status, body)
    check_error(body, "invalid_field", "before")

    async def ws_bad():
        async with connect(srv.ws_url) as ws:
            await recv_json(ws)
            for bad in (0, 501, 2.5, "x"):
                check_error(await request(ws, {"type": "history", "requestId": "b", "limit": bad}),
                            "invalid_field", "limit", "b")
    run(ws_bad())


def test_history_paging_keeps_workouts_that_ended_together(start_server, tmp_path):
    """`end all` ends several workouts at the same instant; paging with `before` must not skip any."""
    srv = start_server(*data_args(tmp_path / "data", *FAST))

    async def make():
        async with connect(srv.ws_url) as ws:
            await recv_json(ws)
            for i in range(3):
                await request_events(ws, start_req(f"s{i}", 600 + i), 1)
            ack, _ = await request_events(ws, {"type": "end", "requestId": "all", "all": True}, 3)
            return ack["activityIds"]
    ids = run(make())
    status, body = history_http(srv)
    assert status == 200 and sorted(x["id"] for x in body["workouts"]) == sorted(ids), body
    assert len({x["endDate"] for x in body["workouts"]}) == 1, "the three ended at one instant"
    paged = page_through(lambda limit, before: history_http(srv, limit=limit, **(before or {}))[1]["workouts"], 1)
    assert sorted(x["id"] for x in paged) == sorted(ids), \
        f"paging by 1 with before=<last endDate>&beforeId=<last id> returned {len(paged)} of the {len(ids)} workouts that ended together"


def test_a_dismissed_activitys_token_stays_unregistered_after_a_restart(start_server, tmp_path):
    """Issue 29 item 1 across a restart: a push to the token of an activity dismissed before the server restarted
    still gets APNs's 410 `Unregistered` with the time the token stopped being valid (read back from the
    dismissal in the event log), not 400 `BadDeviceToken`, which is kept for tokens never issued. (Before: the
    tokens were remembered in memory only, and a restart made them `BadDeviceToken`.)"""
    from push_helpers import http_push

    args = data_args(tmp_path / "data", *FAST)
    srv = start_server(*args)

    async def dismiss() -> str:
        async with connect(srv.ws_url) as ws:
            await recv_json(ws)
            ack, events = await request_events(ws, start_req("s", 600), 1)
            token = events[0]["activity"]["pushToken"]
            await request_events(ws, {"type": "end", "requestId": "e", "activityId": ack["activityId"],
                                       "dismissalPolicy": "immediate"}, 2)
            return token

    token = run(dismiss())
    payload = {"aps": {"timestamp": int(time.time()), "event": "update",
                       "content-state": {"workout": "yoga", "workoutTimer": [0, 600]}}}
    before = http_push(srv.url, token, payload)
    assert before.status == 410 and before.json["reason"] == "Unregistered", (before.status, before.body)
    assert srv.stop() == 0
    again = start_server(*args, cwd=srv.cwd)
    after = http_push(again.url, token, payload)
    assert after.status == 410 and after.json["reason"] == "Unregistered", (after.status, after.body)
    assert after.json["timestamp"] == before.json["timestamp"], (after.json, before.json)
    never = http_push(again.url, "0" * 64, payload)
    assert never.status == 400 and never.json["reason"] == "BadDeviceToken", (never.status, never.body)
    # An update to the push-to-start token says which token that is (it said "no live activity has push token
    # c975…"; found by the new-user trial).
    from push_helpers import push_to_start_token
    wrong = http_push(again.url, push_to_start_token(again), payload)
    assert wrong.status == 400 and wrong.json["reason"] == "BadDeviceToken", (wrong.status, wrong.body)
    assert "push-to-start token, which takes start pushes only" in wrong.json["detail"], wrong.json


def test_a_since_that_is_not_a_sequence_number_refuses_the_handshake(start_server, tmp_path):
    """`/ws?since=` that is not a whole number from 0 to 2^64 − 1 (negative, text, empty, a float, too large) is
    refused with 400 naming `since`, as `catchUp` refuses the same values; it used to be read as no `since` (a
    full snapshot, the client never told). `since=0` still resumes."""
    from websockets.exceptions import InvalidStatus

    srv = start_server(*data_args(tmp_path / "data", *FAST))

    async def body():
        for bad in ("-3", "abc", "", "1e3", "1.5", "99999999999999999999999"):
            try:
                async with connect(f"{srv.ws_url}?since={urllib.parse.quote(bad)}"):
                    raise AssertionError(f"since={bad!r} was accepted")
            except InvalidStatus as refused:
                assert refused.response.status_code == 400, (bad, refused.response.status_code)
                text = refused.response.body.decode()
                assert "since: expected a whole number" in text and "400" in text, (bad, text)
        async with connect(f"{srv.ws_url}?since=0") as ws:
            got, caught = await read_resume(ws)
            assert caught["type"] == "caughtUp", caught
    run(body())


def test_sigterm_acknowledges_every_change_it_applied(start_server, tmp_path):
    """SIGTERM while a controller pipelines updates: every update the restarted server holds was acknowledged
    before the 1001 close, and a watcher got every event up to it (found by a new user: the acks of what the
    store finished at shutdown were dropped with the close, so a client could not know they were applied)."""
    args = data_args(tmp_path / "data", *FAST)
    srv = start_server(*args)
    total = 600

    async def body() -> tuple[int, int, list[int], int, int]:
        async with connect(srv.ws_url) as c, connect(srv.ws_url) as w:
            await recv_json(c)
            base = check_snapshot(await recv_json(w))["sequence"]
            ack, _ = await request_events(c, start_req("sig", 600), 1)
            aid = ack["activityId"]
            first = base + 1

            async def send_all():
                try:
                    for i in range(total):
                        await send_json(c, {"type": "update", "requestId": f"u{i}", "activityId": aid,
                                            "durationSeconds": 300 + i})
                except ConnectionClosed:
                    pass

            async def read_acks() -> tuple[int, int]:
                acks = 0
                try:
                    while True:
                        m = json.loads(await c.recv())
                        if m.get("type") == "ack":
                            assert m["requestId"] == f"u{acks}", m
                            acks += 1
                            if acks == 50:
                                srv.send_signal(signal.SIGTERM)
                        else:
                            assert m["type"] in ("activity", "tick", "heartbeat"), m
                except ConnectionClosed as closed:
                    return acks, closed.rcvd.code if closed.rcvd else -1

            async def watch() -> tuple[list[int], int]:
                seen = []
                try:
                    while True:
                        m = json.loads(await w.recv())
                        if m.get("type") == "activity":
                            seen.append(m["sequence"])
                except ConnectionClosed as closed:
                    return seen, closed.rcvd.code if closed.rcvd else -1

            _, (acks, code), (seen, watch_code) = await asyncio.gather(send_all(), read_acks(), watch())
            return acks, code, seen, watch_code, first

    acks, code, seen, watch_code, first = run(body())
    assert srv.stop() == 0, srv.output()
    assert code == 1001 and watch_code == 1001, (code, watch_code)
    again = start_server(*args, cwd=srv.cwd)

    async def stored() -> int:
        async with connect(again.ws_url) as a:
            return check_snapshot(await recv_json(a))["sequence"]

    last = run(stored())
    applied = last - first  # the start's event is `first`; each applied update added one
    assert 50 <= applied <= total, (applied, acks)
    assert acks == applied, f"{applied} updates applied but {acks} acknowledged before the close"
    assert seen == list(range(first, last + 1)), (seen[:3], seen[-3:], first, last)

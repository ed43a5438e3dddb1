"""Issue 16, item 5, "nothing slow on the service thread": the store records changes on its own thread, many
per transaction (group commit), and every change is still acknowledged and broadcast only once durable, in
the order it was accepted.

- pipelined: 200 `update`s sent at once on one WebSocket, without waiting for acks, with a refused update
  and a `list` among them: every reply comes in request order (each ack followed by its event, the error and
  the snapshot where they were asked, the snapshot holding every change before it); `/metrics` counts fewer
  store commits (groups) than changes; a restart on the same data directory loses nothing.
- memory: the same order with `--memory`, whose store records on the service thread at once.
"""
from __future__ import annotations

import re
import urllib.request

import pytest

from protocol_checks import check_error, check_snapshot, out_date
from wsclient import connect, recv_json, recv_non_tick, request, run, send_json

FAST = ("--rate", "100000", "--burst", "100000")
UPDATES = 200
COMMITS = "liveactivity_store_commits_total"
CHANGES = "liveactivity_store_changes_total"


def store_counters(server) -> dict[str, int]:
    """The store's group-commit counters from `/metrics` (no tokens configured: anyone may read)."""
    with urllib.request.urlopen(f"{server.url}/metrics", timeout=5) as response:
        text = response.read().decode()
    values = {}
    for name in (COMMITS, CHANGES):
        match = re.search(rf"^{name} (\d+)$", text, re.MULTILINE)
        assert match, f"/metrics has no {name}:\n{text}"
        values[name] = int(match.group(1))
    return values


def duration(activity: dict) -> float:
    timer = activity["content"]["state"]["workoutTimer"]
    return (out_date(timer["end"]) - out_date(timer["start"])).total_seconds()


async def pipelined_updates(ws) -> dict:
    """Starts an activity, then sends UPDATES updates at once (a refused one and a `list` in the middle) and
    checks the replies' order. Returns the activity id, the last event's sequence and its duration."""
    check_snapshot(await recv_json(ws))
    ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"}, "durationSeconds": 60})
    assert ack["type"] == "ack", ack
    aid = ack["activityId"]
    started = await recv_non_tick(ws)
    assert started.get("event") == "started", started

    sent = []
    for i in range(UPDATES):
        if i == UPDATES // 2:
            sent.append({"type": "update", "requestId": "bad", "activityId": "no-such-activity", "durationSeconds": 5})
            sent.append({"type": "list", "requestId": "list"})
        sent.append({"type": "update", "requestId": f"u{i}", "activityId": aid, "durationSeconds": 1000 + i})
    for msg in sent:
        await send_json(ws, msg)

    replies, last_sequence = [], started["sequence"]
    waiting_event = False
    while len(replies) < len(sent):
        m = await recv_non_tick(ws, 20)
        if m["type"] == "activity":
            assert waiting_event, f"an event with no ack before it: {m}"
            assert m["sequence"] == last_sequence + 1, f"sequence {m['sequence']} after {last_sequence}"
            assert m["event"] == "updated" and m["activity"]["id"] == aid, m
            assert duration(m["activity"]) == 1000 + int(replies[-1]["requestId"][1:]), "the event of the update acked just before"
            last_sequence = m["sequence"]
            waiting_event = False
            continue
        assert not waiting_event, f"{m} overtook the event of {replies[-1]}"
        replies.append(m)
        if m["type"] == "ack":
            waiting_event = True
        elif m["type"] == "snapshot":
            check_snapshot(m)
            assert m["sequence"] == last_sequence, "the snapshot holds every change acked before it, and no other"
            assert duration(next(a for a in m["activities"] if a["id"] == aid)) == 1000 + UPDATES // 2 - 1
        else:
            check_error(m, "unknown_activity", request_id="bad")
    assert [r.get("requestId") for r in replies] == [s["requestId"] for s in sent], "replies in request order"
    assert [r["type"] for r in replies].count("ack") == UPDATES
    m = await recv_non_tick(ws, 10)  # the last update's event
    assert m["type"] == "activity" and m["sequence"] == last_sequence + 1, m
    return {"id": aid, "sequence": m["sequence"], "duration": duration(m["activity"])}


def test_pipelined_updates_are_acked_in_order_grouped_in_commits_and_survive_a_restart(start_server, tmp_path):
    args = ("--data-dir", str(tmp_path / "data"), *FAST)
    first = start_server(*args)
    before = store_counters(first)

    async def burst():
        async with connect(first.ws_url) as ws:
            return await pipelined_updates(ws)
    last = run(burst())
    assert last["duration"] == 1000 + UPDATES - 1

    after = store_counters(first)
    commits, changes = after[COMMITS] - before[COMMITS], after[CHANGES] - before[CHANGES]
    assert changes == UPDATES + 1, f"{changes} changes recorded (the start and {UPDATES} updates)"
    assert commits < changes, f"group commit: {commits} commits for {changes} changes"
    assert first.stop() == 0, first.output()

    second = start_server(*args, cwd=first.cwd)

    async def reopened():
        async with connect(second.ws_url) as ws:
            snap = check_snapshot(await recv_json(ws))
            assert snap["sequence"] == last["sequence"], "every acknowledged change survived the restart"
            activity = next(a for a in snap["activities"] if a["id"] == last["id"])
            assert duration(activity) == last["duration"]
    run(reopened())


def test_pipelined_updates_keep_their_order_with_a_store_in_memory(start_server):
    server = start_server("--memory", *FAST)

    async def burst():
        async with connect(server.ws_url) as ws:
            return await pipelined_updates(ws)
    assert run(burst())["duration"] == 1000 + UPDATES - 1


@pytest.mark.parametrize("store", ["durable", "memory"])
def test_every_reply_keeps_request_order_after_a_change_refusals_reads_and_rate_limits_among_them(start_server, tmp_path, store):
    """Found by the new-user trial (session 19) on the durable store: `start`, `list`, an `update` of an unknown
    activity and `list`, sent back to back, came back start, list, list, update. The refusal was judged in the
    turn that answered the first `list` and queued behind that turn, while the second `list` was answered at
    once. A message refused by the rate limit had its error queued behind the store alone, ahead of earlier
    messages of the same client still waiting their turn. Here eleven messages go at once with a burst of
    eight: two reads, two refused changes and a malformed update among the first eight, then three over the
    limit; every reply comes in request order."""
    store_args = ("--data-dir", str(tmp_path / "data")) if store == "durable" else ("--memory",)
    server = start_server(*store_args, "--rate", "1", "--burst", "8")
    sent = [
        {"type": "start", "requestId": "start", "attributes": {"workout": "yoga"}, "durationSeconds": 60},
        {"type": "list", "requestId": "list-1"},
        {"type": "update", "requestId": "unknown-update", "activityId": "nope", "durationSeconds": 60},
        {"type": "list", "requestId": "list-2"},
        {"type": "update", "requestId": "bad-duration", "activityId": "nope", "durationSeconds": -1},
        {"type": "end", "requestId": "unknown-end", "activityId": "nope"},
        {"type": "list", "requestId": "list-3"},
        {"type": "list", "requestId": "list-4"},
        *({"type": "list", "requestId": f"over-{i}"} for i in range(3)),
    ]
    expected = [("start", "ack"), ("list-1", "snapshot"), ("unknown-update", "unknown_activity"), ("list-2", "snapshot"),
                ("bad-duration", "invalid_field"), ("unknown-end", "unknown_activity"), ("list-3", "snapshot"),
                ("list-4", "snapshot"), *((f"over-{i}", "rate_limited") for i in range(3))]

    async def body():
        async with connect(server.ws_url) as ws:
            check_snapshot(await recv_json(ws))
            for message in sent:
                await send_json(ws, message)
            replies = []
            while len(replies) < len(sent):
                m = await recv_non_tick(ws, 10)
                if m["type"] == "activity":
                    continue
                replies.append((m.get("requestId"), m["code"] if m["type"] == "error" else m["type"]))
            assert replies == expected
    run(body())

"""Broadcast fan-out: every event is encoded once and the same frame is queued for every client.

Reads the server's own counters at `GET /metrics`: `liveactivity_broadcast_encodes_total` (frames
encoded, one per event or tick) and `liveactivity_broadcast_deliveries_total` (frames queued for
clients). The activity's countdown ends when it starts, so no ticks flow and the counters move only
for the events the test causes.
"""
from __future__ import annotations

import asyncio
import re
import time
import urllib.request
from contextlib import AsyncExitStack
from datetime import datetime, timezone

import pytest

from wsclient import connect, recv_json, recv_until, request, run, send_json

K = 25  # connections, the controller included
ENCODES = "liveactivity_broadcast_encodes_total"
DELIVERIES = "liveactivity_broadcast_deliveries_total"


def counters(server, names: tuple[str, ...] = (ENCODES, DELIVERIES)) -> dict[str, int]:
    """Counters from `/metrics`, the broadcast ones unless told (no tokens configured: anyone may read)."""
    with urllib.request.urlopen(f"{server.url}/metrics", timeout=5) as response:
        text = response.read().decode()
    values = {}
    for name in names:
        match = re.search(rf"^{name} (\d+)$", text, re.MULTILINE)
        assert match, f"/metrics has no {name}:\n{text}"
        values[name] = int(match.group(1))
    return values


def finished_content() -> dict:
    """Content whose countdown ends as it starts: no running countdown, hence no ticks."""
    instant = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    return {"state": {"workoutTimer": {"start": instant, "end": instant}}, "staleDate": None, "relevanceScore": 0}


def test_one_update_is_encoded_once_and_queued_for_every_client(server):
    async def body():
        async with AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(connect(server.ws_url)) for _ in range(K)]
            for ws in clients:
                assert (await recv_json(ws))["type"] == "snapshot"
            controller = clients[0]
            content = finished_content()
            ack = await request(controller, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                             "content": content})
            assert ack["type"] == "ack", ack
            activity_id = ack["activityId"]
            for ws in clients:
                await recv_until(ws, lambda m: m.get("event") == "started")

            # Let the start settle (the finished countdown's timerFinished event, if any), then check that
            # the counters hold still for over a second: no tick is flowing.
            await asyncio.sleep(0.5)
            before = counters(server)
            await asyncio.sleep(1.2)
            assert counters(server) == before, "the counters moved with no change: a tick is still flowing"

            ack = await request(controller, {"type": "update", "requestId": "u", "activityId": activity_id,
                                             "content": content, "alert": {"title": "fan-out", "body": "once"}})
            assert ack["type"] == "ack", ack
            for ws in clients:
                event = await recv_until(ws, lambda m: m.get("event") == "updated")
                assert event["alert"] == {"title": "fan-out", "body": "once"}
            after = counters(server)
            assert after[ENCODES] - before[ENCODES] == 1, (before, after)
            assert after[DELIVERIES] - before[DELIVERIES] == K, (before, after)

            # Several updates: still one encode each, K deliveries each.
            # (sent without waiting for each ack, so the controller's own events are not skipped)
            for i in range(5):
                await send_json(controller, {"type": "update", "requestId": f"u{i}", "activityId": activity_id,
                                             "content": content, "alert": {"title": "fan-out", "body": str(i)}})
            for ws in clients:
                for i in range(5):
                    await recv_until(ws, lambda m, i=i: m.get("event") == "updated" and m["alert"]["body"] == str(i))
            final = counters(server)
            assert final[ENCODES] - after[ENCODES] == 5, (after, final)
            assert final[DELIVERIES] - after[DELIVERIES] == 5 * K, (after, final)

    run(body())


WRITES = "liveactivity_websocket_writes_total"
SENT = "liveactivity_messages_sent_total"


@pytest.mark.parametrize("compression", [None, "deflate"])
def test_waiting_messages_go_out_together_whole_and_in_order(start_server, compression):
    """Updates sent back to back reach a watcher while earlier ones still wait to be written: the server
    writes a client's waiting messages in one write (WriteBatch). Every message still arrives whole, once
    and in order, with or without permessage-deflate, and the writes are far fewer than the messages."""
    n = 300
    server = start_server("--rate", "10000", "--burst", "10000")

    async def body():
        async with connect(server.ws_url, compression=compression) as controller, \
                connect(server.ws_url, compression=compression) as watcher:
            for ws in (controller, watcher):
                assert (await recv_json(ws))["type"] == "snapshot"
            content = finished_content()
            ack = await request(controller, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                             "content": content})
            activity_id = ack["activityId"]
            started = await recv_until(watcher, lambda m: m.get("event") == "started")
            await recv_until(controller, lambda m: m.get("event") == "started")
            before = counters(server, (SENT, WRITES))

            for i in range(n):
                await send_json(controller, {"type": "update", "requestId": i, "activityId": activity_id,
                                             "content": content, "alert": {"title": "batch", "body": str(i)}})
            for ws in (watcher, controller):
                # Every event after `started`, in sequence (the countdown's timerFinished among them), and the
                # n updates in the order they were sent.
                events, updates = [], []
                while len(updates) < n:
                    m = await recv_json(ws, 10)
                    if m["type"] == "activity":
                        events.append(m)
                        if m["event"] == "updated":
                            updates.append(m)
                assert [e["sequence"] for e in events] == list(range(started["sequence"] + 1, started["sequence"] + 1 + len(events)))
                assert [e["alert"]["body"] for e in updates] == [str(i) for i in range(n)]
            after = counters(server, (SENT, WRITES))
            sent, writes = after[SENT] - before[SENT], after[WRITES] - before[WRITES]
            assert sent >= 3 * n, f"{sent} messages: 300 acks and 600 events were due"
            assert writes < sent / 2, f"{writes} writes for {sent} messages: waiting messages were not gathered"

    run(body())

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

from wsclient import connect, recv_json, recv_until, request, run, send_json

K = 25  # connections, the controller included
ENCODES = "liveactivity_broadcast_encodes_total"
DELIVERIES = "liveactivity_broadcast_deliveries_total"


def counters(server) -> dict[str, int]:
    """The broadcast counters from `/metrics` (no tokens configured: anyone may read)."""
    with urllib.request.urlopen(f"{server.url}/metrics", timeout=5) as response:
        text = response.read().decode()
    values = {}
    for name in (ENCODES, DELIVERIES):
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

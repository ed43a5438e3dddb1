"""Logging never blocks the server: a `serve` whose stdout and stderr nobody reads keeps serving.

Stdout is read up to its first line ("Listening on …") and then never again; stderr is never read. The
server then logs well over a pipe's 64 KiB (one line per event), so its writer's queue fills and lines are
dropped and counted (`liveactivity_log_lines_dropped_total`) instead of stopping the service thread in
write(2). It still answers HTTP and WebSocket, and SIGTERM still stops it (the flush at exit is bounded).
"""
from __future__ import annotations

import asyncio
import json
import re
import signal
import urllib.request

from support import http_json, launch
from wsclient import connect, recv_json, request, run, send_json

# One event line is ~170 bytes: 6000 of them are ~1 MB, more than the writer's 4096-line queue plus a pipe.
UPDATES = 6000
BATCH = 200


def test_unread_stdout_and_stderr_drop_log_lines_and_the_server_keeps_serving(tmp_path):
    # drain=False: the first stdout line is the only read of either pipe
    srv = launch("--memory", "--verbose", "--rate", "100000", "--burst", "100000", cwd=tmp_path,
                 log_name="test_log_backpressure", env={"SWIFT_BACKTRACE": "enable=no,interactive=no"},
                 drain=False).wait_listening()
    proc = srv.proc
    try:
        base = srv.url
        ws_url = f"ws://127.0.0.1:{srv.port}/ws"

        async def flood():
            async with connect(ws_url) as ws:
                assert (await recv_json(ws))["type"] == "snapshot"
                start = {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"}, "durationSeconds": 3600}
                activity = (await request(ws, start))["activityId"]
                for first_index in range(0, UPDATES, BATCH):
                    for index in range(first_index, first_index + BATCH):
                        await send_json(ws, {"type": "update", "requestId": f"u{index}", "activityId": activity,
                                             "durationSeconds": 600 + index % 2})
                    # Read up to this batch's last ack (raw, for speed) so the client never falls behind.
                    last = f"u{first_index + BATCH - 1}"
                    while True:
                        reply = json.loads(await asyncio.wait_for(ws.recv(), 10))
                        assert reply.get("type") != "error", reply
                        if reply.get("requestId") == last:
                            break
                return activity

        activity = run(flood())

        status, health = http_json(f"{base}/healthz", timeout=1)
        assert status == 200 and health["status"] == "ok", (status, health)

        async def still_serves():
            async with connect(ws_url) as ws:
                snapshot = await recv_json(ws)
                assert snapshot["type"] == "snapshot" and [a["id"] for a in snapshot["activities"]] == [activity]
                ack = await request(ws, {"type": "extend", "requestId": "x", "activityId": activity, "seconds": 60})
                assert ack["type"] == "ack", ack

        run(still_serves())

        with urllib.request.urlopen(f"{base}/metrics", timeout=5) as response:
            metrics = response.read().decode()
        dropped = re.search(r"^liveactivity_log_lines_dropped_total (\d+)$", metrics, re.M)
        assert dropped, f"/metrics has no liveactivity_log_lines_dropped_total:\n{metrics}"
        assert int(dropped.group(1)) > 0, dropped.group(0)

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0, "SIGTERM must stop the server although its output pipes are full"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
        proc.stdout.close()
        proc.stderr.close()

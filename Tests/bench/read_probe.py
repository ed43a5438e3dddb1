#!/usr/bin/env python3
"""How long a watcher waits for an update while other clients read the event log (issue 28, item 5).

Starts a durable `liveactivity serve` (its own data folder under /tmp), fills its log with N events of one
activity, then, for D seconds, keeps two clients resuming from far back (`?since=1`, then `history` and `catchUp`)
and one HTTP client reading the inspector's timeline, renderings of an instant (`at=`), `/api/inspections`
and `/api/history` over and over (in a process of their own), while a controller updates another activity every 50 ms and a
watcher times each update's arrival. Prints the watcher's latencies (median, p99, worst) and the reads done.

    .venv/bin/python Tests/bench/read_probe.py [--bin .build/release/liveactivity] [--events 9000]
        [--seconds 10]

A figure, not a test: Tests/integration/test_reads_off_loop.py holds the bound on a smaller log.
"""
from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
import multiprocessing
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "integration"))
from test_reads_off_loop import fill_log, read_over_and_over  # noqa: E402
from wsclient import connect, recv_json, send_json  # noqa: E402


async def started(ws, rid: str, minutes: int) -> str:
    await send_json(ws, {"type": "start", "requestId": rid, "attributes": {"workout": "yoga"}, "durationSeconds": minutes * 60})
    while True:
        m = await recv_json(ws, timeout=30)
        if m["type"] == "ack" and m.get("requestId") == rid:
            return m["activityId"]


async def fill(url: str, count: int) -> tuple[str, str]:
    async with connect(url, max_size=1 << 26) as ws:
        await recv_json(ws)
        big = await started(ws, "big", 120)
        await fill_log(ws, big, count)
        watched = await started(ws, "watched", 120)
        return big, watched


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=str(ROOT / ".build" / "release" / "liveactivity"))
    parser.add_argument("--events", type=int, default=9_000)
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="read-probe-"))
    proc = subprocess.Popen([args.bin, "serve", "--port", "0", "--public", str(ROOT / "Public"), "--data-dir", str(data),
                             "--rate", "100000", "--burst", "100000", "--max-queued-bytes", "64000000"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = int(re.search(r":(\d+)/", proc.stdout.readline()).group(1))
        url, ws_url = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws"
        t0 = time.monotonic()
        big, watched = await fill(ws_url, args.events)
        print(f"log filled: {args.events} events in {time.monotonic() - t0:.1f} s")
        # The readers (test_reads_off_loop's) in a process of their own, so that parsing their replays does
        # not delay the watcher here.
        spawn = multiprocessing.get_context("spawn")
        stop, results = spawn.Event(), spawn.Queue()
        readers = spawn.Process(target=read_over_and_over, args=(url, ws_url, big, args.events, stop, results))
        readers.start()
        assert results.get(timeout=120) == "reading"
        latencies: list[float] = []
        await asyncio.sleep(0.5)
        async with connect(ws_url) as watcher, connect(ws_url) as controller:
            await recv_json(watcher)
            await recv_json(controller)
            end = time.monotonic() + args.seconds
            i = 0
            while time.monotonic() < end:
                sent = time.monotonic()
                await send_json(controller, {"type": "update", "requestId": f"w{i}", "activityId": watched, "durationSeconds": 1800 + i})
                while True:
                    m = await recv_json(watcher, timeout=120)
                    if m["type"] == "activity" and m["activity"]["id"] == watched and m["event"] == "updated":
                        break
                latencies.append(time.monotonic() - sent)
                i += 1
                await asyncio.sleep(0.05)
        stop.set()
        reads = results.get(timeout=300)
        readers.join(30)
        latencies.sort()
        pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
        print(f"watcher: {len(latencies)} updates, median {pick(0.5):.0f} ms, p99 {pick(0.99):.0f} ms, worst {latencies[-1] * 1000:.0f} ms; "
              f"reads done: {reads}")
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())

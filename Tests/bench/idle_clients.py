"""Holds N idle WebSocket clients on a running `liveactivity serve` and prints the server's resident memory per
connection, as one JSON line (issue 20's idle target: at most 8 KiB per connection that negotiated deflate).

    .venv/bin/python Tests/bench/idle_clients.py PORT TOKEN SERVER_PID ACTIVITY_ID N deflate|deflate-reset|plain[-sent]

Each client is Python `websockets` (in the test venv) as a browser viewer: no token, it sends nothing; with
`deflate` it offers permessage-deflate as browsers do (`client_max_window_bits`, keeping its context), with
`plain` nothing; `deflate-reset` offers `client_no_context_takeover` too (the client compresses each message from
a fresh state, as gorilla does). With `-sent` (`deflate-sent`, `plain-sent`) each client also sends one request (`list`, which
`websockets` compresses under deflate, so lws makes an inflater for it) and reads the reply. Once all N hold their
snapshot, the controller (TOKEN) sends one update to ACTIVITY_ID and every
client reads it, so whatever a server makes on a connection's first writes exists. VmRSS (/proc/PID/status) is
read before the first connection and after the last client read the update: per connection = the growth / N.
Waits for states (every client connected, every client read the update), never for time; gives up after 120 s.
"""
import asyncio
import json
import sys

from websockets.asyncio.client import connect
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory

port, token, pid, activity, n, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6]
URL = f"ws://127.0.0.1:{port}/ws"
SENDS = mode.endswith("-sent")
OPTIONS = {"compression": "deflate" if mode.startswith("deflate") else None, "ping_interval": None, "open_timeout": 60,
           "max_size": 8 * 1024 * 1024}
if mode.startswith("deflate-reset"):
    OPTIONS["extensions"] = [ClientPerMessageDeflateFactory(client_no_context_takeover=True)]


def vmrss_kib() -> int:
    """The server's resident set, in KiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


async def until(ws, predicate) -> dict:
    """The first message `predicate` accepts."""
    while True:
        message = json.loads(await ws.recv())
        if predicate(message):
            return message


async def main() -> None:
    before = vmrss_kib()
    dials = asyncio.Semaphore(128)

    async def one():
        async with dials:
            ws = await connect(URL, **OPTIONS)
        await until(ws, lambda m: m.get("type") == "snapshot")
        if SENDS:
            await ws.send(json.dumps({"type": "list", "requestId": "idle-" + "x" * 100}))
            await until(ws, lambda m: m.get("type") == "snapshot")
        return ws

    clients = await asyncio.gather(*(one() for _ in range(n)))
    extensions = clients[0].response.headers.get("Sec-WebSocket-Extensions")
    async with connect(f"{URL}?token={token}", compression=None, ping_interval=None) as controller:
        await until(controller, lambda m: m.get("type") == "snapshot")
        await controller.send(json.dumps({"type": "update", "requestId": "idle", "activityId": activity,
                                          "durationSeconds": 600,
                                          "alert": {"title": "idle", "body": "one event to every viewer"}}))
        await asyncio.gather(*(until(ws, lambda m: m.get("event") == "updated") for ws in clients))
        after = vmrss_kib()
    print(json.dumps({"mode": mode, "n": n, "extensions": extensions, "rss_before_kb": before, "rss_after_kb": after,
                      "per_conn_bytes": (after - before) * 1024 / n}))
    await asyncio.gather(*(ws.close() for ws in clients))


asyncio.run(asyncio.wait_for(main(), 120))

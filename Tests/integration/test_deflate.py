"""permessage-deflate, compressed once (issue 20): every broadcast event and tick is compressed once per window
size, and the same bytes go to every client that negotiated the extension, whatever it asked for.

Each kind of client decodes every message: Python `websockets` (context takeover, with and without
`client_max_window_bits`, and asking `server_no_context_takeover`), a hand-built client that allows the server
only a 2^9-byte window (`server_max_window_bits=9`, inflating strictly: a match beyond 512 bytes fails),
libwebsockets 4.1's own client (liveactivity-bench) and gorilla's `wsfan -compress` when the benchmark's load
generator is built. Messages not worth compressing go as stored blocks, RSV1 set like the others. The server's own counters at
`GET /metrics` show the compressions (`liveactivity_deflate_compressions_total`) and the compressed writes
(`liveactivity_sent_compressed_messages_total`). Chromium is checked in test_page.py.
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import urllib.request
from contextlib import AsyncExitStack
from pathlib import Path

import pytest
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory

from hostile_support import OP_CLOSE, OP_PING, OP_PONG, OP_TEXT, RawWS, deflate_message, inflate_strictly
from support import liveactivity_bin
from test_broadcast import finished_content
from wsclient import connect, recv_json, recv_until, request, run, send_json

COMPRESSIONS = "liveactivity_deflate_compressions_total"
COMPRESSED = "liveactivity_sent_compressed_messages_total"
FRAME_BYTES = "liveactivity_sent_frame_bytes_total"
PAYLOAD_BYTES = "liveactivity_sent_bytes_total"
STORED = "liveactivity_sent_stored_messages_total"
QUEUED = "liveactivity_websocket_writes_queued_total"


def metrics(server) -> dict[str, int]:
    """The deflate counters from `/metrics`."""
    with urllib.request.urlopen(f"{server.url}/metrics", timeout=5) as response:
        text = response.read().decode()
    values = {}
    for name in (COMPRESSIONS, COMPRESSED, FRAME_BYTES, PAYLOAD_BYTES, STORED, QUEUED):
        match = re.search(rf"^{name} (\d+)$", text, re.MULTILINE)
        assert match, f"/metrics has no {name}:\n{text}"
        values[name] = int(match.group(1))
    return values


def far_repeating_text(seed: int, length: int = 1000) -> str:
    """`length` letters in which a 300-letter run comes back 600 letters later: compressed with a 2^15 window,
    that is a match 600 bytes back, beyond a 2^9 (512-byte) window."""
    rng = random.Random(seed)
    run_a = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(300))
    filler = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ.") for _ in range(300))
    return (run_a + filler + run_a + filler)[:length]


def update(activity_id: str, rid: str, body: str, title: str = "compressed once", content: dict | None = None) -> dict:
    """An `update` with an alert (and a 3600 s countdown, or `content`)."""
    change = {"content": content} if content is not None else {"durationSeconds": 3600}
    return {"type": "update", "requestId": rid, "activityId": activity_id, **change, "alert": {"title": title, "body": body}}


# -------------------------------------------------------------------------------------------------------------
# every kind of client decodes every message
# -------------------------------------------------------------------------------------------------------------
CLIENTS = {
    # websockets' default offer: "permessage-deflate; client_max_window_bits", keeping its context.
    "websockets-default": {},
    "websockets-no-client-max-window-bits": {"extensions": [ClientPerMessageDeflateFactory(client_max_window_bits=None)]},
    "websockets-server-no-context-takeover": {"extensions": [ClientPerMessageDeflateFactory(server_no_context_takeover=True)]},
    "plain": {"compression": None},
}


def test_every_client_decodes_the_same_messages(server):
    """Python `websockets` clients with different offers, a plain one and a raw one allowing a 2^9 window all read
    the same events, replies and ticks; the deflate ones got them compressed."""
    async def body():
        async with AsyncExitStack() as stack:
            clients = {name: await stack.enter_async_context(connect(server.ws_url, **kw)) for name, kw in CLIENTS.items()}
            for name, ws in clients.items():
                extension = ws.response.headers.get("Sec-WebSocket-Extensions")
                assert (extension is None) == (name == "plain"), (name, extension)
                assert (await recv_json(ws))["type"] == "snapshot"
            raw = RawWS(server.port, deflate=True, offer="permessage-deflate; server_max_window_bits=9", window_bits=9)
            stack.callback(raw.close)
            assert raw.recv_json()["type"] == "snapshot"

            controller = clients["plain"]
            before = metrics(server)
            ack = await request(controller, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                             "durationSeconds": 3600})
            activity_id = ack["activityId"]
            bodies = [far_repeating_text(seed) for seed in range(3)] + ["short"]
            for i, text in enumerate(bodies):
                await send_json(controller, update(activity_id, f"u{i}", text))

            def matches(m: dict, i: int) -> bool:
                return m.get("event") == "updated" and m["alert"]["body"] == bodies[i]

            received: dict[str, list[dict]] = {}
            for name, ws in clients.items():
                started = await recv_until(ws, lambda m: m.get("event") == "started")
                received[name] = [started] + [await recv_until(ws, lambda m, i=i: matches(m, i)) for i in range(len(bodies))]
                tick = await recv_until(ws, lambda m: m["type"] == "tick", include_ticks=True)
                assert tick["timers"][0]["activityId"] == activity_id
                # A reply to this client alone (a snapshot of the running activity, over 128 bytes).
                reply = await request(ws, {"type": "list", "requestId": f"list-{name}"})
                assert [a["id"] for a in reply["activities"]] == [activity_id]
            started = raw.recv_until(lambda m: m.get("event") == "started")
            received["raw-window-9"] = [started] + [raw.recv_until(lambda m, i=i: matches(m, i)) for i in range(len(bodies))]
            raw.send_json({"type": "list", "requestId": "list-raw"})
            assert [a["id"] for a in raw.recv_until(lambda m: m.get("requestId") == "list-raw")["activities"]] == [activity_id]

            expected = received["plain"]
            for name, events in received.items():
                assert events == expected, f"{name} read other events than the plain client"
            assert raw.compressed_messages >= len(bodies) + 2, "the raw client got its events uncompressed"
            after = metrics(server)
            # Each broadcast event is compressed once per window (2^15, 2^9), not once per client.
            compressions, writes = after[COMPRESSIONS] - before[COMPRESSIONS], after[COMPRESSED] - before[COMPRESSED]
            assert 0 < compressions < writes, (before, after)
            assert after[FRAME_BYTES] - before[FRAME_BYTES] < after[PAYLOAD_BYTES] - before[PAYLOAD_BYTES]
    run(body())


def test_an_event_is_compressed_once_for_every_deflate_client(server):
    """K deflate clients with the same window and one allowing 2^9: one update costs two compressions, and K + 1
    compressed writes, handed to the kernel together with the broadcast's other sends (io_uring, the default:
    the compressed bytes are the frame's own, kept while it lives); the plain controller gets it uncompressed."""
    k = 12

    async def body():
        async with AsyncExitStack() as stack:
            controller = await stack.enter_async_context(connect(server.ws_url, compression=None))
            clients = [await stack.enter_async_context(connect(server.ws_url)) for _ in range(k)]
            for ws in [controller, *clients]:
                assert (await recv_json(ws))["type"] == "snapshot"
            raw = RawWS(server.port, deflate=True, offer="permessage-deflate; server_max_window_bits=9", window_bits=9)
            stack.callback(raw.close)
            assert raw.recv_json()["type"] == "snapshot"
            content = finished_content()  # no countdown running: no ticks move the counters
            ack = await request(controller, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                             "content": content})
            assert ack["type"] == "ack", ack
            for ws in clients:
                await recv_until(ws, lambda m: m.get("event") == "started")
            raw.recv_until(lambda m: m.get("event") == "started")
            await asyncio.sleep(0.5)  # let the finished countdown's own event, if any, go out first
            before = metrics(server)
            await asyncio.sleep(1.2)
            assert metrics(server) == before, "the counters moved with no change: a tick is still flowing"

            text = far_repeating_text(7)
            await send_json(controller, update(ack["activityId"], "u", text, content=content))
            for ws in clients:
                event = await recv_until(ws, lambda m: m.get("event") == "updated")
                assert event["alert"]["body"] == text
            assert raw.recv_until(lambda m: m.get("event") == "updated")["alert"]["body"] == text
            await recv_until(controller, lambda m: m.get("event") == "updated")
            after = metrics(server)
            assert after[COMPRESSIONS] - before[COMPRESSIONS] == 2, (before, after)
            assert after[COMPRESSED] - before[COMPRESSED] == k + 1, (before, after)
            assert after[QUEUED] - before[QUEUED] >= k + 1, (before, after)
    run(body())


def test_a_client_allowing_a_512_byte_window_decodes_every_message(server):
    """A raw client offering `server_max_window_bits=9` inflates with a 2^9 window, strictly, keeping its context:
    every event, including ones with matches further back than 512 bytes at a 2^15 window, decodes."""
    with RawWS(server.port, deflate=True, window_bits=9,
               offer="permessage-deflate; server_max_window_bits=9; client_max_window_bits") as ws:
        assert ws.recv_json()["type"] == "snapshot"
        ws.send_json({"type": "start", "requestId": "s", "attributes": {"workout": "jogging"}, "durationSeconds": 600})
        activity_id = ws.recv_until(lambda m: m.get("requestId") == "s")["activityId"]
        for seed in range(5):
            text = far_repeating_text(seed)
            ws.send_json(update(activity_id, f"u{seed}", text, title=text[:256]))
            event = ws.recv_until(lambda m: m.get("event") == "updated")
            assert event["alert"] == {"title": text[:256], "body": text}
        assert ws.compressed_messages >= 6


@pytest.mark.parametrize("bits", [8, 9, 12])
def test_an_offer_limiting_the_servers_window_is_answered_with_it(server, bits):
    """RFC 7692 §7.1.2.1: a server accepting an offer with `server_max_window_bits` answers it, with the same
    value or less. lws 4.1 left it out of its answer although the server keeps to it, and a strict client
    (Python `websockets`) refused the connection ("Unsupported extension"). It connects now, and inflates every
    message, far-repeating ones included, with the window it allowed."""
    async def body():
        factory = ClientPerMessageDeflateFactory(server_max_window_bits=bits)
        async with connect(server.ws_url, extensions=[factory], compression=None) as ws:
            answer = ws.response.headers.get("Sec-WebSocket-Extensions")
            assert answer == f"permessage-deflate; server_max_window_bits={bits}", answer
            assert (await recv_json(ws))["type"] == "snapshot"
            ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                     "durationSeconds": 3600})
            for seed in range(3):
                text = far_repeating_text(seed)
                await send_json(ws, update(ack["activityId"], f"u{seed}", text))
                event = await recv_until(ws, lambda m: m.get("event") == "updated")
                assert event["alert"]["body"] == text
    run(body())


@pytest.mark.parametrize("factory", [
    ClientPerMessageDeflateFactory(server_no_context_takeover=True),
    ClientPerMessageDeflateFactory(client_no_context_takeover=True),
    ClientPerMessageDeflateFactory(),
], ids=["server_no_context_takeover", "client_no_context_takeover", "default"])
def test_what_clients_send_compressed_is_inflated_whatever_they_asked(server, factory):
    """lws inflates what clients send: a client keeping its own context (server_no_context_takeover only constrains
    the server) and one resetting it (client_no_context_takeover) both send the same compressible request three
    times, the later ones referring back to the first when the client keeps its context."""
    async def body():
        async with connect(server.ws_url, extensions=[factory]) as ws:
            assert (await recv_json(ws))["type"] == "snapshot"
            rid = "the same request, compressible and repeated " * 12
            for _ in range(3):
                assert (await request(ws, {"type": "list", "requestId": rid}))["requestId"] == rid
    run(body())


@pytest.mark.parametrize("loop", ["epoll", "poll"])
def test_a_compressed_message_read_in_the_same_round_as_another_clients_stays_whole(start_server, loop):
    """lws 4.1 inflates at most 1 KiB of a client's message per call and kept the rest of the compressed input
    pointing into its one read buffer per service thread; the next connection read in the same round wrote over
    it, and the rest inflated from that client's bytes: a zlib error and the connection dropped without a close
    frame, or a message silently corrupted ("invalid_json"). The server now hands lws a copy of the input kept
    by the connection (LWSSupport's StableDeflateInput). Here the server is stopped (SIGSTOP) while two deflate
    clients each send a request inflating to several KiB, so that one round reads both; each gets its own
    request back, every round, and lws logs no zlib error."""
    server = start_server("--event-loop", loop)
    rng = random.Random(7)

    def text(n: int) -> str:
        return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(n))

    first, second = RawWS(server.port, deflate=True), RawWS(server.port, deflate=True)
    try:
        assert first.recv_json()["type"] == "snapshot" and second.recv_json()["type"] == "snapshot"
        for round_ in range(12):
            ids = (text(3000), text(12000))
            frames = [RawWS.frame(OP_TEXT, deflate_message(json.dumps({"type": "list", "requestId": rid}).encode()),
                                  rsv1=True) for rid in ids]
            os.kill(server.proc.pid, signal.SIGSTOP)
            try:
                first.send_raw(frames[0])
                second.send_raw(frames[1])
            finally:
                os.kill(server.proc.pid, signal.SIGCONT)
            for client, rid in zip((first, second), ids):
                reply = client.recv_json(timeout=10)
                assert reply.get("requestId") == rid, f"round {round_}: {str(reply)[:200]}"
    finally:
        first.sock.close()
        second.sock.close()
    assert not [line for line in server.stderr_lines if "zlib error" in line], server.stderr_lines[-5:]


# -------------------------------------------------------------------------------------------------------------
# frames stay whole among pings, pongs, replies and the close
# -------------------------------------------------------------------------------------------------------------
def read_frames_until_close(ws: RawWS, timeout: float = 10) -> list[tuple[str, object]]:
    """Every frame the server sends until its close frame, each checked whole (FIN, one frame per message): text
    messages decoded (inflated strictly when RSV1 is set), pings answered. Returns ("text", message, compressed),
    ("ping", payload), ("pong", payload) and finally ("close", code) entries in arrival order."""
    frames: list[tuple] = []
    while True:
        fin, op, rsv1, payload = ws.recv_frame(timeout)
        assert fin, f"a server frame without FIN (opcode {op})"
        if op == OP_TEXT:
            data = inflate_strictly(ws._inflater, payload + b"\x00\x00\xff\xff") if rsv1 else payload
            frames.append(("text", json.loads(data), rsv1))
        elif op == OP_PING:
            assert not rsv1
            frames.append(("ping", payload))
            ws.send_frame(OP_PONG, payload)
        elif op == OP_PONG:
            assert not rsv1
            frames.append(("pong", payload))
        elif op == OP_CLOSE:
            frames.append(("close", struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None))
            return frames
        else:
            raise AssertionError(f"unexpected opcode {op}")


def test_compressed_events_stay_whole_among_pings_pongs_acks_and_the_close(start_server):
    """A deflate client with a 4 KiB receive buffer does not read while events pile up, so the server's writes to
    it are cut short and lws keeps the rest; meanwhile it pings, sends updates (acks) and lists (snapshot replies).
    Then it reads, answers the server's own ping, and closes. Every frame arrives whole and in order: the events
    one after another, each reply after exactly the events before it, the pongs in order, the close last."""
    server = start_server("--rate", "1000", "--burst", "1000", "--ping-interval", "1", "--idle-timeout", "30")
    control = RawWS(server.port)
    client = RawWS(server.port, deflate=True, offer="permessage-deflate", rcvbuf=4096)
    try:
        assert control.recv_json()["type"] == "snapshot"
        control.send_json({"type": "start", "requestId": "s", "attributes": {"workout": "yoga"}, "durationSeconds": 3600})
        activity_id = control.recv_until(lambda m: m.get("requestId") == "s")["activityId"]

        pings, requests = [], []
        for i in range(80):
            control.send_json(update(activity_id, f"c{i}", far_repeating_text(i)))
            if i % 8 == 0:
                pings.append(f"p{i}".encode())
                client.send_frame(OP_PING, pings[-1], mask=True)
                rid = f"r{i}"
                requests.append(rid)
                if i % 16 == 0:
                    client.send_json({"type": "list", "requestId": rid})
                else:
                    client.send_json(update(activity_id, rid, f"from the client {i}"))
        acked = 0
        while acked < 80:  # the controller takes its acks (and the events) as it goes
            if control.recv_json().get("type") == "ack":
                acked += 1

        # The client reads now; the server pings it after a second without a frame from it, while events flow.
        frames: list[tuple] = []
        for i in range(200):
            control.send_json(update(activity_id, f"late{i}", far_repeating_text(1000 + i)))
            try:
                while True:
                    fin, op, rsv1, payload = client.recv_frame(0.05)
                    assert fin
                    if op == OP_TEXT:
                        data = inflate_strictly(client._inflater, payload + b"\x00\x00\xff\xff") if rsv1 else payload
                        frames.append(("text", json.loads(data), rsv1))
                    elif op == OP_PONG:
                        frames.append(("pong", payload))
                    elif op == OP_PING:
                        frames.append(("ping", payload))
                        client.send_frame(OP_PONG, payload)
                    else:
                        raise AssertionError(f"opcode {op} before the close")
            except TimeoutError:
                pass
            if any(f[0] == "ping" for f in frames) and i >= 5:
                break
        assert any(f[0] == "ping" for f in frames), "the server never pinged the silent client"
        client.send_frame(OP_CLOSE, struct.pack("!H", 1000) + b"bye")
        frames += read_frames_until_close(client)
    finally:
        client.close()
        control.close()

    assert frames[-1] == ("close", 1000), frames[-3:]
    # lws 4.1 keeps one ping to answer and drops the pings that come while its pong waits (behind the frames it
    # is still sending), so some pings get no pong; those it answers come back whole and in order.
    pongs = [f[1] for f in frames if f[0] == "pong"]
    assert pongs and pongs[0] == pings[0], (pongs, pings)
    assert pongs == [p for p in pings if p in pongs], f"pongs out of order: {pongs}"
    texts = [f[1] for f in frames if f[0] == "text"]
    compressed = [f for f in frames if f[0] == "text" and f[2]]
    assert len(compressed) > 80, f"only {len(compressed)} compressed messages"
    events = [m for m in texts if m["type"] == "activity"]
    sequences = [m["sequence"] for m in events]
    assert sequences == list(range(sequences[0], sequences[0] + len(sequences))), "events missing or out of order"
    replies = [m for m in texts if m.get("requestId") in requests]
    assert [m["requestId"] for m in replies] == requests, "replies missing or out of order"
    for reply in replies:
        if reply["type"] == "snapshot":
            # A reply follows exactly the events before it: those up to its sequence, none after.
            position = texts.index(reply)
            seen = [m["sequence"] for m in texts[:position] if m["type"] == "activity"]
            assert seen and seen[-1] == reply["sequence"], (reply["sequence"], seen[-3:])
        else:
            assert reply["type"] == "ack", reply


# -------------------------------------------------------------------------------------------------------------
# the switch
# -------------------------------------------------------------------------------------------------------------
def test_deflate_off_negotiates_nothing(start_server):
    server = start_server("--deflate", "off")

    async def body():
        async with connect(server.ws_url) as ws:
            assert ws.response.headers.get("Sec-WebSocket-Extensions") is None
            assert ws.protocol.extensions == []
            assert (await recv_json(ws))["type"] == "snapshot"
            reply = await request(ws, {"type": "list", "requestId": "x" * 500})
            assert reply["requestId"] == "x" * 500
    run(body())
    with RawWS(server.port, headers={"Sec-WebSocket-Extensions": "permessage-deflate"}) as raw:
        assert "sec-websocket-extensions" not in raw.headers
        assert raw.recv_json()["type"] == "snapshot"
    assert metrics(server)[COMPRESSED] == 0


# -------------------------------------------------------------------------------------------------------------
# libwebsockets 4.1's own client (our liveactivity-bench): it loops on a message with RSV1 clear, so none is sent
# -------------------------------------------------------------------------------------------------------------
def test_an_lws_client_decodes_every_message(start_server):
    """liveactivity-bench (lws 4.1 client, permessage-deflate): every update, the snapshot, acks and ticks arrive.
    lws 4.1's client delivers a message with RSV1 clear over and over once deflate is negotiated, so the server
    sends its short messages as stored blocks (RSV1 set), never plain."""
    binary = liveactivity_bin().parent / "liveactivity-bench"
    if not binary.is_file():
        pytest.skip(f"{binary} is not built (swift build)")
    server = start_server("--rate", "1000", "--burst", "1000")
    before = metrics(server)
    result = subprocess.run([str(binary), "--server", server.ws_url, "--clients", "5", "--messages", "20", "--rate", "50",
                             "--deflate", "on", "--quiet-timeout", "3", "--drain-timeout", "10"],
                            capture_output=True, text=True, timeout=60)
    report = json.loads(next(line for line in result.stdout.splitlines() if line.startswith("{")))
    assert result.returncode == 0 and report["ok"], (report, result.stderr[-2000:])
    assert report["deflate"] and report["lost"] == 0 and report["delivered"] == 5 * 20, report
    after = metrics(server)
    assert after[COMPRESSED] - before[COMPRESSED] >= 5 * 20 and after[STORED] > before[STORED], (before, after)


# -------------------------------------------------------------------------------------------------------------
# gorilla/websocket (the benchmark's load generator), no context takeover
# -------------------------------------------------------------------------------------------------------------
def wsfan_binary() -> Path | None:
    """The shared benchmark's `wsfan`, where Tests/bench/lib.sh builds it (PEERS_DIR, default /tmp/bench)."""
    candidate = Path(os.environ.get("PEERS_DIR", "/tmp/bench")) / "bin" / "wsfan"
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return candidate
    found = shutil.which("wsfan")
    return Path(found) if found else None


def test_wsfan_compress_decodes_every_message(start_server):
    """gorilla/websocket offering deflate as browsers do (no context takeover): every update delivered once, in
    order, and the server answered with permessage-deflate. Skipped when wsfan is not built (Tests/bench)."""
    binary = wsfan_binary()
    if binary is None:
        pytest.skip("wsfan is not built (bash Tests/bench/targets.sh builds it in /tmp/bench)")
    server = start_server("--rate", "1000", "--burst", "1000")  # the publisher sends 200 updates a second

    async def seed() -> str:
        async with connect(server.ws_url) as ws:
            await recv_json(ws)
            ack = await request(ws, {"type": "start", "requestId": "s", "attributes": {"workout": "yoga"},
                                     "durationSeconds": 600})
            return ack["activityId"]

    activity_id = run(seed())
    template = ('{"type":"update","activityId":"' + activity_id + '","durationSeconds":600,'
                '"alert":{"title":"wsfan","body":"{\\"seq\\":{seq},\\"ts\\":{ts}}"}}')
    before = metrics(server)
    result = subprocess.run([str(binary), "-name", "ours", "-url", server.ws_url, "-n", "20", "-m", "50",
                             "-rate", "200", "-compress", "-pub-template", template, "-extract", "keys:seq,ts",
                             "-server-pid", str(server.pid)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert "permessage-deflate" in json.dumps(report.get("extensions", "")), report
    assert report["connected"] == 20 and report["lost"] == 0, report
    assert report["delivered"] == report["expected"] == 20 * 50, report
    assert report["dups"] == 0 and report["out_of_order"] == 0, report
    assert metrics(server)[COMPRESSED] - before[COMPRESSED] >= 20 * 50

"""Starts one workout on a running `liveactivity serve` and prints its activity id and the size of the
`activity` `updated` frame an update with the benchmark's alert body produces, as `ID BYTES`.

    python3 Tests/bench/seed_activity.py PORT [TOKEN [FRAME_FILE]]

With TICKS=off in the environment the workout's countdown is already over (start = end, FROZEN_CONTENT
below), so the server sends no `tick` frames: the benchmark's template then sets that content in every
update instead of `durationSeconds`, and every frame our server writes is one the C peer writes too. The
countdown's instant is then printed as a third field: `ID BYTES INSTANT`.

The benchmark templates name an activity, so one must exist first; BYTES is what the peers' messages
are padded to for a same-size comparison; FRAME_FILE, when given, receives that frame's text (a filler that
compresses like our events, for a peer compressing with permessage-deflate). A minimal WebSocket client with no dependencies (this runs
outside the test venv): handshake, masked text frames, unfragmented reads.
"""
import base64
import json
import os
import socket
import sys
from datetime import datetime, timezone

port = int(sys.argv[1])
token = sys.argv[2] if len(sys.argv) > 2 else ""
frame_file = sys.argv[3] if len(sys.argv) > 3 else None
s = socket.create_connection(("127.0.0.1", port), timeout=5)
path = "/ws" + (f"?token={token}" if token else "")
s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n".encode()
          + b"Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)) + b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
buf = buf.split(b"\r\n\r\n", 1)[1]


def send(message: dict) -> None:
    data, mask = json.dumps(message).encode(), os.urandom(4)
    s.sendall(bytes([0x81, 0x80 | 126]) + len(data).to_bytes(2, "big") + mask
              + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))


def frame() -> bytes:
    global buf
    while True:
        if len(buf) >= 2:
            n, off = buf[1] & 0x7F, 2
            if n == 126:
                n, off = int.from_bytes(buf[2:4], "big"), 4
            elif n == 127:
                n, off = int.from_bytes(buf[2:10], "big"), 10
            if len(buf) >= off + n:
                payload, buf = buf[off:off + n], buf[off + n:]
                return payload
        buf += s.recv(65536)


TICKS = os.environ.get("TICKS", "on") != "off"
# A countdown that ended when it started (TICKS=off): no ticks for it.
# (now: the server refuses dates more than 12 hours old).
FROZEN = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")
FROZEN_CONTENT = {"state": {"workoutTimer": {"start": FROZEN, "end": FROZEN}}, "staleDate": None, "relevanceScore": 0}
countdown = {"durationSeconds": 25200} if TICKS else {"content": FROZEN_CONTENT}
# An 8-hour countdown never finishes during a run.
send({"type": "start", "requestId": "seed", "attributes": {"workout": "jogging"}, **countdown})
activity = None
while activity is None:
    m = json.loads(frame())
    if m.get("type") == "ack" and m.get("requestId") == "seed":
        activity = m["activityId"]
# The same body shape as the benchmark's updates: 16-digit seq, 13-digit ts.
body = json.dumps({"seq": 1764000000000000, "ts": 1234567890123}, separators=(",", ":"))
countdown = {"durationSeconds": 600} if TICKS else {"content": FROZEN_CONTENT}
send({"type": "update", "requestId": "size", "activityId": activity, **countdown,
      "alert": {"title": "bench", "body": body}})
while True:
    raw = frame()
    m = json.loads(raw)
    if m.get("type") == "activity" and m.get("event") == "updated":
        if frame_file:
            with open(frame_file, "wb") as out:
                out.write(raw)
        print(activity, len(raw), *([] if TICKS else [FROZEN]))
        break

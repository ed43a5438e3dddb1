#!/usr/bin/env bash
# Our server side by side with the peers (lws-c, node-ws, python-websockets) in ../shared/bench's
# harness, through its `custom` adapter. The harness's publisher sends our `update` with the alert body
# {"seq":N,"ts":T}, which every client gets back inside the `updated` event (keys:seq,ts extractor).
#
# ../shared/bench is read-only, so it is copied to $PEERS_DIR (/tmp/bench). Needs the Debian packages
# golang-go golang-github-gorilla-websocket-dev node-ws python3-venv (benchmark-only; BENCHMARKS.md).
# The update names an activity, so the server runs on a copy of a store seeded with one activity
# (SQLite, --durability normal) rather than --memory. Results: results/peers.jsonl and results/peers.md.
#   bash Tests/bench/run-with-peers.sh       # after the release build (run.sh does it)
#   QUICK=1 bash Tests/bench/run-with-peers.sh
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SHARED_BENCH=${SHARED_BENCH:-$ROOT/../shared/bench}
PEERS_DIR=${PEERS_DIR:-/tmp/bench}
RESULTS=${RESULTS:-$ROOT/Tests/bench/results}
mkdir -p "$RESULTS"
if [ ! -f "$PEERS_DIR/run-peers.sh" ]; then
	log "copying $SHARED_BENCH to $PEERS_DIR"
	cp -r "$SHARED_BENCH" "$PEERS_DIR" && chmod -R u+w "$PEERS_DIR" || exit 1
fi

# Seed: a store with one activity (8 h cap; a 7 h countdown so it never finishes during a run).
WORK=$(mktemp -d "${TMPDIR:-/tmp}/liveactivity-peers.XXXXXX")
SEED=$WORK/seed
mkdir -p "$SEED" "$WORK/runs"
SRV_LOG=$WORK/seed-server.log
"$BIN/liveactivity" serve --data-dir "$SEED" --durability normal --port 0 --public "$ROOT/Public" >"$SRV_LOG" 2>&1 &
SRV_PID=$!
for _ in $(seq 1 100); do
	SRV_PORT=$(sed -n 's#^Listening on http://127\.0\.0\.1:\([0-9]*\)/$#\1#p' "$SRV_LOG" | head -1)
	[ -n "$SRV_PORT" ] && break
	sleep 0.05
done
ACTIVITY=$(python3 - "$SRV_PORT" <<'PY'
import base64, json, os, socket, sys
# A minimal WebSocket client (no dependencies): handshake, one masked text frame, read until the ack.
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          b"Sec-WebSocket-Key: " + base64.b64encode(os.urandom(16)) + b"\r\nSec-WebSocket-Version: 13\r\n\r\n")
buf = b""
while b"\r\n\r\n" not in buf: buf += s.recv(4096)
buf = buf.split(b"\r\n\r\n", 1)[1]
msg = json.dumps({"type": "start", "requestId": "seed", "attributes": {"workout": "jogging"},
                  "durationSeconds": 25200}).encode()
mask = os.urandom(4)
s.sendall(bytes([0x81, 0x80 | 126]) + len(msg).to_bytes(2, "big") + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(msg)))
def frame():
    global buf
    while True:
        if len(buf) >= 2:
            n, off = buf[1] & 0x7F, 2
            if n == 126: n, off = int.from_bytes(buf[2:4], "big"), 4
            elif n == 127: n, off = int.from_bytes(buf[2:10], "big"), 10
            if len(buf) >= off + n:
                payload, buf = buf[off:off + n], buf[off + n:]
                return payload
        buf += s.recv(65536)
while True:
    m = json.loads(frame())
    if m.get("type") == "ack" and m.get("requestId") == "seed":
        print(m["activityId"]); break
PY
)
stop_server
[ -n "$ACTIVITY" ] || { echo "run-with-peers: could not seed an activity" >&2; exit 1; }
log "seeded activity $ACTIVITY in $SEED"

export PEERS=${PEER_LIST:-"custom lws-c node-ws python-websockets"}
export CUSTOM_NAME=liveactivity
export CUSTOM_CMD="$ROOT/Tests/bench/peer-server.sh $BIN $SEED $WORK/runs {port}"
export CUSTOM_PORT=18004 CUSTOM_PATH=/ws
export CUSTOM_ARGS='-pub-template {"type":"update","activityId":"'"$ACTIVITY"'","durationSeconds":600,"alert":{"title":"bench","body":"{\"seq\":{seq},\"ts\":{ts}}"}} -extract keys:seq,ts'
export OUT="$RESULTS/peers.jsonl"
log "load before the peers run: $(uptime)"
bash "$PEERS_DIR/run-peers.sh"
# run-peers.sh wrote $RESULTS/peers.md beside $OUT
rm -rf "$WORK"

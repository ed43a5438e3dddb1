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
ACTIVITY=$(python3 "$ROOT/Tests/bench/seed_activity.py" "$SRV_PORT" | cut -d" " -f1)
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

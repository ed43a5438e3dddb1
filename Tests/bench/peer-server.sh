#!/usr/bin/env bash
# The `custom` peer for ../shared/bench/run-peers.sh: a fresh copy of the seeded store (one activity
# whose id the publisher's template names), then `exec liveactivity serve` so the PID the harness
# holds is the server's own.
#   peer-server.sh BIN SEED_DIR RUNS_DIR PORT   (the copy goes under RUNS_DIR)
set -eu
BIN=$1 SEED=$2 RUNS=$3 PORT=$4
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA=$(mktemp -d "$RUNS/run.XXXXXX")
cp -r "$SEED"/. "$DATA"/
exec "$BIN/liveactivity" serve --data-dir "$DATA" --durability normal --port "$PORT" --public "$ROOT/Public" \
	--rate 100000 --burst 100000

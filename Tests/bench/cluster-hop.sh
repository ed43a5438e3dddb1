#!/usr/bin/env bash
# The cost of the Redis hop (issue 8): the fan-out benchmark against one instance and against two
# `--cluster` instances at once, interleaved, so that every mode sees the same machine drift.
#
#   bash Tests/bench/cluster-hop.sh                 # after the release build (run.sh or build_release)
#   ROUNDS=1 CLIENTS=200 bash Tests/bench/cluster-hop.sh    # a quick look
#
# Modes (each run starts fresh servers and, for the cluster modes, a fresh redis-server without
# persistence on a free loopback port; nothing else's Redis is touched):
#   memory-1   one instance, --memory                         (no store at all: the floor)
#   sqlite-1   one instance, the default SQLite store         (what a single server runs)
#   redis-1    one --cluster instance: controller and clients on it (the write path: EVAL before ack)
#   redis-2    two --cluster instances, controller on A, clients split A / B round-robin
#   redis-2x   two --cluster instances, controller on A, every client on B (every delivery crosses
#              the hop: A appends to Redis, B reads the stream and broadcasts)
# Cases per mode: `rate` (N clients, M updates at R/s: latency) and `full` (as fast as possible, window
# 32, 3 s: throughput). Every server process and redis-server are pinned to CPU $SERVER_CPU (so two
# instances share one core, as they would share one host), the benchmark client to $BENCH_CPU.
# `--ticks off`: no countdown runs, so every frame is an update. Results: one JSON line per run in $OUT
# (results/cluster-hop.jsonl, with "mode", "round" and "case" added), and a table of medians over the
# rounds in results/cluster-hop.md.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RESULTS=${RESULTS:-$ROOT/Tests/bench/results}
OUT=${OUT:-$RESULTS/cluster-hop.jsonl}
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-1000}
MESSAGES=${MESSAGES:-300}
RATE=${RATE:-50}
MODES=${MODES:-"memory-1 sqlite-1 redis-1 redis-2 redis-2x"}
mkdir -p "$RESULTS"
command -v redis-server >/dev/null || { echo "cluster-hop: redis-server is not installed (apt-get install -y redis-server)" >&2; exit 1; }
[ -x "$BIN/liveactivity" ] && [ -x "$BIN/liveactivity-bench" ] || build_release || exit 1

WORK=$(mktemp -d "${TMPDIR:-/tmp}/liveactivity-hop.XXXXXX")
PIDS=() PORTS=() REDIS_PID=""

# free_port: a loopback port nobody listens on now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start_redis() {
	local port
	port=$(free_port)
	"${PIN_SRV[@]}" redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no \
		--dir "$WORK" >"$WORK/redis.log" 2>&1 &
	REDIS_PID=$!
	REDIS_URL="redis://127.0.0.1:$port"
	for _ in $(seq 1 100); do
		redis-cli -p "$port" PING 2>/dev/null | grep -q PONG && return 0
		sleep 0.05
	done
	log "redis-server did not answer"; return 1
}

# start_instance ARGS...: one pinned server on a free port; appends to PIDS and PORTS.
start_instance() {
	local logf=$WORK/server-${#PIDS[@]}.log port=""
	"${PIN_SRV[@]}" "$BIN/liveactivity" serve --port 0 --public "$ROOT/Public" \
		--controller-token "$TOKEN" --rate 100000 --burst 100000 "$@" >"$logf" 2>&1 &
	PIDS+=("$!")
	for _ in $(seq 1 100); do
		port=$(sed -n 's#^Listening on http://127\.0\.0\.1:\([0-9]*\)/$#\1#p' "$logf" 2>/dev/null | head -1)
		[ -n "$port" ] && { PORTS+=("$port"); return 0; }
		sleep 0.05
	done
	log "an instance did not start: $(tail -3 "$logf")"; return 1
}

stop_all() {
	local pid
	for pid in "${PIDS[@]}" $REDIS_PID; do kill -TERM "$pid" 2>/dev/null; done
	for pid in "${PIDS[@]}" $REDIS_PID; do
		for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	PIDS=() PORTS=() REDIS_PID=""
	rm -rf "$WORK"/data-* "$WORK"/*.log
}
trap 'stop_all; rm -rf "$WORK"' EXIT
trap 'stop_all; rm -rf "$WORK"; exit 130' INT TERM

# run_mode MODE ROUND CASE bench-args...
run_mode() {
	local mode=$1 round=$2 case=$3; shift 3
	local servers=() publish
	case $mode in
	memory-1) start_instance --memory || return 0 ;;
	sqlite-1) start_instance --data-dir "$WORK/data-$round-$case" || return 0 ;;
	redis-*)
		start_redis || return 0
		start_instance --cluster "$REDIS_URL" --memory || return 0
		[ "$mode" = redis-1 ] || start_instance --cluster "$REDIS_URL" --memory || return 0
		;;
	esac
	publish="ws://127.0.0.1:${PORTS[0]}/ws"
	case $mode in
	redis-2) servers=(--server "ws://127.0.0.1:${PORTS[0]}/ws" --server "ws://127.0.0.1:${PORTS[1]}/ws") ;;
	redis-2x) servers=(--server "ws://127.0.0.1:${PORTS[1]}/ws") ;;
	*) servers=(--server "$publish") ;;
	esac
	sleep 0.3
	local line
	line=$(timeout -k 5 180 "${PIN_GEN[@]}" "$BIN/liveactivity-bench" "${servers[@]}" --publish-server "$publish" \
		--token "$TOKEN" --server-pid "${PIDS[0]}" --clients "$CLIENTS" --ticks off --label "$mode-$case" "$@" | head -1)
	if [ -n "$line" ]; then
		python3 - "$line" "$mode" "$round" "$case" >>"$OUT" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
r.update(mode=sys.argv[2], round=int(sys.argv[3]), case=sys.argv[4])
print(json.dumps(r))
PY
		tail -1 "$OUT" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
print("    %-9s %-4s delivered=%d lost=%d p50=%.1fms p99=%.1fms msg/s=%.0f" % (
    r["mode"], r["case"], r["delivered"], r["lost"], r["p50_ms"] or 0, r["p99_ms"] or 0, r["delivered_per_s"] or 0))' >&2
	else
		log "  $mode $case: no result"
	fi
	stop_all
	sleep 0.5
}

[ -s "$OUT" ] && mv -f "$OUT" "$OUT.prev"
: >"$OUT"
log "load before the run: $(uptime)"
for round in $(seq 1 "$ROUNDS"); do
	for mode in $MODES; do
		run_mode "$mode" "$round" rate --messages "$MESSAGES" --rate "$RATE"
		run_mode "$mode" "$round" full --messages 100000 --rate 0 --window 32 --duration 3
	done
done
log "load after the run: $(uptime)"
python3 "$ROOT/Tests/bench/summarize-hop.py" "$OUT" >"$RESULTS/cluster-hop.md" && cat "$RESULTS/cluster-hop.md"

#!/usr/bin/env bash
# Fan-out benchmark of `liveactivity serve` with its own client (liveactivity-bench), then, with
# PEERS=1, the same server side by side with the peer servers of ../shared/bench (BENCHMARKS.md).
#
#   bash Tests/bench/run.sh                       # our sizes (~3 min); results in Tests/bench/results/
#   PEERS=1 bash Tests/bench/run.sh               # + the peers harness with our server as `custom` (~5 min)
#   ONLY_PEERS=1 bash Tests/bench/run.sh          # the peers harness only
#   QUICK=1 bash Tests/bench/run.sh               # small sizes only (~30 s)
#
# Every case starts a fresh release server (`--memory --port 0`, publisher rate limit lifted) pinned to
# CPU $SERVER_CPU, and runs the client pinned to CPU $BENCH_CPU. Results: one JSON line per case in
# $OUT (results/ours.jsonl), a markdown table in results/ours.md, the start-up figures in
# results/startup.json; with PEERS=1 also results/peers.jsonl and results/peers.md.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RESULTS=${RESULTS:-$ROOT/Tests/bench/results}
OUT=${OUT:-$RESULTS/ours.jsonl}
QUICK=${QUICK:-0}
mkdir -p "$RESULTS"
build_release || { echo "run.sh: release build failed" >&2; exit 1; }

log "load before the run: $(uptime)"

run_case() { # run_case LABEL bench-args...: one case against a fresh server
	local label=$1; shift
	start_server || return 0
	sleep 0.3
	log "$label: $*"
	bench --label "$label" --out "$OUT" "$@" | head -1 | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
print("    n=%d connected=%d deflate=%s m=%d delivered=%d lost=%d p50=%.2fms p99=%.2fms msg/s=%.0f rss/conn=%sB encodes=%s deliveries=%s" % (
    r["n"], r["connected"], r["deflate"], r["m_sent"], r["delivered"], r["lost"], r["p50_ms"], r["p99_ms"],
    r["delivered_per_s"] or 0, r["server_rss_per_conn_bytes"], r["encodes_delta"], r["deliveries_delta"]))' >&2
	stop_server
	sleep 0.5
}

if [ "${ONLY_PEERS:-0}" != 1 ]; then
	[ -s "$OUT" ] && mv -f "$OUT" "$OUT.prev"
	: >"$OUT"
	log "start-up to first byte"
	python3 "$ROOT/Tests/bench/startup.py" "$BIN/liveactivity" "$ROOT/Public" >"$RESULTS/startup.json" \
		&& cat "$RESULTS/startup.json" >&2
	if [ "$QUICK" = 1 ]; then
		SIZES="100 1000"
		IDLE_N=1000
	else
		SIZES="100 1000 5000 10000"
		IDLE_N=10000
	fi
	for deflate in off on; do
		# memory: IDLE_N clients held 3 s while the countdown ticks every second
		run_case "idle-$deflate" --clients "$IDLE_N" --messages 0 --idle-seconds 3 --deflate "$deflate"
		for n in $SIZES; do
			case $n in
			100 | 1000) args=(--messages 200 --rate 20) ;;
			5000) args=(--messages 50 --rate 20) ;;
			10000) args=(--messages 20 --rate 10) ;;
			esac
			run_case "fanout-$deflate" --clients "$n" "${args[@]}" --deflate "$deflate"
		done
		# full speed: as fast as the server drains, at most 32 updates not yet at every client, 3 s
		run_case "throughput-$deflate" --clients 1000 --messages 1000000 --rate 0 --window 32 --duration 3 --deflate "$deflate"
	done
	python3 "$ROOT/Tests/bench/summarize.py" "$OUT" >"$RESULTS/ours.md"
	cat "$RESULTS/ours.md"
fi

if [ "${PEERS:-0}" = 1 ] || [ "${ONLY_PEERS:-0}" = 1 ]; then
	bash "$ROOT/Tests/bench/run-with-peers.sh"
fi

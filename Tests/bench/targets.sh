#!/usr/bin/env bash
# Issue 16's targets, measured in one command: our server against the C libwebsockets peer of
# ../shared/bench padded to our event frame's size, driven by the same Go load generator (wsfan).
#
#   bash Tests/bench/targets.sh                 # after the release build; 5 rounds, ~7 min
#   REPS=1 SHORT=1 bash Tests/bench/targets.sh  # smoke test, under a minute (N = 1,000 in both cases)
#
# Two cases, each run against three servers, interleaved (every round runs case 1 on all three, then case 2
# on all three), each run on a freshly started server pinned to CPU $SERVER_CPU with wsfan on $BENCH_CPU:
#   ours-memory   liveactivity serve --memory
#   ours-durable  liveactivity serve on the default SQLite store, --durability full (fsync per commit),
#                 in a fresh data folder per run
#   lws-c-padded  the C peer (lws-bcast), its messages padded to our `updated` frame (measured each round
#                 by seed_activity.py, which also starts the activity our template names)
# Cases:
#   fast  N = $FAST_N clients, updates as fast as the server drains with $FAST_WINDOW in flight, for
#         $FAST_SECONDS s: delivered messages/s
#   rate  N = $RATE_N clients, $RATE_M updates at $RATE/s: latency percentiles (p99), and the server's
#         peak RSS: VmHWM of /proc/PID/status read after the run (wsfan runs with -reset-hwm=false, so it is
#         the process's peak since start-up)
# Printed at the end (and written to results/targets.md): medians (min–max) per server, the ours ÷ peer
# ratios of each round's pair (median and range), and a loss check (losscheck.py): every run must have every
# client connected, every message delivered once, in order, and the server's VmHWM read, or the script exits 1.
#
# Environment: REPS (5), SHORT=1 (RATE_N=1000, RATE_M=20, FAST_SECONDS=1), FAST_N (1000), FAST_WINDOW (32),
# FAST_SECONDS (3), RATE_N (10000), RATE (10), RATE_M (50), SERVERS (the three names above, in run order;
# lws-c-padded needs an ours-* before it, or FRAME_BYTES), OUT (results/targets.jsonl), RESULTS, PEER_PORT
# (18003), CASES ("fast rate"; one of them alone for a partial run), TICKS (on: the activity's countdown
# runs, so our server also writes a `tick` frame to every client each second, which the C peer never does
# (about 10 % more frames at 10 updates/s); off: a countdown already over, so both servers write exactly
# the same frames), plus lib.sh's BIN, SKIP_BUILD, PIN, SERVER_CPU, BENCH_CPU, PEERS_DIR, SHARED_BENCH.
# Needs the release build of liveactivity and the peers' wsfan and lws-bcast (built by setup_peers:
# golang-go, golang-github-gorilla-websocket-dev, libwebsockets-dev).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RESULTS=${RESULTS:-$ROOT/Tests/bench/results}
OUT=${OUT:-$RESULTS/targets.jsonl}
REPS=${REPS:-5}
SHORT=${SHORT:-0}
if [ "$SHORT" = 1 ]; then
	RATE_N=${RATE_N:-1000} RATE_M=${RATE_M:-20} FAST_SECONDS=${FAST_SECONDS:-1}
fi
FAST_N=${FAST_N:-1000}
FAST_WINDOW=${FAST_WINDOW:-32}
FAST_SECONDS=${FAST_SECONDS:-3}
RATE_N=${RATE_N:-10000}
RATE=${RATE:-10}
RATE_M=${RATE_M:-50}
SERVERS=${SERVERS:-"ours-memory ours-durable lws-c-padded"}
CASES=${CASES:-"fast rate"}
TICKS=${TICKS:-on}
FRAME_BYTES=${FRAME_BYTES:-}
mkdir -p "$RESULTS"
[ -x "$BIN/liveactivity" ] || build_release || exit 1
setup_peers || exit 1

# Each client is one fd in wsfan and one in the server (lib.sh raised the soft limit to the hard one).
NEED=$(( (RATE_N > FAST_N ? RATE_N : FAST_N) + 100 ))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$NEED" ]; then
	echo "targets: ulimit -n is $(ulimit -n) (hard $(ulimit -Hn)); $NEED file descriptors are needed" >&2
	exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/liveactivity-targets.XXXXXX")
trap 'stop_server; stop_peer; rm -rf "$WORK"' EXIT
trap 'stop_server; stop_peer; rm -rf "$WORK"; exit 130' INT TERM
LOGF=$RESULTS/targets.log
[ -s "$OUT" ] && mv -f "$OUT" "$OUT.prev"
: >"$OUT"
: >"$LOGF"

# run_wsfan SERVER CASE ROUND PID URL FRAME wsfan-args...: one wsfan run (lib.sh's wsfan_run) against the
# running server PID, then one JSON line in $OUT: wsfan's report plus server, case, round, frame_bytes and
# peak_rss_kb.
run_wsfan() {
	local server=$1 case=$2 round=$3 pid=$4 url=$5 frame=$6; shift 6
	local line peak
	line=$(wsfan_run "$server" "$case" "$round" "$pid" "$url" "$@")
	peak=$(peak_kib "$pid")
	if [ -z "$line" ]; then
		log "  $server $case: wsfan gave no result (see $LOGF)"
		line='{"missing": true}'
	fi
	python3 - "$line" "$server" "$case" "$round" "$frame" "$peak" "$TICKS" >>"$OUT" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
r.update(server=sys.argv[2], case=sys.argv[3], round=int(sys.argv[4]), frame_bytes=int(sys.argv[5]), ticks=sys.argv[7],
         peak_rss_kb=int(sys.argv[6]))
print(json.dumps(r))
PY
	tail -n 1 "$OUT" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
if r.get("missing"): sys.exit()
print("    %-13s %-4s n=%d connected=%d delivered=%d lost=%d msg/s=%.0f p50=%.1fms p99=%.1fms peak RSS=%.1f MB server CPU=%.0f%%" % (
    r["server"], r["case"], r["n"], r["connected"], r["delivered"], r["lost"], r["delivered_per_s"], r["p50_ms"],
    r["p99_ms"], r["peak_rss_kb"] / 1024, r["server_cpu_pct"]))' >&2
}

# run_server SERVER CASE ROUND: a fresh server of that kind, one wsfan run against it, the server stopped.
run_server() {
	local server=$1 case=$2 round=$3
	case $server in
	ours-memory | ours-durable)
		if [ "$server" = ours-memory ]; then
			SRV_STORE=(--memory)
		else
			SRV_STORE=(--data-dir "$WORK/data-$round-$case" --durability full)
		fi
		start_server || { log "  $server did not start"; return 0; }
		local activity bytes frozen
		read -r activity bytes frozen < <(TICKS=$TICKS python3 "$ROOT/Tests/bench/seed_activity.py" "$SRV_PORT" "$TOKEN")
		if [ -z "${activity:-}" ]; then log "  $server: could not seed an activity"; stop_server; return 0; fi
		FRAME_BYTES=$bytes
		# TICKS=off: the content seed_activity.py started with (a countdown already over), so no ticks.
		local countdown='"durationSeconds":600'
		[ "$TICKS" = off ] && countdown='"content":{"state":{"workoutTimer":{"start":"'"$frozen"'","end":"'"$frozen"'"}},"staleDate":null,"relevanceScore":0}'
		local template='{"type":"update","activityId":"'"$activity"'",'"$countdown"',"alert":{"title":"bench","body":"{\"seq\":{seq},\"ts\":{ts}}"}}'
		run_wsfan "$server" "$case" "$round" "$SRV_PID" "ws://127.0.0.1:$SRV_PORT/ws?token=$TOKEN" "$bytes" \
			-pub-template "$template" -extract keys:seq,ts
		stop_server
		rm -rf "$WORK/data-$round-$case"
		;;
	lws-c-padded)
		[ -n "$FRAME_BYTES" ] || { echo "targets: lws-c-padded needs an ours-* run before it, or FRAME_BYTES" >&2; exit 1; }
		start_peer || return 0
		# wsfan's unpadded text {"seq":S,"ts":T} is 51 bytes; ,"pad":"" adds 9.
		run_wsfan "$server" "$case" "$round" "$PEER_PID" "ws://127.0.0.1:$PEER_PORT/" "$FRAME_BYTES" \
			-pad $((FRAME_BYTES - 60)) -pub-template '{"seq":{seq},"ts":{ts},"pad":"{pad}"}'
		stop_peer
		;;
	*) echo "targets: unknown server $server" >&2; exit 1 ;;
	esac
	sleep 0.5
}

# round_step CASE ROUND: that case on every server of $SERVERS in turn.
round_step() {
	local server
	for server in $SERVERS; do run_server "$server" "$1" "$2"; done
}
run_rounds round_step

PYTHONPATH="$ROOT/Tests/bench${PYTHONPATH:+:$PYTHONPATH}" python3 - "$OUT" "$REPS" "$SERVERS" "$FAST_N" "$FAST_WINDOW" \
	"$FAST_SECONDS" "$RATE_N" "$RATE" "$RATE_M" "$CASES" "$LOAD_BEFORE" "$LOAD_AFTER" "$ELAPSED" "$TICKS" \
	>"$RESULTS/targets.md" <<'PY'
import statistics, sys
import losscheck, tables
from tables import num, one, spread
out, reps, servers = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
fast_n, window, seconds, rate_n, rate, rate_m = sys.argv[4:10]
cases, load_before, load_after, elapsed = sys.argv[10].split(), sys.argv[11], sys.argv[12], sys.argv[13]
ticks = sys.argv[14]
rows = tables.load(out)
print(f"Load average (1, 5, 15 min) {load_before} before, {load_after} after; {elapsed} s. "
      "A server CPU % well under 100 in the fast case means the machine was shared: compare within a round.\n")
print("Ticks " + ("on: our activity's countdown runs, so our server also writes a tick to every client each second "
                  "(the C peer writes none)." if ticks != "off" else
                  "off: the countdown is already over, so both servers write the same frames.") + "\n")
PEER = "lws-c-padded"

def runs(server, case):
    return tables.runs(rows, server, case)

def ratios(case, key, ours):
    """ours ÷ peer of each round where both ran: median (min–max), and the ratio of the medians."""
    mine, peer = runs(ours, case), runs(PEER, case)
    pairs = [mine[k][key] / peer[k][key] for k in sorted(mine) if k in peer and peer[k][key]]
    if not pairs:
        return "–"
    of_medians = statistics.median(r[key] for r in mine.values()) / statistics.median(r[key] for r in peer.values())
    return f"{statistics.median(pairs):.2f}× ({min(pairs):.2f}–{max(pairs):.2f}×, {len(pairs)} pairs; ratio of medians {of_medians:.2f}×)"


def fast_section():
    print(f"### Fan-out, N = {fast_n}, as fast as possible ({window} in flight, {seconds} s), {reps} round(s)\n")
    print("| server | frame B | delivered msg/s, median (min–max) | server CPU % | µs CPU / delivery | lost |")
    print("|---|---:|---:|---:|---:|---:|")
    for s in servers:
        rs = list(runs(s, "fast").values())
        if not rs:
            print(f"| {s} | – | no run | | | |")
            continue
        us = [r["server_cpu_pct"] / 100 * 1e6 / r["delivered_per_s"] for r in rs if r["delivered_per_s"] > 0]
        print(f"| {s} | {rs[0]['frame_bytes']} | {spread([r['delivered_per_s'] for r in rs], num)} | "
              f"{spread([r['server_cpu_pct'] for r in rs], num)} | {spread(us, one)} | {sum(r['lost'] for r in rs)} |")
    print()
    for s in servers:
        if s != PEER:
            print(f"- {s} ÷ {PEER}, msg/s: {ratios('fast', 'delivered_per_s', s)}")
    print()


def rate_section():
    print(f"### N = {rate_n} at {rate} updates/s ({rate_m} updates), {reps} round(s)\n")
    print("| server | p50 ms | p99 ms, median (min–max) | peak RSS MB (VmHWM), median (min–max) | server CPU % | lost |")
    print("|---|---:|---:|---:|---:|---:|")
    for s in servers:
        rs = list(runs(s, "rate").values())
        if not rs:
            print(f"| {s} | – | no run | | | |")
            continue
        print(f"| {s} | {spread([r['p50_ms'] for r in rs], one)} | {spread([r['p99_ms'] for r in rs], one)} | "
              f"{spread([r['peak_rss_kb'] / 1024 for r in rs], one)} | {spread([r['server_cpu_pct'] for r in rs], num)} | "
              f"{sum(r['lost'] for r in rs)} |")
    print()
    for s in servers:
        if s != PEER:
            print(f"- {s} ÷ {PEER}, p99: {ratios('rate', 'p99_ms', s)}")
            print(f"- {s} ÷ {PEER}, peak RSS: {ratios('rate', 'peak_rss_kb', s)}")
    print()


if "fast" in cases:
    fast_section()
if "rate" in cases:
    rate_section()

problems = losscheck.check_rounds(runs, [(s, case) for s in servers for case in cases], reps, peak=True)
sys.exit(losscheck.report(rows, problems))
PY
STATUS=$?
cat "$RESULTS/targets.md"
exit "$STATUS"

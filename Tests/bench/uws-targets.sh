#!/usr/bin/env bash
# Issue 30's targets ("As fast as uWebSockets"), measured in one command: our server (in memory and on the
# default durable store) against the uWebSockets peer and the C libwebsockets peer of ../shared/bench, both
# padded to our event frame's size, all driven by the shared Go load generator (wsfan).
#
#   bash Tests/bench/uws-targets.sh                 # after the release build; 3 rounds, ~15 min
#   REPS=1 SHORT=1 bash Tests/bench/uws-targets.sh  # smoke test, ~2 min (N = 1,000 everywhere, short runs)
#
# Every round runs each case on every server in turn (interleaved), each on a freshly started server pinned to
# CPU $SERVER_CPU with wsfan on $BENCH_CPU:
# Our subscribers are viewers (no token, as a browser watching), the publisher the one controller (wsfan -pub-url
# with the token); issue 16's and 20's scripts connect every subscriber with the controller token.
#   ours-memory   liveactivity serve --memory
#   ours-durable  liveactivity serve on the default SQLite store (--durability full, a fresh data folder per run)
#   uws           uws-bcast (uWebSockets, uSockets' epoll loop; -z in the deflate case: SHARED_COMPRESSOR)
#   lws-c         lws-bcast (libwebsockets 4.1 in C, poll loop; -z in the deflate case)
#   base-memory   (with BASELINE_BIN=folder) that folder's liveactivity, --memory: an older build, measured in the same
#                 rounds (e.g. /work/bin-baseline, main before issue 30's changes)
#   base-durable  (not in the default SERVERS) that folder's liveactivity on the default SQLite store, as ours-durable
#   lws-c-uv      (not in the default SERVERS; issue 30's epoll question) lws-bcast -e uv: the same lws on its libuv
#   lws-c-ev      event-library plugin (epoll), or -e ev (libev, epoll), instead of lws's own poll() loop
#   flood         (fast case only) the generator's ceiling: a server that does nearly nothing per delivery
# With PEER_FRAME=ours (the default) the peers publish our own `updated` frame (seed_activity.py's, its alert's
# seq and ts filled in by wsfan: peer_template), so that every server's clients get the same bytes and the
# generator does the same work per message (it finds seq and ts by scanning each frame from its start: in our
# frame they are at the end). PEER_FRAME=xs, the layout before 4 Dec 2026, 23:50: {"seq":S,"ts":T,"pad":"xxx…"}
# padded to our frame's size. The deflate case keeps that layout with our frame's text as the filler
# (-pad-from), so that it compresses like ours.
# Cases:
#   fast     N = $FAST_N, updates as fast as the server drains with $FAST_WINDOW in flight, $FAST_SECONDS s:
#            delivered msg/s, and server CPU per delivery (utime + stime of /proc/PID/stat over the publish and
#            drain window, read by wsfan, ÷ deliveries): where uWS and the generator's ceiling meet, the CPU
#            per delivery is the comparison
#   fixed    N = $FIXED_N at $FIXED_RATE updates/s ($FIXED_M updates; 80,000 deliveries/s): server CPU µs per
#            delivery, plain clients
#   fixed-z  the same with deflate clients (wsfan -compress: gorilla, no context takeover; uws -z, lws-c -z)
#   rate     N = $RATE_N at $RATE updates/s ($RATE_M updates): p50/p99 and peak RSS (VmHWM since start-up;
#            wsfan runs with -reset-hwm=false)
#   idle     $IDLE_N idle clients (wsfan -m 0 -idle-hold 2s, after the probe reached each): the server's VmRSS
#            with them minus its VmRSS before the first connected, ÷ N
# Printed at the end (and written to results/uws-targets.md, one JSON line per run in results/uws-targets.jsonl):
# medians (min–max) per server and case, the ratios of each round's pairs (ours ÷ uws, ours ÷ lws-c,
# ours-durable ÷ ours-memory) as median (min–max), and a loss check (losscheck.py: every client connected,
# every message delivered once and in order in every run with messages; else exit 1).
#
# Environment: REPS (3), FAST_REPS and RATE_REPS (1: the fast and rate cases' runs a round; their ratios' medians
# are steadier with more: the fast case's pairs of ours-durable ÷ ours-memory spread 0.60–1.11× over eight),
# SHORT=1 (FAST_SECONDS=1, FIXED_M=80, RATE_N=1000, RATE_M=20, IDLE_N=1000),
# FAST_N (1000), FAST_WINDOW (32), FAST_SECONDS (3), FIXED_N (1000), FIXED_RATE (80), FIXED_M (400),
# RATE_N (10000), RATE (10), RATE_M (50), IDLE_N (10000), CASES ("fast fixed fixed-z rate idle"),
# BASELINE_BIN, SERVERS ("ours-memory ours-durable [base-memory] uws lws-c"; flood is added to the fast case unless FLOOD=0),
# PEER_FRAME (ours; xs), TICKS (off: the activity's countdown is already over, so our server writes exactly the frames the peers
# write; on: it also writes a `tick` to every client each second), OURS_BIN (folder holding the liveactivity
# to measure, default lib.sh's BIN; e.g. /work/bin-baseline), UWS_PORT (18005), PEER_PORT (18003),
# FLOOD_PORT (18009), OUT, RESULTS, plus lib.sh's BIN, SKIP_BUILD, PIN, SERVER_CPU, BENCH_CPU, PEERS_DIR,
# SHARED_BENCH. Needs the release build, and the peers (built by setup_peers and here: golang-go,
# golang-github-gorilla-websocket-dev, libwebsockets-dev, g++, zlib1g-dev).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RESULTS=${RESULTS:-$ROOT/Tests/bench/results}
OUT=${OUT:-$RESULTS/uws-targets.jsonl}
REPS=${REPS:-3}
FAST_REPS=${FAST_REPS:-1}
RATE_REPS=${RATE_REPS:-1}
if [ "${SHORT:-0}" = 1 ]; then
	FAST_SECONDS=${FAST_SECONDS:-1} FIXED_M=${FIXED_M:-80} RATE_N=${RATE_N:-1000} RATE_M=${RATE_M:-20}
	IDLE_N=${IDLE_N:-1000}
fi
FAST_N=${FAST_N:-1000}
FAST_WINDOW=${FAST_WINDOW:-32}
FAST_SECONDS=${FAST_SECONDS:-3}
FIXED_N=${FIXED_N:-1000}
FIXED_RATE=${FIXED_RATE:-80}
FIXED_M=${FIXED_M:-400}
RATE_N=${RATE_N:-10000}
RATE=${RATE:-10}
RATE_M=${RATE_M:-50}
IDLE_N=${IDLE_N:-10000}
CASES=${CASES:-"fast fixed fixed-z rate idle"}
BASELINE_BIN=${BASELINE_BIN:-}
SERVERS=${SERVERS:-"ours-memory ours-durable${BASELINE_BIN:+ base-memory} uws lws-c"}
FLOOD=${FLOOD:-1}
TICKS=${TICKS:-off}
UWS_PORT=${UWS_PORT:-18005}
FLOOD_PORT=${FLOOD_PORT:-18009}
PEER_FRAME=${PEER_FRAME:-ours}
OURS_BIN=${OURS_BIN:-$BIN}
mkdir -p "$RESULTS"
if [ "$OURS_BIN" = "$BIN" ]; then [ -x "$BIN/liveactivity" ] || build_release || exit 1; fi
[ -x "$OURS_BIN/liveactivity" ] || { echo "uws-targets: no $OURS_BIN/liveactivity" >&2; exit 1; }
setup_peers || exit 1
(
	cd "$PEERS_DIR" || exit 1
	export GO111MODULE=off GOPATH=${GOPATH:-/usr/share/gocode} GOFLAGS=
	[ -x bin/uws-bcast ] || bash peers/uws/build.sh "$PEERS_DIR/bin/uws-bcast" || exit 1
	[ -x bin/flood ] || go build -o bin/flood ./tools/flood || exit 1
) || { echo "uws-targets: cannot build uws-bcast / flood (apt-get install g++ zlib1g-dev golang-go)" >&2; exit 1; }

NEED=$(( (RATE_N > IDLE_N ? RATE_N : IDLE_N) + 100 ))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$NEED" ]; then
	echo "uws-targets: ulimit -n is $(ulimit -n) (hard $(ulimit -Hn)); $NEED file descriptors are needed" >&2
	exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/liveactivity-uws-targets.XXXXXX")
PAD_FILE=$WORK/pad
# The peer this script started (uws-bcast, lws-bcast or flood; start_listener), stopped with stop_pid OTHER_PID.
OTHER_PID=""
trap 'stop_server; stop_pid OTHER_PID; rm -rf "$WORK"' EXIT
trap 'stop_server; stop_pid OTHER_PID; rm -rf "$WORK"; exit 130' INT TERM
LOGF=$RESULTS/uws-targets.log
[ -s "$OUT" ] && mv -f "$OUT" "$OUT.prev"
: >"$OUT"
: >"$LOGF"

# run_wsfan SERVER CASE ROUND PID URL wsfan-args...: one wsfan run (lib.sh's wsfan_run) against PID; one JSON
# line in $OUT.
run_wsfan() {
	local server=$1 case=$2 round=$3 pid=$4 url=$5; shift 5
	local line peak
	line=$(wsfan_run "$server" "$case" "$round" "$pid" "$url" "$@")
	peak=$(peak_kib "$pid")
	[ -n "$line" ] || { log "  $server $case: wsfan gave no result (see $LOGF)"; line='{"missing": true}'; }
	python3 - "$line" "$server" "$case" "$round" "$FRAME_BYTES" "$peak" "$TICKS" >>"$OUT" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
r.update(server=sys.argv[2], case=sys.argv[3], round=int(sys.argv[4]), frame_bytes=int(sys.argv[5] or 0),
         peak_rss_kb=int(sys.argv[6]), ticks=sys.argv[7])
if not r.get("missing") and r.get("delivered_per_s", 0) > 0 and r.get("server_cpu_pct", -1) > 0:
    # wsfan's server CPU is utime + stime over the publish + drain window, which ends with the last delivery.
    r["us_per_delivery"] = r["server_cpu_pct"] / 100 * 1e6 / r["delivered_per_s"]
print(json.dumps(r))
PY
	tail -n 1 "$OUT" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
if r.get("missing"): sys.exit()
if r["case"] == "idle":
    print("    %-12s idle  n=%d connected=%d %.0f B/connection, peak RSS %.1f MB" % (
        r["server"], r["n"], r["connected"], r["server_rss_per_conn_bytes"], r["peak_rss_kb"] / 1024))
else:
    print("    %-12s %-7s n=%d connected=%d lost=%d msg/s=%.0f p99=%.1fms peak RSS=%.1f MB CPU=%.0f%% %.2f us/delivery" % (
        r["server"], r["case"], r["n"], r["connected"], r["lost"], r["delivered_per_s"], r["p99_ms"],
        r["peak_rss_kb"] / 1024, r["server_cpu_pct"], r.get("us_per_delivery", -1)))' >&2
}

FRAME_BYTES=${FRAME_BYTES:-}

# peer_template: what the publisher sends a peer with PEER_FRAME=ours: our `updated` frame as seed_activity.py
# wrote it to PAD_FILE, its alert body's seq and ts (seed_activity.py's 1764000000000000 and 1234567890123) made
# wsfan's {seq} and {ts}. The peer publishes it unchanged, so every server's clients get the same bytes and the
# generator, which finds seq and ts by scanning each frame from its start, does the same work per message.
peer_template() {
	python3 -c 'import sys; t = open(sys.argv[1]).read()
print(t.replace("1764000000000000", "{seq}", 1).replace("1234567890123", "{ts}", 1), end="")' "$PAD_FILE"
}

# Our frame first, when a peer comes before our server in a round (PEER_FRAME=ours): one server started for it.
if [ "$PEER_FRAME" = ours ] && [ "${SERVERS%% *}" != ours-memory ] && [ "${SERVERS%% *}" != ours-durable ] \
	&& [ "${SERVERS%% *}" != base-memory ] && [ "${SERVERS%% *}" != base-durable ]; then
	SRV_STORE=(--memory)
	if start_server_in "$OURS_BIN"; then
		read -r _ probed _ < <(TICKS=$TICKS python3 "$ROOT/Tests/bench/seed_activity.py" "$SRV_PORT" "$TOKEN" "$PAD_FILE")
		FRAME_BYTES=${FRAME_BYTES:-$probed}
		stop_server
	fi
fi
# run_server SERVER CASE ROUND: a fresh server of that kind, one wsfan run against it, the server stopped.
run_server() {
	local server=$1 case=$2 round=$3 z=() pad_from=() zf=()
	if [ "$case" = fixed-z ]; then z=(-compress); pad_from=(-pad-from "$PAD_FILE"); fi
	case $server in
	ours-memory | ours-durable | base-memory | base-durable)
		if [ "${server#*-}" = durable ]; then SRV_STORE=(--data-dir "$WORK/data-$round-$case" --durability full)
		else SRV_STORE=(--memory); fi
		local dir=$OURS_BIN
		[ "${server%%-*}" = base ] && dir=$BASELINE_BIN
		start_server_in "$dir" || { log "  $server did not start"; return 0; }
		local activity bytes frozen
		read -r activity bytes frozen < <(TICKS=$TICKS python3 "$ROOT/Tests/bench/seed_activity.py" "$SRV_PORT" "$TOKEN" "$PAD_FILE")
		if [ -z "${activity:-}" ]; then log "  $server: could not seed an activity"; stop_server; return 0; fi
		FRAME_BYTES=$bytes
		local countdown='"durationSeconds":600'
		[ "$TICKS" = off ] && countdown='"content":{"state":{"workoutTimer":{"start":"'"$frozen"'","end":"'"$frozen"'"}},"staleDate":null,"relevanceScore":0}'
		local template='{"type":"update","activityId":"'"$activity"'",'"$countdown"',"alert":{"title":"bench","body":"{\"seq\":{seq},\"ts\":{ts}}"}}'
		# The subscribers are viewers as browsers are (no token); the publisher is the one controller.
		run_wsfan "$server" "$case" "$round" "$SRV_PID" "ws://127.0.0.1:$SRV_PORT/ws" \
			-pub-url "ws://127.0.0.1:$SRV_PORT/ws?token=$TOKEN" -pub-template "$template" -extract keys:seq,ts "${z[@]}"
		stop_server
		rm -rf "$WORK/data-$round-$case"
		;;
	uws | lws-c | lws-c-uv | lws-c-ev | flood)
		[ -n "$FRAME_BYTES" ] || { echo "uws-targets: $server needs an ours-* run before it, or FRAME_BYTES" >&2; exit 1; }
		local port
		case $server in
		uws) port=$UWS_PORT; [ -n "${z[*]}" ] && zf=(-z) || zf=()
			start_listener OTHER_PID "$port" "$LOGF" "$PEERS_DIR/bin/uws-bcast" -p "$port" -i 127.0.0.1 "${zf[@]}" || return 0 ;;
		lws-c) port=$PEER_PORT; [ -n "${z[*]}" ] && zf=(-z) || zf=()
			start_listener OTHER_PID "$port" "$LOGF" "$PEERS_DIR/bin/lws-bcast" -p "$port" -i 127.0.0.1 "${zf[@]}" || return 0 ;;
		lws-c-uv | lws-c-ev) port=$PEER_PORT; [ -n "${z[*]}" ] && zf=(-z) || zf=()
			start_listener OTHER_PID "$port" "$LOGF" "$PEERS_DIR/bin/lws-bcast" -p "$port" -i 127.0.0.1 -e "${server#lws-c-}" "${zf[@]}" || return 0 ;;
		flood) port=$FLOOD_PORT
			start_listener OTHER_PID "$port" "$LOGF" "$PEERS_DIR/bin/flood" -addr "127.0.0.1:$port" || return 0 ;;
		esac
		if [ "$PEER_FRAME" = ours ] && [ -z "${z[*]}" ] && [ -s "$PAD_FILE" ]; then
			# Our own `updated` frame, byte for byte but its alert's seq and ts (peer_template).
			run_wsfan "$server" "$case" "$round" "$OTHER_PID" "ws://127.0.0.1:$port/" -pub-template "$(peer_template)"
		else
			# wsfan's unpadded text {"seq":S,"ts":T} is 51 bytes; ,"pad":"" adds 9.
			run_wsfan "$server" "$case" "$round" "$OTHER_PID" "ws://127.0.0.1:$port/" -pad $((FRAME_BYTES - 60)) \
				-pub-template '{"seq":{seq},"ts":{ts},"pad":"{pad}"}' "${pad_from[@]}" "${z[@]}"
		fi
		stop_pid OTHER_PID
		;;
	*) echo "uws-targets: unknown server $server" >&2; exit 1 ;;
	esac
	sleep 0.5
}

# case_reps CASE: how many times a round runs CASE (FAST_REPS, RATE_REPS; 1 for the others).
case_reps() {
	case $1 in fast) echo "$FAST_REPS" ;; rate) echo "$RATE_REPS" ;; *) echo 1 ;; esac
}
# round_step CASE ROUND: that case on every server of $SERVERS in turn, then (fast case) on flood; case_reps times
# over, each time a round of its own in the results (round ROUND's k-th is (ROUND - 1) × reps + k), so that its
# ratios are of runs seconds apart.
round_step() {
	local server k reps label
	reps=$(case_reps "$1")
	for k in $(seq 1 "$reps"); do
		label=$(( ($2 - 1) * reps + k ))
		for server in $SERVERS; do run_server "$server" "$1" "$label"; done
		[ "$1" = fast ] && [ "$FLOOD" = 1 ] && run_server flood fast "$label"
	done
}
run_rounds round_step

PYTHONPATH="$ROOT/Tests/bench${PYTHONPATH:+:$PYTHONPATH}" python3 - "$OUT" "$REPS $FAST_REPS $RATE_REPS" "$SERVERS" "$CASES" \
	"$LOAD_BEFORE" "$LOAD_AFTER" "$ELAPSED" "$TICKS" \
	"$FAST_N $FAST_WINDOW $FAST_SECONDS $FIXED_N $FIXED_RATE $FIXED_M $RATE_N $RATE $RATE_M $IDLE_N" \
	>"$RESULTS/uws-targets.md" <<'PY'
import statistics, sys
import losscheck, tables
from tables import num, one, two, spread
out, servers, cases = sys.argv[1], sys.argv[3].split(), sys.argv[4].split()
reps, fast_reps, rate_reps = map(int, sys.argv[2].split())
case_reps = {"fast": reps * fast_reps, "rate": reps * rate_reps}
load_before, load_after, elapsed, ticks = sys.argv[5:9]
fast_n, window, seconds, fixed_n, fixed_rate, fixed_m, rate_n, rate, rate_m, idle_n = sys.argv[9].split()
rows = tables.load(out)
print(f"Load average (1, 5, 15 min) {load_before} before, {load_after} after; {elapsed} s; {reps} round(s), "
      f"the fast case {fast_reps} and the rate case {rate_reps} time(s) a round; ticks {ticks}. Ratios are of each "
      f"run's pair (the two runs a minute apart at most), median (min–max).\n")

def runs(server, case):
    return tables.runs(rows, server, case)

def ratio(case, key, a, b):
    ra, rb = runs(a, case), runs(b, case)
    pairs = [ra[k][key] / rb[k][key] for k in sorted(ra) if k in rb and rb[k].get(key) and ra[k].get(key) is not None]
    if not pairs:
        return None
    return f"{statistics.median(pairs):.2f}× ({min(pairs):.2f}–{max(pairs):.2f}×, {len(pairs)} pairs)"

ours = [s for s in servers if s.startswith("ours")]
peers = [s for s in servers if not s.startswith("ours")]  # base-* included: ours ÷ the older build

def ratios(case, key, what):
    lines = []
    for s in ours:
        for p in peers:
            r = ratio(case, key, s, p)
            if r: lines.append(f"- {s} ÷ {p}, {what}: {r}")
    if "ours-durable" in servers and "ours-memory" in servers:
        r = ratio(case, key, "ours-durable", "ours-memory")
        if r: lines.append(f"- ours-durable ÷ ours-memory, {what}: {r}")
    print("\n".join(lines) + "\n")

def table(title, case, names, columns, cells, compared=()):
    """A section: its title, a row per server of names that ran case (cells: the row's cells after the server's
    name, from its runs), then the ratios of each (key, what) of compared."""
    print(f"### {title}\n")
    print(f"| server | {' | '.join(columns)} |")
    print("|---|" + "---:|" * len(columns))
    for s in names:
        rs = list(runs(s, case).values())
        if rs:
            print(f"| {s} | {' | '.join(cells(rs))} |")
    print()
    for key, what in compared:
        ratios(case, key, what)

def lost(rs):
    return str(sum(r["lost"] for r in rs))

if "fast" in cases:
    table(f"N = {fast_n} as fast as possible ({window} in flight, {seconds} s), plain clients", "fast", servers + ["flood"],
          ["frame B", "delivered msg/s", "server CPU %", "µs CPU / delivery", "lost"],
          lambda rs: [str(rs[0]["frame_bytes"]), spread([r["delivered_per_s"] for r in rs], num),
                      spread([r["server_cpu_pct"] for r in rs], num), spread([r.get("us_per_delivery") for r in rs], two), lost(rs)],
          [("delivered_per_s", "msg/s"), ("us_per_delivery", "µs CPU per delivery")])
for case, label in (("fixed", "plain clients"), ("fixed-z", "deflate clients (uws -z, lws-c -z, wsfan -compress)")):
    if case not in cases: continue
    table(f"Fixed load: N = {fixed_n} at {fixed_rate} updates/s ({fixed_m} updates), {label}", case, servers,
          ["µs CPU / delivery", "server CPU %", "p99 ms", "lost"],
          lambda rs: [spread([r.get("us_per_delivery") for r in rs], two), spread([r["server_cpu_pct"] for r in rs], num),
                      spread([r["p99_ms"] for r in rs], one), lost(rs)],
          [("us_per_delivery", "µs CPU per delivery")])
if "rate" in cases:
    table(f"N = {rate_n} at {rate} updates/s ({rate_m} updates)", "rate", servers,
          ["p50 ms", "p99 ms", "peak RSS MB (VmHWM)", "server CPU %", "µs CPU / delivery", "wsfan CPU %", "lost"],
          lambda rs: [spread([r["p50_ms"] for r in rs], one), spread([r["p99_ms"] for r in rs], one),
                      spread([r["peak_rss_kb"] / 1024 for r in rs], one), spread([r["server_cpu_pct"] for r in rs], num),
                      spread([r.get("us_per_delivery") for r in rs], two), spread([r.get("loadgen_cpu_pct") for r in rs], num),
                      lost(rs)],
          [("p99_ms", "p99"), ("peak_rss_kb", "peak RSS"), ("us_per_delivery", "µs CPU per delivery")])
if "idle" in cases:
    table(f"{idle_n} idle clients: resident memory per connection", "idle", servers,
          ["B / connection (VmRSS growth ÷ N)", "peak RSS MB"],
          lambda rs: [spread([r["server_rss_per_conn_bytes"] for r in rs], num), spread([r["peak_rss_kb"] / 1024 for r in rs], one)])

# flood, the generator's ceiling, runs in the fast case only, and a round without it is no problem.
problems = []
for case in cases:
    pairs = [(s, case) for s in servers + (["flood"] if case == "fast" else [])]
    problems += losscheck.check_rounds(runs, pairs, case_reps.get(case, reps), optional={"flood"})
sys.exit(losscheck.report(rows, problems))
PY
STATUS=$?
cat "$RESULTS/uws-targets.md"
exit "$STATUS"

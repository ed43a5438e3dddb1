#!/usr/bin/env bash
# Issue 20's targets ("Compress once"), measured in one command: our server with and without permessage-deflate
# clients, against the C libwebsockets peer of ../shared/bench compressing per connection (lws-bcast -z) at our
# event's size, all driven by the shared Go load generator (wsfan, gorilla/websocket).
#
#   bash Tests/bench/deflate.sh                 # after the release build; 5 rounds, ~15 min
#   REPS=1 SHORT=1 bash Tests/bench/deflate.sh  # smoke test, ~2 min
#
# Every round runs each case on every server in turn (interleaved), each on a freshly started server pinned to
# CPU $SERVER_CPU with the client on $BENCH_CPU:
#   fast   N = $FAST_N, updates as fast as the server drains with $FAST_WINDOW in flight, $FAST_SECONDS s:
#            ours-plain    liveactivity serve --memory, wsfan without deflate
#            ours-deflate  the same server, wsfan -compress (gorilla: permessage-deflate, no context takeover)
#            lws-c-z       lws-bcast -z (lws's own permessage-deflate, one compressor per connection), wsfan
#                          -compress, messages padded to our `updated` frame (measured by seed_activity.py)
#                          with our `updated` frame's own text as the filler (-pad-from; wsfan drops its quotes
#                          and backslashes), so they compress like ours: x's would compress 628 bytes to 50
#          delivered msg/s, server CPU per delivery, and for ours the bytes on the wire per message written
#          (/metrics: liveactivity_sent_frame_bytes_total / liveactivity_messages_sent_total: headers included,
#          compressed as sent; mostly the updates, plus the snapshots and ticks)
#   idle   $IDLE_N idle viewers (tests' venv: Python `websockets`, keeping context as browsers do), each holding
#          its snapshot and one update: the server's VmRSS growth per connection, deflate and plain
#            idle-deflate  offering permessage-deflate; client_max_window_bits (as browsers)
#            idle-plain    offering nothing
#          plus wsfan -compress -m 0 -idle-hold (gorilla, no context takeover): idle-gorilla; and viewers that
#          each sent one request, compressed (lws then keeps an inflater for a client keeping its context):
#            idle-deflate-sent        as idle-deflate
#            idle-deflate-reset-sent  offering client_no_context_takeover too (lws's inflater freed after it)
#   rate   N = $RATE_N, $RATE_M updates at $RATE/s, ours-plain and ours-deflate: p50/p99 and peak RSS (VmHWM)
#   lws    the fast case driven by our own client instead (liveactivity-bench: libwebsockets 4.1 in C, zlib's
#          inflate), --deflate off and on (ours-plain-lws, ours-deflate-lws): a second view when wsfan's Go inflate
#          is the limit
# BASELINE_DIR=folder/holding/an/older/liveactivity adds "base-deflate" (fast and rate) and "base-idle-deflate"
# (idle): that binary with deflate clients, e.g. a build from before issue 20 (lws compressing per connection).
#
# Printed at the end (and written to results/deflate.md, one JSON line per run in results/deflate.jsonl):
# medians (min–max) per server and case, the ratios of each round's pair (ours-deflate ÷ ours-plain,
# ours-deflate ÷ lws-c-z), and a loss check (losscheck.py: every client connected, every message delivered once,
# in order, in every wsfan run, and liveactivity-bench's runs ok without loss; else exit 1).
#
# Environment: REPS (5), SHORT=1 (FAST_SECONDS=1, RATE_N=1000, RATE_M=20), FAST_N (1000), FAST_WINDOW (32),
# FAST_SECONDS (3), IDLE_N (1000), RATE_N (10000), RATE (10), RATE_M (50), CASES ("fast lws idle rate"),
# BASELINE_DIR, OUT (results/deflate.jsonl), RESULTS, PEER_PORT (18003), plus lib.sh's BIN, SKIP_BUILD, PIN,
# SERVER_CPU, BENCH_CPU, PEERS_DIR, SHARED_BENCH. Needs the release build, the tests' .venv (idle case) and the
# peers' wsfan and lws-bcast (built by setup_peers: golang-go, golang-github-gorilla-websocket-dev,
# libwebsockets-dev).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RESULTS=${RESULTS:-$ROOT/Tests/bench/results}
OUT=${OUT:-$RESULTS/deflate.jsonl}
REPS=${REPS:-5}
if [ "${SHORT:-0}" = 1 ]; then
	FAST_SECONDS=${FAST_SECONDS:-1} RATE_N=${RATE_N:-1000} RATE_M=${RATE_M:-20}
fi
FAST_N=${FAST_N:-1000}
FAST_WINDOW=${FAST_WINDOW:-32}
FAST_SECONDS=${FAST_SECONDS:-3}
IDLE_N=${IDLE_N:-1000}
RATE_N=${RATE_N:-10000}
RATE=${RATE:-10}
RATE_M=${RATE_M:-50}
CASES=${CASES:-"fast lws idle rate"}
BASELINE_DIR=${BASELINE_DIR:-}
PYTHON=${PYTHON:-$ROOT/.venv/bin/python}
mkdir -p "$RESULTS"
[ -x "$BIN/liveactivity" ] || build_release || exit 1
setup_peers || exit 1
if [[ " $CASES " == *" idle "* ]] && ! "$PYTHON" -c 'import websockets' 2>/dev/null; then
	echo "deflate: the idle case needs the tests' venv ($PYTHON with websockets): bash Deploy/setup-debian.sh" >&2
	exit 1
fi

NEED=$(( (RATE_N > FAST_N ? RATE_N : FAST_N) + 100 ))
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$NEED" ]; then
	echo "deflate: ulimit -n is $(ulimit -n) (hard $(ulimit -Hn)); $NEED file descriptors are needed" >&2
	exit 1
fi

LOGF=$RESULTS/deflate.log
[ -s "$OUT" ] && mv -f "$OUT" "$OUT.prev"
: >"$OUT"
: >"$LOGF"
OURS_DIR=$BIN

# counters: "FRAME_BYTES PAYLOAD_BYTES MESSAGES COMPRESSED COMPRESSIONS STORED" from the running server's /metrics
# (0 for counters an older build does not have).
counters() {
	curl -s -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$SRV_PORT/metrics" | awk '
		$1 == "liveactivity_sent_frame_bytes_total" { f = $2 } $1 == "liveactivity_sent_bytes_total" { p = $2 }
		$1 == "liveactivity_messages_sent_total" { m = $2 } $1 == "liveactivity_sent_compressed_messages_total" { c = $2 }
		$1 == "liveactivity_deflate_compressions_total" { z = $2 } $1 == "liveactivity_sent_stored_messages_total" { s = $2 }
		END { print f + 0, p + 0, m + 0, c + 0, z + 0, s + 0 }'
}

# record SERVER CASE ROUND JSON [KEY=VALUE...]: one JSON line in $OUT (JSON plus server, case, round and the
# numeric extras), and a one-line summary on stderr.
record() {
	local server=$1 case=$2 round=$3 json=$4; shift 4
	python3 - "$json" "$server" "$case" "$round" "$@" >>"$OUT" <<'PY'
import json, sys
r = json.loads(sys.argv[1] or '{"missing": true}')
r.update(server=sys.argv[2], case=sys.argv[3], round=int(sys.argv[4]))
for extra in sys.argv[5:]:
    key, _, value = extra.partition("=")
    r[key] = float(value)
print(json.dumps(r))
PY
	tail -n 1 "$OUT" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
if r.get("missing"): print("    %s %s: no result" % (r["server"], r["case"])); sys.exit()
if r["case"] == "idle":
    print("    %-17s idle n=%d %.0f B/connection" % (r["server"], r["n"], r.get("per_conn_bytes", r.get("server_rss_per_conn_bytes", 0))))
else:
    wire = (" wire B/msg=%.0f (payload %.0f)" % (r["frame_bytes"] / r["messages"], r["payload_bytes"] / r["messages"])) if r.get("messages") else ""
    print("    %-17s %-4s n=%d connected=%d lost=%d msg/s=%.0f p99=%.1fms peak RSS=%.1f MB CPU=%.0f%%%s" % (
        r["server"], r["case"], r["n"], r["connected"], r["lost"], r["delivered_per_s"], r["p99_ms"],
        r.get("peak_rss_kb", 0) / 1024, r.get("server_cpu_pct") or 0, wire))' >&2
}

FRAME_BYTES=${FRAME_BYTES:-}
# Our `updated` frame's text, written by seed_activity.py: the C peer's filler.
PAD_FILE=$(mktemp "${TMPDIR:-/tmp}/liveactivity-deflate-pad.XXXXXX")
trap 'stop_server; stop_peer; rm -f "$PAD_FILE"' EXIT
trap 'stop_server; stop_peer; rm -f "$PAD_FILE"; exit 130' INT TERM
# ours SERVER CASE ROUND DIR COMPRESS: a fresh server (DIR/liveactivity), one wsfan run (with -compress if COMPRESS is
# 1), the wire counters, the server stopped.
ours() {
	local server=$1 case=$2 round=$3 dir=$4 compress=$5
	SRV_STORE=(--memory)
	start_server_in "$dir" || { log "  $server did not start"; return 0; }
	local activity bytes line
	read -r activity bytes < <(python3 "$ROOT/Tests/bench/seed_activity.py" "$SRV_PORT" "$TOKEN" "$PAD_FILE")
	if [ -z "${activity:-}" ]; then log "  $server: could not seed an activity"; stop_server; return 0; fi
	FRAME_BYTES=$bytes
	local before after
	before=$(counters)
	local template='{"type":"update","activityId":"'"$activity"'","durationSeconds":600,"alert":{"title":"bench","body":"{\"seq\":{seq},\"ts\":{ts}}"}}'
	local flags=(-pub-template "$template" -extract keys:seq,ts)
	[ "$compress" = 1 ] && flags+=(-compress)
	line=$(wsfan_run "$server" "$case" "$round" "$SRV_PID" "ws://127.0.0.1:$SRV_PORT/ws?token=$TOKEN" "${flags[@]}")
	after=$(counters)
	local peak; peak=$(peak_kib "$SRV_PID")
	stop_server
	read -r f0 p0 m0 c0 z0 s0 <<<"$before"
	read -r f1 p1 m1 c1 z1 s1 <<<"$after"
	record "$server" "$case" "$round" "$line" frame_bytes=$((f1 - f0)) payload_bytes=$((p1 - p0)) \
		messages=$((m1 - m0)) compressed=$((c1 - c0)) compressions=$((z1 - z0)) stored=$((s1 - s0)) \
		event_bytes="$bytes" peak_rss_kb="$peak"
}

# peer SERVER CASE ROUND: a fresh lws-bcast -z, wsfan -compress padded to our frame, the peer stopped.
peer() {
	local server=$1 case=$2 round=$3 line
	[ -n "$FRAME_BYTES" ] || { echo "deflate: lws-c-z needs an ours-* run before it, or FRAME_BYTES" >&2; exit 1; }
	# A round without the peer (its port still in use, say) is reported missing.
	start_peer -z || { record "$server" "$case" "$round" ""; return 0; }
	# wsfan's unpadded text {"seq":S,"ts":T} is 51 bytes; ,"pad":"" adds 9.
	line=$(wsfan_run "$server" "$case" "$round" "$PEER_PID" "ws://127.0.0.1:$PEER_PORT/" -compress \
		-pad $((FRAME_BYTES - 60)) -pad-from "$PAD_FILE" -pub-template '{"seq":{seq},"ts":{ts},"pad":"{pad}"}')
	local peak; peak=$(peak_kib "$PEER_PID")
	stop_peer
	record "$server" "$case" "$round" "$line" event_bytes="$FRAME_BYTES" peak_rss_kb="$peak"
}

# lws_client SERVER ROUND DIR DEFLATE: a fresh server (DIR/liveactivity), liveactivity-bench with --deflate DEFLATE
# (on|off) as the fast case, the server stopped.
lws_client() {
	local server=$1 round=$2 dir=$3 deflate=$4 line
	SRV_STORE=(--memory)
	start_server_in "$dir" || { log "  $server did not start"; return 0; }
	line=$(bench --clients "$FAST_N" --messages 100000 --rate 0 --window "$FAST_WINDOW" --duration "$FAST_SECONDS" \
		--deflate "$deflate" --label "$server" 2>>"$LOGF" | grep '^{' | tail -n 1)
	stop_server
	line=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r.setdefault("expected", r.get("delivered", 0) + r.get("lost", 0)); r.setdefault("out_of_order", 0); print(json.dumps(r))' "$line" 2>/dev/null)
	record "$server" lws "$round" "$line"
}

# idle SERVER ROUND DIR MODE: a fresh server (DIR/liveactivity), IDLE_N idle viewers (python: deflate or plain; gorilla: wsfan).
idle() {
	local server=$1 round=$2 dir=$3 mode=$4 line activity bytes
	SRV_STORE=(--memory)
	start_server_in "$dir" || { log "  $server did not start"; return 0; }
	read -r activity bytes < <(python3 "$ROOT/Tests/bench/seed_activity.py" "$SRV_PORT" "$TOKEN")
	if [ "$mode" = gorilla ]; then
		local template='{"type":"update","activityId":"'"$activity"'","durationSeconds":600,"alert":{"title":"bench","body":"{\"seq\":{seq},\"ts\":{ts}}"}}'
		line=$(wsfan_run "$server" idle "$round" "$SRV_PID" "ws://127.0.0.1:$SRV_PORT/ws?token=$TOKEN" -compress \
			-pub-template "$template" -extract keys:seq,ts)
		line=$(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); r["per_conn_bytes"]=r["server_rss_per_conn_bytes"]; print(json.dumps(r))' "$line" 2>/dev/null)
	else
		line=$(timeout -k 5 180 "${PIN_GEN[@]}" "$PYTHON" "$ROOT/Tests/bench/idle_clients.py" "$SRV_PORT" "$TOKEN" \
			"$SRV_PID" "$activity" "$IDLE_N" "$mode" 2>>"$LOGF" | tail -n 1)
	fi
	stop_server
	record "$server" idle "$round" "$line"
}

# round_step CASE ROUND: that case on each of its servers in turn.
round_step() {
	local case=$1 round=$2
	case $case in
	fast | rate)
		ours ours-plain "$case" "$round" "$OURS_DIR" 0; sleep 0.5
		ours ours-deflate "$case" "$round" "$OURS_DIR" 1; sleep 0.5
		[ -n "$BASELINE_DIR" ] && { ours base-deflate "$case" "$round" "$BASELINE_DIR" 1; sleep 0.5; }
		[ "$case" = fast ] && { peer lws-c-z fast "$round"; sleep 0.5; }
		;;
	lws)
		lws_client ours-plain-lws "$round" "$OURS_DIR" off; sleep 0.5
		lws_client ours-deflate-lws "$round" "$OURS_DIR" on; sleep 0.5
		[ -n "$BASELINE_DIR" ] && { lws_client base-deflate-lws "$round" "$BASELINE_DIR" on; sleep 0.5; }
		;;
	idle)
		idle idle-deflate "$round" "$OURS_DIR" deflate; sleep 0.5
		idle idle-plain "$round" "$OURS_DIR" plain; sleep 0.5
		idle idle-gorilla "$round" "$OURS_DIR" gorilla; sleep 0.5
		idle idle-deflate-sent "$round" "$OURS_DIR" deflate-sent; sleep 0.5
		idle idle-deflate-reset-sent "$round" "$OURS_DIR" deflate-reset-sent; sleep 0.5
		[ -n "$BASELINE_DIR" ] && { idle base-idle-deflate "$round" "$BASELINE_DIR" deflate; sleep 0.5; }
		;;
	esac
}
run_rounds round_step

PYTHONPATH="$ROOT/Tests/bench${PYTHONPATH:+:$PYTHONPATH}" python3 - "$OUT" "$REPS" "$FAST_N" "$FAST_WINDOW" "$FAST_SECONDS" \
	"$IDLE_N" "$RATE_N" "$RATE" "$RATE_M" "$CASES" "$LOAD_BEFORE" "$LOAD_AFTER" "$ELAPSED" >"$RESULTS/deflate.md" <<'PY'
import json, statistics, sys
import losscheck, tables
from tables import num, one, spread
out, reps = sys.argv[1], int(sys.argv[2])
fast_n, window, seconds, idle_n, rate_n, rate, rate_m = sys.argv[3:10]
cases, load_before, load_after, elapsed = sys.argv[10].split(), sys.argv[11], sys.argv[12], sys.argv[13]
rows = tables.load(out)
print(f"Load average (1, 5, 15 min) {load_before} before, {load_after} after; {elapsed} s; {reps} round(s). "
      "A server CPU % well under 100 in the fast case means the machine was shared: compare within a round.\n")

def runs(server, case):
    return tables.runs(rows, server, case)

def ratio(case, key, a, b):
    mine, other = runs(a, case), runs(b, case)
    pairs = [mine[k][key] / other[k][key] for k in sorted(mine) if k in other and other[k].get(key)]
    if not pairs:
        return "–"
    return f"{statistics.median(pairs):.2f}× ({min(pairs):.2f}–{max(pairs):.2f}×, {len(pairs)} rounds)"

present = sorted({r["server"] for r in rows if r.get("case") in ("fast", "rate")},
                 key=lambda s: ["ours-plain", "ours-deflate", "base-deflate", "lws-c-z"].index(s) if s in
                 ["ours-plain", "ours-deflate", "base-deflate", "lws-c-z"] else 9)

if "fast" in cases:
    print(f"### N = {fast_n}, as fast as possible ({window} in flight, {seconds} s)\n")
    print("| server | event B (plain) | delivered msg/s, median (min–max) | server CPU % | µs CPU / delivery | wsfan CPU % (backlog frames) | wire B / message written | compressions / s | lost |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in present:
        rs = list(runs(s, "fast").values())
        if not rs:
            continue
        us = [r["server_cpu_pct"] / 100 * 1e6 / r["delivered_per_s"] for r in rs if r["delivered_per_s"] > 0]
        wire = [r["frame_bytes"] / r["messages"] for r in rs if r.get("messages")]
        zps = [r["compressions"] / float(seconds) for r in rs if r.get("messages") and r.get("compressions") is not None]
        print(f"| {s} | {int(rs[0].get('event_bytes', 0))} | {spread([r['delivered_per_s'] for r in rs], num)} | "
              f"{spread([r['server_cpu_pct'] for r in rs], num)} | {spread(us, one)} | "
              f"{num(statistics.median(r['loadgen_cpu_pct'] for r in rs))} ({one(statistics.median(r['loadgen_backlog_frames'] for r in rs))}) | "
              f"{spread(wire, num)} | {spread(zps, num) if s != 'lws-c-z' else '–'} | {sum(r['lost'] for r in rs)} |")
    print()
    print(f"- ours-deflate ÷ ours-plain, msg/s: {ratio('fast', 'delivered_per_s', 'ours-deflate', 'ours-plain')} (target ≥ 1.0×)")
    print(f"- ours-deflate ÷ lws-c-z, msg/s: {ratio('fast', 'delivered_per_s', 'ours-deflate', 'lws-c-z')} (target ≥ 2×)")
    if runs("base-deflate", "fast"):
        print(f"- base-deflate ÷ ours-plain, msg/s: {ratio('fast', 'delivered_per_s', 'base-deflate', 'ours-plain')}")
    d, p = runs("ours-deflate", "fast"), runs("ours-plain", "fast")
    wire = [(d[k]["frame_bytes"] / d[k]["messages"]) / (p[k]["frame_bytes"] / p[k]["messages"])
            for k in d if k in p and d[k].get("messages") and p[k].get("messages")]
    if wire:
        print(f"- wire bytes per message written, deflate ÷ plain: {statistics.median(wire):.2f}× "
              f"({min(wire):.2f}–{max(wire):.2f}×)")
    print()

if "lws" in cases:
    print(f"### N = {fast_n}, as fast as possible, our own client (liveactivity-bench: lws 4.1, zlib inflate)\n")
    print("| server | delivered msg/s, median (min–max) | server CPU % | µs CPU / delivery | client CPU % | lost |")
    print("|---|---:|---:|---:|---:|---:|")
    for s in ["ours-plain-lws", "ours-deflate-lws", "base-deflate-lws"]:
        rs = list(runs(s, "lws").values())
        if rs:
            print(f"| {s} | {spread([r['delivered_per_s'] for r in rs], num)} | {spread([r.get('server_cpu_pct') for r in rs], num)} | "
                  f"{spread([r.get('server_cpu_us_per_delivery') for r in rs], one)} | {spread([r.get('bench_cpu_pct') for r in rs], num)} | "
                  f"{sum(r['lost'] for r in rs)} |")
    print()
    print(f"- ours-deflate-lws ÷ ours-plain-lws, msg/s: {ratio('lws', 'delivered_per_s', 'ours-deflate-lws', 'ours-plain-lws')}")
    if runs("base-deflate-lws", "lws"):
        print(f"- ours-deflate-lws ÷ base-deflate-lws, msg/s: {ratio('lws', 'delivered_per_s', 'ours-deflate-lws', 'base-deflate-lws')}")
    print()

if "idle" in cases:
    print(f"### {idle_n} idle viewers, each holding its snapshot and one update: server VmRSS growth per connection\n")
    print("| clients | per connection, median (min–max) | extension answered |")
    print("|---|---:|---|")
    for s in ["idle-deflate", "idle-plain", "idle-gorilla", "idle-deflate-sent", "idle-deflate-reset-sent", "base-idle-deflate"]:
        rs = list(runs(s, "idle").values())
        if rs:
            ext = rs[0].get("extensions")
            print(f"| {s} | {spread([r['per_conn_bytes'] for r in rs], num)} B | {ext if isinstance(ext, str) else json.dumps(ext)} |")
    d, p = runs("idle-deflate", "idle"), runs("idle-plain", "idle")
    diff = [d[k]["per_conn_bytes"] - p[k]["per_conn_bytes"] for k in d if k in p]
    if diff:
        print(f"\n- deflate − plain, same round: {spread(diff, num)} B per connection (target: deflate ≤ 8 KiB = 8,192 B)")
    print()

if "rate" in cases:
    print(f"### N = {rate_n} at {rate} updates/s ({rate_m} updates)\n")
    print("| server | p50 ms | p99 ms, median (min–max) | peak RSS MB (VmHWM) | server CPU % | wsfan CPU % (backlog frames) | wire B / message | lost |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for s in present:
        rs = list(runs(s, "rate").values())
        if not rs:
            continue
        wire = [r["frame_bytes"] / r["messages"] for r in rs if r.get("messages")]
        print(f"| {s} | {spread([r['p50_ms'] for r in rs], one)} | {spread([r['p99_ms'] for r in rs], one)} | "
              f"{spread([r['peak_rss_kb'] / 1024 for r in rs], one)} | {spread([r['server_cpu_pct'] for r in rs], num)} | "
              f"{num(statistics.median(r['loadgen_cpu_pct'] for r in rs))} ({one(statistics.median(r['loadgen_backlog_frames'] for r in rs))}) | "
              f"{spread(wire, num)} | {sum(r['lost'] for r in rs)} |")
    print()

problems = []
expected_runs = {(r["server"], r["case"]) for r in rows if r.get("server")}
for server, case in sorted(expected_runs):
    for k in range(1, reps + 1):
        if not any(r.get("server") == server and r.get("case") == case and r.get("round") == k for r in rows):
            problems.append(f"{server} {case} round {k}: no result")
for r in rows:
    where = f"{r.get('server')} {r.get('case')} round {r.get('round')}"
    if r.get("missing"):
        problems.append(f"{where}: no result"); continue
    if r["case"] == "idle":
        continue
    if r["case"] == "lws":
        if not r.get("ok") or r["lost"] or r.get("dups"): problems.append(f"{where}: {r.get('failure')}, lost {r['lost']}")
        continue
    problems += losscheck.check_run(r, where, probe=False)
sys.exit(losscheck.report(rows, problems))
PY
STATUS=$?
cat "$RESULTS/deflate.md"
exit "$STATUS"

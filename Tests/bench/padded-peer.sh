#!/usr/bin/env bash
# Issue 5's throughput target as the issue states it: ours against the C libwebsockets peer "with the
# peer's messages padded to our event's size", in one interleaved run, driven by the shared Go load
# generator (wsfan) for both. The unpadded peer (42-byte messages) runs in the same rounds for reference.
#
#   bash Tests/bench/padded-peer.sh          # after the release build; REPS rounds (default 5), ~3 min
#
# Every round, in turn: our server (`--memory`, one seeded activity), the lws-c peer padded to our
# frame's size, the lws-c peer unpadded; each a fresh server pinned to CPU $SERVER_CPU with wsfan on
# $BENCH_CPU, N=$CLIENTS, as fast as possible with 32 in flight for 3 s. Results: one wsfan JSON line per
# run in $OUT (results/padded-peer.jsonl) and medians in results/padded-peer.md.
# Needs ../shared/bench's binaries (copied to $PEERS_DIR, built as its README says: golang-go,
# golang-github-gorilla-websocket-dev, libwebsockets-dev).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RESULTS=${RESULTS:-$ROOT/Tests/bench/results}
OUT=${OUT:-$RESULTS/padded-peer.jsonl}
REPS=${REPS:-5}
CLIENTS=${CLIENTS:-1000}
mkdir -p "$RESULTS"
[ -x "$BIN/liveactivity" ] || build_release || exit 1
setup_peers || exit 1

THROUGHPUT=(-n "$CLIENTS" -m 100000 -rate 0 -window 32 -duration 3s)
# wsfan NAME PID URL extra-args...
wsfan() {
	local name=$1 pid=$2 url=$3; shift 3
	timeout -k 5 120 "${PIN_GEN[@]}" "$PEERS_DIR/bin/wsfan" -name "$name" -test throughput -url "$url" \
		-server-pid "$pid" -out "$OUT" "${THROUGHPUT[@]}" "$@" >/dev/null 2>>"$RESULTS/padded-peer.log"
	tail -n 1 "$OUT" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
print("    %-14s frame=%dB delivered=%d lost=%d msg/s=%d server CPU=%.0f%% wsfan CPU=%.0f%%" % (r["server"], r["msg_bytes"],
    r["delivered"], r["lost"], r["delivered_per_s"], r["server_cpu_pct"], r["loadgen_cpu_pct"]))' >&2
}

# The peer's published text is {"seq":…,"ts":…,"pad":"xxx…"}; its frame is that text, so PAD makes it
# as long as our `updated` event frame.
peer_run() { # peer_run NAME PAD
	local name=$1 pad=$2
	start_peer || return 0
	wsfan "$name" "$PEER_PID" "ws://127.0.0.1:$PEER_PORT/" -pad "$pad" -pub-template '{"seq":{seq},"ts":{ts},"pad":"{pad}"}'
	stop_peer
	sleep 0.5
}

[ -s "$OUT" ] && mv -f "$OUT" "$OUT.prev"
: >"$OUT"
: >"$RESULTS/padded-peer.log"
log "load before the run: $(uptime)"
for round in $(seq 1 "$REPS"); do
	log "round $round"
	start_server || exit 1
	read -r ACTIVITY OUR_BYTES < <(python3 "$ROOT/Tests/bench/seed_activity.py" "$SRV_PORT" "$TOKEN")
	[ -n "${ACTIVITY:-}" ] || { echo "padded-peer: could not seed an activity" >&2; exit 1; }
	template='{"type":"update","activityId":"'"$ACTIVITY"'","durationSeconds":600,"alert":{"title":"bench","body":"{\"seq\":{seq},\"ts\":{ts}}"}}'
	wsfan liveactivity "$SRV_PID" "ws://127.0.0.1:$SRV_PORT/ws?token=$TOKEN" -pub-template "$template" -extract keys:seq,ts
	stop_server
	sleep 0.5
	# wsfan's unpadded text {"seq":S,"ts":T} is 51 bytes (its msg_bytes); ,"pad":"" adds 9.
	peer_run lws-c-padded $((OUR_BYTES - 60))
	peer_run lws-c 0
done
log "load after the run: $(uptime)"
python3 - "$OUT" >"$RESULTS/padded-peer.md" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
names = list(dict.fromkeys(r["server"] for r in rows))
med = {n: statistics.median(r["delivered_per_s"] for r in rows if r["server"] == n) for n in names}
print("| server | frame bytes | runs | delivered msg/s median (min–max) | server CPU µs / delivery (median) | lost | ours ÷ this |")
print("|---|---:|---:|---:|---:|---:|---:|")
for n in names:
    rs = [r for r in rows if r["server"] == n]
    rates = [r["delivered_per_s"] for r in rs]
    cpu = statistics.median(r["server_cpu_pct"] / 100 * 1e6 / r["delivered_per_s"] for r in rs if r["delivered_per_s"])
    ratio = med.get("liveactivity", 0) / med[n] if med[n] else 0
    print(f"| {n} | {rs[0]['msg_bytes']} | {len(rs)} | {med[n]:,.0f} ({min(rates):,.0f}–{max(rates):,.0f}) | {cpu:.1f} | "
          f"{sum(r['lost'] for r in rs)} | {ratio:.2f}× |")
PY
cat "$RESULTS/padded-peer.md"

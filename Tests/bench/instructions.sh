#!/usr/bin/env bash
# Instructions per delivery: the server's work counted rather than timed, so that two builds can be compared
# on a loaded machine (other builds, other engineers), where CPU time per delivery varies by ±40 % from run to
# run. Each build runs under Valgrind's callgrind (the instruction count "Ir" of every thread, kernel work not
# included) twice, with N clients watching and M_SMALL then M_LARGE updates published at $RATE/s by the shared
# Go load generator (wsfan); the difference of the two totals, divided by the extra deliveries, is the cost of
# one delivery with start-up, seeding and shutdown cancelled out. Rounds interleave the builds.
#
#   bash Tests/bench/instructions.sh DIR_A DIR_B ...     # folders holding a release `liveactivity`
#   N=1000 M_SMALL=50 M_LARGE=250 REPS=2 bash Tests/bench/instructions.sh .build/release /work/bin-baseline
#   bash Tests/bench/instructions.sh .build/release uws lws-c    # ours against the peers (issue 30)
#
# Besides folders, two peers of ../shared/bench are counted the same way (issue 30), each publishing every
# message it receives to every client, the messages padded to our `updated` frame's size as targets.sh's
# lws-c-padded case pads them (FRAME_BYTES, else the size the last of our runs measured, so name a folder
# first): `uws` (uws-bcast, uWebSockets on its epoll loop; built into $PEERS_DIR/bin by the peer's build.sh)
# and `lws-c` (lws-bcast, the C libwebsockets peer on lws's poll loop).
#
# Prints one line per build: instructions per delivery (median and range over REPS) and the loss check
# (every client got every update). Ticks are off (a countdown already over), so every frame is an update.
# SYSCALLS=1 also runs each server natively (not under Valgrind, same loads, same difference) with
# `perf stat` counting its write-side system calls (sendto, write, writev, sendmsg): system calls per
# delivery, since the kernel's share of a delivery (most of it) is not in the instruction counts.
# KEEP=DIR keeps each callgrind output there (LABEL-ROUND-M.out) for callgrind_annotate.
# Environment: N (1000), M_SMALL (50), M_LARGE (250), RATE (50), REPS (2), FRAME_BYTES, PEER_PORT (18003),
# SYSCALLS (0), KEEP, QUIET (30s), DRAIN (180s), plus lib.sh's PEERS_DIR and SHARED_BENCH. Needs valgrind (apt-get install valgrind),
# the peers' wsfan and lws-bcast (setup_peers), g++ and zlib1g-dev for uws, perf for SYSCALLS=1.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${N:-1000} M_SMALL=${M_SMALL:-50} M_LARGE=${M_LARGE:-250} RATE=${RATE:-50} REPS=${REPS:-2}
SYSCALLS=${SYSCALLS:-0} KEEP=${KEEP:-} FRAME_BYTES=${FRAME_BYTES:-}
# wsfan waits this long for deliveries after publishing (a server under Valgrind on a loaded machine can
# stall for seconds; wsfan's own defaults, 3 s of quiet and 30 s in all, then count updates as lost).
QUIET=${QUIET:-30s} DRAIN=${DRAIN:-180s}
[ $# -ge 1 ] || { echo "usage: instructions.sh BIN_DIR|uws|lws-c..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
setup_peers || exit 1
for target in "$@"; do
	if [ "$target" = uws ] && [ ! -x "$PEERS_DIR/bin/uws-bcast" ]; then
		bash "$PEERS_DIR/peers/uws/build.sh" "$PEERS_DIR/bin/uws-bcast" || exit 1
	fi
done
if [ "$SYSCALLS" = 1 ]; then command -v perf >/dev/null || { echo "instructions.sh: SYSCALLS=1 needs perf" >&2; exit 1; }; fi
[ -n "$KEEP" ] && mkdir -p "$KEEP"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/instructions.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
[ -n "$FRAME_BYTES" ] && echo "$FRAME_BYTES" >"$WORK/frame_bytes"
SYSCALL_EVENTS=syscalls:sys_enter_sendto,syscalls:sys_enter_write,syscalls:sys_enter_writev,syscalls:sys_enter_sendmsg

# wait_port PORT PID: until PORT accepts (up to 60 s: Valgrind starts slowly); 1 if PID died first.
wait_port() {
	for _ in $(seq 1 600); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# run_one TARGET M MODE OUT: one run of TARGET (a folder of ours, uws or lws-c) with M updates, the server
# under callgrind (MODE ir: prints its total Ir) or natively with perf stat counting its write system calls
# (MODE sys: prints "sendto write writev sendmsg"); prints "lost" on any loss.
run_one() {
	local target=$1 m=$2 mode=$3 out=$4 log port activity bytes frozen template lost url pid perf_pid=""
	local wrap=() args=()
	log=$(mktemp "$WORK/server-log.XXXXXX")
	[ "$mode" = ir ] && wrap=(valgrind --tool=callgrind --callgrind-out-file="$out")
	case $target in
	uws) "${wrap[@]}" "$PEERS_DIR/bin/uws-bcast" -p "$PEER_PORT" -i 127.0.0.1 >"$log" 2>&1 & ;;
	lws-c) "${wrap[@]}" "$PEERS_DIR/bin/lws-bcast" -p "$PEER_PORT" -i 127.0.0.1 >"$log" 2>&1 & ;;
	*) "${wrap[@]}" "$target/liveactivity" serve --memory --port 0 --public "$ROOT/Public" --controller-token "$TOKEN" \
		--rate 100000 --burst 100000 >"$log" 2>&1 & ;;
	esac
	pid=$!
	case $target in
	uws | lws-c)
		wait_port "$PEER_PORT" "$pid" || { log "$target did not start"; kill -TERM "$pid" 2>/dev/null; wait "$pid"; echo lost; return; }
		bytes=$(cat "$WORK/frame_bytes" 2>/dev/null)
		[ -n "$bytes" ] || { log "peers need FRAME_BYTES or one of our builds named before them"; kill -TERM "$pid"; wait "$pid"; echo lost; return; }
		url="ws://127.0.0.1:$PEER_PORT/"
		# wsfan's unpadded text {"seq":S,"ts":T} is 51 bytes; ,"pad":"" adds 9 (as targets.sh's lws-c-padded).
		args=(-pad $((bytes - 60)) -pub-template '{"seq":{seq},"ts":{ts},"pad":"{pad}"}')
		;;
	*)
		for _ in $(seq 1 600); do
			port=$(sed -n 's#^Listening on http://127\.0\.0\.1:\([0-9]*\)/$#\1#p' "$log" | head -1)
			[ -n "$port" ] && break
			sleep 0.1
		done
		read -r activity bytes frozen < <(TICKS=off python3 "$ROOT/Tests/bench/seed_activity.py" "$port" "$TOKEN")
		echo "$bytes" >"$WORK/frame_bytes"
		url="ws://127.0.0.1:$port/ws?token=$TOKEN"
		template='{"type":"update","activityId":"'"$activity"'","content":{"state":{"workoutTimer":{"start":"'"$frozen"'","end":"'"$frozen"'"}},"staleDate":null,"relevanceScore":0},"alert":{"title":"bench","body":"{\"seq\":{seq},\"ts\":{ts}}"}}'
		args=(-pub-template "$template")
		;;
	esac
	if [ "$mode" = sys ]; then
		perf stat -x, -o "$out" -e "$SYSCALL_EVENTS" -p "$pid" >/dev/null 2>&1 &
		perf_pid=$!
		sleep 0.5
	fi
	lost=$("$PEERS_DIR/bin/wsfan" -name ir -test rate -url "$url" -n "$N" -m "$m" -rate "$RATE" "${args[@]}" \
		-quiet-timeout "$QUIET" -drain-timeout "$DRAIN" -extract keys:seq,ts 2>/dev/null | tail -n 1 |
		python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); print(r["lost"] + r["n"] - r["connected"])')
	if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid"; fi
	kill -TERM "$pid"; wait "$pid"
	if [ "${lost:-1}" != 0 ]; then echo lost
	elif [ "$mode" = ir ]; then awk '/^(summary|totals):/ { print $2; exit }' "$out"
	else
		python3 - "$out" <<'PY'
import sys
counts = {}
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) > 2 and f[2].startswith("syscalls:sys_enter_"):
        counts[f[2].removeprefix("syscalls:sys_enter_")] = int(f[0]) if f[0].isdigit() else 0
print(" ".join(str(counts.get(k, 0)) for k in ("sendto", "write", "writev", "sendmsg")))
PY
	fi
	rm -f "$log"
}

declare -A PER SYS
for round in $(seq 1 "$REPS"); do
	for target in "$@"; do
		label=$(basename "$target")
		small=$(run_one "$target" "$M_SMALL" ir "${KEEP:-$WORK}/$label-$round-$M_SMALL.out")
		large=$(run_one "$target" "$M_LARGE" ir "${KEEP:-$WORK}/$label-$round-$M_LARGE.out")
		[ -n "$KEEP" ] || rm -f "$WORK/$label-$round-"*.out
		if [ "$small" = lost ] || [ "$large" = lost ]; then log "$target round $round: updates lost"; exit 1; fi
		per=$(( (large - small) / (N * (M_LARGE - M_SMALL)) ))
		log "round $round $target: $per instructions per delivery"
		PER[$target]="${PER[$target]:-} $per"
		if [ "$SYSCALLS" = 1 ]; then
			small=$(run_one "$target" "$M_SMALL" sys "$WORK/perf-small") large=$(run_one "$target" "$M_LARGE" sys "$WORK/perf-large")
			if [ "$small" = lost ] || [ "$large" = lost ]; then log "$target round $round (native): updates lost"; exit 1; fi
			sys=$(python3 -c 'import sys; s = [int(x) for x in sys.argv[1].split()]; l = [int(x) for x in sys.argv[2].split()]; d = int(sys.argv[3]); print(" ".join(f"{(b - a) / d:.3f}" for a, b in zip(s, l)))' \
				"$small" "$large" $((N * (M_LARGE - M_SMALL))))
			log "round $round $target: system calls per delivery (sendto write writev sendmsg): $sys"
			SYS[$target]="${SYS[$target]:-}|$sys"
		fi
	done
done
echo "instructions per delivery, N = $N, $M_SMALL → $M_LARGE updates at $RATE/s, $REPS rounds (median, min–max), frame $(cat "$WORK/frame_bytes" 2>/dev/null) B payload:"
for target in "$@"; do
	python3 -c 'import statistics, sys; v = [int(x) for x in sys.argv[2].split()]; print(f"  {sys.argv[1]}: {statistics.median(v):.0f} ({min(v)}–{max(v)})")' "$target" "${PER[$target]}"
done
if [ "$SYSCALLS" = 1 ]; then
	echo "write system calls per delivery, natively (median over rounds; sendto + write + writev + sendmsg):"
	for target in "$@"; do
		python3 -c '
import statistics, sys
rows = [[float(x) for x in r.split()] for r in sys.argv[2].split("|") if r.strip()]
names = ("sendto", "write", "writev", "sendmsg")
med = [statistics.median(c) for c in zip(*rows)]
tot = [sum(r) for r in rows]
print(f"  {sys.argv[1]}: {statistics.median(tot):.3f} ({min(tot):.3f}–{max(tot):.3f}); " + ", ".join(f"{n} {m:.3f}" for n, m in zip(names, med)))' "$target" "${SYS[$target]}"
	done
fi

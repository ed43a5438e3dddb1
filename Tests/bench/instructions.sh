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
#
# Prints one line per build: instructions per delivery (median and range over REPS) and the loss check
# (every client got every update). Ticks are off (a countdown already over), so every frame is an update.
# Environment: N (1000), M_SMALL (50), M_LARGE (250), RATE (50), REPS (2), plus lib.sh's PEERS_DIR and
# SHARED_BENCH. Needs valgrind (apt-get install valgrind) and the peers' wsfan (setup_peers).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${N:-1000} M_SMALL=${M_SMALL:-50} M_LARGE=${M_LARGE:-250} RATE=${RATE:-50} REPS=${REPS:-2}
[ $# -ge 1 ] || { echo "usage: instructions.sh BIN_DIR..." >&2; exit 2; }
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
setup_peers || exit 1

# ir_total DIR M: the server's total instruction count for one run with M updates; "lost" on any loss.
ir_total() {
	local dir=$1 m=$2 out log port activity bytes frozen template lost
	out=$(mktemp "${TMPDIR:-/tmp}/callgrind.XXXXXX") log=$(mktemp "${TMPDIR:-/tmp}/callgrind-log.XXXXXX")
	valgrind --tool=callgrind --callgrind-out-file="$out" "$dir/liveactivity" serve --memory --port 0 \
		--public "$ROOT/Public" --controller-token "$TOKEN" --rate 100000 --burst 100000 >"$log" 2>&1 &
	local pid=$!
	for _ in $(seq 1 600); do
		port=$(sed -n 's#^Listening on http://127\.0\.0\.1:\([0-9]*\)/$#\1#p' "$log" | head -1)
		[ -n "$port" ] && break
		sleep 0.1
	done
	read -r activity bytes frozen < <(TICKS=off python3 "$ROOT/Tests/bench/seed_activity.py" "$port" "$TOKEN")
	template='{"type":"update","activityId":"'"$activity"'","content":{"state":{"workoutTimer":{"start":"'"$frozen"'","end":"'"$frozen"'"}},"staleDate":null,"relevanceScore":0},"alert":{"title":"bench","body":"{\"seq\":{seq},\"ts\":{ts}}"}}'
	lost=$("$PEERS_DIR/bin/wsfan" -name ir -test rate -url "ws://127.0.0.1:$port/ws?token=$TOKEN" -n "$N" -m "$m" \
		-rate "$RATE" -pub-template "$template" -extract keys:seq,ts 2>/dev/null | tail -n 1 |
		python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); print(r["lost"] + r["n"] - r["connected"])')
	kill -TERM "$pid"; wait "$pid"
	if [ "${lost:-1}" != 0 ]; then echo lost; else awk '/^(summary|totals):/ { print $2; exit }' "$out"; fi
	rm -f "$out" "$log"
}

declare -A PER
for round in $(seq 1 "$REPS"); do
	for dir in "$@"; do
		small=$(ir_total "$dir" "$M_SMALL") large=$(ir_total "$dir" "$M_LARGE")
		if [ "$small" = lost ] || [ "$large" = lost ]; then log "$dir round $round: updates lost"; exit 1; fi
		per=$(( (large - small) / (N * (M_LARGE - M_SMALL)) ))
		log "round $round $dir: $per instructions per delivery"
		PER[$dir]="${PER[$dir]:-} $per"
	done
done
echo "instructions per delivery, N = $N, $M_SMALL → $M_LARGE updates at $RATE/s, $REPS rounds (median, min–max):"
for dir in "$@"; do
	python3 -c 'import statistics, sys; v = [int(x) for x in sys.argv[2].split()]; print(f"  {sys.argv[1]}: {statistics.median(v):.0f} ({min(v)}–{max(v)})")' "$dir" "${PER[$dir]}"
done

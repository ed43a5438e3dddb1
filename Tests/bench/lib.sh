# Shared by the benchmark scripts: build the release binaries, start and stop a pinned server, and the
# C peer of ../shared/bench with its load generator (wsfan).
# Source it; it defines build_release, start_server, start_server_in, stop_server, setup_peers, start_peer,
# stop_peer, bench, the helpers they share (stop_pid, port_busy, start_listener) and those of the wsfan-driven
# scripts (peak_kib, wsfan_run, run_rounds), and sets ROOT, BIN, PIN_SRV, PIN_GEN, SRV_STORE, PEERS_DIR.
# Every server is started by this script and stopped by the PID it was started with (stop_pid).
# The Python those scripts' summaries share is beside it: tables.py (their JSON lines, median (min–max)
# cells) and losscheck.py (the loss check), imported with Tests/bench on PYTHONPATH.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
	export PATH="/opt/swift/usr/bin:$PATH"
fi
# SCRATCH: SwiftPM build folder (default: the package's .build); BIN: where the release binaries are.
SCRATCH=${SCRATCH:-$ROOT/.build}
BIN=${BIN:-$SCRATCH/release}
SERVER_CPU=${SERVER_CPU:-0}
BENCH_CPU=${BENCH_CPU:-1}
TOKEN=${TOKEN:-bench-controller-token}

log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

# Release builds of the server and the benchmark client (skipped with SKIP_BUILD=1).
build_release() {
	[ "${SKIP_BUILD:-0}" = 1 ] && return 0
	# The server is built as Deploy/Containerfile ships it: the Swift runtime linked statically.
	log "swift build -c release (liveactivity with --static-swift-stdlib, liveactivity-bench)"
	(cd "$ROOT" && swift build -c release --static-swift-stdlib --scratch-path "$SCRATCH" --product liveactivity >&2 \
		&& swift build -c release --scratch-path "$SCRATCH" --product liveactivity-bench >&2)
}

PIN_SRV=() PIN_GEN=()
if [ "${PIN:-1}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	PIN_SRV=(taskset -c "$SERVER_CPU")
	PIN_GEN=(taskset -c "$BENCH_CPU")
fi

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

SRV_PID="" SRV_PORT="" SRV_LOG=""
# The store arguments start_server passes (an array; a script may set it after sourcing this file, e.g.
# SRV_STORE=(--data-dir DIR --durability full) for the default durable SQLite store).
SRV_STORE=(--memory)
# start_server [extra serve args...]: a fresh server (in memory unless SRV_STORE says otherwise) on a
# kernel-picked port, pinned to $SERVER_CPU, with the publisher's rate limit lifted; sets SRV_PID and SRV_PORT.
start_server() {
	SRV_LOG=$(mktemp "${TMPDIR:-/tmp}/liveactivity-bench-server.XXXXXX")
	"${PIN_SRV[@]}" "$BIN/liveactivity" serve "${SRV_STORE[@]}" --port 0 --public "$ROOT/Public" \
		--controller-token "$TOKEN" --rate 100000 --burst 100000 "$@" >"$SRV_LOG" 2>&1 &
	SRV_PID=$!
	local i
	for i in $(seq 1 100); do
		SRV_PORT=$(sed -n 's#^Listening on http://127\.0\.0\.1:\([0-9]*\)/$#\1#p' "$SRV_LOG" | head -1)
		[ -n "$SRV_PORT" ] && return 0
		kill -0 "$SRV_PID" 2>/dev/null || { cat "$SRV_LOG" >&2; SRV_PID=""; return 1; }
		sleep 0.05
	done
	log "server did not print its port within 5 s"; stop_server; return 1
}

# start_server_in DIR [extra serve args...]: start_server with DIR/liveactivity (an older build, say) instead of
# $BIN's; BIN unchanged.
start_server_in() {
	local saved=$BIN status
	BIN=$1; shift
	start_server "$@"; status=$?
	BIN=$saved
	return $status
}

# stop_pid VAR: TERM, then KILL after 5 s, the process whose PID the variable VAR holds (one this script
# started), reaped; VAR emptied. Nothing when VAR is empty.
stop_pid() {
	local pid=${!1}
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	local i
	for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	printf -v "$1" '%s' ""
}

# stop_server: stop_pid SRV_PID (the PID start_server recorded), and its log removed.
stop_server() {
	[ -n "$SRV_PID" ] || return 0
	stop_pid SRV_PID
	rm -f "$SRV_LOG"
}

# The peers harness (../shared/bench, read-only, so run from a copy in $PEERS_DIR): its Go load generator
# wsfan and the C libwebsockets peer lws-bcast. SHARED_BENCH defaults to the shared/ folder beside this
# checkout, or beside the main checkout when this is a git worktree.
SHARED_BENCH=${SHARED_BENCH:-$ROOT/../shared/bench}
if [ ! -d "$SHARED_BENCH" ]; then
	_common=$(git -C "$ROOT" rev-parse --path-format=absolute --git-common-dir 2>/dev/null) \
		&& [ -d "$(dirname "$_common")/../shared/bench" ] && SHARED_BENCH="$(dirname "$_common")/../shared/bench"
fi
PEERS_DIR=${PEERS_DIR:-/tmp/bench}

# setup_peers: copies $SHARED_BENCH to $PEERS_DIR (once) and builds bin/wsfan and bin/lws-bcast there if
# missing (needs golang-go, golang-github-gorilla-websocket-dev, libwebsockets-dev; see its README.md).
setup_peers() {
	if [ ! -f "$PEERS_DIR/run-peers.sh" ]; then
		log "copying $SHARED_BENCH to $PEERS_DIR"
		cp -r "$SHARED_BENCH" "$PEERS_DIR" && chmod -R u+w "$PEERS_DIR" || return 1
	fi
	(
		cd "$PEERS_DIR" && mkdir -p bin || exit 1
		export GO111MODULE=off GOPATH=${GOPATH:-/usr/share/gocode} GOFLAGS=
		[ -x bin/wsfan ] || go build -o bin/wsfan ./loadgen || exit 1
		[ -x bin/lws-bcast ] || gcc -O2 -Wall -o bin/lws-bcast peers/lws-c/server.c $(pkg-config --cflags --libs libwebsockets) || exit 1
	) || { echo "cannot build the peers' wsfan / lws-bcast (see $SHARED_BENCH/README.md)" >&2; return 1; }
}

# port_busy PORT: whether something accepts on 127.0.0.1:PORT.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start_listener VAR PORT OUTPUT COMMAND...: COMMAND pinned to $SERVER_CPU, its output appended to OUTPUT, once
# PORT is free (up to 10 s: the previous one may still be closing its connections); sets VAR to its PID once
# PORT accepts (up to 5 s). Returns 1, logged, with VAR empty (and the command stopped) if the port stays in
# use, the command exits or it does not listen.
start_listener() {
	local var=$1 port=$2 output=$3 i; shift 3
	for i in $(seq 1 100); do port_busy "$port" || break; sleep 0.1; done
	if port_busy "$port"; then log "port $port is in use by something this script did not start"; return 1; fi
	"${PIN_SRV[@]}" "$@" >>"$output" 2>&1 &
	printf -v "$var" '%s' "$!"
	for i in $(seq 1 100); do
		port_busy "$port" && return 0
		kill -0 "${!var}" 2>/dev/null || { printf -v "$var" '%s' ""; log "$(basename "$1") exited at start-up"; return 1; }
		sleep 0.05
	done
	log "$(basename "$1") did not listen within 5 s"; stop_pid "$var"; return 1
}

PEER_PID="" PEER_PORT=${PEER_PORT:-18003}
# start_peer [lws-bcast flags...]: a fresh lws-bcast on 127.0.0.1:$PEER_PORT (start_listener: sets PEER_PID
# once the port accepts).
start_peer() {
	start_listener PEER_PID "$PEER_PORT" /dev/null "$PEERS_DIR/bin/lws-bcast" -p "$PEER_PORT" -i 127.0.0.1 "$@"
}

# stop_peer: stop_pid PEER_PID (the PID start_peer recorded).
stop_peer() { stop_pid PEER_PID; }
trap 'stop_server; stop_peer' EXIT
trap 'stop_server; stop_peer; exit 130' INT TERM

# bench ARGS...: the benchmark client against the running server, pinned to $BENCH_CPU, capped at 180 s.
bench() {
	timeout -k 5 180 "${PIN_GEN[@]}" "$BIN/liveactivity-bench" --server "ws://127.0.0.1:$SRV_PORT/ws" \
		--token "$TOKEN" --server-pid "$SRV_PID" "$@"
}

# peak_kib PID: the process's VmHWM in KiB (its peak resident set since start-up), or -1.
peak_kib() { awk '/^VmHWM:/ { print $2; found = 1 } END { if (!found) print -1 }' "/proc/$1/status" 2>/dev/null || echo -1; }

# wsfan_run SERVER CASE ROUND PID URL wsfan-args...: one run of the peers' load generator (wsfan, pinned to
# $BENCH_CPU, capped at 240 s) against the server PID at URL, with the load of CASE: fast (FAST_N clients,
# updates as fast as the server drains with FAST_WINDOW in flight, FAST_SECONDS s), fixed and fixed-z (FIXED_N
# at FIXED_RATE/s, FIXED_M updates), rate (RATE_N at RATE/s, RATE_M updates), idle (IDLE_N clients, no
# updates, held 2 s); -reset-hwm=false, so the server's VmHWM stays its peak since start-up. Prints wsfan's
# JSON line (or nothing); its log is appended to $LOGF.
wsfan_run() {
	local server=$1 case=$2 round=$3 pid=$4 url=$5; shift 5
	local load=()
	case $case in
	fast) load=(-n "$FAST_N" -m 100000 -rate 0 -window "$FAST_WINDOW" -duration "${FAST_SECONDS}s") ;;
	fixed | fixed-z) load=(-n "$FIXED_N" -m "$FIXED_M" -rate "$FIXED_RATE") ;;
	rate) load=(-n "$RATE_N" -m "$RATE_M" -rate "$RATE") ;;
	idle) load=(-n "$IDLE_N" -m 0 -idle-hold 2s) ;;
	esac
	timeout -k 5 240 "${PIN_GEN[@]}" "$PEERS_DIR/bin/wsfan" -name "$server" -test "$case" -url "$url" \
		-server-pid "$pid" -reset-hwm=false -tag "round $round" "${load[@]}" "$@" 2>>"$LOGF" | tail -n 1
}

# run_rounds STEP: the interleaved rounds: for each round 1..$REPS and each case of $CASES, logs
# "round R/REPS, CASE" and runs STEP CASE ROUND; logs the load average before and after, and sets
# LOAD_BEFORE, LOAD_AFTER (the load averages) and ELAPSED (seconds).
run_rounds() {
	local step=$1 t0 round case
	t0=$(date +%s)
	LOAD_BEFORE=$(uptime | sed 's/.*load average: //')
	log "load before the run: $(uptime)"
	for round in $(seq 1 "$REPS"); do
		for case in $CASES; do
			log "round $round/$REPS, $case"
			"$step" "$case" "$round"
		done
	done
	LOAD_AFTER=$(uptime | sed 's/.*load average: //')
	ELAPSED=$(( $(date +%s) - t0 ))
	log "load after the run: $(uptime); $ELAPSED s"
}

# Shared by run.sh and ci-smoke.sh: build the release binaries, start and stop a pinned server.
# Source it; it defines build_release, start_server, stop_server and sets ROOT, BIN, PIN_SRV, PIN_GEN.
# Every server is started by this script and stopped by the PID it was started with.

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
	log "swift build -c release (liveactivity, liveactivity-bench)"
	(cd "$ROOT" && swift build -c release --scratch-path "$SCRATCH" --product liveactivity >&2 \
		&& swift build -c release --scratch-path "$SCRATCH" --product liveactivity-bench >&2)
}

PIN_SRV=() PIN_GEN=()
if [ "${PIN:-1}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	PIN_SRV=(taskset -c "$SERVER_CPU")
	PIN_GEN=(taskset -c "$BENCH_CPU")
fi

ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

SRV_PID="" SRV_PORT="" SRV_LOG=""
# start_server [extra serve args...]: a fresh in-memory server on a kernel-picked port, pinned to
# $SERVER_CPU, with the publisher's rate limit lifted; sets SRV_PID and SRV_PORT.
start_server() {
	SRV_LOG=$(mktemp "${TMPDIR:-/tmp}/liveactivity-bench-server.XXXXXX")
	"${PIN_SRV[@]}" "$BIN/liveactivity" serve --memory --port 0 --public "$ROOT/Public" \
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

# stop_server: TERM, then KILL after 5 s, by the PID start_server recorded.
stop_server() {
	[ -n "$SRV_PID" ] || return 0
	kill -TERM "$SRV_PID" 2>/dev/null
	local i
	for i in $(seq 1 50); do kill -0 "$SRV_PID" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$SRV_PID" 2>/dev/null && kill -KILL "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	SRV_PID=""
	rm -f "$SRV_LOG"
}
trap 'stop_server' EXIT
trap 'stop_server; exit 130' INT TERM

# bench ARGS...: the benchmark client against the running server, pinned to $BENCH_CPU, capped at 180 s.
bench() {
	timeout -k 5 180 "${PIN_GEN[@]}" "$BIN/liveactivity-bench" --server "ws://127.0.0.1:$SRV_PORT/ws" \
		--token "$TOKEN" --server-pid "$SRV_PID" "$@"
}

# Shared by the benchmark scripts: build the release binaries, start and stop a pinned server, and the
# C peer of ../shared/bench with its load generator (wsfan).
# Source it; it defines build_release, start_server, stop_server, setup_peers, start_peer, stop_peer and
# sets ROOT, BIN, PIN_SRV, PIN_GEN, SRV_STORE, PEERS_DIR.
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

PEER_PID="" PEER_PORT=${PEER_PORT:-18003}
# start_peer: a fresh lws-bcast on 127.0.0.1:$PEER_PORT pinned to $SERVER_CPU; sets PEER_PID once the port
# accepts (up to 5 s).
start_peer() {
	if (exec 3<>"/dev/tcp/127.0.0.1/$PEER_PORT") 2>/dev/null; then
		log "port $PEER_PORT is in use by something this script did not start (set PEER_PORT)"; return 1
	fi
	"${PIN_SRV[@]}" "$PEERS_DIR/bin/lws-bcast" -p "$PEER_PORT" -i 127.0.0.1 >/dev/null 2>&1 &
	PEER_PID=$!
	local i
	for i in $(seq 1 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$PEER_PORT") 2>/dev/null && return 0
		kill -0 "$PEER_PID" 2>/dev/null || { PEER_PID=""; log "lws-bcast exited at start-up"; return 1; }
		sleep 0.05
	done
	log "lws-bcast did not listen within 5 s"; stop_peer; return 1
}

# stop_peer: TERM, then KILL after 5 s, by the PID start_peer recorded.
stop_peer() {
	[ -n "$PEER_PID" ] || return 0
	kill -TERM "$PEER_PID" 2>/dev/null
	local i
	for i in $(seq 1 50); do kill -0 "$PEER_PID" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$PEER_PID" 2>/dev/null && kill -KILL "$PEER_PID" 2>/dev/null
	wait "$PEER_PID" 2>/dev/null
	PEER_PID=""
}
trap 'stop_server; stop_peer' EXIT
trap 'stop_server; stop_peer; exit 130' INT TERM

# bench ARGS...: the benchmark client against the running server, pinned to $BENCH_CPU, capped at 180 s.
bench() {
	timeout -k 5 180 "${PIN_GEN[@]}" "$BIN/liveactivity-bench" --server "ws://127.0.0.1:$SRV_PORT/ws" \
		--token "$TOKEN" --server-pid "$SRV_PID" "$@"
}

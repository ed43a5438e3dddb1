#!/usr/bin/env bash
# Builds the APNs port's HTTP/2 request-parser fuzzer (Fuzz/HTTP2SessionFuzzer.swift) with libFuzzer and runs it
# for a bounded time (FUZZ_ASAN=1 adds AddressSanitizer).
#
#   bash Fuzz/run-http2.sh SECONDS [extra libFuzzer flags…]
#
# Builds .build/fuzz/HTTP2SessionFuzzer from Sources/LiveActivityCore/**/*.swift (the HTTP values included) and
# HTTP2/HTTP2Session.swift + HTTP2RequestHead.swift of LiveActivityServer, and the harness, as one module linked
# with libnghttp2; runs it on a scratch corpus seeded from Fuzz/corpus-http2/ (real client byte streams made by
# the `h2` library). Exits 0 when the time runs out without a finding, nonzero otherwise; reproducers go to
# .build/fuzz/artifacts-http2/ (replay one with `.build/fuzz/HTTP2SessionFuzzer FILE`).
set -euo pipefail

SECONDS_TO_RUN="${1:?usage: Fuzz/run-http2.sh SECONDS [libFuzzer flags…]}"
shift
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if ! command -v swiftc >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swiftc ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

OUT=.build/fuzz
BIN="$OUT/HTTP2SessionFuzzer"
mkdir -p "$OUT/corpus-http2" "$OUT/artifacts-http2"

mapfile -t SOURCES < <(find Sources/LiveActivityCore -name '*.swift' | sort)
SERVER=Sources/LiveActivityServer
# The HTTP values (HTTPRequest, HTTPResponse, HTTPStatus, Router…) are LiveActivityCore's (Sources/LiveActivityCore/HTTP/),
# so the find above has them; of the server only the HTTP/2 parser itself.
SOURCES+=("$SERVER/HTTP2/HTTP2Session.swift" "$SERVER/HTTP2/HTTP2RequestHead.swift")
echo "fuzz: building $BIN from ${#SOURCES[@]} files + Fuzz/HTTP2SessionFuzzer.swift"
start=$(date +%s)
SANITIZE=fuzzer
[ "${FUZZ_ASAN:-0}" = 1 ] && SANITIZE=fuzzer,address
# The server files import LiveActivityCore, which is this module here: swiftc warns and ignores the import.
swiftc -sanitize="$SANITIZE" -parse-as-library -O -g \
    -swift-version 6 -enable-upcoming-feature ExistentialAny \
    -module-name LiveActivityCore -package-name LiveActivityServer -I Sources/CNghttp2 -lnghttp2 \
    "${SOURCES[@]}" Fuzz/HTTP2SessionFuzzer.swift \
    -o "$BIN" 2>&1 | grep -v "Cannot export local symbol '__asan\|is part of module 'LiveActivityCore'; ignoring import\|^import LiveActivityCore\|^ *[|^]" || true
[ -x "$BIN" ] && [ "$BIN" -nt Fuzz/HTTP2SessionFuzzer.swift ] || { echo "fuzz: build failed" >&2; exit 2; }
echo "fuzz: built in $(( $(date +%s) - start ))s"

export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}"

echo "fuzz: running for ${SECONDS_TO_RUN}s"
set +e
"$BIN" -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    -artifact_prefix="$OUT/artifacts-http2/" -print_final_stats=1 "$@" \
    "$OUT/corpus-http2" Fuzz/corpus-http2
status=$?
set -e
if [ "$status" -ne 0 ]; then
    echo "fuzz: FAILED (exit $status); reproducers:" >&2
    ls -1t "$OUT/artifacts-http2/" >&2 || true
    exit "$status"
fi
echo "fuzz: no crash in ${SECONDS_TO_RUN}s"

#!/usr/bin/env bash
# Builds the ClientMessage/lifecycle fuzzer with libFuzzer (FUZZ_ASAN=1 adds AddressSanitizer) and runs it for a bounded time.
#
#   bash Fuzz/run.sh SECONDS [extra libFuzzer flags…]      e.g. bash Fuzz/run.sh 120 -jobs=2 -workers=2
#
# Builds .build/fuzz/ClientMessageFuzzer from Sources/LiveActivityCore/**/*.swift + Fuzz/ClientMessageFuzzer.swift
# (one module, so the harness reaches internal API), then runs it on a scratch copy of Fuzz/corpus/ (the
# checked-in seeds stay as they are; new inputs go to .build/fuzz/corpus). Exits 0 when the time runs out
# without a finding; nonzero on a crash, a broken invariant (fatalError), a sanitizer report, a leak-free
# timeout or OOM. Reproducers are written to .build/fuzz/artifacts/crash-<sha1> (replay one with
# `.build/fuzz/ClientMessageFuzzer FILE`). Set FUZZ_STRICT_ROLLBACK=1 to also check that a refused
# ActivityCenter.apply changes nothing. See /work/shared/research/platform-notes.md §3.
set -euo pipefail

SECONDS_TO_RUN="${1:?usage: Fuzz/run.sh SECONDS [libFuzzer flags…]}"
shift
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if ! command -v swiftc >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swiftc ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

OUT=.build/fuzz
BIN="$OUT/ClientMessageFuzzer"
mkdir -p "$OUT/corpus" "$OUT/artifacts"

mapfile -t SOURCES < <(find Sources/LiveActivityCore -name '*.swift' | sort)
echo "fuzz: building $BIN from ${#SOURCES[@]} LiveActivityCore files + Fuzz/ClientMessageFuzzer.swift"
start=$(date +%s)
# AddressSanitizer costs ~10x here (Foundation's JSON and date code are malloc-heavy) and LiveActivityCore has
# no unsafe code, so it is opt-in: FUZZ_ASAN=1.
SANITIZE=fuzzer
[ "${FUZZ_ASAN:-0}" = 1 ] && SANITIZE=fuzzer,address
swiftc -sanitize="$SANITIZE" -parse-as-library -O -g \
    -swift-version 6 -enable-upcoming-feature ExistentialAny \
    -module-name LiveActivityCore -package-name LiveActivityServer \
    "${SOURCES[@]}" Tests/KindFixtures/RepositoryKinds.swift Fuzz/ClientMessageFuzzer.swift \
    -o "$BIN" 2>&1 | grep -v "Cannot export local symbol '__asan" || true
[ -x "$BIN" ] && [ "$BIN" -nt Fuzz/ClientMessageFuzzer.swift ] || { echo "fuzz: build failed" >&2; exit 2; }
echo "fuzz: built in $(( $(date +%s) - start ))s"

# Swift's own backtracer would take the crash (SIGILL, no reproducer written); leave it to libFuzzer.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}"

echo "fuzz: running for ${SECONDS_TO_RUN}s"
set +e
"$BIN" -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
    -artifact_prefix="$OUT/artifacts/" -print_final_stats=1 -dict=Fuzz/json.dict "$@" \
    "$OUT/corpus" Fuzz/corpus
status=$?
set -e
if [ "$status" -ne 0 ]; then
    echo "fuzz: FAILED (exit $status); reproducers:" >&2
    ls -1t "$OUT/artifacts/" >&2 || true
    exit "$status"
fi
echo "fuzz: no crash in ${SECONDS_TO_RUN}s"

#!/usr/bin/env bash
# Builds the ActivityAttributes declaration-reader fuzzer (Fuzz/DeclarationFuzzer.swift, issue 17) with libFuzzer
# (FUZZ_ASAN=1 adds AddressSanitizer) and runs it for a bounded time.
#
#   bash Fuzz/run-declarations.sh SECONDS [extra libFuzzer flags…]
#
# Builds .build/fuzz/DeclarationFuzzer from Sources/LiveActivityCore/**/*.swift + Fuzz/DeclarationFuzzer.swift
# (one module, so the harness reaches internal API), then runs it on a scratch corpus seeded from
# Fuzz/corpus-declarations/ (Swift files as apps write them; a NUL byte and a JSON value may follow the source),
# with Fuzz/swift.dict. Exits 0 when the time runs out without a finding, nonzero otherwise; reproducers go to
# .build/fuzz/artifacts-declarations/ (replay one with `.build/fuzz/DeclarationFuzzer FILE`).
set -euo pipefail

SECONDS_TO_RUN="${1:?usage: Fuzz/run-declarations.sh SECONDS [libFuzzer flags…]}"
shift
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if ! command -v swiftc >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swiftc ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

OUT=.build/fuzz
BIN="$OUT/DeclarationFuzzer"
mkdir -p "$OUT/corpus-declarations" "$OUT/artifacts-declarations"

mapfile -t SOURCES < <(find Sources/LiveActivityCore -name '*.swift' | sort)
echo "fuzz: building $BIN from ${#SOURCES[@]} LiveActivityCore files + Fuzz/DeclarationFuzzer.swift"
start=$(date +%s)
# AddressSanitizer costs ~10x here (Foundation's JSON and date code are malloc-heavy) and LiveActivityCore has
# no unsafe code, so it is opt-in: FUZZ_ASAN=1.
SANITIZE=fuzzer
[ "${FUZZ_ASAN:-0}" = 1 ] && SANITIZE=fuzzer,address
# A failed build must not leave an older binary to be run.
rm -f "$BIN"
swiftc -sanitize="$SANITIZE" -parse-as-library -O -g \
    -swift-version 6 -enable-upcoming-feature ExistentialAny \
    -module-name LiveActivityCore -package-name LiveActivityServer \
    "${SOURCES[@]}" Fuzz/DeclarationFuzzer.swift \
    -o "$BIN" 2>&1 | grep -v "Cannot export local symbol '__asan" || true
[ -x "$BIN" ] && [ "$BIN" -nt Fuzz/DeclarationFuzzer.swift ] || { echo "fuzz: build failed" >&2; exit 2; }
echo "fuzz: built in $(( $(date +%s) - start ))s"

# Swift's own backtracer would take the crash (SIGILL, no reproducer written); leave it to libFuzzer.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}"

echo "fuzz: running for ${SECONDS_TO_RUN}s"
set +e
"$BIN" -max_total_time="$SECONDS_TO_RUN" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
    -artifact_prefix="$OUT/artifacts-declarations/" -print_final_stats=1 -dict=Fuzz/swift.dict "$@" \
    "$OUT/corpus-declarations" Fuzz/corpus-declarations
status=$?
set -e
if [ "$status" -ne 0 ]; then
    echo "fuzz: FAILED (exit $status); reproducers:" >&2
    ls -1t "$OUT/artifacts-declarations/" >&2 || true
    exit "$status"
fi
echo "fuzz: no crash in ${SECONDS_TO_RUN}s"

#!/usr/bin/env bash
# Build and run every test suite: Swift unit tests, then the Python integration tests against the
# real `liveactivity` binary. Exits non-zero as soon as one step fails.
# Artifacts (JUnit XML, server logs, screenshots) go to Tests/artifacts/.
# Prerequisite: bash Deploy/setup-debian.sh (system packages + .venv).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

ARTIFACTS="$ROOT/Tests/artifacts"
mkdir -p "$ARTIFACTS"
export LIVEACTIVITY_ARTIFACTS="$ARTIFACTS"

step() { printf '\n==> %s\n' "$*"; }

[ -x .venv/bin/python ] || { echo "run-all: .venv missing; run: bash Deploy/setup-debian.sh" >&2; exit 1; }

step "swift build (debug)"
swift build

step "swift test"
swift test

step "pytest Tests/integration"
.venv/bin/python -m pytest Tests/integration -v \
    --junitxml="$ARTIFACTS/integration-junit.xml" \
    -o cache_dir="$ARTIFACTS/.pytest_cache"

step "benchmark smoke (release build, 200 clients x 100 updates: zero loss, encode once)"
bash Tests/bench/ci-smoke.sh

step "fuzz the message decoder and the lifecycle (libFuzzer, 60 s on the checked-in corpus)"
FUZZ_STRICT_ROLLBACK=1 bash Fuzz/run.sh 60

step "fuzz the APNs port's HTTP/2 request parser (libFuzzer + libnghttp2, 20 s on the checked-in corpus)"
bash Fuzz/run-http2.sh 20

step "integration tests under AddressSanitizer and ThreadSanitizer (fails on any sanitizer report)"
# Timing-sensitive tests may be slow under the sanitizers; what this step judges is the sanitizers' reports.
SANITIZER_REPORTS_ONLY=1 bash Tests/sanitizers.sh

step "all tests passed"

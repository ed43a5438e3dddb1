#!/usr/bin/env bash
# Builds `liveactivity` with AddressSanitizer and with ThreadSanitizer (each in its own scratch path, so the
# main debug build is untouched) and runs the Python integration tests once against each binary.
# Fails if a build fails, a test fails, or any sanitizer report appears: each process (server or script
# client) writes its reports to reports/<sanitizer>.PID (log_path); server stderr (conftest saves it under
# $LIVEACTIVITY_ARTIFACTS/server-logs/) and pytest's own output are scanned too.
#
#   bash Tests/sanitizers.sh                      # address, then thread, all of Tests/integration
#   bash Tests/sanitizers.sh address              # one sanitizer
#   bash Tests/sanitizers.sh thread -- Tests/integration/test_hostile.py -k flood   # pytest arguments
#
# Environment: SANITIZER_REPORTS_ONLY=1 fails only on sanitizer reports, not on test failures (timing
# tests may be slow under TSan). Artifacts: Tests/artifacts/sanitizer-{address,thread}/ (server logs,
# JUnit XML, pytest.log). Prerequisite: bash Deploy/setup-debian.sh (.venv). Timings are printed per step.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi
[ -x .venv/bin/python ] || { echo "sanitizers: .venv missing; run: bash Deploy/setup-debian.sh" >&2; exit 1; }

SANITIZERS=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do SANITIZERS+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
PYTEST_ARGS=("$@")
[ ${#PYTEST_ARGS[@]} -eq 0 ] && PYTEST_ARGS=(Tests/integration)
[ ${#SANITIZERS[@]} -eq 0 ] && SANITIZERS=(address thread)

# What counts as a report (ASan, LSan, TSan, UBSan, Swift's exclusivity checker).
REPORT_RE='ERROR: (AddressSanitizer|LeakSanitizer)|WARNING: ThreadSanitizer|SUMMARY: (Address|Leak|Thread|UndefinedBehavior)Sanitizer|runtime error: |Simultaneous accesses to'

failed=0
summary=()
for san in "${SANITIZERS[@]}"; do
    case "$san" in
        address) scratch=.build/asan ;;
        thread) scratch=.build/tsan ;;
        *) echo "sanitizers: unknown sanitizer '$san' (address or thread)" >&2; exit 2 ;;
    esac
    printf '\n==> swift build --sanitize=%s --scratch-path %s\n' "$san" "$scratch"
    t0=$(date +%s)
    swift build --sanitize="$san" --scratch-path "$scratch" --product liveactivity 2>&1 \
        | grep -v "Cannot export local symbol '__asan"
    build_status=${PIPESTATUS[0]}
    bin="$(swift build --sanitize="$san" --scratch-path "$scratch" --show-bin-path)/liveactivity"
    if [ "$build_status" -ne 0 ] || [ ! -x "$bin" ]; then
        echo "sanitizers: build with --sanitize=$san failed" >&2
        failed=1; summary+=("$san: BUILD FAILED"); continue
    fi
    build_s=$(( $(date +%s) - t0 ))

    artifacts="$ROOT/Tests/artifacts/sanitizer-$san"
    rm -rf "$artifacts"
    mkdir -p "$artifacts/reports"
    # Every process's reports (servers, and the script client the tests run as a subprocess, whose stderr
    # only shows up in a truncated assertion message) go to their own file: reports/$san.PID.
    log_path="log_path=$artifacts/reports/$san"
    printf '\n==> pytest against %s (%s)\n' "$bin" "$san"
    t0=$(date +%s)
    # halt_on_error=0 for TSan: report every race, keep serving (the report still fails this script).
    # LeakSanitizer stays on for the server (a leak report at exit fails the test's clean-exit check).
    LIVEACTIVITY_BIN="$bin" LIVEACTIVITY_ARTIFACTS="$artifacts" LIVEACTIVITY_SANITIZER="$san" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}:$log_path" \
    LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$ROOT/Tests/lsan.supp:print_suppressions=0}:$log_path" \
    TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=0:second_deadlock_stack=1}:$log_path" \
    SWIFT_BACKTRACE=enable=no \
        .venv/bin/python -m pytest "${PYTEST_ARGS[@]}" -q -rfE -p no:cacheprovider \
            --junitxml="$artifacts/junit.xml" 2>&1 | tee "$artifacts/pytest.log"
    pytest_status=${PIPESTATUS[0]}
    test_s=$(( $(date +%s) - t0 ))

    reports=$(grep -lE "$REPORT_RE" "$artifacts"/server-logs/*.log "$artifacts"/reports/* "$artifacts/pytest.log" 2>/dev/null || true)
    result="ok"
    if [ -n "$reports" ]; then
        echo "sanitizers: $san reports in:" >&2
        for f in $reports; do
            echo "  $f" >&2
            grep -m 3 -E "$REPORT_RE" "$f" | sed 's/^/    /' >&2
        done
        result="SANITIZER REPORTS ($(echo "$reports" | wc -l) files)"
        failed=1
    fi
    if [ "$pytest_status" -ne 0 ]; then
        if [ "${SANITIZER_REPORTS_ONLY:-0}" = 1 ]; then
            result="$result; tests failed (ignored: SANITIZER_REPORTS_ONLY=1)"
        else
            result="$result; TESTS FAILED (pytest exit $pytest_status)"
            failed=1
        fi
    fi
    summary+=("$san: build ${build_s}s, tests ${test_s}s: $result")
done

printf '\n==> sanitizers summary\n'
printf '  %s\n' "${summary[@]}"
exit "$failed"

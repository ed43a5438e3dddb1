#!/usr/bin/env bash
# CI smoke benchmark: 200 clients, 100 updates at 50/s (about 2 s), against a fresh release server.
# Exits 0 only if every update reached every client (zero loss) and each update was encoded once:
# the server's broadcast encodes grew by the updates sent plus the ticks, and its deliveries by
# encodes x (clients + the controller). Then, where redis-server is installed, the two-instance
# Redis-hop run (cluster-hop.sh's redis-2x mode, 100 clients on instance B, the controller on A) must
# also lose nothing.
#   bash Tests/bench/ci-smoke.sh            # builds the release binaries first
#   SKIP_BUILD=1 BIN=.build/release bash Tests/bench/ci-smoke.sh
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

N=${N:-200}
M=${M:-100}
build_release || { echo "ci-smoke: release build failed" >&2; exit 1; }
start_server || { echo "ci-smoke: server did not start" >&2; exit 1; }
OUT=$(bench --clients "$N" --messages "$M" --rate 50 --label ci-smoke)
STATUS=$?
stop_server
echo "$OUT"
LINE=$(echo "$OUT" | head -1)
python3 - "$LINE" "$N" "$M" "$STATUS" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); n, m, status = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
problems = []
if status != 0: problems.append(f"liveactivity-bench exited {status}")
if r["connected"] != n: problems.append(f"{r['connected']} of {n} clients connected")
if r["m_sent"] != m: problems.append(f"{r['m_sent']} of {m} updates sent")
if r["lost"] != 0 or r["delivered"] != n * m: problems.append(f"lost {r['lost']} of {r['expected']} deliveries")
if r["dups"]: problems.append(f"{r['dups']} duplicate deliveries")
enc, dlv = r.get("encodes_delta"), r.get("deliveries_delta")
if enc is None or dlv is None:
    problems.append("could not read /metrics")
else:
    if not (m <= enc <= m + 10): problems.append(f"encodes grew by {enc}, expected {m} updates (+ a few ticks)")
    if dlv != enc * (n + 1): problems.append(f"deliveries grew by {dlv}, expected encodes x {n + 1} = {enc * (n + 1)}")
if problems:
    print("ci-smoke: FAILED: " + "; ".join(problems)); sys.exit(1)
print(f"ci-smoke: ok: {n} clients x {m} updates, 0 lost, p99 {r['p99_ms']:.2f} ms, encodes {enc}, deliveries {dlv}")
PY
[ $? = 0 ] || exit 1
command -v redis-server >/dev/null || { echo "ci-smoke: no redis-server; the Redis-hop run is skipped"; exit 0; }
HOP=$(mktemp -d "${TMPDIR:-/tmp}/liveactivity-hop-smoke.XXXXXX")
ROUNDS=1 CLIENTS=100 MESSAGES=20 MODES=redis-2x RESULTS=$HOP bash "$ROOT/Tests/bench/cluster-hop.sh" >/dev/null 2>&1
python3 - "$HOP/cluster-hop.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()] if __import__("os").path.exists(sys.argv[1]) else []
bad = [r for r in rows if not r.get("ok") or r.get("lost") or r.get("dups")]
if len(rows) != 2 or bad:
    print(f"ci-smoke: FAILED: the two-instance Redis-hop run gave {len(rows)} of 2 results, {len(bad)} with loss or failure")
    sys.exit(1)
print("ci-smoke: ok: two --cluster instances, controller on A, 100 clients on B: 0 lost, p99 %.2f ms" % rows[0]["p99_ms"])
PY
STATUS=$?
rm -rf "$HOP"
exit $STATUS

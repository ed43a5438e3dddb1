"""cluster-hop.sh's JSON lines -> markdown table: per mode, the median over rounds (range in brackets).

    python3 Tests/bench/summarize-hop.py Tests/bench/results/cluster-hop.jsonl
"""
import json
import statistics
import sys
from collections import defaultdict

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
by = defaultdict(list)
modes = []
for r in rows:
    by[(r["mode"], r["case"])].append(r)
    if r["mode"] not in modes:
        modes.append(r["mode"])


def med(runs, key, digits=1):
    values = [r[key] for r in runs if r.get(key) is not None]
    if not values:
        return "-"
    m = statistics.median(values)
    fmt = f"{{:,.{digits}f}}"
    return fmt.format(m) + (f" ({fmt.format(min(values))}–{fmt.format(max(values))})" if len(values) > 1 else "")


print("| mode | rounds | rate case: p50 ms | p99 ms | max ms | full speed: delivered msg/s | lost (all runs) | failures |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for mode in modes:
    rate, full = by.get((mode, "rate"), []), by.get((mode, "full"), [])
    runs = rate + full
    lost = sum(r.get("lost") or 0 for r in runs)
    failures = sum(1 for r in runs if not r.get("ok"))
    print(f"| {mode} | {len(rate)} | {med(rate, 'p50_ms')} | {med(rate, 'p99_ms')} | {med(rate, 'max_ms')} | "
          f"{med(full, 'delivered_per_s', 0)} | {lost} | {failures} |")

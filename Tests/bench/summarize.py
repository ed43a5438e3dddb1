"""liveactivity-bench JSON lines -> markdown table (one row per case).

    python3 Tests/bench/summarize.py Tests/bench/results/ours.jsonl
"""
import json
import sys

COLUMNS = [
    ("case", "label"), ("N", "n"), ("conn", "connected"), ("deflate", "deflate"), ("M", "m_sent"),
    ("delivered", "delivered"), ("lost", "lost"), ("p50 ms", "p50_ms"), ("p90 ms", "p90_ms"), ("p99 ms", "p99_ms"),
    ("max ms", "max_ms"), ("msg/s", "delivered_per_s"), ("connect s", "connect_s"), ("RSS/conn B", "server_rss_per_conn_bytes"),
    ("RSS before→connected KiB", None), ("srv CPU %", "server_cpu_pct"), ("encodes", "encodes_delta"),
    ("deliveries", "deliveries_delta"), ("ticks held", "ticks_while_held"),
]


def cell(r, key):
    if key is None:
        return f"{r.get('server_rss_before_kb')}→{r.get('server_rss_connected_kb')}"
    v = r.get(key)
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, float):
        return f"{v:.0f}" if abs(v) >= 100 else f"{v:.2f}"
    return str(v)


rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
print("| " + " | ".join(c for c, _ in COLUMNS) + " |")
print("|" + "|".join("---" if i == 0 else "---:" for i in range(len(COLUMNS))) + "|")
for r in rows:
    print("| " + " | ".join(cell(r, k) for _, k in COLUMNS) + " |")

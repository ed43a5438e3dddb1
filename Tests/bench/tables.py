"""What the summaries of the wsfan-driven benchmark scripts (targets.sh, deflate.sh, uws-targets.sh) share: their
JSON lines read, a (server, case)'s runs by round, and a table cell as median (min–max)."""
import json
import statistics


def load(path):
    """The JSON lines of path (one run each)."""
    return [json.loads(l) for l in open(path) if l.strip()]


def runs(rows, server, case):
    """server's runs of case that have a result, by round."""
    return {r["round"]: r for r in rows if r.get("server") == server and r.get("case") == case and not r.get("missing")}


def spread(values, fmt):
    """median (min–max) of the values that are not None, each through fmt; – when there are none."""
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}–{fmt(max(values))})"


def num(v): return f"{v:,.0f}"
def one(v): return f"{v:,.1f}"
def two(v): return f"{v:,.2f}"

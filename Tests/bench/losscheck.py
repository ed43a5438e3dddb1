"""The loss check of the wsfan-driven benchmark scripts (targets.sh, deflate.sh, uws-targets.sh): every client
connected and every message delivered once and in order, in every run; the scripts exit 1 when it fails.

Their summaries (Python read from the script, with Tests/bench on PYTHONPATH) call it as

    problems = losscheck.check_rounds(runs, pairs, reps)   # or check_run per row
    status = losscheck.report(rows, problems)               # prints the verdict; 1 on any problem

where runs(server, case) gives a pair's runs by round (tables.runs) and each run is wsfan's JSON report.
"""


def check_run(r, where, probe=True, peak=False):
    """The problems of one wsfan run r, each prefixed with `where`: clients not connected; unless it is an idle
    run (no messages), the probe not reaching every client (with probe), messages lost, duplicated or out of
    order; and (with peak) no VmHWM read for the server."""
    problems = []
    if r["connected"] != r["n"]: problems.append(f"{where}: {r['connected']} of {r['n']} connected")
    if r["case"] != "idle":
        if probe and not r["probe_ok"]: problems.append(f"{where}: the probe did not reach every client")
        if r["lost"] or r["delivered"] != r["expected"]: problems.append(f"{where}: lost {r['lost']} of {r['expected']}")
        if r["dups"] or r["out_of_order"]: problems.append(f"{where}: {r['dups']} duplicates, {r['out_of_order']} out of order")
    if peak and r["peak_rss_kb"] <= 0: problems.append(f"{where}: no VmHWM read")
    return problems


def check_rounds(runs, pairs, reps, optional=(), **checks):
    """check_run over every (server, case) of pairs in every round 1..reps, in that order; a round without a
    result is a problem unless its server is in optional. checks: check_run's probe and peak."""
    problems = []
    for server, case in pairs:
        got = runs(server, case)
        for k in range(1, reps + 1):
            where = f"{server} {case} round {k}"
            if k in got:
                problems += check_run(got[k], where, **checks)
            elif server not in optional:
                problems.append(f"{where}: no result")
    return problems


def report(rows, problems):
    """Prints the verdict (the problems, or the runs and deliveries that passed) and returns the exit status."""
    if problems:
        print("**Loss check FAILED**:\n" + "\n".join(f"- {p}" for p in problems))
        return 1
    total = sum(r.get("delivered", 0) for r in rows)
    print(f"**Loss check passed**: {len(rows)} runs, every client connected, {total:,} deliveries, "
          "0 lost, 0 duplicates, 0 out of order.")
    return 0

#!/usr/bin/env python3
"""Scores analyze's cross-rank answer against the faults bench/fleet_traces injected.

    fleet_score.py EXPECTED.json ANALYZE.json

Checks, exactly: the slow ranks are the injected one (or none), the rank-step outliers are the GC
pause (or none), no step is slow on every rank, the slowest pipeline stage is the injected one and
is flagged (nothing flagged without one), and the injected rank is the straggler of its data-parallel
group and of no other. Excess times must be within 2 % of the injected delays. Prints one line per
check; exits 1 when any fails.
"""
import json
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    exp = json.load(open(sys.argv[1]))
    doc = json.load(open(sys.argv[2]))
    f = doc["fleet"]
    fails = 0

    def check(name, ok, got):
        nonlocal fails
        fails += 0 if ok else 1
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {got}")

    def close(a, b):
        return abs(a - b) <= 0.02 * max(abs(b), 1)

    check("ranks analyzed", f["ranks"] == exp["ranks"], f["ranks"])
    slow = [(s["rank"], s["excess_ns"]) for s in f["slow_ranks"]]
    if exp["slow_rank"] >= 0:
        ok = len(slow) == 1 and slow[0][0] == exp["slow_rank"] and close(slow[0][1], exp["slow_rank_excess_ns"])
    else:
        ok = not slow
    check("slow ranks", ok, slow)
    outl = [(o["rank"], o["step"], o["excess_ns"]) for o in f["step_outliers"]]
    g = exp["gc"]
    if g["rank"] >= 0:
        ok = len(outl) == 1 and outl[0][:2] == (g["rank"], g["step"]) and close(outl[0][2], g["excess_ns"])
    else:
        ok = not outl
    check("rank-step outliers", ok, outl)
    check("slow steps", not f["slow_steps"], [s["step"] for s in f["slow_steps"]])
    p = f["pipeline"]
    if exp["slow_stage"] >= 0:
        ok = p["known"] and p["flagged"] and p["slowest"] == exp["slow_stage"]
    else:
        ok = not p["flagged"]
    check("pipeline stage", ok, f"slowest {p['slowest']}, imbalance {p['imbalance']}, flagged {p['flagged']}")
    want = {k: v for k, v in exp["straggler_groups"].items()}
    got = {gr["name"]: gr["straggler"] for gr in f["groups"] if gr["straggler"] >= 0}
    check("group stragglers", got == want, got)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())

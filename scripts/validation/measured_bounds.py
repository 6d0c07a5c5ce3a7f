#!/usr/bin/env python3
"""Every finding's stated bound against the measured savings of testdata/whatif: no single fix may have
saved more than its finding says it can (gain_ms_per_step, on the un-profiled basis), and where the finding
states a floor (floor_step_ms), no fixed step measured below it.

For each job, `gpudoctor analyze --json` of its base trace gives the findings and the fix each answers; each
single-fix variant of measurements.json gives the least saving the timings allow (the base's fastest
un-profiled step, over pass 1 and the re-time, less the variant's slowest). A saving above the bound (with
the analyzer's 1 % tolerance) makes the bound a false statement. Prints a line per pair checked; exits 1 if
any bound is broken, 2 on bad input.

Usage: scripts/validation/measured_bounds.py GPUDOCTOR [--dir testdata/whatif]
"""
import argparse
import collections
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOLERANCE = 0.01  # the analyzer's kBoundTolerance
# A variant of scripts/validation/whatif_jobs.py as the fix the diagnosis names (bench/replay_calibrate.cc).
FIX_OF_VARIANT = {"bf16": "bf16", "workers4": "loader_workers", "workers2": "loader_workers",
                  "log_every_100": "no_host_syncs", "where": "no_host_syncs", "pinned": "pinned_copies",
                  "cuda_graphs": "cuda_graphs", "fused": "fused_optimizer", "sdpa": "sdpa",
                  "no_checkpointing": "no_checkpointing", "channels_last": "channels_last",
                  "microbatch8_no_accum": "micro_batch", "microbatch16_no_accum": "micro_batch"}


def steps(e, which):
    """The fastest ("min") or slowest ("max") un-profiled step over pass 1 and the re-time (ns)."""
    xs = [e[k] for k in (f"unprofiled_step_ns_{which}", f"unprofiled_recheck_step_ns_{which}") if k in e]
    return min(xs) if which == "min" else max(xs)


def findings_by_fix(gpudoctor, trace):
    out = subprocess.run([gpudoctor, "analyze", trace, "--json", "-"], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"analyze {trace}: {out.stderr.strip()}")
    diag = json.loads(out.stdout)["diagnosis"]
    by_fix = {}
    for p in diag.get("plan") or []:
        by_fix.setdefault(p["fix"], p["finding"])
    ids = {f["id"]: f for f in diag["findings"]}
    for f in diag["findings"]:
        fix = (f.get("what_if") or {}).get("fix")
        if fix:
            by_fix.setdefault(fix, f["id"])
    return {fix: ids[fid] for fix, fid in by_fix.items() if fid in ids}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gpudoctor")
    ap.add_argument("--dir", default=os.path.join(HERE, "..", "..", "testdata", "whatif"))
    a = ap.parse_args()
    try:
        entries = json.load(open(os.path.join(a.dir, "measurements.json")))["entries"]
    except (OSError, ValueError, KeyError) as ex:
        print(f"measured_bounds.py: cannot read {a.dir}/measurements.json: {ex}", file=sys.stderr)
        return 2
    jobs = collections.defaultdict(dict)
    for e in entries:
        jobs[e["job"]][e["variant"]] = e
    checked, broken = 0, []
    for job, variants in sorted(jobs.items()):
        base = variants.get("base")
        singles = {v: e for v, e in variants.items() if v != "base" and len(e["fixes"]) == 1
                   and e["fixes"][0] in FIX_OF_VARIANT}
        if not base or not singles:
            continue
        try:
            by_fix = findings_by_fix(a.gpudoctor, os.path.join(a.dir, base["trace"]))
        except (OSError, RuntimeError, ValueError, KeyError) as ex:
            print(f"measured_bounds.py: {ex}", file=sys.stderr)
            return 2
        for v, e in sorted(singles.items()):
            f = by_fix.get(FIX_OF_VARIANT[e["fixes"][0]])
            if not f or not f.get("gain_ms_per_step") or not f.get("gain_is_bound", True):
                continue  # no bound stated, or an estimate rather than a bound
            checked += 1
            if f.get("floor_step_ms"):  # the claim is the floor: the fixed step no shorter
                slowest, floor = steps(e, "max") / 1e6, f["floor_step_ms"]
                over = slowest < floor * (1 - TOLERANCE)
                print(f"{job:26s} {v:22s} {f['id']:30s} floor {floor:8.2f} ms  fixed step {slowest:8.2f} ms"
                      f"{'  BELOW THE FLOOR' if over else ''}")
                if over:
                    broken.append(f"{job}/{v}")
                continue
            least = (steps(base, "min") - steps(e, "max")) / 1e6
            bound = f["gain_ms_per_step"]
            over = least > bound * (1 + TOLERANCE)
            print(f"{job:26s} {v:22s} {f['id']:30s} bound {bound:8.2f} ms  least saved {least:8.2f} ms"
                  f"{'  ABOVE THE BOUND' if over else ''}")
            if over:
                broken.append(f"{job}/{v}")
    print(f"{checked} pairs checked, {len(broken)} above their finding's bound{': ' + ', '.join(broken) if broken else ''}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())

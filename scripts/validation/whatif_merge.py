#!/usr/bin/env python3
"""Merges a whatif_jobs.py run (its measurements.json, retime.json and traces) into the validation
folder: the given jobs' entries, traces and re-time rounds replace the folder's for those jobs, and the
run is recorded under later_runs (measurements.json) and runs (retime.json) with a note.

    python3 scripts/validation/whatif_merge.py RUN_DIR testdata/whatif --jobs resnet_loader,pageable_mid \\
        --note "held-out jobs of session 16"
"""
import argparse
import json
import os
import shutil
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="the run's --out folder")
    ap.add_argument("dest", help="the validation folder (testdata/whatif)")
    ap.add_argument("--jobs", required=True, help="comma-separated jobs to take from the run")
    ap.add_argument("--note", required=True, help="why these entries were added or replaced")
    a = ap.parse_args()
    jobs = [j for j in a.jobs.split(",") if j]
    with open(os.path.join(a.run, "measurements.json")) as f:
        run = json.load(f)
    with open(os.path.join(a.dest, "measurements.json")) as f:
        dest = json.load(f)
    missing = [j for j in jobs if j not in run["jobs"]]
    if missing:
        sys.exit(f"whatif_merge: {a.run}/measurements.json has no job {', '.join(missing)}")
    new = [e for e in run["entries"] if e["job"] in jobs]
    for e in new:
        if e.get("errors"):
            sys.exit(f"whatif_merge: {e['job']}/{e['variant']} has errors: {e['errors'][0][:200]}")
        if not os.path.exists(os.path.join(a.run, e["trace"])):
            sys.exit(f"whatif_merge: {a.run}/{e['trace']} is missing")
    for e in [e for e in dest["entries"] if e["job"] in jobs]:  # the replaced traces
        p = os.path.join(a.dest, e["trace"])
        if os.path.exists(p):
            os.remove(p)
    dest["entries"] = [e for e in dest["entries"] if e["job"] not in jobs] + new
    for e in new:
        shutil.copyfile(os.path.join(a.run, e["trace"]), os.path.join(a.dest, e["trace"]))
    for j in jobs:
        dest["jobs"][j] = run["jobs"][j]
    dest.setdefault("later_runs", []).append(dict(date=run["date"], command=run["command"], jobs=jobs, note=a.note))
    rt_run = os.path.join(a.run, "retime.json")
    if os.path.exists(rt_run):
        with open(rt_run) as f:
            rrt = json.load(f)
        with open(os.path.join(a.dest, "retime.json")) as f:
            drt = json.load(f)
        for j in jobs:
            if j in rrt["jobs"]:
                drt["jobs"][j] = rrt["jobs"][j]
        drt["runs"].append(dict(date=rrt["date"], command=rrt["command"], jobs=[j for j in jobs if j in rrt["jobs"]],
                                note=a.note + " (rounds numbered per job)"))
        with open(os.path.join(a.dest, "retime.json.tmp"), "w") as f:
            json.dump(drt, f, indent=1)
        os.replace(os.path.join(a.dest, "retime.json.tmp"), os.path.join(a.dest, "retime.json"))
    with open(os.path.join(a.dest, "measurements.json.tmp"), "w") as f:
        json.dump(dest, f, indent=1)
    os.replace(os.path.join(a.dest, "measurements.json.tmp"), os.path.join(a.dest, "measurements.json"))
    print(f"whatif_merge: {len(new)} entries of {', '.join(jobs)} merged into {a.dest}")


if __name__ == "__main__":
    main()

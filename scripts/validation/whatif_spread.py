#!/usr/bin/env python3
"""Scores the what-if on a second, independent run of the validation jobs (scripts/validation/whatif_rerun.sh: the
same jobs, variants and method in new processes) beside the committed run, with the committed model: the
second run is out of sample for everything fitted. Per trace: the un-profiled step measured in its process and
the one predicted from its trace, in both runs; per fix: measured and predicted speedups in both runs; per
job: whether the plan's first fix measured best. Writes the comparison as JSON (--out) and prints a summary.

    python3 scripts/validation/whatif_spread.py testdata/whatif RERUN_DIR --calibrate build/replay_calibrate \\
        --out testdata/whatif/rerun_h200.json

RERUN_DIR holds one folder per job (RERUN_DIR/<job>/measurements.json and traces). The second run's traces
are not kept in the repository (28 MiB); the JSON keeps every figure the scoring read.
"""
import argparse
import datetime
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE = re.compile(r"^(\S+)/(\S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([+-][\d.]+)%\s+(.*)$")
FIX = re.compile(r"^(\S+)\s+(\S+)\s+([\d.]+)x\s+([\d.]+)x\s+([+-][\d.]+)%")
PLAN = re.compile(r"^(\S+)\s+(.*\S)\s+(yes|NO)\b")


def calibrate(binary, folder):
    r = subprocess.run([binary, folder], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"whatif_spread: {binary} {folder} failed ({r.returncode}): {r.stderr.strip()[:300]}")
    traces, fixes, plans, section = {}, {}, {}, "traces"
    for line in r.stdout.splitlines():
        if line.startswith("fixes ("):
            section = "fixes"
        elif line.startswith("plans ("):
            section = "plans"
        if section == "traces" and (m := TRACE.match(line)):
            traces[f"{m[1]}/{m[2]}"] = dict(traced_ms=float(m[3]), unprofiled_ms=float(m[4]), predicted_ms=float(m[5]),
                                            error_pct=float(m[6]))
        elif section == "fixes" and (m := FIX.match(line)):
            fixes[f"{m[1]}/{m[2]}"] = dict(measured=float(m[3]), predicted=float(m[4]), error_pct=float(m[5]))
        elif section == "plans" and (m := PLAN.match(line)) and m[1] != "job":
            plans[m[1]] = dict(line=m[2], first_measured_best=m[3] == "yes")
    if not traces or not fixes or not plans:
        sys.exit(f"whatif_spread: could not read {binary}'s tables for {folder}")
    return traces, fixes, plans


def summary(errors):
    a = sorted(abs(e) for e in errors)
    return dict(n=len(a), median_abs_pct=round(statistics.median(a), 1), worst_abs_pct=round(a[-1], 1),
                within_10=sum(x <= 10 for x in a), within_25=sum(x <= 25 for x in a))


def corr(x, y):
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    return sxy / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))


def add_rounds(committed, rerun, jobs, command):
    path = os.path.join(committed, "retime.json")
    with open(path) as f:
        rt = json.load(f)
    added = 0
    for j in jobs:
        with open(os.path.join(rerun, j, "measurements.json")) as f:
            entries = json.load(f)["entries"]
        have = rt["jobs"].setdefault(j, {})
        if any(r.get("source") == "whatif_rerun pass 2" for rs in have.values() for r in rs):
            sys.exit(f"whatif_spread: {path} already has a second-run round for {j}")
        nxt = 1 + max((r["round"] for rs in have.values() for r in rs), default=-1)
        for e in entries:
            med = e.get("unprofiled_recheck_step_ns_median")
            if med and not e.get("errors"):
                have.setdefault(e["variant"], []).append(dict(median=med, round=nxt, rc=0, source="whatif_rerun pass 2",
                                                              date=e.get("date")))
                added += 1
    rt.setdefault("runs", []).append(dict(
        command=command, date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), jobs=jobs,
        note="one more round per job: the second run's pass-2 timing (scripts/validation/whatif_rerun.sh; each job's variants "
             "timed alone in one process, each right before its trace, as the committed traces' own timings)"))
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(rt, f, indent=1)
    os.replace(tmp, path)
    print(f"{path}: {added} timings added, one round per job")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("committed", help="the validation folder (testdata/whatif)")
    ap.add_argument("rerun", help="whatif_rerun.sh's OUT: one folder per job")
    ap.add_argument("--calibrate", default="build/replay_calibrate", help="the replay_calibrate binary")
    ap.add_argument("--out", help="write the comparison here (JSON)")
    ap.add_argument("--add-rounds", action="store_true",
                    help="also add each second-run process's timings (pass 2, right before its trace) to COMMITTED/"
                         "retime.json as one more round per job: one more process in each fix's measured speedup")
    a = ap.parse_args()
    if not os.access(a.calibrate, os.X_OK):
        sys.exit(f"whatif_spread: {a.calibrate}: not an executable (build replay_calibrate first)")
    jobs = sorted(d for d in os.listdir(a.rerun) if os.path.isfile(os.path.join(a.rerun, d, "measurements.json")))
    if not jobs:
        sys.exit(f"whatif_spread: {a.rerun} has no <job>/measurements.json")
    tmp = tempfile.mkdtemp(prefix="whatif_spread_")
    try:
        second = os.path.join(tmp, "set")
        shutil.copytree(a.committed, second)
        dates = {}
        for j in jobs:
            with open(os.path.join(a.rerun, j, "measurements.json")) as f:
                dates[j] = json.load(f).get("date")
            subprocess.run([sys.executable, os.path.join(HERE, "whatif_merge.py"), os.path.join(a.rerun, j), second,
                            "--jobs", j, "--note", "whatif_spread: the second run"], check=True, capture_output=True)
        t1, f1, p1 = calibrate(a.calibrate, a.committed)
        t2, f2, p2 = calibrate(a.calibrate, second)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    in_both = [k for k in t1 if k in t2 and k.split("/")[0] in jobs]
    traces = [dict(trace=k, first=t1[k], second=t2[k]) for k in in_both]
    fixes = [dict(fix=k, first=f1[k], second=f2[k]) for k in f1 if k in f2 and k.split("/")[0] in jobs]
    plans = [dict(job=j, first=p1[j], second=p2[j]) for j in p1 if j in p2 and j in jobs]
    e1 = [t1[k]["error_pct"] for k in in_both]
    e2 = [t2[k]["error_pct"] for k in in_both]
    unprof_moved = [abs(t2[k]["unprofiled_ms"] / t1[k]["unprofiled_ms"] - 1) * 100 for k in in_both]
    infl = [abs((t2[k]["traced_ms"] / t2[k]["unprofiled_ms"]) / (t1[k]["traced_ms"] / t1[k]["unprofiled_ms"]) - 1) * 100
            for k in in_both]
    # The measurement's own reproducibility: each fix's speedup in the trace's process (pass 2, base / variant)
    # in the first run and in the second.
    def own(path):
        with open(path) as f:
            return {(e["job"], e["variant"]): e.get("unprofiled_recheck_step_ns_median") for e in json.load(f)["entries"]}
    m1 = own(os.path.join(a.committed, "measurements.json"))
    m2 = {}
    for j in jobs:
        m2.update(own(os.path.join(a.rerun, j, "measurements.json")))
    moved = []
    for (j, v), t in m1.items():
        b1, b2, t2 = m1.get((j, "base")), m2.get((j, "base")), m2.get((j, v))
        if v != "base" and t and b1 and b2 and t2:
            moved.append(dict(fix=f"{j}/{v}", first=round(b1 / t, 3), second=round(b2 / t2, 3),
                              moved_pct=round(abs((b2 / t2) / (b1 / t) - 1) * 100, 1)))
    mv = [x["moved_pct"] for x in moved]
    doc = dict(
        generator="scripts/validation/whatif_spread.py", command="python3 scripts/validation/whatif_spread.py " + " ".join(sys.argv[1:]),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        second_run=dict(method="scripts/validation/whatif_rerun.sh: whatif_jobs.py again, one process per job, new processes",
                        dates=dates),
        model="the committed constants (diagnosis/what_if.h), fitted on the first run only",
        unprofiled=dict(first=summary(e1), second=summary(e2),
                        signed_error_correlation=round(corr(e1, e2), 3),
                        measured_step_moved_pct=dict(median=round(statistics.median(unprof_moved), 1),
                                                     worst=round(max(unprof_moved), 1)),
                        inflation_moved_pct=dict(median=round(statistics.median(infl), 1), worst=round(max(infl), 1)),
                        error_moved_pct=dict(median=round(statistics.median(abs(x - y) for x, y in zip(e1, e2)), 1))),
        fixes_summary=dict(first=summary([f["first"]["error_pct"] for f in fixes]),
                           second=summary([f["second"]["error_pct"] for f in fixes])),
        measured_speedup_moved=dict(n=len(mv), median_pct=round(statistics.median(mv), 1), worst_pct=max(mv),
                                    within_10=sum(x <= 10 for x in mv), within_25=sum(x <= 25 for x in mv),
                                    per_variant=moved),
        plan_misses=dict(first=[p["job"] for p in plans if not p["first"]["first_measured_best"]],
                         second=[p["job"] for p in plans if not p["second"]["first_measured_best"]]),
        traces=traces, fixes=fixes, plans=plans)
    u = doc["unprofiled"]
    print(f"un-profiled steps, {len(in_both)} traces of {len(jobs)} jobs, the committed model:")
    for r in ("first", "second"):
        s = u[r]
        print(f"  {r:6s} run: median |error| {s['median_abs_pct']} %, worst {s['worst_abs_pct']} %, "
              f"{s['within_10']} within 10 %")
    print(f"  the same variant's measured un-profiled step moved {u['measured_step_moved_pct']['median']} % "
          f"(median; worst {u['measured_step_moved_pct']['worst']} %) between the runs; its profiler inflation "
          f"{u['inflation_moved_pct']['median']} %; a trace's error {u['error_moved_pct']['median']} points; "
          f"signed errors correlate {u['signed_error_correlation']}")
    for r in ("first", "second"):
        s = doc["fixes_summary"][r]
        print(f"fixes, {r:6s} run: median |error| {s['median_abs_pct']} %, worst {s['worst_abs_pct']} %, "
              f"{s['within_25']} of {s['n']} within 25 %; plan misses: {', '.join(doc['plan_misses'][r]) or 'none'}")
    ms = doc["measured_speedup_moved"]
    print(f"a variant's measured speedup (its process's base / variant) moved {ms['median_pct']} % between the runs "
          f"(median; worst {ms['worst_pct']} %), {ms['within_25']} of {ms['n']} within 25 %")
    if a.add_rounds:
        add_rounds(a.committed, a.rerun, jobs, doc["command"])
    if a.out:
        tmp_out = a.out + ".tmp"
        with open(tmp_out, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp_out, a.out)


if __name__ == "__main__":
    main()

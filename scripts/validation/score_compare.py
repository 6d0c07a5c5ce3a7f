"""Scores `gpudoctor compare` against the measured speedups of the what-if set (testdata/whatif).

Every base -> variant pair of measurements.json whose two traces are committed is compared three
ways: the base as its trace, as `analyze --json` (with the what-if) and as `analyze --no-what-if
--json`. The measured speedup is the base's un-profiled median step over the variant's (both timed
without the profiler). Each job was timed twice, in the run and in a recheck after tracing; the
measured band spans the two ratios. A verdict fails when:
  - it has the wrong sign: "faster" while the whole band is under 1.02x, or "slower" while it is
    over 1/1.02x (a change within 2 % of no change is no gain, so "faster" or "slower" is wrong);
  - a change measured at 1.2x or more in both timings is not called "faster".
Also fails when the three baselines of one pair get different verdicts.

KNOWN lists the pairs whose verdict fails because an un-profiled estimate itself is off, with the
figures: they are shown as known; a known pair that passes fails the run, so the list stays true.

  python3 score_compare.py GPUDOCTOR [--testdata DIR] [--pairs SUBSTR,...] [--json OUT] [-v]
Exit 0 when every verdict passes, 1 otherwise (one line per failure), 2 for bad arguments.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

NO_GAIN = 1.02     # a measured speedup within this factor of 1 is no change
MUST_FAST = 1.2    # a measured speedup from this up must be called "faster"

# pair -> why compare cannot get it right (ms: estimated un-profiled, measured).
KNOWN = {
    "ckpt_large__no_checkpointing": "the replay takes 64 % of the checkpointed base's traced step away as the "
                                    "profiler's cost: base estimated 23.9 ms (its GPU alone is busy 23.3), measured "
                                    "31.6; 1.12x [0.85, 1.47] estimated, 1.50x measured",
}


def pairs(testdata):
    with open(os.path.join(testdata, "measurements.json")) as f:
        m = json.load(f)
    by = {(e["job"], e["variant"]): e for e in m["entries"]}
    out = []
    for (job, variant), e in sorted(by.items()):
        b = by.get((job, "base"))
        if variant == "base" or not b or e.get("errors"):
            continue
        bt, vt = (os.path.join(testdata, x["trace"]) for x in (b, e))
        if not (os.path.exists(bt) and os.path.exists(vt)):
            continue
        ratios = [b["unprofiled_step_ns_median"] / e["unprofiled_step_ns_median"]]
        if b.get("unprofiled_recheck_step_ns_median") and e.get("unprofiled_recheck_step_ns_median"):
            ratios.append(b["unprofiled_recheck_step_ns_median"] / e["unprofiled_recheck_step_ns_median"])
        out.append((job, variant, bt, vt, ratios[0], (min(ratios), max(ratios))))
    return out


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def baselines(gd, job, trace, tmp):
    """The base three ways: trace, analyze --json, analyze --no-what-if --json."""
    out = {"trace": trace}
    for mode, extra in (("json", []), ("json-no-what-if", ["--no-what-if"])):
        path = os.path.join(tmp, f"{job}.{mode}.json")
        rc, _, err = run([gd, "analyze", "-q", trace, "--json", path] + extra)
        if rc != 0:
            raise SystemExit(f"score_compare: analyze {trace} {' '.join(extra)} failed ({rc}): {err.strip()}")
        out[mode] = path
    return out


def judge(band, verdict):
    """The failure reason of a verdict against the measured band (low, high), or ''."""
    if verdict == "faster" and band[1] < NO_GAIN:
        return "wrong sign (faster)"
    if verdict == "slower" and band[0] > 1 / NO_GAIN:
        return "wrong sign (slower)"
    if band[0] >= MUST_FAST and verdict != "faster":
        return f">= {MUST_FAST}x not called faster"
    return ""


def compare(gd, base, new):
    rc, out, err = run([gd, "compare", "-q", base, new, "--json", "-"])
    if rc != 0:
        return {"result": f"error {rc}", "speedup": float("nan"), "error": err.strip()}
    v = json.loads(out)["verdict"]
    speedup = v.get("speedup", v["base_ns"] / v["new_ns"] if v["new_ns"] > 0 else float("nan"))
    return {"result": v["result"], "speedup": speedup, "range": v.get("speedup_range"), "basis": v.get("basis")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gpudoctor")
    ap.add_argument("--testdata", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                                       "testdata", "whatif"))
    ap.add_argument("--pairs", default="", help="only pairs whose 'job__variant' contains one of these")
    ap.add_argument("--json", help="write every row here")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every row, not only the failures")
    a = ap.parse_args()
    want = [w for w in a.pairs.split(",") if w]
    todo = [p for p in pairs(a.testdata) if not want or any(w in f"{p[0]}__{p[1]}" for w in want)]
    if not todo:
        print("score_compare: no pair with a measured speedup")
        return 2
    rows, failures = [], []
    modes = ("trace", "json", "json-no-what-if")
    with tempfile.TemporaryDirectory() as tmp:
        bases = {}
        for job, variant, bt, vt, measured, band in todo:
            if job not in bases:
                bases[job] = baselines(a.gpudoctor, job, bt, tmp)
            row = {"pair": f"{job}__{variant}", "measured": measured, "measured_band": band}
            for mode in modes:
                c = compare(a.gpudoctor, bases[job][mode], vt)
                c["failure"] = judge(band, c["result"])
                row[mode] = c
                if c["failure"]:
                    failures.append(f"{row['pair']} ({mode}): measured {measured:.2f}x [{band[0]:.2f}, {band[1]:.2f}], compare says {c['result']} "
                                    f"{c['speedup']:.2f}x: {c['failure']}")
            if len({row[m]["result"] for m in modes}) > 1:
                failures.append(f"{row['pair']}: the verdict depends on how the base was saved: "
                                + ", ".join(f"{m} {row[m]['result']}" for m in modes))
            rows.append(row)
    print(f"{'pair':<44} {'measured [band]':>19}  " + "  ".join(f"{m:>24}" for m in modes))
    for r in rows:
        bad = any(r[m]["failure"] for m in modes)
        if a.verbose or bad:
            cells = [f"{r[m]['result'][:14]:>14} {r[m]['speedup']:5.2f}x{'!' if r[m]['failure'] else ' '}" for m in modes]
            lo, hi = r["measured_band"]
            print(f"{r['pair']:<44} {r['measured']:5.2f}x [{lo:4.2f},{hi:5.2f}]  " + "  ".join(f"{c:>24}" for c in cells))
    for m in modes:
        wrong = sum(r[m]["failure"].startswith("wrong sign") for r in rows)
        big = [r for r in rows if r["measured_band"][0] >= MUST_FAST]
        called = sum(r[m]["result"] == "faster" for r in big)
        err = [abs(math.log(r[m]["speedup"] / r["measured"])) for r in rows if r[m]["speedup"] == r[m]["speedup"]]
        err.sort()
        med = math.exp(err[len(err) // 2]) - 1 if err else float("nan")
        print(f"summary {m}: {len(rows)} pairs, wrong sign {wrong}, >= {MUST_FAST}x called faster {called}/{len(big)}, "
              f"speedup off by {100 * med:.1f} % (median)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    known = [f for f in failures if f.split(" ")[0].rstrip(":") in KNOWN]
    failures = [f for f in failures if f not in known]
    failed_pairs = {f.split(" ")[0].rstrip(":") for f in known}
    for pair in KNOWN:
        if pair not in failed_pairs and any(r["pair"] == pair for r in rows):
            failures.append(f"{pair}: listed in KNOWN but passes now: take it off the list")
    for f in known:
        print(f"known {f} ({KNOWN[f.split(' ')[0].rstrip(':')]})")
    for f in failures:
        print("FAIL " + f)
    print(f"score_compare: {len(failures)} failure(s), {len(known)} known, over {len(rows)} pairs x {len(modes)} "
          "baselines")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

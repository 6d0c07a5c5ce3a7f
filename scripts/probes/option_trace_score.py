#!/usr/bin/env python3
"""Scores the replay's un-profiled estimate of each profiler option's trace (issue 17).

profiler_job_cost.py --keep-traces DIR times each job's step without the profiler and under each
option in one process, then keeps one 3-step trace per option (JOB__VARIANT__OPTION.pt.trace.json.gz).
This runs `gpudoctor analyze --json` on every kept trace and sets the estimate against the same
process's un-profiled step; it needs no GPU or torch.

Prints one row per trace (the un-profiled step, the profiled step timed with that option, the traced
step, the estimate, its error) and the median and mean error per option. With --out, writes the
jsonl again with a "replay" entry per line: {option: {traced_step_ns, unprofiled_step_ns}}.
  python3 scripts/probes/option_trace_score.py RUN/profiler_job_cost.jsonl TRACE_DIR [--gpudoctor build/gpudoctor] [--out F]
Exit 1 when a trace is missing or gpudoctor cannot read it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

OPTIONS = ("default", "shapes", "stack", "memory")


def estimate(gpudoctor, trace):
    """(traced_step_ns, unprofiled_step_ns) of the replay, or an error string."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        r = subprocess.run([gpudoctor, "analyze", "-q", "--json", out, trace], capture_output=True, text=True)
        if r.returncode != 0:
            return f"{trace}: gpudoctor exited {r.returncode}: {r.stderr.strip()[:200]}"
        with open(out) as f:
            w = json.load(f).get("diagnosis", {}).get("what_if", {})
    if "unprofiled_step_ns" not in w:
        return f"{trace}: no un-profiled estimate (the replay is unavailable: {w.get('basis', '?')})"
    return w["traced_step_ns"], w["unprofiled_step_ns"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl", help="profiler_job_cost.jsonl of the run")
    ap.add_argument("traces", help="the run's --keep-traces folder")
    ap.add_argument("--gpudoctor", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "gpudoctor"))
    ap.add_argument("--out", help="write the jsonl with the replay's figures added")
    a = ap.parse_args()
    if not os.access(a.gpudoctor, os.X_OK):
        sys.exit(f"option_trace_score: {a.gpudoctor} is not an executable gpudoctor (build it, or give --gpudoctor)")
    lines, errors = [], {o: [] for o in OPTIONS}
    with open(a.jsonl) as f:
        for n, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                d = json.loads(text)
                none = d["step_ns"]["none"]
            except (ValueError, KeyError) as e:
                sys.exit(f"option_trace_score: {a.jsonl} line {n}: not a profiler_job_cost line ({e})")
            d["replay"] = {}
            for o in OPTIONS:
                trace = os.path.join(a.traces, f"{d['job']}__{d['variant']}__{o}.pt.trace.json.gz")
                if not os.path.exists(trace):
                    sys.exit(f"option_trace_score: missing {trace}")
                got = estimate(a.gpudoctor, trace)
                if isinstance(got, str):
                    sys.exit(f"option_trace_score: {got}")
                traced, est = got
                d["replay"][o] = dict(traced_step_ns=traced, unprofiled_step_ns=est)
                err = est / none - 1
                errors[o].append(err)
                print(f"{d['job'] + '/' + d['variant']:40s} {o:8s} un-profiled {none / 1e6:6.2f} ms  "
                      f"profiled {d['step_ns'][o] / 1e6:6.2f}  traced {traced / 1e6:6.2f}  "
                      f"estimate {est / 1e6:6.2f}  error {100 * err:+6.1f} %", flush=True)
            lines.append(d)
    for o in OPTIONS:
        if errors[o]:
            e = errors[o]
            print(f"{o:8s} median error {100 * statistics.median(e):+.1f} %, mean |error| "
                  f"{100 * statistics.mean(abs(x) for x in e):.1f} % over {len(e)} traces")
    if a.out:
        with open(a.out, "w") as f:
            for d in lines:
                f.write(json.dumps(d) + "\n")


if __name__ == "__main__":
    main()

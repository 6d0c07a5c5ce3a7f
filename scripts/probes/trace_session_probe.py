#!/usr/bin/env python3
"""Why a job's traced steps can run slower than its profiled steps (whatif_jobs.py: the LSTM's trace
29.6 ms a step, the same options' profiled steps 19.3 ms, un-profiled 18.0 ms).

For each job (whatif_jobs.py's builders, the base variant), in one process: warm up, time S steps
un-profiled, then profiler sessions one after another, each exporting its trace, each with the
job's profiler options:
  A  schedule wait=1 warmup=1 active=3 (whatif_jobs.py's trace)
  B  schedule wait=0 warmup=1 active=S, each step timed (whatif_jobs.py's profiled timing), exported
  C  as A again
  D  as A, the activities CPU only (no CUPTI)
Per session: each active step's time (perf_counter around step + synchronize), the trace's
ProfilerStep durations and its event counts per step by category. Prints one JSON line per session.
  TEARDOWN_CUPTI=1 python3 scripts/probes/trace_session_probe.py --jobs lstm_lm_fp32,vit_fp32 [--steps 20]
"""
import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "validation"))
import whatif_jobs as W  # noqa: E402


def session(runner, popts, wait, active, cpu_only=False):
    torch = W.torch
    kw = W.profiler_kwargs(popts)
    if cpu_only:
        kw["activities"] = [torch.profiler.ProfilerActivity.CPU]
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    sched = torch.profiler.schedule(wait=wait, warmup=1, active=active, repeat=1)
    ts = []
    with torch.profiler.profile(schedule=sched, on_trace_ready=lambda p: p.export_chrome_trace(tmp), **kw) as prof:
        for i in range(wait + 1 + active):
            torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            runner.step()
            torch.cuda.synchronize()
            if i >= wait + 1:
                ts.append(time.perf_counter_ns() - t0)
            prof.step()
    with open(tmp) as f:
        evs = json.load(f)["traceEvents"]
    os.remove(tmp)
    steps = sorted((e["ts"], e["dur"]) for e in evs
                   if e.get("ph") == "X" and e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#"))
    counts = {}
    for e in evs:
        if e.get("ph") == "X":
            counts[e.get("cat", "?")] = counts.get(e.get("cat", "?"), 0) + 1
    n = max(1, len(steps))
    return dict(step_ms=[round(x / 1e6, 3) for x in ts], trace_step_ms=[round(d / 1e3, 3) for _, d in steps],
                events_per_step={k: round(v / n, 1) for k, v in sorted(counts.items())})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", required=True)
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()
    W._imports()
    torch = W.torch
    torch.cuda.init()
    for job in a.jobs.split(","):
        popts = W.JOBS[job]["profiler"]
        r, _, _ = W.build(job, [])
        W.time_steps(r, 8)
        un = W.time_steps(r, a.steps)
        out = dict(job=job, profiler=popts, teardown_cupti=os.environ.get("TEARDOWN_CUPTI"),
                   unprofiled_ms=round(statistics.median(un) / 1e6, 3))
        for name, args in (("A", (1, 3)), ("B", (0, a.steps)), ("C", (1, 3))):
            out[name] = session(r, popts, *args)
        out["D_cpu_only"] = session(r, popts, 1, 3, cpu_only=True)
        out["unprofiled_after_ms"] = round(statistics.median(W.time_steps(r, a.steps)) / 1e6, 3)
        print(json.dumps(out), flush=True)
        r.close()
        W.cleanup()


if __name__ == "__main__":
    main()

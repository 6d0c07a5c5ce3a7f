"""The timing loop of the profiler-cost probes (profiler_api_cost.py, profiler_call_cost.py): each
workload's step timed without torch.profiler and inside an active profiler window, round by round,
the workloads interleaved, and each profiled session exported for the caller to read."""
import os
import statistics
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile, schedule


def step_ns(fn):
    """One synchronized step of fn, in ns."""
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter_ns() - t0


def time_rounds(work, steps, rounds, read_export):
    """work: {name: fn}. Warms each up (3 steps), then per round and workload: the median of `steps`
    un-profiled steps, and the median of `steps` steps inside a profiler window (CPU + CUDA, schedule
    wait=1 warmup=1: with wait=0 a later session in the process records the operators but no CUDA
    activity, torch 2.11, scripts/probes/trace_session_probe.py). read_export(name, path) is called with each
    profiled session's exported trace; the caller removes the file. Returns {(name, "none" |
    "profiled"): [the rounds' medians]}."""
    got = {(w, c): [] for w in work for c in ("none", "profiled")}
    for fn in work.values():
        for _ in range(3):
            step_ns(fn)
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    for _ in range(rounds):
        for w, fn in work.items():
            got[(w, "none")].append(statistics.median(step_ns(fn) for _ in range(steps)))
            fd, tmp = tempfile.mkstemp(suffix=".json")
            os.close(fd)
            with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=steps),
                         on_trace_ready=lambda p, tmp=tmp: p.export_chrome_trace(tmp)) as prof:
                ts = []
                for i in range(steps + 2):
                    t = step_ns(fn)
                    if i >= 2:
                        ts.append(t)
                    prof.step()
            read_export(w, tmp)
            got[(w, "profiled")].append(statistics.median(ts))
    return got

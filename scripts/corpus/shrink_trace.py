#!/usr/bin/env python3
"""Cuts a PyTorch profiler (Kineto) trace down to a few steps of GPU work and what launched it.

Keeps, with names and fields exactly as they are:
  - the top-level keys (deviceProperties, distributedInfo, ...) and the metadata events (ph "M");
  - host events (cpu_op, user_annotation, cuda_runtime, cuda_driver) inside the window;
  - GPU events (kernel, gpu_memcpy, gpu_memset, gpu_user_annotation) launched by a kept runtime call
    (same correlation id), or inside the window when they have no correlation;
  - the launch flows (ac2g) of kept launches.
The 2021 format's categories (Operator, Runtime, Kernel, Memcpy, Memset, async flows) likewise.
Drops python_function events (most of a with_stack trace) and everything outside the window.

The window is the first --steps ProfilerStep#N spans (the whole trace without steps), ending early
at the launch of its --max-kernels-th kernel: a single step of thousands of kernels is cut inside
the step (its ProfilerStep span stays whole, the work after the cut is gone).

Usage: shrink_trace.py IN OUT [--steps 2] [--max-kernels 3000]   (IN/OUT: .json or .json.gz)
"""
import argparse
import gzip
import json

# Event categories, lower-cased; the second spelling of each is the 2021 Kineto format's.
HOST = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "operator", "runtime"}
LAUNCH = {"cuda_runtime", "cuda_driver", "runtime"}
GPU = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "memcpy", "memset"}
FLOW = {"ac2g", "async"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def save(trace, path):
    """Writes compact JSON; gzip without a time stamp or file name, so the same input gives the same bytes."""
    data = json.dumps(trace, separators=(",", ":")).encode("utf-8")
    with open(path, "wb") as raw:
        if path.endswith(".gz"):
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
                f.write(data)
        else:
            raw.write(data)


def cat(e):
    return str(e.get("cat", "")).lower()


def correlation(e):
    return (e.get("args") or {}).get("correlation")


def end(e):
    return float(e.get("ts", 0)) + float(e.get("dur", 0))


def step_window(events, steps):
    """[begin, end] of the first `steps` ProfilerStep spans, or None without any."""
    spans = sorted((float(e["ts"]), end(e)) for e in events
                   if e.get("ph") == "X" and cat(e) in HOST and str(e.get("name", "")).startswith("ProfilerStep#"))
    if not spans:
        return None
    kept = spans[:steps]
    return kept[0][0], max(s[1] for s in kept)


def cap_window(events, window, max_kernels):
    """The window, ending at the launch of its max_kernels-th kernel when it launches more."""
    lo, hi = window
    launch_ts = {correlation(e): float(e["ts"]) for e in events if cat(e) in LAUNCH}
    launches = sorted(t for t in (launch_ts.get(correlation(e), float(e.get("ts", 0)))
                                  for e in events if e.get("ph") == "X" and cat(e) == "kernel") if lo <= t <= hi)
    if len(launches) > max_kernels:
        hi = launches[max_kernels - 1]
    return lo, hi


def shrink(trace, steps, max_kernels):
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    timed = [e for e in events if e.get("ph") == "X"]
    if not timed:
        return trace
    window = step_window(events, steps) or (min(float(e.get("ts", 0)) for e in timed), max(end(e) for e in timed))
    lo, hi = cap_window(events, window, max_kernels)
    inside = lambda e: lo <= float(e.get("ts", 0)) <= hi
    kept_host = [e for e in events if e.get("ph") == "X" and cat(e) in HOST and inside(e)]
    launched = {correlation(e) for e in kept_host if cat(e) in LAUNCH}
    launched.discard(None)
    out = [e for e in events if e.get("ph") == "M"]
    for e in events:
        c = cat(e)
        if e.get("ph") == "X" and c in HOST:
            keep = inside(e)
        elif e.get("ph") == "X" and c in GPU:
            keep = correlation(e) in launched if correlation(e) is not None else inside(e)
        elif c in FLOW:
            keep = e.get("id") in launched
        else:
            keep = False
        if keep:
            out.append(e)
    if isinstance(trace, dict):
        trace = dict(trace)
        trace["traceEvents"] = out
        return trace
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--steps", type=int, default=2, help="ProfilerStep spans to keep (default 2)")
    p.add_argument("--max-kernels", type=int, default=3000, help="kernels to keep at most (default 3000)")
    a = p.parse_args()
    save(shrink(load(a.input), a.steps, a.max_kernels), a.output)


if __name__ == "__main__":
    main()

"""What torch.profiler costs the host per kernel that torch.compile's generated code launches (the replay's
un-profiled step for compiled jobs). Inductor launches its Triton kernels from Python (cuLaunchKernel through
the Triton launcher, no ATen operator around it); while a profiler is active each launch also builds a
record_function range named after the kernel, with its arguments, grid and stream, which eager operators
do not pay.

A function of K independent sums over tensors of different lengths (one Triton reduction kernel each,
nothing else) is compiled (default mode) and called in R rounds that alternate no profiler and the
profiler (CPU + CUDA activities, default options, nothing exported), each call timed to
the end of its GPU work (tiny kernels: the host sets the time), with a probe of the host's speed before
each round. Then one traced call counts its events: the ranges named after kernels (cpu_op "triton_*"),
other operators, runtime and driver calls, kernels. One JSON line per K: the median call time of each
mode, the profiled minus the un-profiled time per Triton kernel, and the counts; and a line with the
slope over K (the per-kernel cost without the call's fixed part).
  python3 inductor_launch_cost.py [--kernels 16,64,256] [--rounds 7] [--calls 50]
"""
import argparse
import json
import statistics
import time

import torch
from torch.profiler import ProfilerActivity, profile

from probe_host import host_probe  # beside this script


def make(k):
    xs = [torch.randn(1024 + 32 * i, device="cuda") for i in range(k)]

    def f(*ts):
        return [t.sum() for t in ts]

    return torch.compile(f), xs


def timed(fn, xs, calls):
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn(*xs)
    torch.cuda.synchronize()
    return (time.perf_counter_ns() - t0) / calls


def counts(fn, xs):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn(*xs)
        torch.cuda.synchronize()
    c = {"triton_ranges": 0, "other_ops": 0, "kernels": 0}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            c["kernels"] += 1
        elif e.name.startswith("triton_"):
            c["triton_ranges"] += 1
        elif e.name.startswith(("cuda", "cu")):
            c[e.name] = c.get(e.name, 0) + 1
        else:
            c["other_ops"] += 1
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default="16,64,256")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=50)
    a = ap.parse_args()
    rows = []
    for k in (int(x) for x in a.kernels.split(",")):
        fn, xs = make(k)
        for _ in range(5):
            fn(*xs)
        torch.cuda.synchronize()
        none, prof, probes = [], [], []
        for r in range(a.rounds):
            probes.append(host_probe())
            for mode in (("none", "prof") if r % 2 == 0 else ("prof", "none")):
                if mode == "none":
                    none.append(timed(fn, xs, a.calls))
                else:
                    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
                        fn(*xs)  # the first call under a fresh session costs more: not timed
                        prof.append(timed(fn, xs, a.calls))
        c = counts(fn, xs)
        row = {"kernels_asked": k, "none_ns": round(statistics.median(none)), "profiled_ns": round(statistics.median(prof)),
               "none_rounds": [round(x) for x in none], "profiled_rounds": [round(x) for x in prof],
               "host_probe_ns": probes, "counts": c, "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}
        row["extra_ns_per_triton_kernel"] = round((row["profiled_ns"] - row["none_ns"]) / max(1, c["triton_ranges"]))
        rows.append(row)
        print(json.dumps(row), flush=True)
    if len(rows) >= 2:
        n = [r["counts"]["triton_ranges"] for r in rows]
        d = [r["profiled_ns"] - r["none_ns"] for r in rows]
        slope = (d[-1] - d[0]) / max(1, n[-1] - n[0])
        u = [r["none_ns"] for r in rows]
        print(json.dumps({"slope_extra_ns_per_triton_kernel": round(slope),
                          "slope_unprofiled_ns_per_triton_kernel": round((u[-1] - u[0]) / max(1, n[-1] - n[0]))}))


if __name__ == "__main__":
    main()

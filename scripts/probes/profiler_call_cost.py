#!/usr/bin/env python3
"""What torch.profiler (CPU + CUDA activities) costs per runtime or driver call made outside any
PyTorch operator, as cuDNN makes them: kernel launches (three APIs), cudaFuncGetAttributes,
cudaMemsetAsync, cudaGetErrorString, and cuDNN's LSTM pattern (two attribute queries per launch).

The what-if's un-profiled step (diagnosis/what_if.h) removes a cost per recorded host event and per
runtime call. The two were fitted on jobs that launch about one kernel per operator, so the fit
cannot tell a launch's cost from its operator's; cuDNN's LSTM launches three kernels per operator and
queries attributes 617 times a step, and its un-profiled step comes out 22-39 % too slow.

Each workload is one C call (scripts/probes/profiler_call_cost.cu, built into --lib) that makes K calls,
timed (perf_counter_ns around it, synchronized, median of S steps per round, R interleaved rounds)
without the profiler and inside an active torch.profiler window (schedule wait=1 warmup=1, as the
validation set's traces). The timed session is exported, and from it: the calls recorded per step,
the median traced duration of the workload's call, and the median time from one call's start to the
next's. Per call:
  unprofiled_ns   the un-profiled step / K (the call and the C loop)
  profiled_ns     the profiled step / K
  cost_ns         profiled - unprofiled: the profiler's cost per call
  traced_dur_ns   the call's span in the trace (median)
  traced_pitch_ns start to start of consecutive calls in the trace (median)
so traced_dur_ns - unprofiled_ns is the cost inside the call's span, the rest of cost_ns falls
between calls. The torch_add workload (x.add_(1), one operator and one launch from Python, K times)
is the per-operator figure for scale.
Prints one JSON line per workload, then a summary line.
  python3 profiler_call_cost.py --lib libgd_callcost.so [--calls 2000] [--steps 10] [--rounds 5]
"""
import argparse
import ctypes
import json
import os
import statistics

import torch

from profiler_rounds import time_rounds

# workload -> the traced call names that are its calls
CALLS = {
    "launch": ("cudaLaunchKernel",),
    "launch_ex": ("cudaLaunchKernelExC", "cudaLaunchKernelEx"),
    "cu_launch": ("cuLaunchKernel",),
    "func_attributes": ("cudaFuncGetAttributes",),
    "memset": ("cudaMemsetAsync",),
    "error_string": ("cudaGetErrorString",),
    "attrs_launch": ("cudaFuncGetAttributes", "cudaLaunchKernel"),
    "torch_add": ("cudaLaunchKernel",),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="libgd_callcost.so built from scripts/probes/profiler_call_cost.cu")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    for n, v in (("--calls", a.calls), ("--steps", a.steps), ("--rounds", a.rounds)):
        if v < 1:
            raise SystemExit(f"profiler_call_cost: {n} must be at least 1, got {v}")
    torch.cuda.init()
    x = torch.zeros(1, device="cuda")
    buf = torch.zeros(16, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    with open("/proc/self/maps") as f:
        rts = sorted({line.split()[-1] for line in f if "libcudart.so" in line})
    try:
        lib = ctypes.CDLL(os.path.abspath(a.lib))
    except OSError as ex:
        raise SystemExit(f"profiler_call_cost: cannot load {a.lib}: {ex}")
    with open("/proc/self/maps") as f:
        rts_after = sorted({line.split()[-1] for line in f if "libcudart.so" in line})
    if rts_after != rts:
        raise SystemExit(f"profiler_call_cost: {a.lib} loaded another libcudart ({rts_after}, torch's: {rts})")
    K = a.calls
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    ptr = ctypes.c_void_p(buf.data_ptr())

    def c_call(fn, *args):
        f = getattr(lib, fn)

        def run():
            r = f(K, *args)
            if r != 0:
                raise SystemExit(f"profiler_call_cost: {fn} returned CUDA error {r}")
        return run

    def torch_add():
        for _ in range(K):
            x.add_(1)

    work = dict(launch=c_call("gd_launch", stream), launch_ex=c_call("gd_launch_ex", stream),
                cu_launch=c_call("gd_cu_launch", stream), func_attributes=c_call("gd_func_attributes"),
                memset=c_call("gd_memset", ptr, stream), error_string=c_call("gd_error_string"),
                attrs_launch=c_call("gd_attrs_launch", stream), torch_add=torch_add)

    def exported(path, names):
        with open(path) as f:
            evs = json.load(f)["traceEvents"]
        os.remove(path)
        counts, durs, starts = {}, [], []
        for e in evs:
            if e.get("ph") != "X":
                continue
            counts[e.get("cat", "?")] = counts.get(e.get("cat", "?"), 0) + 1
            if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("name") in names:
                durs.append(e["dur"] * 1e3)
                starts.append(e["ts"] * 1e3)
        starts.sort()
        pitch = [b - s for s, b in zip(starts, starts[1:]) if b - s < 1e6]  # within a step's loop
        return dict(events={k: round(v / a.steps, 1) for k, v in sorted(counts.items())},
                    traced_dur_ns=statistics.median(durs) if durs else None,
                    traced_pitch_ns=statistics.median(pitch) if pitch else None,
                    traced_calls_per_step=round(len(durs) / a.steps, 1))

    seen = {}
    got = time_rounds(work, a.steps, a.rounds, lambda w, path: seen.setdefault(w, []).append(exported(path, CALLS[w])))
    summary = {}
    for w in work:
        none, prof_ = statistics.median(got[(w, "none")]), statistics.median(got[(w, "profiled")])
        s = seen[w]
        if all(r["traced_dur_ns"] is None for r in s):
            raise SystemExit(f"profiler_call_cost: the profiled sessions recorded no {'/'.join(CALLS[w])} call for {w} "
                             "(no CUDA activity in the trace)")
        dur = statistics.median(r["traced_dur_ns"] for r in s if r["traced_dur_ns"] is not None)
        pitch = statistics.median(r["traced_pitch_ns"] for r in s if r["traced_pitch_ns"] is not None)
        row = dict(workload=w, calls=K, unprofiled_ns=round(none / K, 1), profiled_ns=round(prof_ / K, 1),
                   cost_ns=round((prof_ - none) / K, 1), traced_dur_ns=round(dur, 1), traced_pitch_ns=round(pitch, 1),
                   step_ns=dict(none=got[(w, "none")], profiled=got[(w, "profiled")]),
                   events=s[-1]["events"], traced_calls_per_step=s[-1]["traced_calls_per_step"],
                   cudart=rts, torch=torch.__version__, gpu=torch.cuda.get_device_name())
        summary[w] = dict(cost_ns=row["cost_ns"], unprofiled_ns=row["unprofiled_ns"], traced_dur_ns=row["traced_dur_ns"])
        print(json.dumps(row), flush=True)
    print(json.dumps(dict(summary=f"per call, medians of {a.rounds} rounds of {a.steps} steps of {K} calls", **summary)))


if __name__ == "__main__":
    main()

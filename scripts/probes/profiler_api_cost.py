#!/usr/bin/env python3
"""What torch.profiler (CPU + CUDA activities) costs per CUDA runtime call that launches nothing.

The what-if's un-profiled step removes a cost per recorded host event and per runtime call
(diagnosis/what_if.h). Those two were fitted together on jobs whose runtime calls are mostly kernel
launches, about one per operator, so the fit cannot tell them apart. Some libraries make many calls
that launch nothing (cuDNN's LSTM: per step 1,686 cudaGetErrorString, 617 cudaFuncGetAttributes,
609 cudaEventRecord, 367 cudaStreamWaitEvent for 373 operators). This measures such calls alone:
each workload is a step of K calls through ctypes into the process's libcudart (the one torch
loaded), timed (perf_counter_ns, median of R interleaved rounds of S steps) without the profiler and
inside an active torch.profiler window (schedule wait=1 warmup=1, as the validation set's traces).
The ctypes call costs the same in both, so (profiled - unprofiled) / K is the profiler's cost per
call. Each timed session is exported to
count the events the timed session recorded per step (the calls must show as cuda_runtime events).
Workloads:
  get_error_string   cudaGetErrorString(0)
  device_attribute   cudaDeviceGetAttribute(&v, 1, device)
  event_record       cudaEventRecord(event, current stream)
  stream_wait_event  cudaStreamWaitEvent(current stream, event, 0)
  tiny_kernel        x.add_(1) on a 1-element CUDA tensor (an operator and a launch; for scale)
Prints one JSON line per workload and configuration, then a summary line.
  python3 profiler_api_cost.py [--calls 2000] [--steps 10] [--rounds 5]
"""
import argparse
import ctypes
import glob
import json
import os
import statistics

import torch

from profiler_rounds import time_rounds


def cudart():
    """The libcudart torch loaded (found by soname in this process's maps)."""
    with open("/proc/self/maps") as f:
        paths = sorted({line.split()[-1] for line in f if "libcudart.so" in line})
    if not paths:
        import torch.cuda  # noqa: F401
        paths = glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "libcudart.so*"))
    if not paths:
        raise SystemExit("profiler_api_cost: no libcudart loaded in this process")
    return ctypes.CDLL(paths[0]), paths[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    torch.cuda.init()
    x = torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    rt, rt_path = cudart()
    rt.cudaGetErrorString.restype = ctypes.c_char_p
    dev = torch.cuda.current_device()
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    ev = ctypes.c_void_p()
    if rt.cudaEventCreateWithFlags(ctypes.byref(ev), 2) != 0:  # cudaEventDisableTiming
        raise SystemExit("profiler_api_cost: cudaEventCreateWithFlags failed")
    v = ctypes.c_int()
    K = a.calls

    def get_error_string():
        f = rt.cudaGetErrorString
        for _ in range(K):
            f(0)

    def device_attribute():
        f, p = rt.cudaDeviceGetAttribute, ctypes.byref(v)
        for _ in range(K):
            f(p, 1, dev)

    def event_record():
        f = rt.cudaEventRecord
        for _ in range(K):
            f(ev, stream)

    def stream_wait_event():
        f = rt.cudaStreamWaitEvent
        for _ in range(K):
            f(stream, ev, 0)

    def tiny_kernel():
        for _ in range(K):
            x.add_(1)

    work = dict(get_error_string=get_error_string, device_attribute=device_attribute, event_record=event_record,
                stream_wait_event=stream_wait_event, tiny_kernel=tiny_kernel)

    counts = {}

    def exported(path):  # the session's events per category, over its active steps
        with open(path) as f:
            evs = json.load(f)["traceEvents"]
        os.remove(path)
        c = {}
        for e in evs:
            if e.get("ph") == "X":
                c[e.get("cat", "?")] = c.get(e.get("cat", "?"), 0) + 1
        return {k: round(v / a.steps, 1) for k, v in sorted(c.items())}

    got = time_rounds(work, a.steps, a.rounds, lambda w, path: counts.__setitem__(w, exported(path)))
    summary = {}
    for w in work:
        none, prof_ = statistics.median(got[(w, "none")]), statistics.median(got[(w, "profiled")])
        per = (prof_ - none) / K
        summary[w] = round(per, 1)
        for c in ("none", "profiled"):
            print(json.dumps(dict(workload=w, config=c, calls=K, step_ns=statistics.median(got[(w, c)]),
                                  rounds_ns=got[(w, c)], events=counts[w], cudart=rt_path,
                                  torch=torch.__version__, gpu=torch.cuda.get_device_name())))
    print(json.dumps(dict(summary="profiler cost per call (ns): (profiled - unprofiled step) / calls, medians of "
                                  f"{a.rounds} rounds", **summary)))


if __name__ == "__main__":
    main()

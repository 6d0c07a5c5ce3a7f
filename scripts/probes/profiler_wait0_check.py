#!/usr/bin/env python3
"""Does a torch.profiler session with schedule wait=0 record CUDA activity? Runs sessions in the order
given (wait values), each 50 tiny kernels a step, and prints each exported trace's event counts.
    python3 scripts/probes/profiler_wait0_check.py 0,1,0     # TEARDOWN_CUPTI=1 and unset both worth a run
"""
import torch, json, tempfile, os, sys
from torch.profiler import profile, schedule, ProfilerActivity as A
x = torch.zeros(1024, device="cuda")
def run(wait, label):
    fd, tmp = tempfile.mkstemp(suffix=".json"); os.close(fd)
    with profile(activities=[A.CPU, A.CUDA], schedule=schedule(wait=wait, warmup=1, active=3),
                 on_trace_ready=lambda p: p.export_chrome_trace(tmp)) as p:
        for _ in range(wait + 4):
            for _ in range(50): x.add_(1)
            torch.cuda.synchronize(); p.step()
    ev = json.load(open(tmp))["traceEvents"]; os.remove(tmp)
    c = {}
    for e in ev:
        if e.get("ph") == "X": c[e.get("cat")] = c.get(e.get("cat"), 0) + 1
    print(label, "wait", wait, {k: c.get(k, 0) for k in ("cpu_op", "cuda_runtime", "kernel")}, flush=True)
order = sys.argv[1].split(",")
for i, w in enumerate(order): run(int(w), f"session{i+1}")

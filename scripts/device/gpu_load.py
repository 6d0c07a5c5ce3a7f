#!/usr/bin/env python3
"""A GPU load for checking the monitor against nvidia-smi. Default: each rank loops bf16 matmuls
(8192^3) with an all_reduce of 256 MiB every 10 matmuls (NVLink traffic) for --seconds.
--phases SECONDS instead runs a schedule of phases of that length, so utilization, memory, power and
PCIe traffic take several values: full, half duty, idle, full with 16 GiB more memory, host-to-device
copies from pinned memory (PCIe RX), a quarter duty, device-to-host copies (PCIe TX), full. Rank 0
prints one JSON line per phase and rank: name, wall-clock start and end, and for the copy phases the
bytes moved (the ground truth for the monitor's PCIe rates).
  torchrun --nproc_per_node 2 scripts/device/gpu_load.py --seconds 40
  torchrun --nproc_per_node 2 scripts/device/gpu_load.py --phases 6 > phases.jsonl"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist

ap = argparse.ArgumentParser()
ap.add_argument("--seconds", type=float, default=40)
ap.add_argument("--phases", type=float, default=0, help="run the phase schedule, each phase this many seconds")
a = ap.parse_args()
local = int(os.environ.get("LOCAL_RANK", 0))
torch.cuda.set_device(local)
multi = int(os.environ.get("WORLD_SIZE", 1)) > 1
if multi:
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
y = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
g = torch.randn(64 << 20, device="cuda")  # 256 MiB


def busy(until, duty=1.0, allreduce=True):
    """Matmuls until `until`; with duty < 1, busy for duty x 100 ms of every 100 ms."""
    i = 0
    while time.time() < until:
        t0 = time.time()
        while time.time() - t0 < 0.1 * duty:
            x @ y
            i += 1
            if multi and allreduce and i % 10 == 0:
                dist.all_reduce(g)
            torch.cuda.synchronize()
        rest = 0.1 - (time.time() - t0)
        if duty < 1 and rest > 0:
            time.sleep(rest)


def copies(until, h2d):
    """256 MiB copies between pinned host memory and the GPU, one direction, until `until`."""
    host = torch.empty(256 << 20, dtype=torch.uint8, pin_memory=True)
    dev = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    n = 0
    while time.time() < until:
        if h2d:
            dev.copy_(host, non_blocking=True)
        else:
            host.copy_(dev, non_blocking=True)
        torch.cuda.synchronize()
        n += 1
    return n * (256 << 20)


if a.phases <= 0:
    busy(time.time() + a.seconds)
else:
    if multi:
        dist.barrier()
    schedule = ["full", "half", "idle", "full+16GiB", "h2d", "quarter", "d2h", "full"]
    t = time.time()
    for name in schedule:
        start, end = t, t + a.phases
        extra, moved = None, None
        # No collectives here: the ranks' phases run independently (an all_reduce would make a rank in
        # a full phase wait for one that is idle).
        if name == "full":
            busy(end, allreduce=False)
        elif name == "half":
            busy(end, 0.5, allreduce=False)
        elif name == "quarter":
            busy(end, 0.25, allreduce=False)
        elif name == "idle":
            time.sleep(max(0.0, end - time.time()))
        elif name == "full+16GiB":
            extra = torch.empty(16 << 30, dtype=torch.uint8, device="cuda")
            busy(end, allreduce=False)
        elif name in ("h2d", "d2h"):
            moved = copies(end, name == "h2d")
        torch.cuda.synchronize()
        del extra
        torch.cuda.empty_cache()  # give the 16 GiB back to the driver, so the next phase shows it freed
        t_end = time.time()
        print(json.dumps({"phase": name, "rank": local, "start": start, "end": t_end, "bytes": moved}), flush=True)
        t = t_end
    torch.cuda.empty_cache()
torch.cuda.synchronize()
if multi:
    dist.barrier()
    dist.destroy_process_group()

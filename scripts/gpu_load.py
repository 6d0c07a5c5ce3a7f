#!/usr/bin/env python3
"""A steady GPU load for checking the monitor against nvidia-smi: each rank loops bf16 matmuls
(8192^3) with an all_reduce of 256 MiB every 10 matmuls (NVLink traffic) for --seconds.
  torchrun --nproc_per_node 2 scripts/gpu_load.py --seconds 40"""
import argparse
import os
import time

import torch
import torch.distributed as dist

ap = argparse.ArgumentParser()
ap.add_argument("--seconds", type=float, default=40)
a = ap.parse_args()
local = int(os.environ.get("LOCAL_RANK", 0))
torch.cuda.set_device(local)
multi = int(os.environ.get("WORLD_SIZE", 1)) > 1
if multi:
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
y = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
g = torch.randn(64 << 20, device="cuda")  # 256 MiB
end = time.time() + a.seconds
i = 0
while time.time() < end:
    z = x @ y
    i += 1
    if multi and i % 10 == 0:
        dist.all_reduce(g)
    if i % 50 == 0:
        torch.cuda.synchronize()
torch.cuda.synchronize()
if multi:
    dist.destroy_process_group()

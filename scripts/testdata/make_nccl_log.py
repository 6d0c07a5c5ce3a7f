#!/usr/bin/env python3
"""Make a small real NCCL_DEBUG=INFO log for gpudoctor's tests (run on a machine with 2 GPUs):
    NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_BUFFSIZE=8388608 NCCL_PROTO=^LL128 \
      torchrun --nproc-per-node 2 scripts/testdata/make_nccl_log.py 2> rank_logs.txt
Each rank runs a few all-reduces; NCCL writes its INFO lines (including "set by environment") to stderr.
"""
import os
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
x = torch.ones(1 << 20, device="cuda")
for _ in range(3):
    dist.all_reduce(x)
torch.cuda.synchronize()
assert float(x[0]) == 2.0 ** 3, float(x[0])
dist.destroy_process_group()

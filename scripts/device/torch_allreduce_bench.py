#!/usr/bin/env python3
"""PyTorch's all_reduce timed the way `gpudoctor nccl bench` times NCCL, for a side-by-side check.

Run under torchrun (one process per GPU):
  torchrun --nproc_per_node 2 scripts/device/torch_allreduce_bench.py -b 8 -e 8G -f 4 -n 20 -w 5
Rank 0 prints one JSON object: per size, the time per call of `-n` back-to-back calls between two CUDA
events after `-w` warm-up calls (nccl-tests' and gpudoctor's method), the slowest rank's, algbw = bytes / time and busbw = algbw * 2(n-1)/n
(nccl-tests' allreduce factor). float32, sum. The result is checked once per size.
"""
import argparse
import json
import os

import torch
import torch.distributed as dist


def size(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mult[s[-1].upper()] if s[-1].upper() in mult else int(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="8G")
    ap.add_argument("-f", type=int, default=4)
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("-w", type=int, default=5)
    a = ap.parse_args()
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local))
    rank, n = dist.get_rank(), dist.get_world_size()
    rows = []
    nbytes = size(a.b)
    while nbytes <= size(a.e):
        count = max(1, nbytes // 4)
        x = torch.full((count,), float(rank + 1), device="cuda")
        dist.all_reduce(x)
        torch.cuda.synchronize()
        wrong = int((x != n * (n + 1) / 2).sum().item())
        for _ in range(a.w):
            dist.all_reduce(x)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(a.n):
            dist.all_reduce(x)
        e.record()
        e.synchronize()
        mean_us = s.elapsed_time(e) * 1000.0 / a.n  # ms -> us
        t = torch.tensor(mean_us, device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)  # the slowest rank, as nccl-tests reports
        us = t.item()
        algbw = count * 4 / us / 1e3
        rows.append({"bytes": count * 4, "time_us": us, "algbw_gbps": algbw, "busbw_gbps": algbw * 2 * (n - 1) / n,
                     "wrong": wrong})
        del x
        nbytes *= a.f
    if rank == 0:
        print(json.dumps({"tool": "torch.distributed.all_reduce", "torch": torch.__version__,
                          "nccl": ".".join(map(str, torch.cuda.nccl.version())), "ranks": n, "results": rows}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

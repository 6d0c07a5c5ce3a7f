"""A small PyTorch training job for `gpudoctor record`'s checks (scripts/record/record_checks.sh).

Each step: forward, backward, fused AdamW, zero_grad and loss.item() (a host sync, as a logging loop
has). Prints one JSON line: the step times (torch.cuda.synchronize + perf_counter_ns around each
step), their median, and the kernels one step launches as the PyTorch profiler counts them.

  python3 torch_job.py [--steps 40] [--warmup 10] [--profile] [--trace FILE] [--nvtx] [--ddp]
--profile runs the timed steps under torch.profiler(record_shapes=True) (the overhead comparison);
--trace FILE also exports that trace; --nvtx wraps each step in an NVTX range "train_step";
--ddp wraps the model in DistributedDataParallel (torchrun; gloo when two ranks share a GPU).
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--trace", default="")
    ap.add_argument("--nvtx", action="store_true")
    ap.add_argument("--ddp", action="store_true")
    a = ap.parse_args()
    torch.manual_seed(0)
    rank = 0
    if a.ddp:
        import torch.distributed as dist
        backend = os.environ.get("BACKEND", "gloo")
        dist.init_process_group(backend)
        rank = dist.get_rank()
    dev = torch.device("cuda", 0 if not a.ddp else int(os.environ.get("LOCAL_RANK", 0)) % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    model = nn.Sequential(*[Block(a.dim, 8) for _ in range(a.layers)], nn.Linear(a.dim, 1000)).to(dev)
    if a.ddp:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[dev.index])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randn(a.batch, a.seq, a.dim, device=dev)
    y = torch.randint(0, 1000, (a.batch, a.seq), device=dev)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        if a.nvtx:
            torch.cuda.nvtx.range_push("train_step")
        out = model(x)
        loss = loss_fn(out.reshape(-1, 1000), y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        v = loss.item()
        if a.nvtx:
            torch.cuda.nvtx.range_pop()
        return v

    for _ in range(a.warmup):
        step()
    torch.cuda.synchronize()
    times = []
    kernels_per_step = None

    def timed(n, prof=None):
        for _ in range(n):
            t0 = time.perf_counter_ns()
            step()
            torch.cuda.synchronize()
            times.append(time.perf_counter_ns() - t0)
            if prof is not None:
                prof.step()

    if a.profile:
        from torch.profiler import ProfilerActivity, profile, schedule
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                     schedule=schedule(wait=0, warmup=1, active=a.steps)) as prof:
            timed(a.steps + 1, prof)
        times = times[1:]
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
        kernels_per_step = len(kernels) / a.steps if kernels else 0
        if a.trace:
            prof.export_chrome_trace(a.trace)
    else:
        timed(a.steps)
    print(json.dumps({"rank": rank, "steps": len(times), "median_step_ns": int(statistics.median(times)),
                      "step_ns": times, "profiler_gpu_events_per_step": kernels_per_step,
                      "mode": "profile" if a.profile else "plain"}), flush=True)
    if a.ddp:
        import torch.distributed as dist
        dist.destroy_process_group()


if __name__ == "__main__":
    main()

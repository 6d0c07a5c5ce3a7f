#!/usr/bin/env python3
"""Make small, real PyTorch profiler traces for gpudoctor's tests and bundled example.

Run on a machine with 2 GPUs (one process per GPU, DDP over NCCL):
    NCCL_NVLS_ENABLE=0 torchrun --nproc-per-node 2 scripts/testdata/make_traces.py --scenario bf16_flash --out DIR

Scenarios (each a tiny GPT-style model, so the traces stay small):
  bf16_flash   healthy: bf16 autocast, scaled_dot_product_attention (flash), fused AdamW,
               DataLoader with 2 workers and pinned memory.
  fp32_naive   fp32 everywhere, hand-written attention (matmul + softmax + matmul),
               single-process DataLoader without pinned memory, foreach AdamW.
  launch_bound a very small model (many tiny kernels), DDP on 2 GPUs.
Writes DIR/<scenario>_rank<R>.pt.trace.json.gz.
"""
import argparse, gzip, os, shutil, time
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads, flash):
        super().__init__()
        self.heads, self.flash = heads, flash
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        if self.flash:
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # the materialized attention a user writes by hand
            att = (q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
            mask = torch.ones(s, s, device=x.device, dtype=torch.bool).tril()
            att = att.masked_fill(~mask, float("-inf")).softmax(-1)
            a = att @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab, d, heads, layers, flash):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d, heads, flash) for _ in range(layers))
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        x = self.emb(idx)
        for blk in self.blocks:
            x = blk(x)
        return self.head(x)


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n, seq, vocab, slow_s):
        self.n, self.seq, self.vocab, self.slow_s = n, seq, vocab, slow_s

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.slow_s:
            time.sleep(self.slow_s)  # stands for decoding / augmentation on the CPU
        g = torch.Generator().manual_seed(i)
        return torch.randint(0, self.vocab, (self.seq + 1,), generator=g)


SCENARIOS = {
    #               vocab  d    heads layers seq  batch flash  amp    workers pin   slow_s  fused
    "bf16_flash":   (8192, 512, 8,    4,     512, 8,    True,  True,  2,      True, 0.0,    True),
    "fp32_naive":   (8192, 512, 8,    4,     512, 8,    False, False, 0,      False, 0.002, False),
    "launch_bound": (1024, 64,  2,    6,     32,  4,    True,  False, 0,      True, 0.0,    False),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenario", choices=SCENARIOS, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--active", type=int, default=2, help="profiled steps")
    args = ap.parse_args()
    vocab, d, heads, layers, seq, batch, flash, amp, workers, pin, slow_s, fused = SCENARIOS[args.scenario]

    dist.init_process_group("nccl")
    rank, local = dist.get_rank(), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(GPT(vocab, d, heads, layers, flash).cuda(), device_ids=[local])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=fused, foreach=None if fused else True)
    ds = Tokens(10_000, seq, vocab, slow_s)
    dl = torch.utils.data.DataLoader(ds, batch_size=batch, num_workers=workers, pin_memory=pin,
                                     sampler=torch.utils.data.distributed.DistributedSampler(ds))
    it = iter(dl)

    def step():
        tok = next(it).cuda(non_blocking=pin)
        x, y = tok[:, :-1], tok[:, 1:]
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = F.cross_entropy(model(x).float().view(-1, vocab), y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(5):  # warm up outside the profiler (cuDNN/cuBLAS heuristics, NCCL init)
        step()
    torch.cuda.synchronize()
    os.makedirs(args.out, exist_ok=True)
    tmp = os.path.join(args.out, f".{args.scenario}_rank{rank}.json")
    sched = torch.profiler.schedule(wait=1, warmup=1, active=args.active, repeat=1)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts, schedule=sched, record_shapes=True,
                                on_trace_ready=lambda p: p.export_chrome_trace(tmp)) as prof:
        for _ in range(2 + args.active):
            step()
            prof.step()
    final = os.path.join(args.out, f"{args.scenario}_rank{rank}.pt.trace.json.gz")
    with open(tmp, "rb") as src, gzip.open(final, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(tmp)
    dist.barrier()
    dist.destroy_process_group()
    print(f"rank {rank}: wrote {final} ({os.path.getsize(final)} bytes)")


if __name__ == "__main__":
    main()

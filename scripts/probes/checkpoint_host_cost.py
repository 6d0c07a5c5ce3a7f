"""What activation checkpointing (torch.utils.checkpoint, use_reentrant=False) costs on the host beyond
the forward it re-runs (issue 17's no_checkpointing edit removes the re-run forward; this is the rest:
the wrapper, the saved-tensor pack hooks in forward, the unpack and recomputation hooks in backward).

A stack of L blocks, tiny tensors so that the host sets the step, timed without the profiler
(perf_counter_ns around `steps` steps, one synchronize at the end, median of 5 rounds, modes
interleaved round by round):
  plain      forward + backward, no checkpointing
  ckpt       forward + backward, every block checkpointed
  fwd        forward alone with autograd recording (what the recomputation re-runs)
  fwd_ckpt   forward alone under checkpointing
Per block: extra = (ckpt - plain - fwd) / L, the host time checkpointing costs besides the re-run
forward; its ratio to the block's forward (fwd / L); of it, in forward: (fwd_ckpt - fwd) / L.
Then one step under the profiler counts each block's forward operators (aten ops).
Prints one JSON line per (block, L, precision) and a summary line.
  python3 checkpoint_host_cost.py [--layers 4,16] [--blocks gpt,mlp] [--steps 100]
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile
from torch.utils.checkpoint import checkpoint

import case_jobs  # its GPT block (LayerNorm, QKV, SDPA, projection, MLP), beside this script

case_jobs._imports()
GptBlock, _ = case_jobs.make_model_classes()


class MlpBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class Stack(nn.Module):
    def __init__(self, kind, layers, d=64, heads=4):
        super().__init__()
        cls = GptBlock if kind == "gpt" else MlpBlock
        self.blocks = nn.ModuleList(cls(d, heads) for _ in range(layers))
        self.ckpt = False

    def forward(self, x):
        for b in self.blocks:
            x = checkpoint(b, x, use_reentrant=False) if self.ckpt else b(x)
        return x


def run(m, x, mode, amp):
    m.ckpt = mode in ("ckpt", "fwd_ckpt")
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        y = m(x)
        loss = y.float().square().mean()
    if mode in ("plain", "ckpt"):
        loss.backward()
        for p in m.parameters():
            p.grad = None


def measure(kind, layers, amp, steps):
    torch.manual_seed(0)
    m = Stack(kind, layers).cuda()
    x = torch.randn(2, 16, 64, device="cuda", requires_grad=True)
    modes = ["plain", "ckpt", "fwd", "fwd_ckpt"]
    for mode in modes:
        for _ in range(20):
            run(m, x, mode, amp)
    torch.cuda.synchronize()
    rounds = {k: [] for k in modes}
    for _ in range(5):
        for mode in modes:
            t0 = time.perf_counter_ns()
            for _ in range(steps):
                run(m, x, mode, amp)
            torch.cuda.synchronize()
            rounds[mode].append((time.perf_counter_ns() - t0) / steps)
    t = {k: statistics.median(v) for k, v in rounds.items()}
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run(m, x, "fwd", amp)
    ops = sum(1 for e in prof.events() if e.name.startswith("aten::") and e.cpu_parent is None) / layers
    extra = (t["ckpt"] - t["plain"] - t["fwd"]) / layers
    fwd_block = t["fwd"] / layers
    return dict(block=kind, layers=layers, precision="bf16" if amp else "fp32", steps=steps,
                step_ns={k: round(v) for k, v in t.items()}, rounds_ns={k: [round(r) for r in v] for k, v in rounds.items()},
                forward_ns_per_block=round(fwd_block), top_level_ops_per_block=ops,
                extra_ns_per_block=round(extra), extra_over_forward=round(extra / fwd_block, 3),
                extra_in_forward_ns_per_block=round((t["fwd_ckpt"] - t["fwd"]) / layers),
                torch=torch.__version__, gpu=torch.cuda.get_device_name(0))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", default="4,16")
    ap.add_argument("--blocks", default="gpt,mlp")
    ap.add_argument("--steps", type=int, default=100)
    a = ap.parse_args()
    rows = []
    for kind in a.blocks.split(","):
        for layers in [int(v) for v in a.layers.split(",")]:
            for amp in (False, True):
                r = measure(kind, layers, amp, a.steps)
                rows.append(r)
                print(json.dumps(r), flush=True)
    ratios = [r["extra_over_forward"] for r in rows]
    print(json.dumps(dict(summary="extra_over_forward", median=statistics.median(ratios), min=min(ratios),
                          max=max(ratios), n=len(ratios))))


if __name__ == "__main__":
    main()

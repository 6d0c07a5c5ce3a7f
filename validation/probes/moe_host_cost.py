"""What bf16 autocast costs the host in a mixture-of-experts layer that dispatches expert by expert, without
the profiler: the measurement the bf16 prediction for such a layer needs.

The lab's moe_top2_sync job measured 1.33x from bf16 where gpudoctor predicts 1.71-1.97x: after bf16 its
step is set by the host, and its bf16 trace spends more host time than the FP32 trace's operators plus
autocast's casts account for (aten::mm +22 us and aten::addmm +26 us a call traced, where a dense
transformer's GEMMs cost the same in both precisions). Two causes are possible:
- each expert's GEMMs change shape every step (the tokens routed to it), so cuBLAS looks its kernel up
  again at each call, which may cost more in bf16;
- the host was slower in the bf16 rounds (the lab machine's host speed varies up to 2x).
This probe separates them. The same top-2 MoE layer (8 experts, nonzero per expert, forward and backward),
small enough that the host sets the step, runs in FP32 and under bf16 autocast, with the tokens routed
at random each step ("varying": every expert's token count changes) or with one fixed routing ("fixed":
the same shapes every step). Rounds alternate the four configurations; a probe of the host's speed (a
1-element CPU add) precedes each round.

One JSON line per round: {"precision" ("fp32" | "bf16"), "routing" ("varying" | "fixed"), "ms" (per step,
un-profiled, N steps between two synchronizations), "host_probe_ns", "round", "torch", "gpu", "tag"}; then
one line {"casts": {"fp32": n, "bf16": n}, "ops": {precision: {operator: n}}} (aten::_to_copy, aten::addmm and
aten::mm per step, counted under a CPU-only profiler after the timed rounds).

Usage (on the GPU machine, two processes for a band; --tokens, --d and --ff set the layer's sizes, by
default a small layer whose host sets the step in FP32 too):
  python3 validation/probes/moe_host_cost.py --out $OUT/moe_host_A.jsonl --tag A
  python3 validation/probes/moe_host_cost.py --out $OUT/moe_host_L.jsonl --tag L --tokens 16384 --d 1024 --ff 4096
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn

TOKENS, D, FF, EXPERTS = 2048, 128, 256, 8


class MoE(nn.Module):
    def __init__(self, d=D, ff=FF):
        super().__init__()
        self.router = nn.Linear(d, EXPERTS, bias=False)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Linear(ff, d))
                                     for _ in range(EXPERTS))

    def forward(self, x, chosen):
        weights = self.router(x).float().softmax(-1).gather(1, chosen)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            tok, slot = (chosen == e).nonzero(as_tuple=True)  # the host waits here
            y = expert(x.index_select(0, tok)) * weights[tok, slot].unsqueeze(-1).to(x.dtype)
            out.index_add_(0, tok, y.to(out.dtype))
        return out


def step(model, x, fixed, bf16):
    """One forward and backward. `fixed`: the routing to use, else a new one drawn on the GPU (drawn in
    both cases, so that both launch the same work): every expert's token count changes every step, as a
    trained router's does."""
    drawn = torch.randint(0, EXPERTS, (x.shape[0], 2), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
        loss = model(x, drawn if fixed is None else fixed).float().square().mean()
    loss.backward()
    for p in model.parameters():
        p.grad = None
    x.grad = None


def host_probe(n=2000):
    a, b = torch.ones(1), torch.ones(1)
    t0 = time.perf_counter_ns()
    for _ in range(n):
        torch.add(a, b)
    return (time.perf_counter_ns() - t0) / n


def ops_per_step(model, x, bf16, names=("aten::_to_copy", "aten::addmm", "aten::mm")):
    """How many of each operator one step calls (casts, GEMMs), under a CPU-only profiler."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step(model, x, None, bf16)
        torch.cuda.synchronize()
    return {n: sum(1 for e in prof.events() if e.name == n) for n in names}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="A")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=20,
                    help="steps per configuration before the rounds; the varying routing's bf16 cost decays as "
                         "cuBLASLt meets each shape (hundreds of steps): a long warm-up measures the steady state")
    ap.add_argument("--tokens", type=int, default=TOKENS)
    ap.add_argument("--d", type=int, default=D, help="model width")
    ap.add_argument("--ff", type=int, default=FF, help="each expert's hidden width")
    a = ap.parse_args()
    torch.manual_seed(0)
    model = MoE(a.d, a.ff).cuda()
    x = torch.randn(a.tokens, a.d, device="cuda", requires_grad=True)
    configs = [(p, r) for p in ("fp32", "bf16") for r in ("varying", "fixed")]
    routes = {"varying": None, "fixed": torch.randint(0, EXPERTS, (a.tokens, 2), device="cuda")}
    for p, r in configs:  # warm-up: cuBLAS handles, autocast caches, the shapes cuBLASLt has met
        for _ in range(a.warmup):
            step(model, x, routes[r], p == "bf16")
    torch.cuda.synchronize()
    meta = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "tag": a.tag,
            "tokens": a.tokens, "d": a.d, "ff": a.ff, "warmup": a.warmup}
    with open(a.out, "w") as f:
        for i in range(a.rounds):
            for p, r in configs[i % 4:] + configs[:i % 4]:  # each configuration in each position
                probe = host_probe()
                torch.cuda.synchronize()
                t0 = time.perf_counter_ns()
                for _ in range(a.steps):
                    step(model, x, routes[r], p == "bf16")
                torch.cuda.synchronize()
                ms = (time.perf_counter_ns() - t0) / a.steps / 1e6
                f.write(json.dumps({"precision": p, "routing": r, "ms": ms, "host_probe_ns": probe,
                                    "round": i, **meta}) + "\n")
                f.flush()
        ops = {p: ops_per_step(model, x, p == "bf16") for p in ("fp32", "bf16")}
        casts = {p: ops[p]["aten::_to_copy"] for p in ops}
        f.write(json.dumps({"casts": casts, "ops": ops, **meta}) + "\n")
    rows = [json.loads(line) for line in open(a.out) if '"ms"' in line]
    for p, r in configs:
        v = [row["ms"] for row in rows if row["precision"] == p and row["routing"] == r]
        print(f"{p} {r}: median {statistics.median(v):.3f} ms/step over {len(v)} rounds, casts {casts[p]}")


if __name__ == "__main__":
    main()

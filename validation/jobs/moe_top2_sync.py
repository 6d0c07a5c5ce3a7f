"""A mixture-of-experts LM (top-2 router, 8 experts) whose per-expert dispatch syncs the host via nonzero()."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from common import Cycle, Job, autocast, lm_loss

DESC = ("token LM with 2 MoE layers (d 1024, 8 experts of 1024 -> 4096 -> 1024, top-2 softmax router, "
        "per-expert loop with nonzero + index_select + index_add_: 16 host syncs per forward), FP32, "
        "batch 8 x seq 1024, vocab 8192; batches made ahead in pinned memory")
KIND = "sync"
VARIANTS = {"base": [], "bf16": ["bf16"], "capacity": ["moe_grouped_dispatch"]}
VARIANT_NOTES = {"bf16": "the routing's nonzero syncs stay (removing them needs a capacity-based dispatch)",
                 "capacity": "fixed-capacity dispatch (capacity factor 1.25, overflow dropped) and the 8 experts "
                             "as one batched GEMM per layer (torch.baddbmm over stacked weights): no host sync"}
TIME_HINT_S = 75  # the 300 warm-up steps of 3 variants: about 45 s
CAPACITY_FACTOR = 1.25

BATCH, SEQ, VOCAB, D, FF, EXPERTS = 8, 1024, 8192, 1024, 4096, 8


class MoE(nn.Module):
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(D, EXPERTS, bias=False)
        self.experts = nn.ModuleList(nn.Sequential(nn.Linear(D, FF), nn.GELU(), nn.Linear(FF, D))
                                     for _ in range(EXPERTS))

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        weights, chosen = self.router(x).float().softmax(-1).topk(2, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            tok, slot = (chosen == e).nonzero(as_tuple=True)  # data-dependent size: the host waits here
            if tok.numel() == 0:
                continue
            y = expert(x.index_select(0, tok)) * weights[tok, slot].unsqueeze(-1).to(x.dtype)
            out.index_add_(0, tok, y.to(out.dtype))
        return out.reshape(shape)


class CapacityMoE(nn.Module):
    """The same experts as stacked weights, tokens placed in fixed-capacity slots without a host sync."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(D, EXPERTS, bias=False)
        self.w1 = nn.Parameter(torch.randn(EXPERTS, D, FF) / D ** 0.5)
        self.b1 = nn.Parameter(torch.zeros(EXPERTS, 1, FF))
        self.w2 = nn.Parameter(torch.randn(EXPERTS, FF, D) / FF ** 0.5)
        self.b2 = nn.Parameter(torch.zeros(EXPERTS, 1, D))

    def forward(self, x):
        shape = x.shape
        x = x.reshape(-1, shape[-1])
        n = x.shape[0]
        cap = int(math.ceil(2 * n / EXPERTS * CAPACITY_FACTOR))
        weights, chosen = self.router(x).float().softmax(-1).topk(2, dim=-1)
        weights = (weights / weights.sum(-1, keepdim=True)).reshape(-1)
        expert = chosen.reshape(-1)  # (2n,) token-major: token t's choices at 2t, 2t+1
        onehot = torch.zeros(2 * n, EXPERTS, dtype=torch.int32, device=x.device).scatter_(1, expert[:, None], 1)
        pos = (onehot.cumsum(0) - 1).gather(1, expert[:, None]).squeeze(1)  # rank within its expert
        keep = pos < cap
        slot = torch.where(keep, expert * cap + pos, EXPERTS * cap)  # overflow -> one spare row
        tok = torch.arange(n, device=x.device).repeat_interleave(2)
        buf = x.new_zeros(EXPERTS * cap + 1, x.shape[1]).index_copy(0, slot, x.index_select(0, tok))
        h = F.gelu(torch.baddbmm(self.b1, buf[:-1].view(EXPERTS, cap, -1), self.w1))
        y = torch.baddbmm(self.b2, h, self.w2).reshape(EXPERTS * cap, -1)
        y = torch.cat([y, y.new_zeros(1, y.shape[1])]).index_select(0, slot)
        y = y * (weights * keep).unsqueeze(-1).to(y.dtype)
        return torch.zeros_like(x).index_add_(0, tok, y.to(x.dtype)).reshape(shape)


class MoELM(nn.Module):
    def __init__(self, capacity=False):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.norms = nn.ModuleList(nn.LayerNorm(D) for _ in range(2))
        self.moes = nn.ModuleList((CapacityMoE() if capacity else MoE()) for _ in range(2))
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, idx):
        x = self.emb(idx)
        for norm, moe in zip(self.norms, self.moes):
            x = x + moe(norm(x))
        return self.head(x)


class MoEJob(Job):
    # Each expert's token count changes every step, so its GEMMs' shapes do. Under bf16 the first calls of a
    # shape cost the host up to 3.5 ms each (cuBLASLt choosing and loading a kernel for it), and new shapes keep
    # coming for hundreds of steps: in the lab's H200 bf16 trace, taken after about 100 steps, GEMM calls over
    # 150 us still took 20, 11, 4.5, 11 and 2.7 ms of the five traced steps (none in FP32). A training run
    # lives past that; the lab times it after.
    warmup_steps = 300

    def __init__(self, bf16, capacity):
        self.model = MoELM(capacity).cuda().train()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=3e-4)
        g = torch.Generator().manual_seed(0)
        self.batches = Cycle([torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=g).pin_memory()
                              for _ in range(8)])
        self.bf16, self.samples_per_step = bf16, BATCH

    def step(self):
        t = next(self.batches).to("cuda", non_blocking=True)
        with autocast(self.bf16):
            loss = lm_loss(self.model(t[:, :-1]), t[:, 1:])
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    fixes = VARIANTS[variant]
    return MoEJob(bf16="bf16" in fixes, capacity="moe_grouped_dispatch" in fixes)

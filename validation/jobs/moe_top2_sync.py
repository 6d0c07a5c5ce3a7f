"""A mixture-of-experts LM (top-2 router, 8 experts) whose per-expert dispatch syncs the host via nonzero()."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import Cycle, Job, autocast, lm_loss

DESC = ("token LM with 2 MoE layers (d 1024, 8 experts of 1024 -> 4096 -> 1024, top-2 softmax router, "
        "per-expert loop with nonzero + index_select + index_add_: 16 host syncs per forward), FP32, "
        "batch 8 x seq 1024, vocab 8192; batches made ahead in pinned memory")
KIND = "sync"
VARIANTS = {"base": [], "bf16": ["bf16"]}
VARIANT_NOTES = {"bf16": "the routing's nonzero syncs stay (removing them needs a capacity-based dispatch)"}
TIME_HINT_S = 20

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


class MoELM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.norms = nn.ModuleList(nn.LayerNorm(D) for _ in range(2))
        self.moes = nn.ModuleList(MoE() for _ in range(2))
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, idx):
        x = self.emb(idx)
        for norm, moe in zip(self.norms, self.moes):
            x = x + moe(norm(x))
        return self.head(x)


class MoEJob(Job):
    def __init__(self, bf16):
        self.model = MoELM().cuda().train()
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
    return MoEJob(bf16="bf16" in VARIANTS[variant])

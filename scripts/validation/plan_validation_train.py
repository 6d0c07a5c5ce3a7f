#!/usr/bin/env python3
"""Measure peak memory and step time of a small GPT (GPT-2 small shapes, the planner's `gpt2` preset)
on one GPU at several (precision, micro-batch, recomputation) settings, for `gpudoctor plan`'s
validation. Writes one JSON line per setting to stdout:
    python3 scripts/validation/plan_validation_train.py > measured.jsonl
Model: 12 layers, hidden 768, 12 heads, vocab 50257, seq 1024, tied embeddings, learned positions,
SDPA (flash) attention, fused AdamW; recomputation = torch.utils.checkpoint around every block.
"""
import json, time
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

L, H, A, V, S = 12, 768, 12, 50257, 1024


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(H), nn.LayerNorm(H)
        self.qkv, self.proj = nn.Linear(H, 3 * H), nn.Linear(H, H)
        self.fc1, self.fc2 = nn.Linear(H, 4 * H), nn.Linear(4 * H, H)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, A, H // A).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, H))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, recompute):
        super().__init__()
        self.recompute = recompute
        self.wte, self.wpe = nn.Embedding(V, H), nn.Embedding(S, H)
        self.blocks = nn.ModuleList(Block() for _ in range(L))
        self.ln = nn.LayerNorm(H)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = checkpoint(b, x, use_reentrant=False) if self.recompute == "full" else b(x)
        return self.ln(x) @ self.wte.weight.t()


def measure(precision, mb, recompute):
    torch.manual_seed(0)
    model = GPT(recompute).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randint(0, V, (mb, S + 1), device="cuda")
    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
            logits = model(x[:, :-1])
        loss = F.cross_entropy(logits.float().view(-1, V), x[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(10):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    times.sort()
    r = dict(precision=precision, micro_batch=mb, recompute=recompute,
             peak_allocated=torch.cuda.max_memory_allocated(), step_s=times[len(times) // 2],
             params=sum(p.numel() for p in model.parameters()))
    del model, opt
    torch.cuda.empty_cache()
    return r


if __name__ == "__main__":
    torch.backends.cuda.matmul.allow_tf32 = False
    for precision, mb, rc in [("bf16", 4, "none"), ("bf16", 8, "none"), ("bf16", 16, "none"), ("bf16", 32, "none"),
                              ("bf16", 16, "full"), ("bf16", 32, "full"), ("fp32", 4, "none"), ("fp32", 8, "none"),
                              ("fp32", 8, "full")]:
        print(json.dumps(measure(precision, mb, rc)), flush=True)

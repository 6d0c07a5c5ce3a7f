"""A deep narrow MLP (200 parameter tensors) trained with AdamW(foreach=False): a Python loop per parameter."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import Cycle, Job, StepGraph

DESC = ("100 x (Linear 256 -> 256 + GELU, residual) = 200 parameter tensors, FP32, batch 256, "
        "AdamW(foreach=False) (per-parameter for-loop); batches made ahead in pinned memory: launch-bound")
KIND = "launch_bound"
VARIANTS = {"base": [], "fused": ["fused_optimizer"], "graphed_step": ["cuda_graphs"]}
VARIANT_NOTES = {"fused": "AdamW(foreach=False) -> AdamW(fused=True)",
                 "graphed_step": "whole step (forward, backward, AdamW(foreach=False, capturable=True)) in one "
                                 "CUDA graph"}
TIME_HINT_S = 20

WIDTH, LAYERS, BATCH = 256, 100, 256


class DeepNarrow(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(WIDTH, WIDTH) for _ in range(LAYERS))

    def forward(self, x):
        for layer in self.layers:
            x = x + F.gelu(layer(x))
        return x


class ForeachFalseJob(Job):
    def __init__(self, fused, graphed=False):
        self.model = DeepNarrow().cuda().train()
        kw = dict(fused=True) if fused else dict(foreach=False, capturable=graphed)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, **kw)
        g = torch.Generator().manual_seed(0)
        self.batches = Cycle([(torch.randn(BATCH, WIDTH, generator=g).pin_memory(),
                               torch.randn(BATCH, WIDTH, generator=g).pin_memory()) for _ in range(8)])
        self.samples_per_step = BATCH
        self.graph = None
        if graphed:
            def body(x, y):
                loss = F.mse_loss(self.model(x), y)
                loss.backward()
                self.opt.step()
                return loss

            self.graph = StepGraph(body, next(self.batches), self.opt)

    def step(self):
        if self.graph is not None:
            self.graph(next(self.batches))
            return
        x, y = (t.to("cuda", non_blocking=True) for t in next(self.batches))
        loss = F.mse_loss(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return ForeachFalseJob(fused="fused_optimizer" in VARIANTS[variant], graphed=variant == "graphed_step")

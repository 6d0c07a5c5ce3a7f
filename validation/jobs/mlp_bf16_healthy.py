"""A healthy GEMM-bound MLP: bf16 autocast, 8192-wide layers, fused AdamW, pinned prefetching loader."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from common import VIRTUAL_LEN, Batches, Job, autocast

DESC = ("MLP 1024 -> 8192 -> 8192 -> 8192 -> 1000 (GELU), bf16 autocast, batch 8192 rows, AdamW(fused=True); "
        "whole batches from a DataLoader (2 workers, pinned, prefetch 4), non_blocking: GEMM-bound")
KIND = "healthy"
VARIANTS = {"base": [], "workers4": ["loader_workers"], "batch16k": ["batch_size"]}
VARIANT_NOTES = {"workers4": "2 -> 4 workers (the loader already keeps up)",
                 "batch16k": "batch 8192 -> 16384 rows (speedup compared per sample)"}
TIME_HINT_S = 20

IN, WIDTH, CLASSES = 1024, 8192, 1000


class FeatureBatches(Dataset):
    """Whole (batch, 1024) bf16 feature batches with labels, from a bank of 4."""

    def __init__(self, batch):
        g = torch.Generator().manual_seed(0)
        self.bank = [(torch.randn(batch, IN, generator=g).to(torch.bfloat16),
                      torch.randint(0, CLASSES, (batch,), generator=g)) for _ in range(4)]

    def __len__(self):
        return VIRTUAL_LEN

    def __getitem__(self, i):
        x, y = self.bank[i % len(self.bank)]
        return x.clone(), y.clone()


class MLPHealthy(Job):
    def __init__(self, batch, workers):
        self.model = nn.Sequential(nn.Linear(IN, WIDTH), nn.GELU(), nn.Linear(WIDTH, WIDTH), nn.GELU(),
                                   nn.Linear(WIDTH, WIDTH), nn.GELU(), nn.Linear(WIDTH, CLASSES)).cuda()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, fused=True)
        self.batches = Batches(DataLoader(FeatureBatches(batch), batch_size=None, shuffle=True,
                                          num_workers=workers, pin_memory=True, prefetch_factor=4))
        self.samples_per_step = batch

    def step(self):
        x, y = next(self.batches)
        x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)
        with autocast(True):
            loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    fixes = VARIANTS[variant]
    return MLPHealthy(batch=16384 if "batch_size" in fixes else 8192, workers=4 if "loader_workers" in fixes else 2)

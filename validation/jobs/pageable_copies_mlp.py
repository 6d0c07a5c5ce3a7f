"""An MLP on large float feature batches held in ordinary (pageable) host memory, copied every step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import Cycle, Job, autocast

DESC = ("MLP 4096 -> 2048 -> 2048 -> 10, FP32, batch 4096 of 4096 float features (64 MiB) from CPU tensors "
        "not pinned, .to('cuda') blocking every step")
KIND = "copy_bound"
VARIANTS = {"base": [], "pinned": ["pinned_copies"], "pinned+bf16": ["pinned_copies", "bf16"]}
VARIANT_NOTES = {"pinned": "batches pinned once (pin_memory()) + non_blocking=True"}
TIME_HINT_S = 20

BATCH, FEAT = 4096, 4096


class PageableMLP(Job):
    def __init__(self, pinned, bf16):
        self.model = nn.Sequential(nn.Linear(FEAT, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(),
                                   nn.Linear(2048, 10)).cuda()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        g = torch.Generator().manual_seed(0)
        items = []
        for _ in range(4):
            x, y = torch.randn(BATCH, FEAT, generator=g), torch.randint(0, 10, (BATCH,), generator=g)
            items.append((x.pin_memory(), y.pin_memory()) if pinned else (x, y))
        self.batches = Cycle(items)
        self.pinned, self.bf16, self.samples_per_step = pinned, bf16, BATCH

    def step(self):
        x, y = next(self.batches)
        x, y = x.to("cuda", non_blocking=self.pinned), y.to("cuda", non_blocking=self.pinned)
        with autocast(self.bf16):
            loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    fixes = VARIANTS[variant]
    return PageableMLP(pinned="pinned_copies" in fixes, bf16="bf16" in fixes)

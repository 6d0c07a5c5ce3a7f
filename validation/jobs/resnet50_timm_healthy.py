"""A healthy timm ResNet-50 run: bf16 autocast, channels_last, fused AdamW, pinned prefetching loader."""
import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from common import Batches, ImageBatchDataset, Job, autocast, gpu_normalize, norm_stats

DESC = ("timm resnet50 (pretrained=False), bf16 autocast + channels_last, batch 128 at 224 px, uint8 batches "
        "from a DataLoader (4 workers, pinned, prefetch 4) normalized on the GPU, AdamW(fused=True)")
KIND = "healthy"
VARIANTS = {"base": [], "workers8": ["loader_workers"], "norm_once": ["pinned_copies"]}
VARIANT_NOTES = {"workers8": "4 -> 8 workers (the loader already keeps up)",
                 "norm_once": "mean/std made once with norm_stats() instead of torch.tensor(list, device=...) per step: no pageable copy, no host block"}
TIME_HINT_S = 20

BATCH, RES = 128, 224


class ResNetHealthy(Job):
    def __init__(self, workers, norm_once=False):
        model = timm.create_model("resnet50", pretrained=False, num_classes=1000).cuda().train()
        self.model = model.to(memory_format=torch.channels_last)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3, weight_decay=0.05, fused=True)
        self.batches = Batches(DataLoader(ImageBatchDataset(BATCH, RES), batch_size=None, shuffle=True,
                                          num_workers=workers, pin_memory=True, prefetch_factor=4))
        self.samples_per_step = BATCH
        self.stats = norm_stats() if norm_once else None

    def step(self):
        x, y = next(self.batches)
        x = gpu_normalize(x.to("cuda", non_blocking=True), channels_last=True, stats=self.stats)
        y = y.to("cuda", non_blocking=True)
        with autocast(True):
            loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return ResNetHealthy(workers=8 if "loader_workers" in VARIANTS[variant] else 4, norm_once=variant == "norm_once")

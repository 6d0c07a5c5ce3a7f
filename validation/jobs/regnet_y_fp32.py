"""torchvision RegNetY-1.6GF trained in FP32: grouped convolutions and squeeze-excitation blocks."""
import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader

from common import Batches, ImageBatchDataset, Job, autocast, gpu_normalize, norm_stats

DESC = ("torchvision regnet_y_1_6gf (weights=None), FP32 NCHW, batch 96 at 224 px, uint8 batches from a "
        "DataLoader (4 workers, pinned) normalized on the GPU, SGD momentum")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"], "norm_once": ["pinned_copies"], "channels_last": ["channels_last"]}
VARIANT_NOTES = {"norm_once": "mean/std made once with norm_stats() instead of torch.tensor(list, device=...) per step: no pageable copy, no host block"}
TIME_HINT_S = 30

BATCH, RES = 96, 224


class RegNetJob(Job):
    def __init__(self, bf16, norm_once=False, channels_last=False):
        self.model = torchvision.models.regnet_y_1_6gf(weights=None).cuda().train()
        if channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)
        self.cl = channels_last
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-5)
        self.batches = Batches(DataLoader(ImageBatchDataset(BATCH, RES), batch_size=None, shuffle=True,
                                          num_workers=4, pin_memory=True))
        self.bf16, self.samples_per_step = bf16, BATCH
        self.stats = norm_stats() if norm_once else None

    def step(self):
        x, y = next(self.batches)
        x = gpu_normalize(x.to("cuda", non_blocking=True), channels_last=self.cl, stats=self.stats)
        y = y.to("cuda", non_blocking=True)
        with autocast(self.bf16):
            loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    fixes = VARIANTS[variant]
    return RegNetJob(bf16="bf16" in fixes, norm_once=variant == "norm_once", channels_last="channels_last" in fixes)

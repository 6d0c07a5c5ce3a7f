"""timm EfficientNet-B0 in bf16 + channels_last fed by 2 JPEG-decoding workers, pageable copies."""
import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from common import Batches, Job, JpegDataset, autocast, imagenet_train_transform, make_jpegs

DESC = ("timm efficientnet_b0 (pretrained=False), bf16 autocast + channels_last, batch 64 at 160 px; "
        "DataLoader with 2 workers decoding 192 px JPEGs, pin_memory=False, blocking .to('cuda')")
KIND = "loader_bound"
VARIANTS = {
    "base": [],
    "workers8": ["loader_workers"],
    "workers8+pinned": ["loader_workers", "pinned_copies"],
}
VARIANT_NOTES = {"workers8": "2 -> 8 workers", "workers8+pinned": "2 -> 8 workers, pin_memory=True + non_blocking"}
SCORE_AS = {"workers8": "loader_workers_x4"}
TIME_HINT_S = 30

BATCH = 64


class EffNetJpeg(Job):
    def __init__(self, workers, pinned):
        model = timm.create_model("efficientnet_b0", pretrained=False, num_classes=1000).cuda().train()
        self.model = model.to(memory_format=torch.channels_last)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3, fused=True)
        ds = JpegDataset(make_jpegs(256, 192), imagenet_train_transform(160))
        self.batches = Batches(DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=workers,
                                          pin_memory=pinned, drop_last=True))
        self.pinned, self.samples_per_step = pinned, BATCH

    def step(self):
        images, target = next(self.batches)
        images = images.to("cuda", non_blocking=self.pinned).contiguous(memory_format=torch.channels_last)
        target = target.to("cuda", non_blocking=self.pinned)
        with autocast(True):
            loss = F.cross_entropy(self.model(images), target)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    fixes = VARIANTS[variant]
    return EffNetJpeg(workers=8 if "loader_workers" in fixes else 2, pinned="pinned_copies" in fixes)

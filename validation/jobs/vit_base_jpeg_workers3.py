"""timm ViT-B/16 in bf16 fed by 3 JPEG-decoding DataLoader workers: the workers set the step."""
import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from common import Batches, Job, JpegDataset, autocast, imagenet_train_transform, make_jpegs

DESC = ("timm vit_base_patch16_224 (pretrained=False), bf16 autocast, batch 64; DataLoader with 3 workers "
        "decoding 320 px JPEGs with PIL + RandomResizedCrop(224)/flip/ToTensor/Normalize, pinned + non_blocking, "
        "AdamW(fused=True)")
KIND = "loader_bound"
VARIANTS = {
    "base": [],
    "workers6": ["loader_workers"],
    "workers12": ["loader_workers"],
}
VARIANT_NOTES = {"workers6": "3 -> 6 workers", "workers12": "3 -> 12 workers"}
WORKERS = {"base": 3, "workers6": 6, "workers12": 12}
SCORE_AS = {"workers12": "loader_workers_x4"}
TIME_HINT_S = 35

BATCH = 64


class ViTJpeg(Job):
    def __init__(self, workers):
        self.model = timm.create_model("vit_base_patch16_224", pretrained=False, num_classes=1000).cuda().train()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3, weight_decay=0.05, fused=True)
        ds = JpegDataset(make_jpegs(256, 320), imagenet_train_transform(224))
        self.batches = Batches(DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=workers,
                                          pin_memory=True, drop_last=True))
        self.samples_per_step = BATCH

    def step(self):
        images, target = next(self.batches)
        images, target = images.to("cuda", non_blocking=True), target.to("cuda", non_blocking=True)
        with autocast(True):
            loss = F.cross_entropy(self.model(images), target, label_smoothing=0.1)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return ViTJpeg(workers=WORKERS[variant])

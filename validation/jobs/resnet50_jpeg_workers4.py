"""torchvision ResNet-50 fed by an ImageFolder-style loader that decodes JPEGs in 4 workers (loader-bound)."""
import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader

from common import Batches, Job, JpegDataset, autocast, imagenet_train_transform, make_jpegs

DESC = ("torchvision resnet50 (weights=None), FP32 NCHW, batch 64; DataLoader with 4 workers decoding 320 px "
        "JPEGs with PIL + RandomResizedCrop(224)/flip/ToTensor/Normalize, pinned + non_blocking, SGD momentum")
KIND = "loader_bound"
VARIANTS = {
    "base": [],
    "workers16": ["loader_workers"],
    "workers16+bf16+channels_last": ["loader_workers", "bf16", "channels_last"],
}
VARIANT_NOTES = {"workers16": "4 -> 16 workers", "workers16+bf16+channels_last": "4 -> 16 workers"}
SCORE_AS = {"workers16": "loader_workers_x4"}
TIME_HINT_S = 35

BATCH = 64


class ResNet50Jpeg(Job):
    def __init__(self, workers, bf16, channels_last):
        model = torchvision.models.resnet50(weights=None).cuda().train()
        self.model = model.to(memory_format=torch.channels_last) if channels_last else model
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        ds = JpegDataset(make_jpegs(256, 320), imagenet_train_transform(224))
        self.batches = Batches(DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=workers,
                                          pin_memory=True, drop_last=True))
        self.bf16, self.cl, self.samples_per_step = bf16, channels_last, BATCH

    def step(self):
        images, target = next(self.batches)
        images = images.to("cuda", non_blocking=True)
        if self.cl:
            images = images.contiguous(memory_format=torch.channels_last)
        target = target.to("cuda", non_blocking=True)
        with autocast(self.bf16):
            loss = F.cross_entropy(self.model(images), target)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    fixes = VARIANTS[variant]
    return ResNet50Jpeg(workers=16 if "loader_workers" in fixes else 4, bf16="bf16" in fixes,
                        channels_last="channels_last" in fixes)

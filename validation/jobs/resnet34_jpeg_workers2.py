"""torchvision ResNet-34 fed by an ImageFolder-style loader that decodes JPEGs in 2 workers (loader-bound)."""
import torch.nn.functional as F
import torch
import torchvision
from torch.utils.data import DataLoader

from common import Batches, Job, JpegDataset, imagenet_train_transform, make_jpegs

DESC = ("torchvision resnet34 (weights=None), FP32 NCHW, batch 64; DataLoader with 2 workers decoding 320 px "
        "JPEGs with PIL + RandomResizedCrop(224)/flip/ToTensor/Normalize, pinned + non_blocking, SGD momentum")
KIND = "loader_bound"
VARIANTS = {"base": [], "workers4": ["loader_workers"], "workers8": ["loader_workers"]}
VARIANT_NOTES = {"workers4": "2 -> 4 workers", "workers8": "2 -> 8 workers"}
SCORE_AS = {"workers8": "loader_workers_x4"}
TIME_HINT_S = 35

BATCH = 64


class ResNet34Jpeg(Job):
    def __init__(self, workers):
        self.model = torchvision.models.resnet34(weights=None).cuda().train()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        ds = JpegDataset(make_jpegs(256, 320), imagenet_train_transform(224))
        self.batches = Batches(DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=workers,
                                          pin_memory=True, drop_last=True))
        self.samples_per_step = BATCH

    def step(self):
        images, target = next(self.batches)
        images = images.to("cuda", non_blocking=True)
        target = target.to("cuda", non_blocking=True)
        loss = F.cross_entropy(self.model(images), target)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return ResNet34Jpeg(workers={"base": 2, "workers4": 4, "workers8": 8}[variant])

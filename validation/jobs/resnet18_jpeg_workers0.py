"""torchvision ResNet-18 whose DataLoader decodes JPEGs in the training process (num_workers=0)."""
import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader

from common import Batches, Job, JpegDataset, imagenet_train_transform, make_jpegs

DESC = ("torchvision resnet18 (weights=None), FP32, batch 64; DataLoader num_workers=0 decoding 160 px JPEGs "
        "with PIL + RandomResizedCrop(128)/flip/ToTensor/Normalize on the training thread, not pinned")
KIND = "loader_bound"
VARIANTS = {"base": [], "workers4": ["loader_workers"], "workers8": ["loader_workers"]}
VARIANT_NOTES = {"workers4": "0 -> 4 workers", "workers8": "0 -> 8 workers"}
SCORE_AS = {"workers4": "loader_workers_4"}
TIME_HINT_S = 30

BATCH = 64


class ResNet18Jpeg(Job):
    def __init__(self, workers):
        self.model = torchvision.models.resnet18(weights=None, num_classes=100).cuda().train()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        ds = JpegDataset(make_jpegs(256, 160), imagenet_train_transform(128), classes=100)
        self.batches = Batches(DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=workers, drop_last=True))
        self.samples_per_step = BATCH

    def step(self):
        images, target = next(self.batches)
        images, target = images.to("cuda"), target.to("cuda")
        loss = F.cross_entropy(self.model(images), target)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return ResNet18Jpeg(workers={"base": 0, "workers4": 4, "workers8": 8}[variant])

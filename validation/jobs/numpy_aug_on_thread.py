"""A ResNet-18 whose loop augments every image with numpy on the training thread (no DataLoader)."""
import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Dataset

from common import VIRTUAL_LEN, Batches, Job, numpy_augment

DESC = ("torchvision resnet18 (weights=None, 100 classes), FP32, batch 128 of 112 px crops; each step builds "
        "its batch with numpy (crop, flip, colour jitter, noise, normalize per image) on the training thread "
        "from a 128 px uint8 image bank, then torch.from_numpy(...).to('cuda')")
KIND = "host_bound"
VARIANTS = {"base": [], "loader4": ["host_work_off_thread"]}
VARIANT_NOTES = {"loader4": "the same augmentation in a Dataset read by DataLoader(num_workers=4, pin_memory=True)"}
TIME_HINT_S = 20

BATCH, SRC, CROP, CLASSES = 128, 128, 112, 100


def image_bank(n=256, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, SRC, SRC, 3), dtype=np.uint8), rng.integers(0, CLASSES, n)


class AugDataset(Dataset):
    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return VIRTUAL_LEN

    def __getitem__(self, i):
        k = i % len(self.images)
        rng = np.random.default_rng(i)
        return torch.from_numpy(numpy_augment(self.images[k], CROP, rng)), int(self.labels[k])


class NumpyAugJob(Job):
    def __init__(self, workers):
        self.model = torchvision.models.resnet18(weights=None, num_classes=CLASSES).cuda().train()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)
        self.images, self.labels = image_bank()
        self.rng, self.workers = np.random.default_rng(0), workers
        if workers:
            self.batches = Batches(DataLoader(AugDataset(self.images, self.labels), batch_size=BATCH, shuffle=True,
                                              num_workers=workers, pin_memory=True, drop_last=True))
        self.samples_per_step = BATCH

    def next_batch(self):
        if self.batches is not None:
            return next(self.batches)
        idx = self.rng.integers(0, len(self.images), BATCH)
        x = np.stack([numpy_augment(self.images[k], CROP, self.rng) for k in idx])  # the training thread's work
        return torch.from_numpy(x), torch.from_numpy(self.labels[idx])

    def step(self):
        x, y = self.next_batch()
        x, y = x.to("cuda", non_blocking=self.workers > 0), y.to("cuda", non_blocking=self.workers > 0)
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return NumpyAugJob(workers=4 if "host_work_off_thread" in VARIANTS[variant] else 0)

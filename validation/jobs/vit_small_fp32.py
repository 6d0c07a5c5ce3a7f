"""timm ViT-Small/16 image classifier trained in FP32."""
import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from common import Batches, ImageBatchDataset, Job, autocast, gpu_normalize

DESC = ("timm vit_small_patch16_224 (pretrained=False), FP32, batch 128 at 224 px, uint8 batches from a "
        "DataLoader (4 workers, pinned) normalized on the GPU, AdamW foreach")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"]}
TIME_HINT_S = 20

BATCH, RES = 128, 224


class ViTJob(Job):
    def __init__(self, bf16):
        self.model = timm.create_model("vit_small_patch16_224", pretrained=False, num_classes=1000).cuda().train()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3, weight_decay=0.05)
        self.batches = Batches(DataLoader(ImageBatchDataset(BATCH, RES), batch_size=None, shuffle=True,
                                          num_workers=4, pin_memory=True))
        self.bf16, self.samples_per_step = bf16, BATCH

    def step(self):
        x, y = next(self.batches)
        x, y = gpu_normalize(x.to("cuda", non_blocking=True)), y.to("cuda", non_blocking=True)
        with autocast(self.bf16):
            loss = F.cross_entropy(self.model(x), y, label_smoothing=0.1)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return ViTJob(bf16="bf16" in VARIANTS[variant])

"""timm ConvNeXt-Tiny trained in FP32, NCHW (channels first)."""
import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from common import Batches, ImageBatchDataset, Job, autocast, gpu_normalize

DESC = ("timm convnext_tiny (pretrained=False), FP32 NCHW, batch 64 at 224 px, uint8 batches from a DataLoader "
        "(4 workers, pinned) normalized on the GPU, AdamW foreach")
KIND = "gpu_bound"
VARIANTS = {
    "base": [],
    "bf16": ["bf16"],
    "channels_last": ["channels_last"],
    "bf16+channels_last": ["bf16", "channels_last"],
}
TIME_HINT_S = 25

BATCH, RES = 64, 224


class ConvNeXtJob(Job):
    def __init__(self, bf16, channels_last):
        model = timm.create_model("convnext_tiny", pretrained=False, num_classes=1000).cuda().train()
        if channels_last:
            model = model.to(memory_format=torch.channels_last)
        self.model = model
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3, weight_decay=0.05)
        self.batches = Batches(DataLoader(ImageBatchDataset(BATCH, RES), batch_size=None, shuffle=True,
                                          num_workers=4, pin_memory=True))
        self.bf16, self.cl, self.samples_per_step = bf16, channels_last, BATCH

    def step(self):
        x, y = next(self.batches)
        x = gpu_normalize(x.to("cuda", non_blocking=True), channels_last=self.cl)
        y = y.to("cuda", non_blocking=True)
        with autocast(self.bf16):
            loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    fixes = VARIANTS[variant]
    return ConvNeXtJob(bf16="bf16" in fixes, channels_last="channels_last" in fixes)

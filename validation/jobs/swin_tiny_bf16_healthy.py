"""A healthy timm Swin-Tiny run: bf16 autocast, fused AdamW, a pinned prefetching loader, no host syncs."""
import timm
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from common import Batches, ImageBatchDataset, Job, autocast, gpu_normalize, norm_stats

DESC = ("timm swin_tiny_patch4_window7_224 (pretrained=False), bf16 autocast, batch 64 at 224 px, uint8 "
        "batches from a DataLoader (4 workers, pinned) normalized on the GPU with mean/std made once, "
        "AdamW(fused=True)")
KIND = "healthy"
VARIANTS = {"base": [], "workers8": ["loader_workers"], "fused_attn": ["sdpa"]}
VARIANT_NOTES = {"workers8": "4 -> 8 workers (the loader already keeps up)",
                 "fused_attn": "timm's fused attention switched on for Swin (set_fused_attn(True, experimental=True)): "
                               "its window attention through scaled_dot_product_attention with the bias as a mask"}
TIME_HINT_S = 20

BATCH, RES = 64, 224


class SwinHealthy(Job):
    def __init__(self, workers, fused_attn=False):
        cfg = timm.layers.config
        before = cfg._USE_FUSED_ATTN
        if fused_attn:
            timm.layers.set_fused_attn(True, experimental=True)
        try:
            self.model = timm.create_model("swin_tiny_patch4_window7_224", pretrained=False,
                                           num_classes=1000).cuda().train()
        finally:
            cfg._USE_FUSED_ATTN = before
        fused = [getattr(m, "fused_attn") for m in self.model.modules() if hasattr(m, "fused_attn")]
        if not fused or any(fused) != fused_attn:
            raise RuntimeError(f"asked fused attention {fused_attn}, the model's attention modules say {set(fused)}")
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3, weight_decay=0.05, fused=True)
        self.batches = Batches(DataLoader(ImageBatchDataset(BATCH, RES), batch_size=None, shuffle=True,
                                          num_workers=workers, pin_memory=True))
        self.stats, self.samples_per_step = norm_stats(), BATCH

    def step(self):
        x, y = next(self.batches)
        x, y = gpu_normalize(x.to("cuda", non_blocking=True), stats=self.stats), y.to("cuda", non_blocking=True)
        with autocast(True):
            loss = F.cross_entropy(self.model(x), y, label_smoothing=0.1)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return SwinHealthy(workers=8 if "loader_workers" in VARIANTS[variant] else 4, fused_attn="sdpa" in VARIANTS[variant])

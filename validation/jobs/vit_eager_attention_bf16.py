"""A ViT-Base-width image classifier under bf16 autocast whose attention is the eager implementation."""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader
from transformers import ViTConfig, ViTForImageClassification

from common import Batches, ImageBatchDataset, Job, autocast, gpu_normalize, hf_model, norm_stats

DESC = ("transformers ViTForImageClassification (768 wide, 12 heads, 8 layers, patch 16 at 224 px: 197 tokens), "
        "bf16 autocast, batch 64, attn_implementation='eager', AdamW fused, uint8 batches from a DataLoader "
        "(4 workers, pinned) normalized on the GPU")
KIND = "gpu_bound"
VARIANTS = {"base": [], "sdpa": ["sdpa"]}
VARIANT_NOTES = {"sdpa": "attn_implementation 'eager' -> 'sdpa'"}
TIME_HINT_S = 20

BATCH, RES = 64, 224


class ViTEagerJob(Job):
    def __init__(self, attn):
        cfg = ViTConfig(hidden_size=768, num_hidden_layers=8, num_attention_heads=12, intermediate_size=3072,
                        image_size=RES, patch_size=16, num_labels=1000)
        self.model = hf_model(ViTForImageClassification, cfg, attn=attn)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=3e-4, fused=True)
        self.batches = Batches(DataLoader(ImageBatchDataset(BATCH, RES), batch_size=None, shuffle=True,
                                          num_workers=4, pin_memory=True))
        self.stats, self.samples_per_step = norm_stats(), BATCH

    def step(self):
        x, y = next(self.batches)
        x = gpu_normalize(x.to("cuda", non_blocking=True), stats=self.stats)
        y = y.to("cuda", non_blocking=True)
        with autocast(True):
            loss = F.cross_entropy(self.model(pixel_values=x).logits, y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return ViTEagerJob(attn="sdpa" if "sdpa" in VARIANTS[variant] else "eager")

"""torchvision EfficientNetV2-S trained in FP32: fused-MBConv and depthwise stages."""
import torchvision

from common import ImageClassifierJob

DESC = ("torchvision efficientnet_v2_s (weights=None), FP32 NCHW, batch 64 at 224 px, uint8 batches from a DataLoader (4 workers, pinned) normalized on the GPU with mean/std made once, SGD momentum")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"], "graphed_step": ["cuda_graphs"]}
VARIANT_NOTES = {"graphed_step": "whole step (normalization, forward, backward, SGD) in one CUDA graph; each batch "
                                 "copied into its static inputs"}
TIME_HINT_S = 25

BATCH, RES = 64, 224


def build(variant):
    fixes = VARIANTS[variant]
    return ImageClassifierJob(torchvision.models.efficientnet_v2_s(weights=None), BATCH, RES, bf16="bf16" in fixes,
                              graphed=variant == "graphed_step")

"""torchvision EfficientNet-B0 trained in FP32: depthwise convolutions, squeeze-excitation, SiLU."""
import torchvision

from common import ImageClassifierJob

DESC = ("torchvision efficientnet_b0 (weights=None), FP32 NCHW, batch 128 at 224 px, uint8 batches from a DataLoader (4 workers, pinned) normalized on the GPU with mean/std made once, SGD momentum")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"]}
TIME_HINT_S = 25

BATCH, RES = 128, 224


def build(variant):
    return ImageClassifierJob(torchvision.models.efficientnet_b0(weights=None), BATCH, RES, bf16="bf16" in VARIANTS[variant])

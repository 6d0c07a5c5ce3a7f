"""torchvision MobileNetV3-Large trained in FP32 at a batch that fills the GPU: depthwise convolutions, hardswish."""
import torchvision

from common import ImageClassifierJob

DESC = ("torchvision mobilenet_v3_large (weights=None), FP32 NCHW, batch 192 at 224 px, uint8 batches from a DataLoader (4 workers, pinned) normalized on the GPU with mean/std made once, SGD momentum")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"]}
TIME_HINT_S = 25

BATCH, RES = 192, 224


def build(variant):
    return ImageClassifierJob(torchvision.models.mobilenet_v3_large(weights=None), BATCH, RES, bf16="bf16" in VARIANTS[variant])

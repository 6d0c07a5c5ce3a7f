"""torchvision ResNeXt-50 32x4d trained in FP32: grouped 3x3 convolutions."""
import torchvision

from common import ImageClassifierJob

DESC = ("torchvision resnext50_32x4d (weights=None), FP32 NCHW, batch 64 at 224 px, uint8 batches from a DataLoader (4 workers, pinned) normalized on the GPU with mean/std made once, SGD momentum")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"], "channels_last": ["channels_last"]}
TIME_HINT_S = 25

BATCH, RES = 64, 224


def build(variant):
    fixes = VARIANTS[variant]
    return ImageClassifierJob(torchvision.models.resnext50_32x4d(weights=None), BATCH, RES, bf16="bf16" in fixes,
                              channels_last="channels_last" in fixes)

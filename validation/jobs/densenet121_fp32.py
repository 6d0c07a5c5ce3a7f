"""torchvision DenseNet-121 trained in FP32: many small convolutions, batch norms and concatenations."""
import torch
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader

from common import Batches, ImageBatchDataset, Job, StepGraph, autocast, gpu_normalize, norm_stats

DESC = ("torchvision densenet121 (weights=None), FP32 NCHW, batch 64 at 224 px, uint8 batches from a DataLoader "
        "(4 workers, pinned) normalized on the GPU, SGD momentum")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"], "norm_once": ["pinned_copies"], "graphed_step": ["cuda_graphs"]}
VARIANT_NOTES = {
    "norm_once": "mean/std made once with norm_stats() instead of torch.tensor(list, device=...) per step: no pageable copy, no host block",
    "graphed_step": "whole step (forward, backward, SGD momentum) in one CUDA graph, mean/std "
                    "made once (a graph cannot hold their per-step copy)",
}
TIME_HINT_S = 30

BATCH, RES = 64, 224


class DenseNetJob(Job):
    def __init__(self, bf16, norm_once=False, graphed=False):
        self.model = torchvision.models.densenet121(weights=None).cuda().train()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
        self.batches = Batches(DataLoader(ImageBatchDataset(BATCH, RES), batch_size=None, shuffle=True,
                                          num_workers=4, pin_memory=True))
        self.bf16, self.samples_per_step = bf16, BATCH
        self.stats = norm_stats() if norm_once or graphed else None
        self.graph = None
        if graphed:
            def body(x, y):
                with autocast(self.bf16):
                    loss = F.cross_entropy(self.model(gpu_normalize(x, stats=self.stats)), y)
                loss.backward()
                self.opt.step()
                return loss

            self.graph = StepGraph(body, next(self.batches), self.opt)

    def step(self):
        if self.graph is not None:
            self.graph(next(self.batches))
            return
        x, y = next(self.batches)
        x = gpu_normalize(x.to("cuda", non_blocking=True), stats=self.stats)
        y = y.to("cuda", non_blocking=True)
        with autocast(self.bf16):
            loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return DenseNetJob(bf16="bf16" in VARIANTS[variant], norm_once=variant == "norm_once",
                       graphed=variant == "graphed_step")

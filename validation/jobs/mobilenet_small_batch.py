"""timm MobileNetV3-Small at batch 8 and 96 px: hundreds of tiny kernels, the host's launches set the pace."""
import timm
import torch
import torch.nn.functional as F

from common import Cycle, Job, StepGraph, autocast, gpu_normalize, norm_stats

DESC = ("timm mobilenetv3_small_100 (pretrained=False), FP32, batch 8 at 96 px, uint8 batches made ahead in "
        "pinned memory, AdamW foreach: launch-bound")
KIND = "launch_bound"
VARIANTS = {
    "base": [],
    "bf16": ["bf16"],
    "channels_last": ["channels_last"],
    "batch64": ["batch_size"],
    "graphed_step": ["cuda_graphs"],
}
VARIANT_NOTES = {"batch64": "batch 8 -> 64 (speedup compared per sample)",
                 "graphed_step": "whole step (forward, backward, AdamW(capturable=True)) in one CUDA graph; "
                                 "mean/std made once (a graph cannot hold their per-step copy)"}
TIME_HINT_S = 20

RES = 96


class MobileNetJob(Job):
    def __init__(self, batch, bf16, channels_last, graphed=False):
        model = timm.create_model("mobilenetv3_small_100", pretrained=False, num_classes=100).cuda().train()
        self.model = model.to(memory_format=torch.channels_last) if channels_last else model
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3, capturable=graphed)
        g = torch.Generator().manual_seed(0)
        items = [(torch.randint(0, 256, (batch, 3, RES, RES), dtype=torch.uint8, generator=g).pin_memory(),
                  torch.randint(0, 100, (batch,), generator=g).pin_memory()) for _ in range(8)]
        self.batches = Cycle(items)
        self.bf16, self.cl, self.samples_per_step = bf16, channels_last, batch
        self.graph = None
        if graphed:
            stats = norm_stats()

            def body(x, y):
                with autocast(self.bf16):
                    loss = F.cross_entropy(self.model(gpu_normalize(x, self.cl, stats)), y)
                loss.backward()
                self.opt.step()
                return loss

            self.graph = StepGraph(body, next(self.batches), self.opt)

    def step(self):
        if self.graph is not None:
            self.graph(next(self.batches))
            return
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
    return MobileNetJob(batch=64 if "batch_size" in fixes else 8, bf16="bf16" in fixes,
                        channels_last="channels_last" in fixes, graphed=variant == "graphed_step")

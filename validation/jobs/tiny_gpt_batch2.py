"""A tiny GPT at batch 2: hundreds of microsecond kernels, the host's launches set the step."""
import torch

from common import Cycle, Job, MiniGPT, lm_loss

DESC = ("hand-written GPT (d 256, 6 layers, 4 heads, seq 64, vocab 4096), FP32, batch 2, AdamW foreach; "
        "batches made ahead in pinned memory: launch-bound")
KIND = "launch_bound"
VARIANTS = {
    "base": [],
    "graphed_step": ["cuda_graphs"],
    "graphed_model": ["cuda_graphs"],
    "batch16": ["batch_size"],
}
VARIANT_NOTES = {
    "graphed_step": "whole step (forward, backward, AdamW(capturable=True)) captured in one CUDA graph, "
                    "the recipe of the PyTorch CUDA-graphs docs",
    "graphed_model": "torch.cuda.make_graphed_callables(model): forward and backward graphed, optimizer eager",
    "batch16": "batch 2 -> 16 (speedup compared per sample)",
}
SCORE_AS = {"graphed_model": "cuda_graphs_model"}
TIME_HINT_S = 20

SEQ, VOCAB = 64, 4096


class TinyGPT(Job):
    def __init__(self, batch, graphed_model=False):
        self.model = MiniGPT(VOCAB, 256, 4, 6, SEQ).cuda().train()
        g = torch.Generator().manual_seed(0)
        self.batches = Cycle([torch.randint(0, VOCAB, (batch, SEQ + 1), generator=g).pin_memory()
                              for _ in range(8)])
        if graphed_model:
            sample = torch.randint(0, VOCAB, (batch, SEQ), device="cuda")
            self.model = torch.cuda.make_graphed_callables(self.model, (sample,))
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=3e-4)
        self.samples_per_step = batch

    def step(self):
        t = next(self.batches).to("cuda", non_blocking=True)
        loss = lm_loss(self.model(t[:, :-1]), t[:, 1:])
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


class TinyGPTGraphed(Job):
    """Whole-step capture: static input buffers, warm-up on a side stream, one graph replayed per step."""

    def __init__(self, batch):
        self.model = MiniGPT(VOCAB, 256, 4, 6, SEQ).cuda().train()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=3e-4, capturable=True)
        g = torch.Generator().manual_seed(0)
        self.batches = Cycle([torch.randint(0, VOCAB, (batch, SEQ + 1), generator=g).pin_memory()
                              for _ in range(8)])
        self.static = next(self.batches).to("cuda").clone()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                self.train_once()
        torch.cuda.current_stream().wait_stream(s)
        self.graph = torch.cuda.CUDAGraph()
        self.opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(self.graph):
            self.static_loss = self.train_once(zero=False)
        self.samples_per_step = batch

    def train_once(self, zero=True):
        loss = lm_loss(self.model(self.static[:, :-1]), self.static[:, 1:])
        loss.backward()
        self.opt.step()
        if zero:
            self.opt.zero_grad(set_to_none=True)
        return loss

    def step(self):
        self.static.copy_(next(self.batches), non_blocking=True)  # new data into the captured input
        self.graph.replay()


def build(variant):
    if variant == "graphed_step":
        return TinyGPTGraphed(batch=2)
    return TinyGPT(batch=16 if variant == "batch16" else 2, graphed_model=variant == "graphed_model")

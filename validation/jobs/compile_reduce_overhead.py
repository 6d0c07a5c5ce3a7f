"""A small GPT compiled with torch.compile (default mode); the fix: mode='reduce-overhead' (CUDA graphs)."""
import torch

from common import Cycle, Job, MiniGPT, lm_loss

DESC = ("hand-written GPT (d 384, 4 layers, 6 heads, seq 256, vocab 8192), FP32, batch 8, torch.compile(model) "
        "default mode, AdamW foreach eager; batches made ahead in pinned memory")
KIND = "launch_bound"
VARIANTS = {"base": [], "reduce_overhead": ["cuda_graphs"]}
VARIANT_NOTES = {"reduce_overhead": "torch.compile(mode='reduce-overhead'): the model's passes graphed, "
                                    "optimizer eager"}
# The prediction to compare with: gpudoctor's alternative for the model alone graphed
SCORE_AS = {"reduce_overhead": "cuda_graphs_model"}
TIME_HINT_S = 120

BATCH, SEQ, VOCAB = 8, 256, 8192


class CompiledGPT(Job):
    warmup_steps = 12  # compilation, then cudagraph trees' warm-up and recording

    def __init__(self, mode):
        self.model = MiniGPT(VOCAB, 384, 6, 4, SEQ).cuda().train()
        self.cmodel = torch.compile(self.model, mode=mode)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=3e-4)
        g = torch.Generator().manual_seed(0)
        self.batches = Cycle([torch.randint(0, VOCAB, (BATCH, SEQ + 1), generator=g).pin_memory()
                              for _ in range(8)])
        self.graphs, self.samples_per_step = mode == "reduce-overhead", BATCH

    def step(self):
        if self.graphs:
            torch.compiler.cudagraph_mark_step_begin()  # a new iteration: earlier graph outputs may be reused
        t = next(self.batches).to("cuda", non_blocking=True)
        loss = lm_loss(self.cmodel(t[:, :-1]), t[:, 1:])
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return CompiledGPT(mode="reduce-overhead" if "cuda_graphs" in VARIANTS[variant] else "default")

"""A GPT trained in bf16 that logs loss, grad norm and accuracy with .item() and f-strings every step."""
import time

import torch
from torch.utils.data import DataLoader

from common import Batches, Job, MiniGPT, StepGraph, TokenDataset, autocast, lm_loss

DESC = ("hand-written GPT (d 512, 6 layers, 8 heads, seq 256, vocab 16384), bf16 autocast, batch 16, "
        "clip_grad_norm_, AdamW(fused=True), DataLoader 2 workers pinned; every step: loss.item(), "
        "grad_norm.item(), accuracy.item(), throughput and lr formatted into a log line")
KIND = "sync"
VARIANTS = {"base": [], "log50": ["no_host_syncs"], "graphed_step": ["cuda_graphs"]}
VARIANT_NOTES = {"log50": "the metrics read and formatted every 50 steps",
                 "graphed_step": "whole step (forward, backward, clip, AdamW(fused, capturable)) in one CUDA graph; "
                                 "the metrics still read and formatted every step from its outputs"}
TIME_HINT_S = 20

BATCH, SEQ, VOCAB = 16, 256, 16384


class LoggingGPT(Job):
    def __init__(self, log_every, graphed=False):
        self.model = MiniGPT(VOCAB, 512, 8, 6, SEQ).cuda().train()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=3e-4, fused=True, capturable=graphed)
        self.batches = Batches(DataLoader(TokenDataset(SEQ + 1, VOCAB), batch_size=BATCH, shuffle=True,
                                          num_workers=2, pin_memory=True, drop_last=True))
        self.log_every, self.n, self.log, self.t_last = log_every, 0, [], time.perf_counter()
        self.samples_per_step = BATCH
        self.graph = StepGraph(self.train_on, next(self.batches), self.opt) if graphed else None

    def step(self):
        if self.graph is not None:
            out = self.graph(next(self.batches))
        else:
            out = self.train_on(next(self.batches).to("cuda", non_blocking=True))
            self.opt.zero_grad(set_to_none=True)
        self.n += 1
        if self.n % self.log_every == 0:
            self.write_log(*out)

    def train_on(self, t):
        x, y = t[:, :-1], t[:, 1:]
        with autocast(True):
            logits = self.model(x)
            loss = lm_loss(logits, y)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        return loss, gnorm, logits, y

    def write_log(self, loss, gnorm, logits, y):
        """What a hand-written training loop prints: each .item() waits for the GPU to finish."""
        acc = (logits.argmax(-1) == y).float().mean()
        now = time.perf_counter()
        tok_s = self.log_every * BATCH * SEQ / max(now - self.t_last, 1e-9)
        self.t_last = now
        lr = self.opt.param_groups[0]["lr"]
        self.log.append(f"step {self.n:6d} | loss {loss.item():.4f} | grad_norm {gnorm.item():.3f} | "
                        f"acc {acc.item() * 100:5.2f} % | {tok_s:,.0f} tok/s | lr {lr:.2e}")


def build(variant):
    return LoggingGPT(log_every=50 if "no_host_syncs" in VARIANTS[variant] else 1, graphed=variant == "graphed_step")

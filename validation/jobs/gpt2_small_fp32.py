"""GPT-2 small shaped LM (6 layers) trained in FP32 with the default (foreach) AdamW."""
import torch
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel

from common import Batches, Job, TokenDataset, autocast, hf_model

DESC = ("transformers GPT2LMHeadModel, GPT-2 small width (768, 12 heads) with 6 layers, FP32, batch 8 x seq 512, "
        "AdamW default (foreach), DataLoader 2 workers pinned")
KIND = "gpu_bound"
VARIANTS = {
    "base": [],
    "bf16": ["bf16"],
    "fused": ["fused_optimizer"],
    "bf16+fused": ["bf16", "fused_optimizer"],
}
TIME_HINT_S = 25

BATCH, SEQ, VOCAB = 8, 512, 50257


class GPT2Job(Job):
    def __init__(self, bf16, fused):
        cfg = GPT2Config(vocab_size=VOCAB, n_positions=1024, n_embd=768, n_layer=6, n_head=12)
        self.model = hf_model(GPT2LMHeadModel, cfg)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=6e-4, weight_decay=0.1,
                                     fused=True if fused else None)
        self.batches = Batches(DataLoader(TokenDataset(SEQ, VOCAB), batch_size=BATCH, shuffle=True, num_workers=2,
                                          pin_memory=True, drop_last=True))
        self.bf16, self.samples_per_step = bf16, BATCH

    def step(self):
        ids = next(self.batches).to("cuda", non_blocking=True)
        with autocast(self.bf16):
            loss = self.model(input_ids=ids, labels=ids).loss
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    fixes = VARIANTS[variant]
    return GPT2Job(bf16="bf16" in fixes, fused="fused_optimizer" in fixes)

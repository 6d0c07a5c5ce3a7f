"""GPT-2 small width LM in FP32 whose attention is the eager (materialized softmax) implementation."""
import torch
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel

from common import Batches, Job, TokenDataset, autocast, hf_model

DESC = ("transformers GPT2LMHeadModel (768 wide, 12 heads, 6 layers), FP32, batch 8 x seq 1024, "
        "attn_implementation='eager' (score matrix materialized), AdamW fused, DataLoader 2 workers pinned")
KIND = "gpu_bound"
VARIANTS = {"base": [], "sdpa": ["sdpa"], "bf16": ["bf16"]}
VARIANT_NOTES = {"sdpa": "attn_implementation 'eager' -> 'sdpa'"}
TIME_HINT_S = 25

BATCH, SEQ, VOCAB = 8, 1024, 50257


class GPT2EagerJob(Job):
    def __init__(self, attn, bf16):
        cfg = GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=768, n_layer=6, n_head=12)
        self.model = hf_model(GPT2LMHeadModel, cfg, attn=attn)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=6e-4, weight_decay=0.1, fused=True)
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
    return GPT2EagerJob(attn="sdpa" if "sdpa" in fixes else "eager", bf16="bf16" in fixes)

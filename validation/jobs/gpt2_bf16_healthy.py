"""A healthy GPT-2 small run: bf16 autocast, SDPA, fused AdamW, a pinned prefetching loader."""
import torch
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel

from common import Batches, Job, TokenDataset, autocast, hf_model

DESC = ("transformers GPT2LMHeadModel, GPT-2 small (768, 12 layers, 12 heads), bf16 autocast, SDPA, "
        "batch 8 x seq 1024, AdamW(fused=True), DataLoader 2 workers pinned + non_blocking: GEMM-bound")
KIND = "healthy"
VARIANTS = {"base": [], "workers6": ["loader_workers"], "pad_vocab": ["pad_gemm_dims"]}
VARIANT_NOTES = {"workers6": "2 -> 6 workers (the loader already keeps up)",
                 "pad_vocab": "vocab_size 50257 -> 50304 (a multiple of 64, as nanoGPT does)"}
TIME_HINT_S = 20

BATCH, SEQ, VOCAB = 8, 1024, 50257


class GPT2Healthy(Job):
    def __init__(self, workers, vocab=VOCAB):
        cfg = GPT2Config(vocab_size=vocab, n_positions=1024, n_embd=768, n_layer=12, n_head=12)
        self.model = hf_model(GPT2LMHeadModel, cfg, attn="sdpa")
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=6e-4, weight_decay=0.1, fused=True)
        self.batches = Batches(DataLoader(TokenDataset(SEQ, VOCAB), batch_size=BATCH, shuffle=True,
                                          num_workers=workers, pin_memory=True, drop_last=True))
        self.samples_per_step = BATCH

    def step(self):
        ids = next(self.batches).to("cuda", non_blocking=True)
        with autocast(True):
            loss = self.model(input_ids=ids, labels=ids).loss
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    fixes = VARIANTS[variant]
    return GPT2Healthy(workers=6 if "loader_workers" in fixes else 2, vocab=50304 if "pad_gemm_dims" in fixes else VOCAB)

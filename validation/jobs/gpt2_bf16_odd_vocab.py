"""GPT-2 small (6 layers) trained in bf16 with SDPA and fused AdamW, its vocabulary of 50257 as released:
not a multiple of 8."""
import torch
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel

from common import Batches, Job, TokenDataset, autocast, hf_model

DESC = ("transformers GPT2LMHeadModel, GPT-2 small width (768, 12 heads) with 6 layers, vocab 50257, bf16 "
        "autocast, SDPA, batch 8 x seq 1024, AdamW(fused=True), DataLoader 2 workers pinned + non_blocking")
KIND = "gpu_bound"
VARIANTS = {"base": [], "pad_vocab": ["pad_gemm_dims"]}
VARIANT_NOTES = {"pad_vocab": "vocab_size 50257 -> 50304 (a multiple of 64, as nanoGPT does)"}
TIME_HINT_S = 20

BATCH, SEQ, VOCAB, PADDED = 8, 1024, 50257, 50304


class GPT2OddVocab(Job):
    def __init__(self, vocab):
        cfg = GPT2Config(vocab_size=vocab, n_positions=SEQ, n_embd=768, n_layer=6, n_head=12)
        self.model = hf_model(GPT2LMHeadModel, cfg, attn="sdpa")
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=6e-4, weight_decay=0.1, fused=True)
        self.batches = Batches(DataLoader(TokenDataset(SEQ, VOCAB), batch_size=BATCH, shuffle=True, num_workers=2,
                                          pin_memory=True, drop_last=True))
        self.samples_per_step = BATCH

    def step(self):
        ids = next(self.batches).to("cuda", non_blocking=True)
        with autocast(True):
            loss = self.model(input_ids=ids, labels=ids).loss
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return GPT2OddVocab(vocab=PADDED if "pad_gemm_dims" in VARIANTS[variant] else VOCAB)

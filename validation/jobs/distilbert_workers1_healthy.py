"""A healthy DistilBERT MLM run: bf16 autocast, SDPA, fused AdamW, one loader worker that keeps up."""
import torch
from torch.utils.data import DataLoader
from transformers import DistilBertConfig, DistilBertForMaskedLM

from common import Batches, Job, TokenDataset, autocast, hf_model

DESC = ("transformers DistilBertForMaskedLM (768 wide, 6 layers, 12 heads, vocab 30522), bf16 autocast, SDPA, "
        "batch 32 x seq 512, AdamW(fused=True), DataLoader 1 worker pinned + non_blocking: GEMM-bound")
KIND = "healthy"
VARIANTS = {"base": [], "workers4": ["loader_workers"], "pad_vocab": ["pad_gemm_dims"]}
VARIANT_NOTES = {"workers4": "1 -> 4 workers (the loader already keeps up)",
                 "pad_vocab": "vocab_size 30522 -> 30528 (a multiple of 64)"}
TIME_HINT_S = 20

BATCH, SEQ, VOCAB = 32, 512, 30522


class DistilBertHealthy(Job):
    def __init__(self, workers, vocab=VOCAB):
        cfg = DistilBertConfig(vocab_size=vocab, max_position_embeddings=SEQ)
        self.model = hf_model(DistilBertForMaskedLM, cfg, attn="sdpa")
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, weight_decay=0.01, fused=True)
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
    return DistilBertHealthy(workers=4 if "loader_workers" in fixes else 1, vocab=30528 if "pad_gemm_dims" in fixes else VOCAB)

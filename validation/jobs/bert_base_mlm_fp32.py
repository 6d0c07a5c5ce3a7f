"""BERT-base-like masked-LM pre-training in FP32 that logs loss.item() every step."""
import torch
from torch.utils.data import DataLoader
from transformers import BertConfig, BertForMaskedLM

from common import Batches, Job, TokenDataset, autocast, hf_model

DESC = ("transformers BertForMaskedLM, BERT-base width (768, 12 heads) with 6 layers, FP32, batch 16 x seq 256, "
        "DataLoader 2 workers pinned; logs loss.item() every step")
KIND = "gpu_bound"
VARIANTS = {
    "base": [],
    "bf16": ["bf16"],
    "log50": ["no_host_syncs"],
    "bf16+log50": ["bf16", "no_host_syncs"],
}
VARIANT_NOTES = {"log50": "loss.item() every 50 steps instead of every step"}
TIME_HINT_S = 25

BATCH, SEQ, VOCAB = 16, 256, 30522


class BertMLM(Job):
    def __init__(self, bf16, log_every):
        cfg = BertConfig(vocab_size=VOCAB, hidden_size=768, num_hidden_layers=6, num_attention_heads=12,
                         intermediate_size=3072, max_position_embeddings=512)
        self.model = hf_model(BertForMaskedLM, cfg)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, weight_decay=0.01)
        loader = DataLoader(TokenDataset(SEQ, VOCAB), batch_size=BATCH, shuffle=True, num_workers=2,
                            pin_memory=True, drop_last=True)
        self.batches = Batches(loader)
        self.bf16, self.log_every, self.n, self.history = bf16, log_every, 0, []
        self.samples_per_step = BATCH

    def step(self):
        ids = next(self.batches).to("cuda", non_blocking=True)
        # MLM: 15 % of the positions are masked and predicted, the rest ignored (-100)
        mask = torch.rand(ids.shape, device=ids.device) < 0.15
        labels = torch.where(mask, ids, torch.full_like(ids, -100))
        inputs = torch.where(mask, torch.full_like(ids, 103), ids)  # [MASK]
        with autocast(self.bf16):
            loss = self.model(input_ids=inputs, labels=labels).loss
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.n += 1
        if self.n % self.log_every == 0:
            self.history.append(f"step {self.n} loss {loss.item():.4f}")  # the host sync of logging


def build(variant):
    fixes = VARIANTS[variant]
    return BertMLM(bf16="bf16" in fixes, log_every=50 if "no_host_syncs" in fixes else 1)

"""RoBERTa-base-like masked-LM training in FP32 with the transformers model, no per-step logging."""
import torch
from torch.utils.data import DataLoader
from transformers import RobertaConfig, RobertaForMaskedLM

from common import Batches, Job, TokenDataset, autocast, hf_model

DESC = ("transformers RobertaForMaskedLM, RoBERTa-base width (768, 12 heads) with 8 layers, FP32, batch 24 x "
        "seq 256, DataLoader 2 workers pinned, AdamW foreach; loss never read on the host")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"]}
TIME_HINT_S = 25

BATCH, SEQ, VOCAB = 24, 256, 50265


class RobertaMLM(Job):
    def __init__(self, bf16):
        cfg = RobertaConfig(vocab_size=VOCAB, hidden_size=768, num_hidden_layers=8, num_attention_heads=12,
                            intermediate_size=3072, max_position_embeddings=SEQ + 2)
        self.model = hf_model(RobertaForMaskedLM, cfg)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, weight_decay=0.01)
        self.batches = Batches(DataLoader(TokenDataset(SEQ, VOCAB), batch_size=BATCH, shuffle=True,
                                          num_workers=2, pin_memory=True, drop_last=True))
        self.bf16, self.samples_per_step = bf16, BATCH

    def step(self):
        ids = next(self.batches).to("cuda", non_blocking=True)
        mask = torch.rand(ids.shape, device=ids.device) < 0.15
        labels = torch.where(mask, ids, torch.full_like(ids, -100))
        inputs = torch.where(mask, torch.full_like(ids, 50264), ids)  # <mask>
        with autocast(self.bf16):
            loss = self.model(input_ids=inputs, labels=labels).loss
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return RobertaMLM(bf16="bf16" in VARIANTS[variant])

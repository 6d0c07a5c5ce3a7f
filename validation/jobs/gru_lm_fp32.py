"""A 2-layer GRU language model (cuDNN) trained in FP32."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from common import Batches, Job, TokenDataset, autocast, lm_loss

DESC = ("word-level GRU LM: Embedding(16000, 512) -> nn.GRU(512, 1024, 2 layers, cuDNN) -> Linear(1024, 16000), "
        "FP32, batch 96 x seq 96, AdamW fused, DataLoader 2 workers pinned")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"]}
TIME_HINT_S = 20

BATCH, SEQ, VOCAB = 96, 96, 16000


class GRULM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 512)
        self.gru = nn.GRU(512, 1024, num_layers=2, batch_first=True, dropout=0.1)
        self.head = nn.Linear(1024, VOCAB)

    def forward(self, idx):
        out, _ = self.gru(self.emb(idx))
        return self.head(out)


class GRUJob(Job):
    def __init__(self, bf16):
        self.model = GRULM().cuda().train()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3, fused=True)
        self.batches = Batches(DataLoader(TokenDataset(SEQ + 1, VOCAB), batch_size=BATCH, shuffle=True,
                                          num_workers=2, pin_memory=True, drop_last=True))
        self.bf16, self.samples_per_step = bf16, BATCH

    def step(self):
        t = next(self.batches).to("cuda", non_blocking=True)
        with autocast(self.bf16):
            loss = lm_loss(self.model(t[:, :-1]), t[:, 1:])
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return GRUJob(bf16="bf16" in VARIANTS[variant])

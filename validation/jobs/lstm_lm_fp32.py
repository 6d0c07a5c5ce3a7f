"""A 2-layer LSTM language model (cuDNN) trained in FP32."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from common import Batches, Job, TokenDataset, autocast, lm_loss

DESC = ("word-level LSTM LM: Embedding(20000, 512) -> nn.LSTM(512, 1024, 2 layers, cuDNN) -> Linear(1024, 20000), "
        "FP32, batch 64 x seq 128, clip_grad_norm_, AdamW foreach, DataLoader 2 workers pinned")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"]}
TIME_HINT_S = 20

BATCH, SEQ, VOCAB = 64, 128, 20000


class LSTMLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 512)
        self.lstm = nn.LSTM(512, 1024, num_layers=2, batch_first=True, dropout=0.2)
        self.head = nn.Linear(1024, VOCAB)

    def forward(self, idx):
        out, _ = self.lstm(self.emb(idx))
        return self.head(out)


class LSTMJob(Job):
    def __init__(self, bf16):
        self.model = LSTMLM().cuda().train()
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        self.batches = Batches(DataLoader(TokenDataset(SEQ + 1, VOCAB), batch_size=BATCH, shuffle=True,
                                          num_workers=2, pin_memory=True, drop_last=True))
        self.bf16, self.samples_per_step = bf16, BATCH

    def step(self):
        t = next(self.batches).to("cuda", non_blocking=True)
        with autocast(self.bf16):
            loss = lm_loss(self.model(t[:, :-1]), t[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 0.25)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return LSTMJob(bf16="bf16" in VARIANTS[variant])

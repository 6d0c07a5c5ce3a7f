"""A GPT-2-style LM whose training loop generates and tokenizes each text batch on the training thread."""
import random

import torch
from torch.utils.data import DataLoader
from transformers import GPT2Config, GPT2LMHeadModel

from common import Batches, Job, TextDataset, autocast, hf_model, tokenize_batch

DESC = ("transformers GPT2LMHeadModel (512 wide, 4 layers, 8 heads, vocab 32000), bf16 autocast, batch 32 x "
        "seq 256; no DataLoader: each step builds its batch in Python (text generated, lower-cased, split, "
        "words hashed to ids) on the training thread, then .to('cuda')")
KIND = "host_bound"
VARIANTS = {"base": [], "loader4": ["host_work_off_thread"]}
VARIANT_NOTES = {"loader4": "the same generation + tokenization in a Dataset read by DataLoader(num_workers=4)"}
TIME_HINT_S = 20

BATCH, SEQ, VOCAB = 32, 256, 32000


class TokenizeJob(Job):
    def __init__(self, workers):
        cfg = GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=512, n_layer=4, n_head=8)
        self.model = hf_model(GPT2LMHeadModel, cfg)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=3e-4, fused=True)
        self.rng = random.Random(0)
        if workers:
            self.batches = Batches(DataLoader(TextDataset(SEQ, VOCAB), batch_size=BATCH, shuffle=True,
                                              num_workers=workers, drop_last=True))
        self.samples_per_step = BATCH

    def next_batch(self):
        if self.batches is not None:
            return next(self.batches)
        return tokenize_batch(self.rng, BATCH, SEQ, VOCAB)  # Python string work on the training thread

    def step(self):
        ids = self.next_batch().to("cuda")
        with autocast(True):
            loss = self.model(input_ids=ids, labels=ids).loss
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return TokenizeJob(workers=4 if "host_work_off_thread" in VARIANTS[variant] else 0)

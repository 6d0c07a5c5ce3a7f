"""BERT sequence classifier in bf16 whose attention is the eager (materialized softmax) implementation."""
import torch
from torch.utils.data import DataLoader
from transformers import BertConfig, BertForSequenceClassification

from common import Batches, Job, TokenDataset, autocast, hf_model

DESC = ("transformers BertForSequenceClassification (768 wide, 12 heads, 4 layers) under bf16 autocast, "
        "seq 512, batch 32, attn_implementation='eager' (score matrix materialized), DataLoader 2 workers pinned")
KIND = "gpu_bound"
VARIANTS = {"base": [], "sdpa": ["sdpa"]}
VARIANT_NOTES = {"sdpa": "attn_implementation 'eager' -> 'sdpa'"}
TIME_HINT_S = 20

BATCH, SEQ, VOCAB = 32, 512, 30522


class BertCls(Job):
    def __init__(self, attn):
        cfg = BertConfig(vocab_size=VOCAB, hidden_size=768, num_hidden_layers=4, num_attention_heads=12,
                         intermediate_size=3072, max_position_embeddings=512, num_labels=4)
        self.model = hf_model(BertForSequenceClassification, cfg, attn=attn)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=2e-5, fused=True)
        self.batches = Batches(DataLoader(TokenDataset(SEQ, VOCAB), batch_size=BATCH, shuffle=True, num_workers=2,
                                          pin_memory=True, drop_last=True))
        self.samples_per_step = BATCH

    def step(self):
        ids = next(self.batches).to("cuda", non_blocking=True)
        labels = ids[:, 0] % 4  # a label per sequence
        with autocast(True):
            loss = self.model(input_ids=ids, labels=labels).loss
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return BertCls(attn="sdpa" if "sdpa" in VARIANTS[variant] else "eager")

"""An OPT-architecture LM under bf16 autocast whose attention is the eager (materialized softmax) one."""
import torch
from torch.utils.data import DataLoader
from transformers import OPTConfig, OPTForCausalLM

from common import Batches, Job, TokenDataset, autocast, hf_model

DESC = ("transformers OPTForCausalLM (768 wide, 12 heads, 6 layers, FFN 3072, vocab 50272) under bf16 autocast, "
        "batch 16 x seq 512, attn_implementation='eager', AdamW fused, DataLoader 2 workers pinned")
KIND = "gpu_bound"
VARIANTS = {"base": [], "sdpa": ["sdpa"]}
VARIANT_NOTES = {"sdpa": "attn_implementation 'eager' -> 'sdpa'"}
TIME_HINT_S = 20

BATCH, SEQ, VOCAB = 16, 512, 50272


class OPTJob(Job):
    def __init__(self, attn):
        cfg = OPTConfig(vocab_size=VOCAB, hidden_size=768, num_hidden_layers=6, ffn_dim=3072, num_attention_heads=12,
                        max_position_embeddings=SEQ, word_embed_proj_dim=768)
        self.model = hf_model(OPTForCausalLM, cfg, attn=attn)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=3e-4, fused=True)
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
    return OPTJob(attn="sdpa" if "sdpa" in VARIANTS[variant] else "eager")

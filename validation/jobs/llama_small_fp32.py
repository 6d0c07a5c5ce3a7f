"""A small Llama-architecture LM (RMSNorm, SwiGLU, rotary) trained in FP32."""
import torch
from torch.utils.data import DataLoader
from transformers import LlamaConfig, LlamaForCausalLM

from common import Batches, Job, TokenDataset, autocast, hf_model

DESC = ("transformers LlamaForCausalLM (hidden 1024, 8 layers, 16 heads, SwiGLU 2816, vocab 32000), FP32, "
        "batch 8 x seq 512, AdamW default (foreach), DataLoader 2 workers pinned")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"], "bf16+fused": ["bf16", "fused_optimizer"]}
TIME_HINT_S = 25

BATCH, SEQ, VOCAB = 8, 512, 32000


class LlamaJob(Job):
    def __init__(self, bf16, fused):
        cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                          num_attention_heads=16, num_key_value_heads=16, max_position_embeddings=1024)
        self.model = hf_model(LlamaForCausalLM, cfg)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=3e-4, fused=True if fused else None)
        self.batches = Batches(DataLoader(TokenDataset(SEQ, VOCAB), batch_size=BATCH, shuffle=True, num_workers=2,
                                          pin_memory=True, drop_last=True))
        self.bf16, self.samples_per_step = bf16, BATCH

    def step(self):
        ids = next(self.batches).to("cuda", non_blocking=True)
        with autocast(self.bf16):
            loss = self.model(input_ids=ids, labels=ids).loss
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    fixes = VARIANTS[variant]
    return LlamaJob(bf16="bf16" in fixes, fused="fused_optimizer" in fixes)

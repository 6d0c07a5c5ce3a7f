"""RoBERTa-base masked-LM training in bf16 the way the Hugging Face examples set it up: autocast, SDPA, fused
AdamW, a pinned loader; its vocabulary of 50265 is not a multiple of 8."""
import torch
from torch.utils.data import DataLoader
from transformers import RobertaConfig, RobertaForMaskedLM

from common import Batches, Job, TokenDataset, autocast, hf_model

DESC = ("transformers RobertaForMaskedLM, RoBERTa-base (768, 12 layers, 12 heads, vocab 50265), bf16 autocast, "
        "SDPA, batch 16 x seq 512, AdamW(fused=True), DataLoader 2 workers pinned + non_blocking")
KIND = "gpu_bound"
VARIANTS = {"base": [], "pad_vocab": ["pad_gemm_dims"]}
VARIANT_NOTES = {"pad_vocab": "vocab_size 50265 -> 50304 (a multiple of 64; the token ids stay below 50265)"}
TIME_HINT_S = 25

BATCH, SEQ, VOCAB, PADDED = 16, 512, 50265, 50304


class RobertaBf16(Job):
    def __init__(self, vocab):
        cfg = RobertaConfig(vocab_size=vocab, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                            intermediate_size=3072, max_position_embeddings=SEQ + 2)
        self.model = hf_model(RobertaForMaskedLM, cfg, attn="sdpa")
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, weight_decay=0.01, fused=True)
        self.batches = Batches(DataLoader(TokenDataset(SEQ, VOCAB), batch_size=BATCH, shuffle=True,
                                          num_workers=2, pin_memory=True, drop_last=True))
        self.samples_per_step = BATCH

    def step(self):
        ids = next(self.batches).to("cuda", non_blocking=True)
        mask = torch.rand(ids.shape, device=ids.device) < 0.15
        labels = torch.where(mask, ids, torch.full_like(ids, -100))
        inputs = torch.where(mask, torch.full_like(ids, 50264), ids)  # <mask>
        with autocast(True):
            loss = self.model(input_ids=inputs, labels=labels).loss
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return RobertaBf16(vocab=PADDED if "pad_gemm_dims" in VARIANTS[variant] else VOCAB)

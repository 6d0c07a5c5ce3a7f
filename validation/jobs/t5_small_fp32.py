"""T5-small-like encoder-decoder (span-corruption shaped batches) trained in FP32."""
import torch
from torch.utils.data import DataLoader, Dataset
from transformers import T5Config, T5ForConditionalGeneration

from common import VIRTUAL_LEN, Batches, Job, autocast, hf_model

DESC = ("transformers T5ForConditionalGeneration, t5-small shape (d 512, ff 2048, 6+6 layers, 8 heads), FP32, "
        "batch 32, source 256 / target 64 tokens, DataLoader 2 workers pinned")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"]}
TIME_HINT_S = 20

BATCH, SRC, TGT, VOCAB = 32, 256, 64, 32128


class Seq2SeqDataset(Dataset):
    """(source ids, target ids) pairs of random tokens."""

    def __len__(self):
        return VIRTUAL_LEN

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.randint(2, VOCAB, (SRC,), generator=g), torch.randint(2, VOCAB, (TGT,), generator=g)


class T5Job(Job):
    def __init__(self, bf16):
        cfg = T5Config(vocab_size=VOCAB, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=6,
                       num_heads=8, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
        self.model = hf_model(T5ForConditionalGeneration, cfg)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=3e-4)
        self.batches = Batches(DataLoader(Seq2SeqDataset(), batch_size=BATCH, shuffle=True, num_workers=2,
                                          pin_memory=True, drop_last=True))
        self.bf16, self.samples_per_step = bf16, BATCH

    def step(self):
        src, tgt = next(self.batches)
        src, tgt = src.to("cuda", non_blocking=True), tgt.to("cuda", non_blocking=True)
        with autocast(self.bf16):
            loss = self.model(input_ids=src, labels=tgt).loss
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def build(variant):
    return T5Job(bf16="bf16" in VARIANTS[variant])

"""A LightningModule (training_step / configure_optimizers) driven by a manual loop under lightning.Fabric."""
import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from common import Batches, Job, TokenDataset

DESC = ("lightning.Fabric(devices=1) running a LightningModule: nn.TransformerEncoder text classifier "
        "(d 768, 6 layers, 12 heads, batch 32 x seq 256), precision '32-true'; DataLoader 2 workers pinned, "
        "batches moved by fabric.setup_dataloaders")
KIND = "gpu_bound"
VARIANTS = {"base": [], "bf16": ["bf16"]}
VARIANT_NOTES = {"bf16": "Fabric(precision='bf16-mixed')"}
TIME_HINT_S = 25

BATCH, SEQ, VOCAB, D = 32, 256, 30000, 768


class TextClassifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        layer = nn.TransformerEncoderLayer(D, 12, 4 * D, dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)
        self.head = nn.Linear(D, 8)

    def forward(self, ids):
        return self.head(self.encoder(self.emb(ids)).mean(dim=1))

    def training_step(self, batch, batch_idx):
        labels = batch[:, 0] % 8
        return F.cross_entropy(self(batch), labels)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


class FabricJob(Job):
    def __init__(self, precision):
        self.fabric = L.Fabric(accelerator="cuda", devices=1, precision=precision)
        module = TextClassifier()
        self.model, self.opt = self.fabric.setup(module, module.configure_optimizers())
        loader = DataLoader(TokenDataset(SEQ, VOCAB), batch_size=BATCH, shuffle=True, num_workers=2,
                            pin_memory=True, drop_last=True)
        self.batches = Batches(self.fabric.setup_dataloaders(loader))
        self.i, self.samples_per_step = 0, BATCH

    def step(self):
        batch = next(self.batches)  # already on the GPU (Fabric's loader moves it)
        # fabric.autocast(): training_step called directly bypasses the wrapped forward's precision context
        with self.fabric.autocast():
            loss = self.model.training_step(batch, self.i)
        self.fabric.backward(loss)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.i += 1


def build(variant):
    return FabricJob(precision="bf16-mixed" if "bf16" in VARIANTS[variant] else "32-true")

"""A Wide & Deep recommender: nn.Embedding tables (not EmbeddingBag) with dense gradients, Adam, FP32."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import Cycle, Job

DESC = ("Wide & Deep: 6 nn.Embedding tables (1M, 1M, 500k, 500k, 200k, 200k rows x 32) and a wide part over "
        "hashed crosses (nn.EmbeddingBag(1M x 1, mode='sum'), 8 ids a row), 13 dense features, deep MLP "
        "(6x32 + 13) -> 512 -> 256 -> 1; FP32, batch 4096, Adam foreach over dense table gradients; batches "
        "made ahead in pinned memory")
KIND = "gpu_bound"
VARIANTS = {"base": [], "fused": ["fused_optimizer"], "sparse": ["sparse_embedding_grads"]}
VARIANT_NOTES = {"sparse": "sparse=True on every table, torch.optim.SparseAdam for them, Adam (foreach) for the "
                           "MLP: only the looked-up rows get a gradient and an update"}
TIME_HINT_S = 30

ROWS = [1_000_000, 1_000_000, 500_000, 500_000, 200_000, 200_000]
DIM, WIDE_ROWS, CROSSES, DENSE, BATCH = 32, 1_000_000, 8, 13, 4096


class WideDeep(nn.Module):
    def __init__(self, sparse):
        super().__init__()
        self.tables = nn.ModuleList(nn.Embedding(r, DIM, sparse=sparse) for r in ROWS)
        self.wide = nn.EmbeddingBag(WIDE_ROWS, 1, mode="sum", sparse=sparse)
        self.deep = nn.Sequential(nn.Linear(len(ROWS) * DIM + DENSE, 512), nn.ReLU(),
                                  nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, dense, cats, crosses):
        deep_in = torch.cat([t(cats[:, i]) for i, t in enumerate(self.tables)] + [dense], dim=1)
        return (self.deep(deep_in) + self.wide(crosses)).squeeze(1)


class WideDeepJob(Job):
    def __init__(self, fused, sparse):
        with torch.device("cuda"):  # the tables initialized on the GPU, not on the host
            self.model = WideDeep(sparse).cuda().train()
        tables = [p for n, p in self.model.named_parameters() if n.startswith(("tables.", "wide."))]
        mlp = [p for n, p in self.model.named_parameters() if n.startswith("deep.")]
        if sparse:
            self.opts = [torch.optim.SparseAdam(tables, lr=1e-3), torch.optim.Adam(mlp, lr=1e-3)]
        else:
            self.opts = [torch.optim.Adam(self.model.parameters(), lr=1e-3, fused=True if fused else None)]
        g = torch.Generator().manual_seed(0)
        items = []
        for _ in range(4):
            dense = torch.randn(BATCH, DENSE, generator=g)
            # skewed ids, as click logs are: most rows of each table never looked up in a batch
            cats = torch.stack([(torch.rand(BATCH, generator=g) ** 3 * r).long() for r in ROWS], dim=1)
            crosses = (torch.rand(BATCH, CROSSES, generator=g) * WIDE_ROWS).long()
            label = (torch.rand(BATCH, generator=g) < 0.25).float()
            items.append((dense.pin_memory(), cats.pin_memory(), crosses.pin_memory(), label.pin_memory()))
        self.batches = Cycle(items)
        self.samples_per_step = BATCH

    def step(self):
        dense, cats, crosses, label = (t.to("cuda", non_blocking=True) for t in next(self.batches))
        loss = F.binary_cross_entropy_with_logits(self.model(dense, cats, crosses), label)
        loss.backward()
        for opt in self.opts:
            opt.step()
            opt.zero_grad(set_to_none=True)


def build(variant):
    fixes = VARIANTS[variant]
    return WideDeepJob(fused="fused_optimizer" in fixes, sparse="sparse_embedding_grads" in fixes)

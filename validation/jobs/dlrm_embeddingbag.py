"""A DLRM-like recommender: 8 EmbeddingBag tables over sparse ids plus bottom/top MLPs, FP32."""
import torch
import torch.nn as nn
import torch.nn.functional as F

from common import Cycle, Job

DESC = ("DLRM-like: 8 nn.EmbeddingBag(500k x 64, mode='sum') tables, 20 ids per bag, 13 dense features -> "
        "bottom MLP 512-256-64, pairwise dot interaction, top MLP 1024-512-1; FP32, batch 2048, AdamW foreach "
        "over dense table gradients; batches made ahead in pinned memory")
KIND = "gpu_bound"
VARIANTS = {"base": [], "fused": ["fused_optimizer"], "batch8192": ["batch_size"],
            "sparse": ["sparse_embedding_grads"]}
VARIANT_NOTES = {"batch8192": "batch 2048 -> 8192 (speedup compared per sample)",
                 "sparse": "EmbeddingBag(sparse=True) with torch.optim.SparseAdam for the tables, AdamW (foreach) "
                           "for the MLPs: only the looked-up rows get a gradient and an update"}
TIME_HINT_S = 30

TABLES, ROWS, DIM, BAG, DENSE = 8, 500_000, 64, 20, 13


def mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


class DLRM(nn.Module):
    def __init__(self, sparse=False):
        super().__init__()
        self.tables = nn.ModuleList(nn.EmbeddingBag(ROWS, DIM, mode="sum", sparse=sparse) for _ in range(TABLES))
        self.bottom = mlp([DENSE, 512, 256, DIM])
        n = TABLES + 1
        self.top = mlp([DIM + n * (n - 1) // 2, 1024, 512, 1])
        self.register_buffer("pairs", torch.triu_indices(n, n, offset=1), persistent=False)

    def forward(self, dense, sparse):
        feats = [self.bottom(dense)] + [t(sparse[i]) for i, t in enumerate(self.tables)]
        z = torch.stack(feats, dim=1)  # (B, 9, DIM)
        inter = torch.bmm(z, z.transpose(1, 2))[:, self.pairs[0], self.pairs[1]]
        return self.top(torch.cat([feats[0], inter], dim=1)).squeeze(1)


class DLRMJob(Job):
    def __init__(self, batch, fused, sparse=False):
        with torch.device("cuda"):  # 1 GB of tables: initialized on the GPU, not on the host
            self.model = DLRM(sparse).cuda().train()  # .cuda(): the interaction's index buffer too
        dense_params = [p for n, p in self.model.named_parameters() if not n.startswith("tables.")]
        if sparse:
            self.opts = [torch.optim.SparseAdam(list(self.model.tables.parameters()), lr=1e-3),
                         torch.optim.AdamW(dense_params, lr=1e-3)]
        else:
            self.opts = [torch.optim.AdamW(self.model.parameters(), lr=1e-3, fused=True if fused else None)]
        g = torch.Generator().manual_seed(0)
        items = []
        for _ in range(4):
            dense = torch.randn(batch, DENSE, generator=g)
            # skewed ids: most lookups hit the first rows of each table, as click logs do
            ids = (torch.rand(TABLES, batch, BAG, generator=g) ** 3 * ROWS).long()
            label = (torch.rand(batch, generator=g) < 0.25).float()
            items.append((dense.pin_memory(), ids.pin_memory(), label.pin_memory()))
        self.batches = Cycle(items)
        self.samples_per_step = batch

    def step(self):
        dense, ids, label = (t.to("cuda", non_blocking=True) for t in next(self.batches))
        loss = F.binary_cross_entropy_with_logits(self.model(dense, ids), label)
        loss.backward()
        for opt in self.opts:
            opt.step()
            opt.zero_grad(set_to_none=True)


def build(variant):
    fixes = VARIANTS[variant]
    return DLRMJob(batch=8192 if "batch_size" in fixes else 2048, fused="fused_optimizer" in fixes,
                   sparse="sparse_embedding_grads" in fixes)

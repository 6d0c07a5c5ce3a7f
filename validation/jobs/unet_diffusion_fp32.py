"""A small DDPM-style diffusion UNet written by hand, trained in FP32 NCHW on noise prediction."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from common import VIRTUAL_LEN, Batches, Job, StepGraph, autocast, sinusoidal

DESC = ("hand-written diffusion UNet (channels 64/128/256, 2 ResBlocks per level with GroupNorm+SiLU, "
        "self-attention at 16x16 and in the middle block, sinusoidal timestep embedding), FP32 NCHW, "
        "64x64 images, batch 32, MSE on the noise; images from a DataLoader (2 workers, pinned)")
KIND = "gpu_bound"
VARIANTS = {
    "base": [],
    "bf16": ["bf16"],
    "channels_last": ["channels_last"],
    "bf16+channels_last": ["bf16", "channels_last"],
    "graphed_step": ["cuda_graphs"],
}
VARIANT_NOTES = {"graphed_step": "whole step (noise and timesteps drawn on the GPU, forward, backward, "
                                 "AdamW(capturable=True)) in one CUDA graph"}
TIME_HINT_S = 25

BATCH, RES, T_STEPS = 32, 64, 1000


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(tdim, cout)
        self.n2, self.c2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.c1(F.silu(self.n1(x))) + self.t(temb)[:, :, None, None]
        h = self.c2(F.dropout(F.silu(self.n2(h)), 0.1, self.training))
        return h + self.skip(x)


class AttnBlock(nn.Module):
    def __init__(self, c, heads=4):
        super().__init__()
        self.heads, self.norm = heads, nn.GroupNorm(32, c)
        self.qkv, self.out = nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, self.heads, c // self.heads, h * w).unbind(1)
        a = F.scaled_dot_product_attention(q.transpose(-1, -2), k.transpose(-1, -2), v.transpose(-1, -2))
        return x + self.out(a.transpose(-1, -2).reshape(b, c, h, w))


class UNet(nn.Module):
    def __init__(self, ch=(64, 128, 256), attn_res=(16,)):
        super().__init__()
        tdim = 4 * ch[0]
        self.temb = nn.Sequential(nn.Linear(ch[0], tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(3, ch[0], 3, padding=1)
        self.down, self.up, res, cin, skips = nn.ModuleList(), nn.ModuleList(), RES, ch[0], []
        for i, c in enumerate(ch):
            for _ in range(2):
                self.down.append(nn.ModuleList([ResBlock(cin, c, tdim), AttnBlock(c) if res in attn_res else None]))
                cin = c
                skips.append(c)
            if i < len(ch) - 1:
                self.down.append(nn.Conv2d(c, c, 3, stride=2, padding=1))
                res //= 2
        self.mid = nn.ModuleList([ResBlock(cin, cin, tdim), AttnBlock(cin), ResBlock(cin, cin, tdim)])
        for i, c in reversed(list(enumerate(ch))):
            for _ in range(2):
                self.up.append(nn.ModuleList([ResBlock(cin + skips.pop(), c, tdim),
                                              AttnBlock(c) if res in attn_res else None]))
                cin = c
            if i > 0:
                self.up.append(nn.Upsample(scale_factor=2, mode="nearest"))
                res *= 2
        self.out = nn.Sequential(nn.GroupNorm(32, cin), nn.SiLU(), nn.Conv2d(cin, 3, 3, padding=1))
        self.ch0 = ch[0]

    def forward(self, x, t):
        temb = self.temb(sinusoidal(t, self.ch0))
        h, hs = self.inp(x), []
        for m in self.down:
            if isinstance(m, nn.ModuleList):
                h = m[0](h, temb)
                h = m[1](h) if m[1] is not None else h
                hs.append(h)
            else:
                h = m(h)
        h = self.mid[2](self.mid[1](self.mid[0](h, temb)), temb)
        for m in self.up:
            if isinstance(m, nn.ModuleList):
                h = m[0](torch.cat([h, hs.pop()], dim=1), temb)
                h = m[1](h) if m[1] is not None else h
            else:
                h = m(h)
        return self.out(h)


class Images(Dataset):
    """Random 'images' in [-1, 1], 3 x 64 x 64 float."""

    def __len__(self):
        return VIRTUAL_LEN

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.rand(3, RES, RES, generator=g) * 2 - 1


class DiffusionJob(Job):
    def __init__(self, bf16, channels_last, graphed=False):
        model = UNet().cuda().train()
        self.model = model.to(memory_format=torch.channels_last) if channels_last else model
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=2e-4, capturable=graphed)
        betas = torch.linspace(1e-4, 0.02, T_STEPS, device="cuda")
        self.alpha_bar = torch.cumprod(1 - betas, dim=0)
        self.batches = Batches(DataLoader(Images(), batch_size=BATCH, shuffle=True, num_workers=2,
                                          pin_memory=True, drop_last=True))
        self.bf16, self.cl, self.samples_per_step = bf16, channels_last, BATCH
        self.graph = StepGraph(self.train_on, next(self.batches), self.opt) if graphed else None

    def step(self):
        if self.graph is not None:
            self.graph(next(self.batches))
            return
        self.train_on(next(self.batches).to("cuda", non_blocking=True))
        self.opt.zero_grad(set_to_none=True)

    def train_on(self, x0):
        if self.cl:
            x0 = x0.contiguous(memory_format=torch.channels_last)
        t = torch.randint(0, T_STEPS, (x0.shape[0],), device="cuda")
        noise = torch.randn_like(x0)
        ab = self.alpha_bar[t].view(-1, 1, 1, 1)
        xt = ab.sqrt() * x0 + (1 - ab).sqrt() * noise
        with autocast(self.bf16):
            loss = F.mse_loss(self.model(xt, t).float(), noise)
        loss.backward()
        self.opt.step()
        return loss


def build(variant):
    fixes = VARIANTS[variant]
    return DiffusionJob(bf16="bf16" in fixes, channels_last="channels_last" in fixes,
                        graphed=variant == "graphed_step")

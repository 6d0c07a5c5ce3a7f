#!/usr/bin/env python3
"""What-if validation set: single-GPU training jobs, each as it is and after each fix.

For every job and variant this script
  (a) times the training step WITHOUT the profiler (warm-up, then >= 15 steps, each bracketed by
      torch.cuda.synchronize() + time.perf_counter_ns(), data loading included),
  (b) records a Kineto trace with torch.profiler (CPU + CUDA, schedule wait=1 warmup=1 active=3, so the
      trace holds ProfilerStep#2..#4), gzipped as <job>__<variant>.pt.trace.json.gz,
  (c) times the step again WITH the profiler active (same options as the trace; same median method).
and writes measurements.json beside the traces.

Run on one GPU (the driver starts one process per job, so a job never sees another job's state and the
unprofiled timings of a job are taken before any profiler ran in its process):
    NCCL_NVLS_ENABLE=0 python3 scripts/validation/whatif_jobs.py --out testdata/whatif
    python3 scripts/validation/whatif_jobs.py --out DIR --jobs item_sync,healthy     # a subset
    python3 scripts/validation/whatif_jobs.py --out DIR --quick                       # smoke run: few steps

Kineto keeps CUPTI attached after a profiler session unless TEARDOWN_CUPTI=1: the driver sets it to 1 for
the job processes unless it is set already (TEARDOWN_CUPTI=0 gives Kineto's default; docs/whatif_validation.md).

What one "step" is (the same in the timed loops and in the traced ProfilerStep#N): the H2D copy of the
batch fetched by the previous step, forward, backward (per micro-batch), the optimizer step, zero_grad,
the fetch of the next batch (placed after the launches, as in a plain `for batch in loader` loop, where the
fetch overlaps the GPU work still queued), any host work, and torch.cuda.synchronize() at the end.
"""
import argparse
import datetime
import gc
import gzip
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

# ----------------------------------------------------------------------------------------------------
# The suite. Each job: description, its variants in order (base first), the fixes each variant applies,
# and the profiler options of its traces. Profiler options vary across jobs on purpose.
# ----------------------------------------------------------------------------------------------------
JOBS = {
    "gpt_fp32_naive": dict(
        desc="small GPT, FP32, hand-written attention (matmul + masked softmax + matmul)",
        variants={"base": [], "bf16": ["bf16"], "sdpa": ["sdpa"], "bf16+sdpa": ["bf16", "sdpa"],
                  "fused": ["fused"]},
        profiler=dict(record_shapes=True, with_stack=False, profile_memory=False)),
    "gpt_launch_bound": dict(
        desc="tiny GPT at batch 2: many tiny kernels, the host's launches limit the step",
        variants={"base": [], "batch8": ["batch8"], "cuda_graphs": ["cuda_graphs"],
                  "cuda_graphs+bf16": ["cuda_graphs", "bf16"]},
        profiler=dict(record_shapes=False, with_stack=False, profile_memory=False)),
    "loader_bound": dict(
        desc="GPT in FP32 whose DataLoader decodes each sample on the CPU in the main process "
             "(num_workers=0); the FP32 kernels hide the loader, bf16 exposes it",
        variants={"base": [], "workers4": ["workers4"], "bf16": ["bf16"],
                  "bf16+workers4": ["bf16", "workers4"]},
        profiler=dict(record_shapes=True, with_stack=False, profile_memory=False)),
    "pageable_copies": dict(
        desc="MLP fed 64 MiB input batches copied from pageable host memory every step",
        variants={"base": [], "pinned": ["pinned"], "pinned+bf16": ["pinned", "bf16"]},
        profiler=dict(record_shapes=True, with_stack=True, profile_memory=False)),
    "item_sync": dict(
        desc="GPT (FP32, SDPA) that calls loss.item() every step, then does ~10 ms of Python host work",
        variants={"base": [], "log_every_100": ["log_every_100"]},
        profiler=dict(record_shapes=False, with_stack=True, profile_memory=False),
        extra_trace=dict(variant="base", suffix="cuda_sync_events", cuda_sync_events=True)),
    "mask_nonzero": dict(
        desc="GPT (FP32, SDPA) with boolean-mask indexing x[mask] every other layer (hidden nonzero sync)",
        variants={"base": [], "where": ["where"], "bf16": ["bf16"]},
        profiler=dict(record_shapes=False, with_stack=False, profile_memory=False)),
    "foreach_false_optimizer": dict(
        desc="deep narrow net with 200 small parameter tensors, AdamW(foreach=False): a per-parameter loop",
        variants={"base": [], "foreach": ["foreach"], "fused": ["fused"], "cuda_graphs": ["cuda_graphs"],
                  "bf16": ["bf16"]},
        profiler=dict(record_shapes=False, with_stack=False, profile_memory=False)),
    "resnet_fp32": dict(
        desc="ResNet-18 (torchvision, or a hand-written one) in FP32, NCHW (channels_last off)",
        variants={"base": [], "bf16": ["bf16"], "bf16_channels_last": ["bf16", "channels_last"]},
        profiler=dict(record_shapes=True, with_stack=False, profile_memory=False)),
    "grad_accum_fp16": dict(
        desc="GPT, 4-step gradient accumulation at micro-batch 2, fp16 autocast + GradScaler",
        variants={"base": [], "bf16_no_scaler": ["bf16_no_scaler"],
                  "microbatch8_no_accum": ["microbatch8_no_accum"],
                  "bf16_no_scaler+microbatch8_no_accum": ["bf16_no_scaler", "microbatch8_no_accum"],
                  "cuda_graphs": ["cuda_graphs"]},
        profiler=dict(record_shapes=False, with_stack=False, profile_memory=True)),
    # Held out (added after the edits were written; nothing was fitted on them): the same fixes on
    # larger, GPU-heavier jobs.
    "accum_bf16_large": dict(
        desc="larger GPT (d 1024, 6 layers, seq 512) in bf16, 4-step gradient accumulation at micro-batch 4",
        variants={"base": [], "microbatch16_no_accum": ["microbatch16_no_accum"]},
        profiler=dict(record_shapes=True, with_stack=False, profile_memory=False)),
    "ckpt_large": dict(
        desc="larger GPT (d 1024, 8 layers, seq 1024, batch 8) in bf16 with checkpointing on every block",
        variants={"base": [], "no_checkpointing": ["no_checkpointing"]},
        profiler=dict(record_shapes=False, with_stack=True, profile_memory=False)),
    "activation_checkpointing": dict(
        desc="GPT (bf16, SDPA) with torch.utils.checkpoint on every block although memory is plentiful",
        variants={"base": [], "no_checkpointing": ["no_checkpointing"]},
        profiler=dict(record_shapes=True, with_stack=False, profile_memory=True)),
    "healthy": dict(
        desc="well-configured GPT: bf16, SDPA, fused AdamW, DataLoader with 2 workers and pinned memory",
        variants={"base": [], "rerun": []},
        profiler=dict(record_shapes=True, with_stack=False, profile_memory=False)),
    # Held out in session 15 (added after the profiler's per-host-speed cost and the graphed passes'
    # cost were fitted and measured): other sizes and profiler options of three jobs above.
    "scaler_graphs_mid": dict(
        desc="GPT (d 384, 3 layers, seq 128), 2-step gradient accumulation at micro-batch 4, fp16 + GradScaler",
        variants={"base": [], "cuda_graphs": ["cuda_graphs"], "bf16_no_scaler": ["bf16_no_scaler"],
                  "microbatch8_no_accum": ["microbatch8_no_accum"]},
        profiler=dict(record_shapes=True, with_stack=True, profile_memory=False)),
    "launch_bound_mid": dict(
        desc="small GPT (d 128, 4 layers, seq 64) at batch 4: the host's launches limit the step",
        variants={"base": [], "cuda_graphs": ["cuda_graphs"]},
        profiler=dict(record_shapes=True, with_stack=False, profile_memory=True)),
    "mask_small": dict(
        desc="GPT (FP32, SDPA, d 256, 4 layers) with boolean-mask indexing every other layer",
        variants={"base": [], "where": ["where"], "bf16": ["bf16"], "fused": ["fused"]},
        profiler=dict(record_shapes=True, with_stack=True, profile_memory=False)),
    # Held out in session 16 (added after --measured-step-ms; nothing fitted on them): other models and
    # sizes for the loader, sync, pinning and attention edits.
    "resnet_loader": dict(
        desc="ResNet-18 on 112x112 images in FP32 whose DataLoader decodes each image on the CPU in the main "
             "process (num_workers=0)",
        variants={"base": [], "workers4": ["workers4"], "bf16": ["bf16"], "bf16+workers4": ["bf16", "workers4"]},
        profiler=dict(record_shapes=False, with_stack=True, profile_memory=False)),
    "item_sync_bf16": dict(
        desc="GPT (bf16, SDPA, d 512, 4 layers, seq 256, batch 16) that calls loss.item() every step, then does "
             "~4 ms of Python host work",
        variants={"base": [], "log_every_100": ["log_every_100"], "cuda_graphs": ["cuda_graphs"]},
        profiler=dict(record_shapes=True, with_stack=False, profile_memory=True)),
    "pageable_mid": dict(
        desc="MLP 2048-2048-2048-10 in bf16 fed 16 MiB input batches copied from pageable host memory",
        variants={"base": [], "pinned": ["pinned"]},
        profiler=dict(record_shapes=False, with_stack=False, profile_memory=False)),
    "naive_attn_bf16": dict(
        desc="GPT (bf16 autocast, d 384, 6 layers, seq 512, batch 8) with hand-written attention",
        variants={"base": [], "sdpa": ["sdpa"], "cuda_graphs": ["cuda_graphs"]},
        profiler=dict(record_shapes=False, with_stack=True, profile_memory=False)),
    # Held out in session 16, second set: written after the median step and the graphed launch spans
    # were changed on the first set's scores, and run once to score those changes on jobs they did not see.
    "gpt_wide_fp32": dict(
        desc="GPT (FP32, SDPA, d 768, 2 layers, seq 256, batch 8), every profiler option on",
        variants={"base": [], "bf16": ["bf16"], "fused": ["fused"]},
        profiler=dict(record_shapes=True, with_stack=True, profile_memory=True)),
    "token_loader_bf16": dict(
        desc="GPT (bf16, SDPA, d 384, 4 layers, seq 256, batch 16) whose DataLoader decodes each sample in the "
             "main process (num_workers=0)",
        # cuda_graphs (session 19): a plan of the second run put CUDA graphs first, unmeasured until then
        variants={"base": [], "workers2": ["workers2"], "cuda_graphs": ["cuda_graphs"]},
        profiler=dict(record_shapes=False, with_stack=False, profile_memory=False)),
    "narrow_graphs_bf16": dict(
        desc="30 x (LayerNorm + Linear 256) in bf16 autocast, batch 512, fused AdamW: launch-bound",
        variants={"base": [], "cuda_graphs": ["cuda_graphs"]},
        profiler=dict(record_shapes=False, with_stack=False, profile_memory=True)),
    # Held out in session 17: CUDA graphs the way the diagnosis's fix text says, torch.compile's
    # reduce-overhead mode (inductor's fused kernels replayed by cudagraph trees), not a hand capture.
    "compile_graphs_bf16": dict(
        desc="GPT (bf16, SDPA, d 256, 4 layers, seq 128, batch 8, fused AdamW): launch-bound; the fix is "
             "torch.compile(mode='reduce-overhead') of the model",
        variants={"base": [], "cuda_graphs": ["cuda_graphs"]},
        profiler=dict(record_shapes=True, with_stack=False, profile_memory=False)),
    # Held out in session 18: models written by other libraries (Hugging Face transformers' GPT-2,
    # torchvision's VisionTransformer, cuDNN's LSTM), so that the trace's operators, attention and
    # kernels are ones no rule or edit was written against; a second healthy job on another model.
    "hf_gpt2_eager_fp32": dict(
        desc="transformers GPT2LMHeadModel (d 512, 6 layers, 8 heads, seq 512, batch 8, dropout 0.1) in FP32 "
             "with attn_implementation='eager' (materialized attention), AdamW foreach",
        variants={"base": [], "bf16": ["bf16"], "sdpa": ["sdpa"], "fused": ["fused"]},
        profiler=dict(record_shapes=False, with_stack=False, profile_memory=True)),
    "vit_fp32": dict(
        desc="torchvision VisionTransformer (image 128, patch 16, d 512, 6 layers, 8 heads, 100 classes) in FP32 "
             "at batch 64, pre-made pinned batches, AdamW foreach",
        # cuda_graphs (session 19): as token_loader_bf16's
        variants={"base": [], "bf16": ["bf16"], "cuda_graphs": ["cuda_graphs"]},
        profiler=dict(record_shapes=True, with_stack=True, profile_memory=False)),
    "lstm_lm_fp32": dict(
        desc="LSTM language model (embedding 512, nn.LSTM 2 x 1024 on cuDNN, vocab 8192, seq 128, batch 32) in "
             "FP32, AdamW foreach",
        variants={"base": [], "bf16": ["bf16"], "fused": ["fused"], "cuda_graphs": ["cuda_graphs"]},
        profiler=dict(record_shapes=False, with_stack=False, profile_memory=False)),
    "hf_gpt2_healthy": dict(
        desc="transformers GPT2LMHeadModel (d 768, 6 layers, seq 512, batch 16) in bf16 with SDPA, fused AdamW, "
             "DataLoader with 2 workers and pinned memory: nothing to fix",
        variants={"base": [], "rerun": []},
        profiler=dict(record_shapes=True, with_stack=False, profile_memory=False)),
}

FULL = dict(warmup=8, n_unprofiled=30, rounds=5, n_recheck=15, n_profiled=20)
QUICK = dict(warmup=3, n_unprofiled=6, rounds=2, n_recheck=0, n_profiled=5)
SEED = 0

# ----------------------------------------------------------------------------------------------------
# Everything below needs torch; the driver part (main without --job) does not import it.
# ----------------------------------------------------------------------------------------------------
torch = nn = F = np = None


def _imports():
    global torch, nn, F, np
    import numpy as _np
    import torch as _torch
    import torch.nn as _nn
    import torch.nn.functional as _F
    torch, nn, F, np = _torch, _nn, _F, _np


def host_work(seconds):
    """Python host work for a set time: bytecode-only inner loops (no calls), the clock read every
    2000 iterations (so with_stack adds about one python_function event per 60 us)."""
    end = time.perf_counter() + seconds
    s = 0
    while time.perf_counter() < end:
        for i in range(2000):
            s += i * i
    return s


_CAL = {}


def make_model_classes():
    from torch.utils.checkpoint import checkpoint

    class Block(nn.Module):
        def __init__(self, d, heads, attn, center):
            super().__init__()
            self.heads, self.attn, self.center = heads, attn, center
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x, mask):
            b, s, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            if self.attn == "sdpa":
                a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:  # the materialized attention a user writes by hand
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
                causal = torch.ones(s, s, device=x.device, dtype=torch.bool).tril()
                att = att.masked_fill(~causal, float("-inf")).softmax(-1)
                a = att @ v
            x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
            if self.center == "index":  # mean over the real (non-pad) tokens: x[mask] hides a nonzero sync
                x = x - x[mask].mean(0)
            elif self.center == "where":  # the same value without a host sync
                m = mask.unsqueeze(-1)
                x = x - torch.where(m, x, 0.0).sum((0, 1)) / mask.sum()
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self, vocab, d, heads, layers, attn="sdpa", center=None, center_every=2,
                     checkpointing=False):
            super().__init__()
            self.checkpointing = checkpointing
            self.emb = nn.Embedding(vocab, d)
            self.blocks = nn.ModuleList(
                Block(d, heads, attn, center if (center and i % center_every == center_every - 1) else None)
                for i in range(layers))
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, idx, mask=None):
            x = self.emb(idx)
            for blk in self.blocks:
                if self.checkpointing:
                    x = checkpoint(blk, x, mask, use_reentrant=False)
                else:
                    x = blk(x, mask)
            return self.head(self.ln_f(x))

    class DeepNarrow(nn.Module):
        """blocks x (LayerNorm + Linear) = 4 parameter tensors per block."""

        def __init__(self, d, blocks):
            super().__init__()
            self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d)) for _ in range(blocks))

        def forward(self, x):
            for b in self.blocks:
                x = x + F.gelu(b(x))
            return x

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = F.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            return F.relu(y + (x if self.down is None else self.down(x)))

    class SmallResNet(nn.Module):
        """ResNet-18 layout written by hand (used only where torchvision is missing)."""

        def __init__(self, classes):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
            layers, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
                cin = cout
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, classes)

        def forward(self, x):
            x = self.layers(self.stem(x))
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

    return GPT, DeepNarrow, SmallResNet


# ----------------------------------------------------------------------------------------------------
# Data sources
# ----------------------------------------------------------------------------------------------------
class ListSource:
    """Cycles through batches made ahead (host pageable, host pinned or already on the GPU)."""

    def __init__(self, batches):
        self.batches, self.i = batches, 0

    def next(self):
        b = self.batches[self.i % len(self.batches)]
        self.i += 1
        return b

    def close(self):
        self.batches = None


class LoaderSource:
    def __init__(self, dl):
        self.dl, self.it = dl, iter(dl)

    def next(self):
        try:
            t = next(self.it)
        except StopIteration:
            self.it = iter(self.dl)
            t = next(self.it)
        return t if isinstance(t, (tuple, list)) else (t,)

    def close(self):
        it, self.it = self.it, None
        if hasattr(it, "_shutdown_workers"):
            it._shutdown_workers()
        self.dl = None


def make_datasets():
    class DecodeDataset(torch.utils.data.Dataset):
        """Token sequences 'decoded' on the CPU: numpy sort + cumsum over `work` random bytes, plus a
        little Python; `work` is calibrated so that one sample costs a set time."""

        def __init__(self, n, seq, vocab, work):
            self.n, self.seq, self.vocab, self.work = n, seq, vocab, work

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            rng = np.random.default_rng(i)
            raw = rng.integers(0, 256, size=self.work, dtype=np.uint8)
            srt = np.sort(raw)
            acc = np.cumsum(raw, dtype=np.int64)
            hdr = sum(int(v) for v in raw[:64])  # a header parsed in Python
            tok = (acc[: self.seq + 1] + srt[: self.seq + 1] + hdr) % (self.vocab - 1) + 1
            return torch.from_numpy(tok)

    class TokenDataset(torch.utils.data.Dataset):
        """Cheap synthetic token sequences (the healthy job's loader)."""

        def __init__(self, n, seq, vocab):
            self.n, self.seq, self.vocab = n, seq, vocab

        def __len__(self):
            return self.n

        def __getitem__(self, i):
            g = torch.Generator().manual_seed(i)
            return torch.randint(1, self.vocab, (self.seq + 1,), generator=g)

    class ImageDecodeDataset(DecodeDataset):
        """Images 'decoded' on the CPU the same way (the sorted bytes as pixels) with a label."""

        def __init__(self, n, res, classes, work):
            super().__init__(n, 3 * res * res, classes, work)
            self.res, self.classes = res, classes

        def __getitem__(self, i):
            rng = np.random.default_rng(i)
            raw = rng.integers(0, 256, size=self.work, dtype=np.uint8)
            srt = np.sort(raw)
            hdr = sum(int(v) for v in raw[:64])
            img = (srt[: self.seq].astype(np.float32) * (1.0 / 255)).reshape(3, self.res, self.res)
            return torch.from_numpy(img), hdr % self.classes

    DecodeDataset.Image = ImageDecodeDataset
    return DecodeDataset, TokenDataset


def calibrate_decode(ds, target_s_per_sample):
    if "decode" not in _CAL:
        work = 1 << 17
        for _ in range(3):
            ds.work = work
            ds[0]
            ts = []
            for i in range(12):
                t0 = time.perf_counter()
                ds[i]
                ts.append(time.perf_counter() - t0)
            work = max(ds.seq + 1, int(work * target_s_per_sample / statistics.median(ts)))
        ds.work = work
        ts = []
        for i in range(20):
            t0 = time.perf_counter()
            ds[i]
            ts.append(time.perf_counter() - t0)
        _CAL["decode"] = (work, statistics.median(ts))
    ds.work = _CAL["decode"][0]
    return _CAL["decode"]


def token_batches(n, batch, seq, vocab, pin, pad=False, seed=SEED):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        t = torch.randint(1, vocab, (batch, seq + 1), generator=g)
        if pad:  # right padding (token 0): each sequence keeps 60-100 % of its positions
            keep = torch.randint(int(0.6 * (seq + 1)), seq + 2, (batch, 1), generator=g)
            t = t.masked_fill(torch.arange(seq + 1).unsqueeze(0) >= keep, 0)
        out.append((t.pin_memory() if pin else t,))
    return out


def gpt_prep(gpu):
    t = gpu[0]
    return (t[:, :-1],), t[:, 1:]


def gpt_prep_mask(gpu):
    t = gpu[0]
    x = t[:, :-1]
    return (x, x != 0), t[:, 1:]


def gpt_loss(out, y):
    return F.cross_entropy(out.float().reshape(-1, out.shape[-1]), y.reshape(-1))


def gpt_loss_pad(out, y):
    return F.cross_entropy(out.float().reshape(-1, out.shape[-1]), y.reshape(-1), ignore_index=0)


# ----------------------------------------------------------------------------------------------------
# Runners: step() does one whole training step (no final synchronize: the caller adds it)
# ----------------------------------------------------------------------------------------------------
class Runner:
    def __init__(self, model, opt, source, prep, loss_fn, amp=None, scaler=None, accum=1,
                 item_every=0, host_s=0.0, non_blocking=False, pre_step=None, amp_cache=True):
        self.model, self.opt, self.source, self.prep, self.loss_fn = model, opt, source, prep, loss_fn
        self.amp, self.scaler, self.accum = amp, scaler, accum
        self.item_every, self.host_s, self.nb, self.pre_step = item_every, host_s, non_blocking, pre_step
        self.n, self.last_loss, self.amp_cache = 0, None, amp_cache
        self.cur = source.next()

    def step(self):
        loss = None
        for _ in range(self.accum):
            if self.pre_step is not None:  # cudagraph trees: a new generation per forward
                self.pre_step()
            gpu = tuple(t.to("cuda", non_blocking=self.nb) for t in self.cur)
            args, target = self.prep(gpu)
            with torch.autocast("cuda", dtype=self.amp or torch.float32, enabled=self.amp is not None,
                                cache_enabled=self.amp_cache):
                loss = self.loss_fn(self.model(*args), target)
            if self.accum > 1:
                loss = loss / self.accum
            (self.scaler.scale(loss) if self.scaler is not None else loss).backward()
            self.cur = self.source.next()  # the next (micro-)batch, fetched while the GPU works
        if self.scaler is not None:
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.n += 1
        if self.item_every and self.n % self.item_every == 0:
            self.last_loss = loss.item()  # logging the loss: a host sync
        if self.host_s:
            host_work(self.host_s)  # metrics / logging / bookkeeping on the host

    def close(self):
        self.source.close()


class GraphRunner:
    """Whole-step CUDA graph: forward + backward + optimizer captured once with static inputs
    (the recipe of the PyTorch CUDA-graphs docs: warm-up on a side stream, grads set to None before the
    capture so that backward allocates them inside the graph's pool, AdamW(capturable=True))."""

    def __init__(self, model, opt, source, prep, loss_fn, amp=None, item_every=0, host_s=0.0):
        self.source, self.item_every, self.host_s, self.n = source, item_every, host_s, 0
        ac = lambda: torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None)
        first = source.next()
        self.static = tuple(t.to("cuda").clone() for t in first)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                opt.zero_grad(set_to_none=True)
                args, tgt = prep(self.static)
                with ac():
                    loss = loss_fn(model(*args), tgt)
                loss.backward()
                opt.step()
        torch.cuda.current_stream().wait_stream(s)
        opt.zero_grad(set_to_none=True)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            args, tgt = prep(self.static)
            with ac():
                self.static_loss = loss_fn(model(*args), tgt)
            self.static_loss.backward()
            opt.step()
        torch.cuda.synchronize()
        self.model, self.opt = model, opt
        self.cur = source.next()

    def step(self):
        for st, t in zip(self.static, self.cur):
            st.copy_(t, non_blocking=True)
        self.graph.replay()
        self.cur = self.source.next()
        self.n += 1
        if self.item_every and self.n % self.item_every == 0:
            self.last_loss = self.static_loss.item()  # logging the loss: a host sync
        if self.host_s:
            host_work(self.host_s)

    def close(self):
        self.source.close()
        self.graph = None


# ----------------------------------------------------------------------------------------------------
# Job builders: (variant fixes) -> (runner, info)
# ----------------------------------------------------------------------------------------------------
def count_params(model):
    ps = list(model.parameters())
    return sum(p.numel() for p in ps), len(ps)


def gpt_info(model, vocab, d, heads, layers, seq, batch, **kw):
    n, t = count_params(model)
    return dict(model="GPT", params=n, param_tensors=t, vocab=vocab, d_model=d, heads=heads, layers=layers,
                seq=seq, batch=batch, **kw)


def resnet18(classes):
    """torchvision's ResNet-18 (or the hand-written layout where torchvision is missing) and its name."""
    try:
        import torchvision
        return torchvision.models.resnet18(num_classes=classes), f"torchvision {torchvision.__version__} resnet18"
    except Exception:
        return make_model_classes()[2](classes), "hand-written ResNet-18 layout (torchvision missing)"


def adamw(params, impl, capturable=False):
    if impl == "fused":
        return torch.optim.AdamW(params, lr=1e-4, fused=True, capturable=capturable)
    if impl == "loop":
        return torch.optim.AdamW(params, lr=1e-4, foreach=False)
    return torch.optim.AdamW(params, lr=1e-4, foreach=True, capturable=capturable)


def build(job, fixes):
    GPT, DeepNarrow, SmallResNet = make_model_classes()
    DecodeDataset, TokenDataset = make_datasets()
    fx = set(fixes)
    torch.manual_seed(SEED)
    np.random.seed(SEED)

    if job == "gpt_fp32_naive":
        vocab, d, heads, layers, seq, batch = 8192, 512, 8, 4, 1024, 4
        attn = "sdpa" if "sdpa" in fx else "naive"
        amp = torch.bfloat16 if "bf16" in fx else None
        model = GPT(vocab, d, heads, layers, attn=attn).cuda()
        impl = "fused" if "fused" in fx else "foreach"
        opt = adamw(model.parameters(), impl)
        src = ListSource(token_batches(4, batch, seq, vocab, pin=True))
        r = Runner(model, opt, src, gpt_prep, gpt_loss, amp=amp, non_blocking=True)
        info = gpt_info(model, vocab, d, heads, layers, seq, batch, precision="bf16 autocast" if amp else "fp32",
                        attention=attn, optimizer="AdamW " + impl, data="pre-made pinned batches, non_blocking copy")
        return r, info, batch

    if job in ("gpt_launch_bound", "launch_bound_mid"):
        vocab, d, heads, layers, seq = (1024, 64, 2, 6, 32) if job == "gpt_launch_bound" else (2048, 128, 4, 4, 64)
        batch = 8 if "batch8" in fx else 2 if job == "gpt_launch_bound" else 4
        model = GPT(vocab, d, heads, layers, attn="sdpa").cuda()
        src = ListSource(token_batches(4, batch, seq, vocab, pin=True))
        info = gpt_info(model, vocab, d, heads, layers, seq, batch, precision="fp32", attention="sdpa",
                        data="pre-made pinned batches, non_blocking copy")
        if "cuda_graphs" in fx:
            try:
                opt = adamw(model.parameters(), "foreach", capturable=True)
                amp = torch.bfloat16 if "bf16" in fx else None
                r = GraphRunner(model, opt, src, gpt_prep, gpt_loss, amp=amp)
                info.update(optimizer="AdamW foreach capturable", precision="bf16 autocast" if amp else "fp32",
                            cuda_graphs="torch.cuda.CUDAGraph: whole step (fwd+bwd+AdamW) captured, replayed")
                return r, info, batch
            except Exception as e:  # fall back to torch.compile's CUDA graphs
                info["cuda_graph_capture_error"] = repr(e)[:500]
                torch.cuda.synchronize()
                torch.manual_seed(SEED)
                model = GPT(vocab, d, heads, layers, attn="sdpa").cuda()
                opt = adamw(model.parameters(), "foreach")
                cm = torch.compile(model, mode="reduce-overhead")
                src = ListSource(token_batches(4, batch, seq, vocab, pin=True))
                r = Runner(cm, opt, src, gpt_prep, gpt_loss, non_blocking=True,
                           pre_step=torch.compiler.cudagraph_mark_step_begin)
                info.update(optimizer="AdamW foreach",
                            cuda_graphs="torch.compile(mode='reduce-overhead') of the model; optimizer eager")
                return r, info, batch
        opt = adamw(model.parameters(), "foreach")
        info.update(optimizer="AdamW foreach")
        return Runner(model, opt, src, gpt_prep, gpt_loss, non_blocking=True), info, batch

    if job == "loader_bound":
        vocab, d, heads, layers, seq, batch = 8192, 512, 8, 4, 512, 24
        per_batch_s = 0.006
        amp = torch.bfloat16 if "bf16" in fx else None
        workers = 4 if "workers4" in fx else 0
        ds = DecodeDataset(1_000_000, seq, vocab, 1 << 17)
        work, per_sample = calibrate_decode(ds, per_batch_s / batch)
        model = GPT(vocab, d, heads, layers, attn="sdpa").cuda()
        opt = adamw(model.parameters(), "foreach")
        dl = torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=False, num_workers=workers,
                                         pin_memory=workers > 0, persistent_workers=workers > 0)
        src = LoaderSource(dl)
        r = Runner(model, opt, src, gpt_prep, gpt_loss, amp=amp, non_blocking=workers > 0)
        info = gpt_info(model, vocab, d, heads, layers, seq, batch, precision="bf16 autocast" if amp else "fp32",
                        attention="sdpa", optimizer="AdamW foreach",
                        dataloader=dict(num_workers=workers, pin_memory=workers > 0,
                                        persistent_workers=workers > 0),
                        decode_bytes_per_sample=work, decode_ms_per_sample=round(per_sample * 1e3, 4),
                        decode_ms_per_batch=round(per_sample * batch * 1e3, 3))
        if graphs:
            info.update(optimizer="AdamW foreach capturable",
                        cuda_graphs="torch.cuda.CUDAGraph: whole step (fwd+bwd+AdamW) captured, replayed")
        return r, info, batch

    if job == "resnet_loader":
        batch, res, classes, per_batch_s = 64, 112, 100, 0.012
        amp = torch.bfloat16 if "bf16" in fx else None
        workers = 4 if "workers4" in fx else 0
        ds = DecodeDataset.Image(1_000_000, res, classes, 1 << 17)
        work, per_sample = calibrate_decode(ds, per_batch_s / batch)
        model, name = resnet18(classes)
        model = model.cuda()
        opt = adamw(model.parameters(), "foreach")
        dl = torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=False, num_workers=workers,
                                         pin_memory=workers > 0, persistent_workers=workers > 0)
        r = Runner(model, opt, LoaderSource(dl), lambda gpu: ((gpu[0],), gpu[1]), F.cross_entropy, amp=amp,
                   non_blocking=workers > 0)
        n, t = count_params(model)
        info = dict(model=name, params=n, param_tensors=t, batch=batch, seq=None, image=[3, res, res],
                    precision="bf16 autocast" if amp else "fp32 (cuDNN TF32 convolutions as PyTorch's default)",
                    optimizer="AdamW foreach",
                    dataloader=dict(num_workers=workers, pin_memory=workers > 0, persistent_workers=workers > 0),
                    decode_bytes_per_sample=work, decode_ms_per_sample=round(per_sample * 1e3, 4),
                    decode_ms_per_batch=round(per_sample * batch * 1e3, 3))
        return r, info, batch

    if job == "gpt_wide_fp32":
        vocab, d, heads, layers, seq, batch = 8192, 768, 12, 2, 256, 8
        amp = torch.bfloat16 if "bf16" in fx else None
        impl = "fused" if "fused" in fx else "foreach"
        model = GPT(vocab, d, heads, layers, attn="sdpa").cuda()
        opt = adamw(model.parameters(), impl)
        src = ListSource(token_batches(4, batch, seq, vocab, pin=True))
        r = Runner(model, opt, src, gpt_prep, gpt_loss, amp=amp, non_blocking=True)
        info = gpt_info(model, vocab, d, heads, layers, seq, batch, precision="bf16 autocast" if amp else "fp32",
                        attention="sdpa", optimizer="AdamW " + impl)
        return r, info, batch

    if job == "token_loader_bf16":
        vocab, d, heads, layers, seq, batch, per_batch_s = 8192, 384, 6, 4, 256, 16, 0.008
        workers = 2 if "workers2" in fx else 0
        ds = DecodeDataset(1_000_000, seq, vocab, 1 << 17)
        work, per_sample = calibrate_decode(ds, per_batch_s / batch)
        model = GPT(vocab, d, heads, layers, attn="sdpa").cuda()
        graphs = "cuda_graphs" in fx
        opt = adamw(model.parameters(), "foreach", capturable=graphs)
        dl = torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=False, num_workers=workers,
                                         pin_memory=workers > 0, persistent_workers=workers > 0)
        if graphs:  # the whole step captured; the in-process loader's fetch stays eager after the replay
            r = GraphRunner(model, opt, LoaderSource(dl), gpt_prep, gpt_loss, amp=torch.bfloat16)
        else:
            r = Runner(model, opt, LoaderSource(dl), gpt_prep, gpt_loss, amp=torch.bfloat16, non_blocking=workers > 0)
        info = gpt_info(model, vocab, d, heads, layers, seq, batch, precision="bf16 autocast", attention="sdpa",
                        optimizer="AdamW foreach",
                        dataloader=dict(num_workers=workers, pin_memory=workers > 0, persistent_workers=workers > 0),
                        decode_bytes_per_sample=work, decode_ms_per_sample=round(per_sample * 1e3, 4),
                        decode_ms_per_batch=round(per_sample * batch * 1e3, 3))
        return r, info, batch

    if job == "narrow_graphs_bf16":
        d, blocks, batch = 256, 30, 512
        model = DeepNarrow(d, blocks).cuda()
        g = torch.Generator().manual_seed(SEED)
        batches = [(torch.randn(batch, d, generator=g).cuda(), torch.randn(batch, d, generator=g).cuda())
                   for _ in range(4)]
        graphs = "cuda_graphs" in fx
        opt = adamw(model.parameters(), "fused", capturable=graphs)
        prep = lambda gpu: ((gpu[0],), gpu[1])
        if graphs:
            r = GraphRunner(model, opt, ListSource(batches), prep, F.mse_loss, amp=torch.bfloat16)
        else:
            r = Runner(model, opt, ListSource(batches), prep, F.mse_loss, amp=torch.bfloat16)
        n, t = count_params(model)
        info = dict(model=f"{blocks} x (LayerNorm + Linear {d}x{d})", params=n, param_tensors=t, batch=batch,
                    seq=None, precision="bf16 autocast", data="batches already on the GPU",
                    optimizer="AdamW(fused=True" + (", capturable=True)" if graphs else ")"),
                    cuda_graphs="torch.cuda.CUDAGraph: whole step (fwd+bwd+fused AdamW) captured" if graphs else "off")
        return r, info, batch

    if job == "compile_graphs_bf16":
        vocab, d, heads, layers, seq, batch = 4096, 256, 4, 4, 128, 8
        model = GPT(vocab, d, heads, layers, attn="sdpa").cuda()
        opt = adamw(model.parameters(), "fused")
        src = ListSource(token_batches(4, batch, seq, vocab, pin=True))
        info = gpt_info(model, vocab, d, heads, layers, seq, batch, precision="bf16 autocast", attention="sdpa",
                        optimizer="AdamW fused", data="pre-made pinned batches, non_blocking copy")
        if "cuda_graphs" in fx:
            cm = torch.compile(model, mode="reduce-overhead")
            r = Runner(cm, opt, src, gpt_prep, gpt_loss, amp=torch.bfloat16, non_blocking=True,
                       pre_step=torch.compiler.cudagraph_mark_step_begin)
            info.update(cuda_graphs="torch.compile(mode='reduce-overhead') of the model (fused kernels in cudagraph "
                                    "trees); the fused optimizer eager")
            return r, info, batch
        return Runner(model, opt, src, gpt_prep, gpt_loss, amp=torch.bfloat16, non_blocking=True), info, batch

    if job == "naive_attn_bf16":
        vocab, d, heads, layers, seq, batch = 8192, 384, 6, 6, 512, 8
        attn = "sdpa" if "sdpa" in fx else "naive"
        model = GPT(vocab, d, heads, layers, attn=attn).cuda()
        src = ListSource(token_batches(4, batch, seq, vocab, pin=True))
        info = gpt_info(model, vocab, d, heads, layers, seq, batch, precision="bf16 autocast", attention=attn,
                        optimizer="AdamW foreach")
        if "cuda_graphs" in fx:
            opt = adamw(model.parameters(), "foreach", capturable=True)
            r = GraphRunner(model, opt, src, gpt_prep, gpt_loss, amp=torch.bfloat16)
            info.update(optimizer="AdamW foreach capturable",
                        cuda_graphs="torch.cuda.CUDAGraph: whole step (fwd+bwd+AdamW) captured, replayed")
            return r, info, batch
        opt = adamw(model.parameters(), "foreach")
        r = Runner(model, opt, src, gpt_prep, gpt_loss, amp=torch.bfloat16, non_blocking=True)
        return r, info, batch

    if job in ("pageable_copies", "pageable_mid"):
        feat, hidden, classes, batch = (4096, 1024, 16, 4096) if job == "pageable_copies" else (2048, 2048, 10, 2048)
        pinned = "pinned" in fx
        g = torch.Generator().manual_seed(SEED)
        batches = []
        for _ in range(4):
            x = torch.randn(batch, feat, generator=g)
            y = torch.randint(0, classes, (batch,), generator=g)
            batches.append((x.pin_memory(), y.pin_memory()) if pinned else (x, y))
        model = nn.Sequential(nn.Linear(feat, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(),
                              nn.Linear(hidden, classes)).cuda()
        opt = adamw(model.parameters(), "foreach")
        amp = torch.bfloat16 if "bf16" in fx or job == "pageable_mid" else None
        r = Runner(model, opt, ListSource(batches), lambda gpu: ((gpu[0],), gpu[1]), F.cross_entropy,
                   amp=amp, non_blocking=pinned)
        n, t = count_params(model)
        info = dict(model=f"MLP {feat}-{hidden}-{hidden}-{classes}", params=n, param_tensors=t, batch=batch, seq=None,
                    input_bytes_per_step=batch * feat * 4 + batch * 8,
                    precision="bf16 autocast" if amp else "fp32", optimizer="AdamW foreach",
                    data="host batches held in pinned memory (pinned once at start), copy non_blocking=True"
                    if pinned else "host batches in pageable memory, blocking .cuda() copy")
        return r, info, batch

    if job in ("item_sync", "item_sync_bf16"):
        vocab, d, heads, layers, seq, batch, host_s, amp = ((8192, 1024, 16, 2, 512, 4, 0.010, None) if job == "item_sync"
                                                            else (8192, 512, 8, 4, 256, 16, 0.004, torch.bfloat16))
        model = GPT(vocab, d, heads, layers, attn="sdpa").cuda()
        src = ListSource(token_batches(4, batch, seq, vocab, pin=True))
        every = 100 if "log_every_100" in fx else 1
        info = gpt_info(model, vocab, d, heads, layers, seq, batch, precision="bf16 autocast" if amp else "fp32",
                        attention="sdpa", optimizer="AdamW foreach", loss_item_every=every, host_work_ms=host_s * 1e3,
                        note="log_every_100: no loss.item() in any measured step (fewer than 100 per pass)"
                        if every == 100 else "loss.item() every step, then the host work")
        if "cuda_graphs" in fx:  # the whole step captured; loss.item() and the host work stay eager after it
            opt = adamw(model.parameters(), "foreach", capturable=True)
            r = GraphRunner(model, opt, src, gpt_prep, gpt_loss, amp=amp, item_every=every, host_s=host_s)
            info.update(optimizer="AdamW foreach capturable",
                        cuda_graphs="torch.cuda.CUDAGraph: whole step (fwd+bwd+AdamW) captured, replayed")
            return r, info, batch
        opt = adamw(model.parameters(), "foreach")
        r = Runner(model, opt, src, gpt_prep, gpt_loss, amp=amp, non_blocking=True, item_every=every, host_s=host_s)
        return r, info, batch

    if job in ("mask_nonzero", "mask_small"):
        vocab, d, heads, layers, seq, batch = ((4096, 320, 5, 8, 256, 32) if job == "mask_nonzero"
                                               else (2048, 256, 4, 4, 128, 16))
        mode = "where" if "where" in fx else "index"
        model = GPT(vocab, d, heads, layers, attn="sdpa", center=mode, center_every=2).cuda()
        opt = adamw(model.parameters(), "fused" if "fused" in fx else "foreach")
        src = ListSource(token_batches(4, batch, seq, vocab, pin=True, pad=True))
        amp = torch.bfloat16 if "bf16" in fx else None
        r = Runner(model, opt, src, gpt_prep_mask, gpt_loss_pad, amp=amp, non_blocking=True)
        info = gpt_info(model, vocab, d, heads, layers, seq, batch,
                        precision="bf16 autocast" if amp else "fp32", attention="sdpa",
                        optimizer="AdamW fused" if "fused" in fx else "AdamW foreach", masked_layers=layers // 2,
                        masking="x - x[mask].mean(0) (boolean-mask indexing)" if mode == "index"
                        else "x - torch.where(mask, x, 0).sum / mask.sum()")
        return r, info, batch

    if job == "foreach_false_optimizer":
        d, blocks, batch = 128, 50, 1024
        impl = "fused" if "fused" in fx else ("foreach" if "foreach" in fx else "loop")
        model = DeepNarrow(d, blocks).cuda()
        g = torch.Generator().manual_seed(SEED)
        batches = [(torch.randn(batch, d, generator=g).cuda(), torch.randn(batch, d, generator=g).cuda())
                   for _ in range(4)]
        amp = torch.bfloat16 if "bf16" in fx else None
        graphs = "cuda_graphs" in fx
        if graphs:  # the per-parameter loop captured as it is (capturable=True)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False, capturable=True)
            r = GraphRunner(model, opt, ListSource(batches), lambda gpu: ((gpu[0],), gpu[1]), F.mse_loss, amp=amp)
        else:
            opt = adamw(model.parameters(), impl)
            r = Runner(model, opt, ListSource(batches), lambda gpu: ((gpu[0],), gpu[1]), F.mse_loss, amp=amp)
        n, t = count_params(model)
        info = dict(model=f"{blocks} x (LayerNorm + Linear {d}x{d})", params=n, param_tensors=t, batch=batch,
                    seq=None, precision="bf16 autocast" if amp else "fp32", data="batches already on the GPU",
                    cuda_graphs="torch.cuda.CUDAGraph: whole step (fwd+bwd+AdamW(foreach=False, capturable)) captured"
                    if graphs else "off",
                    optimizer={"loop": "AdamW(foreach=False)", "foreach": "AdamW(foreach=True)",
                               "fused": "AdamW(fused=True)"}[impl])
        return r, info, batch

    if job == "resnet_fp32":
        batch, res, classes = 96, 224, 1000
        amp = torch.bfloat16 if "bf16" in fx else None
        cl = "channels_last" in fx
        model, name = resnet18(classes)
        model = model.cuda()
        if cl:
            model = model.to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
        g = torch.Generator().manual_seed(SEED)
        batches = []
        for _ in range(4):
            x = torch.randn(batch, 3, res, res, generator=g)
            if cl:
                x = x.contiguous(memory_format=torch.channels_last)
            batches.append((x.pin_memory(), torch.randint(0, classes, (batch,), generator=g).pin_memory()))
        r = Runner(model, opt, ListSource(batches), lambda gpu: ((gpu[0],), gpu[1]), F.cross_entropy, amp=amp,
                   non_blocking=True)
        n, t = count_params(model)
        info = dict(model=name, params=n, param_tensors=t, batch=batch, seq=None, image=[3, res, res],
                    precision="bf16 autocast" if amp else "fp32 (cuDNN TF32 convolutions as PyTorch's default)",
                    memory_format="channels_last" if cl else "contiguous (NCHW)", optimizer="SGD momentum foreach",
                    cudnn_benchmark=bool(torch.backends.cudnn.benchmark),
                    data="pre-made pinned batches, non_blocking copy")
        return r, info, batch

    if job in ("grad_accum_fp16", "scaler_graphs_mid"):
        vocab, d, heads, layers, seq = (8192, 512, 8, 2, 256) if job == "grad_accum_fp16" else (4096, 384, 6, 3, 128)
        bf16 = "bf16_no_scaler" in fx
        mb8 = "microbatch8_no_accum" in fx
        micro, accum = (8, 1) if mb8 else (2, 4) if job == "grad_accum_fp16" else (4, 2)
        model = GPT(vocab, d, heads, layers, attn="sdpa").cuda()
        opt = adamw(model.parameters(), "foreach")
        scaler = None if bf16 else torch.amp.GradScaler("cuda")
        src = ListSource(token_batches(8, micro, seq, vocab, pin=True))
        # GradScaler's inf check syncs, so the optimizer step stays eager: the model's forward and
        # backward graphed per micro-batch (torch.cuda.make_graphed_callables; autocast without its
        # cast cache, as the CUDA-graphs docs require).
        graphs = "cuda_graphs" in fx
        amp = torch.bfloat16 if bf16 else torch.float16
        run_model = model
        if graphs:
            sample = torch.randint(1, vocab, (micro, seq), device="cuda")
            with torch.autocast("cuda", dtype=amp, cache_enabled=False):
                run_model = torch.cuda.make_graphed_callables(model, (sample,))
        r = Runner(run_model, opt, src, gpt_prep, gpt_loss, amp=amp, scaler=scaler, accum=accum, non_blocking=True,
                   amp_cache=not graphs)
        info = gpt_info(model, vocab, d, heads, layers, seq, micro * accum, micro_batch=micro,
                        grad_accumulation_steps=accum, precision="bf16 autocast" if bf16 else "fp16 autocast",
                        grad_scaler=not bf16, attention="sdpa", optimizer="AdamW foreach",
                        cuda_graphs="torch.cuda.make_graphed_callables(model): forward and backward graphed per "
                        "micro-batch; scaler, accumulation and optimizer eager" if graphs else "off")
        return r, info, micro * accum

    if job == "accum_bf16_large":
        vocab, d, heads, layers, seq = 16384, 1024, 16, 6, 512
        micro, accum = (16, 1) if "microbatch16_no_accum" in fx else (4, 4)
        model = GPT(vocab, d, heads, layers, attn="sdpa").cuda()
        opt = adamw(model.parameters(), "fused")
        src = ListSource(token_batches(8, micro, seq, vocab, pin=True))
        r = Runner(model, opt, src, gpt_prep, gpt_loss, amp=torch.bfloat16, accum=accum, non_blocking=True)
        info = gpt_info(model, vocab, d, heads, layers, seq, micro * accum, micro_batch=micro,
                        grad_accumulation_steps=accum, precision="bf16 autocast", attention="sdpa",
                        optimizer="AdamW fused")
        return r, info, micro * accum

    if job in ("activation_checkpointing", "ckpt_large"):
        vocab, d, heads, layers, seq, batch = ((8192, 768, 12, 4, 512, 32) if job == "activation_checkpointing"
                                               else (16384, 1024, 16, 8, 1024, 8))
        ckpt = "no_checkpointing" not in fx
        model = GPT(vocab, d, heads, layers, attn="sdpa", checkpointing=ckpt).cuda()
        opt = adamw(model.parameters(), "fused")
        src = ListSource(token_batches(4, batch, seq, vocab, pin=True))
        r = Runner(model, opt, src, gpt_prep, gpt_loss, amp=torch.bfloat16, non_blocking=True)
        info = gpt_info(model, vocab, d, heads, layers, seq, batch, precision="bf16 autocast", attention="sdpa",
                        optimizer="AdamW fused",
                        activation_checkpointing="torch.utils.checkpoint(use_reentrant=False) on every block"
                        if ckpt else "off")
        return r, info, batch

    if job in ("hf_gpt2_eager_fp32", "hf_gpt2_healthy"):
        from transformers import GPT2Config, GPT2LMHeadModel
        healthy = job == "hf_gpt2_healthy"
        vocab, d, heads, layers, seq, batch = (8192, 768, 12, 6, 512, 16) if healthy else (8192, 512, 8, 6, 512, 8)
        attn = "sdpa" if healthy or "sdpa" in fx else "eager"
        cfg = GPT2Config(vocab_size=vocab, n_positions=seq, n_embd=d, n_layer=layers, n_head=heads)
        try:
            hf = GPT2LMHeadModel._from_config(cfg, attn_implementation=attn)
        except (TypeError, AttributeError):  # transformers without _from_config's keyword
            cfg._attn_implementation = attn
            hf = GPT2LMHeadModel(cfg)
        if getattr(hf.config, "_attn_implementation", attn) != attn:
            raise RuntimeError(f"transformers gave attention {hf.config._attn_implementation!r}, not {attn!r}")

        class Logits(nn.Module):  # the LM head's logits; the loss is the suite's own (float cross-entropy)
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, idx):
                return self.m(input_ids=idx, use_cache=False).logits

        model = Logits(hf).cuda().train()
        impl = "fused" if healthy or "fused" in fx else "foreach"
        opt = adamw(model.parameters(), impl)
        amp = torch.bfloat16 if healthy or "bf16" in fx else None
        if healthy:
            dl = torch.utils.data.DataLoader(TokenDataset(1_000_000, seq, vocab), batch_size=batch, num_workers=2,
                                             pin_memory=True, persistent_workers=True)
            src = LoaderSource(dl)
        else:
            src = ListSource(token_batches(4, batch, seq, vocab, pin=True))
        r = Runner(model, opt, src, gpt_prep, gpt_loss, amp=amp, non_blocking=True)
        import transformers
        info = gpt_info(model, vocab, d, heads, layers, seq, batch, precision="bf16 autocast" if amp else "fp32",
                        attention=f"transformers GPT-2 attn_implementation={attn!r}", optimizer="AdamW " + impl,
                        library=f"transformers {transformers.__version__}", dropout=0.1,
                        data="DataLoader 2 workers, pinned" if healthy else "pre-made pinned batches, non_blocking copy")
        return r, info, batch

    if job == "vit_fp32":
        import torchvision
        from torchvision.models.vision_transformer import VisionTransformer
        batch, res, classes = 64, 128, 100
        amp = torch.bfloat16 if "bf16" in fx else None
        model = VisionTransformer(image_size=res, patch_size=16, num_layers=6, num_heads=8, hidden_dim=512,
                                  mlp_dim=2048, num_classes=classes).cuda()
        graphs = "cuda_graphs" in fx
        opt = adamw(model.parameters(), "foreach", capturable=graphs)
        g = torch.Generator().manual_seed(SEED)
        batches = [(torch.randn(batch, 3, res, res, generator=g).pin_memory(),
                    torch.randint(0, classes, (batch,), generator=g).pin_memory()) for _ in range(4)]
        prep = lambda gpu: ((gpu[0],), gpu[1])  # noqa: E731
        if graphs:
            r = GraphRunner(model, opt, ListSource(batches), prep, F.cross_entropy, amp=amp)
        else:
            r = Runner(model, opt, ListSource(batches), prep, F.cross_entropy, amp=amp, non_blocking=True)
        n, t = count_params(model)
        info = dict(model=f"torchvision {torchvision.__version__} VisionTransformer", params=n, param_tensors=t,
                    batch=batch, seq=(res // 16) ** 2 + 1, image=[3, res, res], d_model=512, layers=6, heads=8,
                    precision="bf16 autocast" if amp else "fp32",
                    attention="nn.MultiheadAttention(need_weights=False): scaled_dot_product_attention",
                    optimizer="AdamW foreach", data="pre-made pinned batches, non_blocking copy")
        if graphs:
            info.update(optimizer="AdamW foreach capturable",
                        cuda_graphs="torch.cuda.CUDAGraph: whole step (fwd+bwd+AdamW) captured, replayed")
        return r, info, batch

    if job == "lstm_lm_fp32":
        vocab, emb, hidden, layers, seq, batch = 8192, 512, 1024, 2, 128, 32

        class LSTMLM(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(vocab, emb)
                self.rnn = nn.LSTM(emb, hidden, num_layers=layers, batch_first=True)
                self.head = nn.Linear(hidden, vocab)

            def forward(self, idx):
                return self.head(self.rnn(self.emb(idx))[0])

        amp = torch.bfloat16 if "bf16" in fx else None
        model = LSTMLM().cuda()
        impl = "fused" if "fused" in fx else "foreach"
        src = ListSource(token_batches(4, batch, seq, vocab, pin=True))
        n, t = count_params(model)
        info = dict(model=f"LSTM LM (embedding {emb}, nn.LSTM {layers} x {hidden}, head {vocab})", params=n,
                    param_tensors=t, batch=batch, seq=seq, precision="bf16 autocast" if amp else "fp32",
                    cudnn=torch.backends.cudnn.version(), optimizer="AdamW " + impl,
                    data="pre-made pinned batches, non_blocking copy")
        if "cuda_graphs" in fx:
            opt = adamw(model.parameters(), "foreach", capturable=True)
            r = GraphRunner(model, opt, src, gpt_prep, gpt_loss, amp=amp)
            info.update(optimizer="AdamW foreach capturable",
                        cuda_graphs="torch.cuda.CUDAGraph: whole step (fwd+bwd+AdamW) captured, replayed")
            return r, info, batch
        opt = adamw(model.parameters(), impl)
        return Runner(model, opt, src, gpt_prep, gpt_loss, amp=amp, non_blocking=True), info, batch

    if job == "healthy":
        vocab, d, heads, layers, seq, batch = 8192, 768, 12, 4, 512, 32
        model = GPT(vocab, d, heads, layers, attn="sdpa").cuda()
        opt = adamw(model.parameters(), "fused")
        dl = torch.utils.data.DataLoader(TokenDataset(1_000_000, seq, vocab), batch_size=batch, num_workers=2,
                                         pin_memory=True, persistent_workers=True)
        r = Runner(model, opt, LoaderSource(dl), gpt_prep, gpt_loss, amp=torch.bfloat16, non_blocking=True)
        info = gpt_info(model, vocab, d, heads, layers, seq, batch, precision="bf16 autocast", attention="sdpa",
                        optimizer="AdamW fused",
                        dataloader=dict(num_workers=2, pin_memory=True, persistent_workers=True))
        return r, info, batch

    raise ValueError(job)


# ----------------------------------------------------------------------------------------------------
# Measurement
# ----------------------------------------------------------------------------------------------------
def stats(ts):
    s = sorted(ts)
    n = len(s)
    if n == 0:
        return {}

    def q(p):
        return s[min(n - 1, max(0, int(round(p * (n - 1)))))]

    return dict(median=int(statistics.median(s)), min=s[0], max=s[-1], p10=q(0.1), p90=q(0.9),
                mean=int(statistics.fmean(s)), n=n)


def time_steps(runner, n):
    ts = []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        runner.step()
        torch.cuda.synchronize()
        ts.append(time.perf_counter_ns() - t0)
    return ts


def profiler_kwargs(popts):
    kw = dict(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
              record_shapes=popts["record_shapes"], with_stack=popts["with_stack"],
              profile_memory=popts["profile_memory"])
    if popts.get("cuda_sync_events"):
        kw["experimental_config"] = torch.profiler._ExperimentalConfig(enable_cuda_sync_events=True)
    return kw


def export_trace(runner, popts):
    """Records ProfilerStep#2..#4 (schedule wait=1 warmup=1 active=3) into a temporary JSON file; returns
    its path (the caller removes it)."""
    fd, tmp = tempfile.mkstemp(suffix=".json", prefix="whatif_")
    os.close(fd)
    sched = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    with torch.profiler.profile(schedule=sched, on_trace_ready=lambda p: p.export_chrome_trace(tmp),
                                **profiler_kwargs(popts)) as prof:
        for _ in range(5):
            runner.step()
            torch.cuda.synchronize()
            prof.step()
    return tmp


def record_trace(runner, popts, path):
    tmp = export_trace(runner, popts)
    with open(tmp, "rb") as src, gzip.open(path, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    raw = os.path.getsize(tmp)
    os.remove(tmp)
    return raw, os.path.getsize(path)


def time_profiled(runner, popts, n):
    """n steps timed inside an active profiler window. Schedule wait=1 warmup=1, as the trace's: with
    wait=0 a session after an earlier one in the process (TEARDOWN_CUPTI=1, torch 2.11) records the
    operators but no CUDA activity (scripts/probes/profiler_wait0_check.py), which is how every
    profiled_step_ns committed before session 18 was measured."""
    sched = torch.profiler.schedule(wait=1, warmup=1, active=n, repeat=1)
    ts = []
    with torch.profiler.profile(schedule=sched, **profiler_kwargs(popts)) as prof:
        for i in range(n + 2):
            torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            runner.step()
            torch.cuda.synchronize()
            if i >= 2:
                ts.append(time.perf_counter_ns() - t0)
            prof.step()
    return ts


def cleanup():
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def env_info():
    p = torch.cuda.get_device_properties(0)
    return dict(torch=torch.__version__, cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                gpu=torch.cuda.get_device_name(0), gpu_memory_bytes=p.total_memory, sms=p.multi_processor_count,
                python=sys.version.split()[0], TEARDOWN_CUPTI=os.environ.get("TEARDOWN_CUPTI"),
                matmul_allow_tf32=bool(torch.backends.cuda.matmul.allow_tf32),
                cudnn_allow_tf32=bool(torch.backends.cudnn.allow_tf32))


def host_probe(n=2000):
    """The host's speed right now: median ns of one tiny CPU operator (torch.add on 1-element CPU
    tensors) over 5 batches of n. The H200 machine's host has been seen at two speeds 1.7x apart."""
    a, b = torch.ones(1), torch.ones(1)
    meds = []
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            torch.add(a, b)
        meds.append((time.perf_counter_ns() - t0) / n)
    return round(statistics.median(meds), 1)


def retime_job(job, out, cfg, rep):
    """Pass 2's un-profiled timing alone, in a fresh process: each variant built, warmed up and timed
    (n_recheck steps) on its own, one after another; no profiler runs in this process."""
    _imports()
    spec = JOBS[job]
    torch.cuda.init()
    got = {}
    for variant, fixes in spec["variants"].items():
        try:
            r, _, _ = build(job, fixes)
            time_steps(r, cfg["warmup"])
            ts = time_steps(r, max(1, cfg["n_recheck"]))
            r.close()
            del r
            got[variant] = dict(median=int(statistics.median(ts)), steps_ns=ts, host_probe_ns=host_probe())
            print(f"[{job} retime {rep}] {variant:40s} {got[variant]['median'] / 1e6:8.3f} ms", flush=True)
        except Exception as ex:
            got[variant] = dict(error=f"{ex!r}")
            print(f"[{job} retime {rep}] {variant}: FAILED {ex!r}", flush=True)
        cleanup()
    with open(os.path.join(out, f".{job}.retime{rep}.part.json"), "w") as f:
        json.dump(got, f)


def run_job(job, out, cfg):
    _imports()
    spec = JOBS[job]
    torch.cuda.init()
    env = env_info()
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    entries = {}
    part = os.path.join(out, f".{job}.part.json")

    def save():
        with open(part, "w") as f:
            json.dump(list(entries.values()), f, indent=1)

    def log(msg):
        print(f"[{job}] {msg}", flush=True)

    # pass 1: unprofiled timings of every variant, before any profiler has run in this process. All
    # variants are built and warmed up first, then timed in `rounds` interleaved rounds (variant A's
    # steps, B's, C's, then A again, ...), so that a drift of the host's speed during the job (seen
    # up to 45 % between two passes of one process) falls on every variant alike.
    runners = {}
    for variant, fixes in spec["variants"].items():
        e = dict(job=job, variant=variant, fixes=fixes, description=spec["desc"],
                 profiler=dict(spec["profiler"], schedule="wait=1 warmup=1 active=3"),
                 trace=f"{job}__{variant}.pt.trace.json.gz", date=date, torch=env["torch"], gpu=env["gpu"],
                 errors=[])
        entries[variant] = e
        try:
            r, info, samples = build(job, fixes)
            e["model"], e["samples_per_step"] = info, samples
            time_steps(r, cfg["warmup"])
            runners[variant] = r
        except Exception as ex:
            e["errors"].append("pass1: " + traceback.format_exc()[-2000:])
            log(f"{variant}: pass 1 build FAILED: {ex!r}")
    rounds = max(1, cfg["rounds"])
    per_round = max(1, cfg["n_unprofiled"] // rounds)
    timed = {v: [] for v in runners}
    round_medians = {v: [] for v in runners}
    torch.cuda.reset_peak_memory_stats()
    for _ in range(rounds):
        for variant, r in list(runners.items()):
            try:
                ts = time_steps(r, per_round)
                timed[variant] += ts
                round_medians[variant].append(int(statistics.median(ts)))
            except Exception as ex:
                entries[variant]["errors"].append("pass1: " + traceback.format_exc()[-2000:])
                log(f"{variant}: pass 1 FAILED: {ex!r}")
                runners.pop(variant).close()
    for variant, r in runners.items():
        e = entries[variant]
        ts = timed[variant]
        for k, v in stats(ts).items():
            e[f"unprofiled_step_ns_{k}"] = v
        e["unprofiled_steps_ns"] = ts
        e["unprofiled_round_medians_ns"] = round_medians[variant]
        e["per_sample_ns_median"] = int(e["unprofiled_step_ns_median"] / e["samples_per_step"])
        e["peak_memory_allocated_bytes"] = torch.cuda.max_memory_allocated()  # all variants held at once
        r.close()
        log(f"{variant:40s} unprofiled {e['unprofiled_step_ns_median'] / 1e6:8.3f} ms "
            f"[{e['unprofiled_step_ns_min'] / 1e6:.3f}, {e['unprofiled_step_ns_max'] / 1e6:.3f}] "
            f"rounds {[round(x / 1e6, 2) for x in round_medians[variant]]}")
    runners.clear()
    cleanup()
    save()

    # pass 2: unprofiled re-check, the trace, then the timing under the profiler
    for variant, fixes in spec["variants"].items():
        e = entries[variant]
        if e["errors"]:
            continue
        try:
            t0 = time.time()
            r, _, _ = build(job, fixes)
            time_steps(r, cfg["warmup"])
            if cfg["n_recheck"]:
                for k, v in stats(time_steps(r, cfg["n_recheck"])).items():
                    e[f"unprofiled_recheck_step_ns_{k}"] = v
            raw, gz = record_trace(r, spec["profiler"], os.path.join(out, e["trace"]))
            e["trace_bytes"], e["trace_json_bytes"] = gz, raw
            ts = time_profiled(r, spec["profiler"], cfg["n_profiled"])
            for k, v in stats(ts).items():
                e[f"profiled_step_ns_{k}"] = v
            e["profiled_steps_ns"] = ts
            e["profiler_inflation"] = round(e["profiled_step_ns_median"] / e["unprofiled_step_ns_median"], 4)
            extra = spec.get("extra_trace")
            if extra and extra["variant"] == variant:
                popts = dict(spec["profiler"], cuda_sync_events=True)
                name = f"{job}__{variant}__{extra['suffix']}.pt.trace.json.gz"
                raw2, gz2 = record_trace(r, popts, os.path.join(out, name))
                ts2 = time_profiled(r, popts, cfg["n_profiled"])
                s2 = stats(ts2)
                e["extra_traces"] = [dict(trace=name, trace_bytes=gz2, trace_json_bytes=raw2,
                                          profiler=dict(popts, schedule="wait=1 warmup=1 active=3",
                                                        experimental_config="enable_cuda_sync_events=True"),
                                          **{f"profiled_step_ns_{k}": v for k, v in s2.items()})]
            r.close()
            del r
            log(f"{variant:40s} profiled   {e['profiled_step_ns_median'] / 1e6:8.3f} ms  inflation "
                f"{e['profiler_inflation']:.3f}  trace {gz / 1024:.0f} KiB ({time.time() - t0:.1f} s)")
        except Exception as ex:
            e["errors"].append("pass2: " + traceback.format_exc()[-2000:])
            log(f"{variant}: pass 2 FAILED: {ex!r}")
        cleanup()
        save()
    for e in entries.values():
        e["env"] = env
    save()


# ----------------------------------------------------------------------------------------------------
# Driver: one process per job, then measurements.json
# ----------------------------------------------------------------------------------------------------
def retime_all(args, jobs, cmd_line, child_env, cfg):
    """Rounds of fresh processes, jobs interleaved within a round (a drift of the machine's speed falls on
    every job's variants alike); retime.json: per job and variant, each round's median."""
    t_all = time.time()
    out, first, earlier = {}, 0, {}
    # Rounds accumulate: an OUT/retime.json from earlier runs keeps its rounds (and its notes), the new
    # ones follow.
    if os.path.exists(os.path.join(args.out, "retime.json")):
        with open(os.path.join(args.out, "retime.json")) as f:
            earlier = json.load(f)
        out = earlier.get("jobs", {})
        first = 1 + max((r.get("round", -1) for vs in out.values() for rs in vs.values() for r in rs), default=-1)
        print(f"retime: {first} earlier rounds in {args.out}/retime.json; new rounds from {first}", flush=True)
    for rep in range(first, first + args.retime):
        for j in jobs:
            cmd = [sys.executable, os.path.abspath(__file__), "--job", j, "--out", args.out, "--retime", "1",
                   "--rep", str(rep)] + (["--quick"] if args.quick else [])
            try:
                rc = subprocess.run(cmd, timeout=args.job_timeout, env=child_env).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
            part = os.path.join(args.out, f".{j}.retime{rep}.part.json")
            got = {}
            if os.path.exists(part):
                with open(part) as f:
                    got = json.load(f)
                os.remove(part)
            for v, r in got.items():
                out.setdefault(j, {}).setdefault(v, []).append(dict(r, round=rep, rc=rc))
            print(f"== retime round {rep} {j}: rc={rc} ({time.time() - t_all:.0f} s)", flush=True)
        write_retime(args, cmd_line, cfg, out, rep + 1, earlier, first)  # after each round: a cut run keeps its rounds
    print(f"retime: {args.retime} rounds of {len(jobs)} jobs in {time.time() - t_all:.1f} s")


def write_retime(args, cmd_line, cfg, out, rounds_done, earlier, first):
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    runs = earlier.get("runs") or ([dict(command=earlier["command"], date=earlier.get("date"))] if "command" in earlier else [])
    doc = dict(generator="scripts/validation/whatif_jobs.py --retime", command=cmd_line, date=now,
               runs=runs + [dict(command=cmd_line, date=now, rounds=[first, rounds_done - 1])],
               settings=dict(warmup=cfg["warmup"], steps=cfg["n_recheck"], rounds=rounds_done),
               timing=("each round: one fresh process per job (TEARDOWN_CUPTI=1, no profiler); in it every variant "
                       "built, warmed up and timed alone, one after another, as pass 2 times it before the trace; "
                       "each step bracketed by torch.cuda.synchronize() + time.perf_counter_ns()"),
               jobs=out)
    if "note" in earlier:
        doc["note"] = earlier["note"]
    tmp = os.path.join(args.out, ".retime.json.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, os.path.join(args.out, "retime.json"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output folder (testdata/whatif)")
    ap.add_argument("--jobs", default=",".join(JOBS), help="comma-separated subset of: " + ", ".join(JOBS))
    ap.add_argument("--quick", action="store_true", help="smoke run: few warm-up and timed steps")
    ap.add_argument("--job", help=argparse.SUPPRESS)  # internal: run one job in this process
    ap.add_argument("--job-timeout", type=int, default=150, help="seconds per job process")
    ap.add_argument("--retime", type=int, default=0, metavar="R",
                    help="only re-time: R rounds, each a fresh process per job in which every variant is built, "
                         "warmed up and timed alone (pass 2's un-profiled timing, no profiler); writes retime.json")
    ap.add_argument("--rep", type=int, default=0, help=argparse.SUPPRESS)  # internal: the round of --retime
    args = ap.parse_args()
    cfg = QUICK if args.quick else FULL
    os.makedirs(args.out, exist_ok=True)
    if args.job:
        if args.retime:
            retime_job(args.job, args.out, cfg, args.rep)
        else:
            run_job(args.job, args.out, cfg)
        return
    jobs = [j for j in args.jobs.split(",") if j]
    for j in jobs:
        if j not in JOBS:
            sys.exit(f"unknown job {j}")
    cmd_line = "python3 scripts/validation/whatif_jobs.py " + " ".join(sys.argv[1:])
    # Kineto leaves CUPTI attached after a profiler session unless TEARDOWN_CUPTI=1 (torch 2.11 + CUDA 13
    # measured here: host-bound steps stay 30-58 % slower after a session, and later sessions inflate more).
    # Tear it down by default so every session starts like a first one; TEARDOWN_CUPTI=0 keeps Kineto's default.
    child_env = dict(os.environ)
    child_env.setdefault("TEARDOWN_CUPTI", "1")
    t_all = time.time()
    if args.retime:
        retime_all(args, jobs, cmd_line, child_env, cfg)
        return
    results, failures = [], []
    for j in jobs:
        t0 = time.time()
        cmd = [sys.executable, os.path.abspath(__file__), "--job", j, "--out", args.out]
        if args.quick:
            cmd.append("--quick")
        try:
            rc = subprocess.run(cmd, timeout=args.job_timeout, env=child_env).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        part = os.path.join(args.out, f".{j}.part.json")
        if os.path.exists(part):
            with open(part) as f:
                got = json.load(f)
            os.remove(part)
            if rc != 0:
                for e in got:
                    e.setdefault("errors", []).append(f"job process ended with {rc}")
            results += got
        else:
            failures.append(j)
        print(f"== {j}: rc={rc} in {time.time() - t0:.1f} s", flush=True)
    env = next((e["env"] for e in results if "env" in e), {})
    for e in results:
        e.pop("env", None)
    doc = dict(
        generator="scripts/validation/whatif_jobs.py", command=cmd_line,
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        env=env, settings=dict(cfg, seed=SEED, quick=args.quick),
        timing=("unprofiled: every variant of a job built and warmed up (`warmup` steps), then timed in `rounds` "
                "interleaved rounds of n_unprofiled/rounds steps each (A, B, C, A, B, C, ...: a drift of the host's "
                "speed falls on every variant alike; unprofiled_round_medians_ns per round), each step bracketed by "
                "torch.cuda.synchronize() + time.perf_counter_ns(); the step includes the H2D copy, forward, "
                "backward, optimizer step, zero_grad, the fetch of the next batch (after the launches), any host "
                "work and the closing synchronize. unprofiled_recheck: the same, later in the job's process, after "
                "other variants were profiled. profiled: the same step under torch.profiler with the trace's options "
                "(schedule wait=0 warmup=1 active=n_profiled, not exported). The trace: schedule wait=1 warmup=1 "
                "active=3, each step followed by torch.cuda.synchronize() inside the ProfilerStep#N range."),
        jobs={j: dict(desc=JOBS[j]["desc"], variants=JOBS[j]["variants"], profiler=JOBS[j]["profiler"])
              for j in jobs},
        failed_jobs=failures, entries=results)
    with open(os.path.join(args.out, "measurements.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(f"\nall jobs in {time.time() - t_all:.1f} s; {len(results)} entries; failed jobs: {failures}")
    print(f"{'job':26s} {'variant':38s} {'unprof ms':>9s} {'speedup':>7s} {'prof ms':>8s} {'infl':>5s} {'KiB':>5s}")
    base = {e["job"]: e.get("unprofiled_step_ns_median") for e in results if e["variant"] == "base"}
    for e in results:
        u, p = e.get("unprofiled_step_ns_median"), e.get("profiled_step_ns_median")
        b = base.get(e["job"])
        sp = f"{b / u:7.2f}" if u and b else "      -"
        print(f"{e['job']:26s} {e['variant']:38s} {u / 1e6 if u else float('nan'):9.3f} {sp} "
              f"{p / 1e6 if p else float('nan'):8.3f} {e.get('profiler_inflation', float('nan')):5.2f} "
              f"{e.get('trace_bytes', 0) / 1024:5.0f} {'ERR' if e.get('errors') else ''}")


if __name__ == "__main__":
    main()

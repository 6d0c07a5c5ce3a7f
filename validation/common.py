"""Shared pieces of the validation lab's jobs (imported by validation/jobs/*.py, only inside a job process).

What is here and why:
  Job              the object a job's build(variant) returns: step(), drain(), close().
  Batches          an endless iterator over a DataLoader (as `for batch in loader` over many epochs), which
                   can throw away what its workers prefetched (drain) and shut its workers down (close).
  Cycle            an endless iterator over batches made ahead in host memory (jobs without a DataLoader).
  make_jpegs / JpegDataset / imagenet_train_transform
                   random JPEG bytes encoded once with PIL; decoded and transformed per sample, as an
                   ImageFolder dataset does.
  ImageBatchDataset  whole uint8 image batches from a bank (a cheap, GEMM-feeding loader for healthy jobs).
  TokenDataset     random token sequences (cheap per sample).
  make_text / tokenize / tokenize_batch / TextDataset
                   real Python string work per sample: text generated from a word list, lower-cased, split,
                   stripped and hashed word by word into ids (what a hand-rolled tokenizer does).
  numpy_augment    heavy numpy augmentation of one HWC uint8 image (crop, flip, jitter, noise, normalize).
  StepGraph        a whole training step captured in one CUDA graph (the cuda_graphs fix as users apply it).
  norm_stats       ImageNet mean/std made once on the GPU (gpu_normalize without its per-call copy).
  MiniGPT          a small GPT written by hand (F.scaled_dot_product_attention, causal).
  hf_model         a Hugging Face model built from a config object on the GPU (no download ever).
  autocast         torch.autocast for bf16 or a no-op.

No function here synchronizes the GPU: the driver (run_lab.py) brackets the timed steps itself.
"""
import contextlib
import functools
import io
import math
import random
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
VIRTUAL_LEN = 1_000_000  # datasets index modulo their real content: an epoch never ends inside a run


# ----------------------------------------------------------------------------------------------------
# Job and batch iterators
# ----------------------------------------------------------------------------------------------------
class Job:
    """One variant of a job, as a training script holds it. Subclasses set the attributes they use
    and write step() the way the script's loop body reads.

    warmup_steps      steps the driver runs before timing (compile jobs need more)
    samples_per_step  samples one step trains on (the driver records it; a batch_size variant's speedup
                      is compared per sample)
    batches           a Batches (DataLoader) or Cycle; drain()/close() act on it
    drain_steps       steps drain() runs after emptying the loader's queue
    trace_active      the profiled steps a trace needs (at least the driver's): a DataLoader of W
                      workers delivers in bursts of W batches, and its period shows between two fetches
                      that wait, two bursts apart: 2 W + 2 steps
    """
    warmup_steps = 5
    samples_per_step = 1
    batches = None
    drain_steps = 3

    def step(self):
        raise NotImplementedError

    @property
    def trace_active(self):
        loader = getattr(self.batches, "loader", None)
        return 2 * (getattr(loader, "num_workers", 0) or 0) + 2

    def drain(self):
        """Before a timed round or a trace: empty the loader's prefetch queue (it filled while other
        variants ran), then run a few steps so that loader, host and GPU are back in steady state."""
        if isinstance(self.batches, Batches):
            self.batches.discard_prefetched()
            for _ in range(self.drain_steps):
                self.step()

    def close(self):
        if self.batches is not None:
            self.batches.close()


class Batches:
    """next() over a DataLoader across epochs, the way `for epoch ...: for batch in loader` reads."""

    def __init__(self, loader):
        self.loader = loader
        self.it = iter(loader)

    def __next__(self):
        try:
            return next(self.it)
        except StopIteration:
            self.it = iter(self.loader)
            return next(self.it)

    def discard_prefetched(self):
        """Takes (and drops) as many batches as the workers may hold ready: num_workers x prefetch_factor."""
        workers = getattr(self.loader, "num_workers", 0) or 0
        if workers <= 0:
            return
        prefetch = getattr(self.loader, "prefetch_factor", None) or 2
        for _ in range(workers * prefetch):
            next(self)

    def close(self):
        it, self.it = self.it, None
        if hasattr(it, "_shutdown_workers"):  # a DataLoader's multiprocessing iterator
            it._shutdown_workers()
        elif hasattr(it, "close"):  # a generator wrapping one (lightning's _FabricDataLoader)
            it.close()


class Cycle:
    """next() over batches made ahead in host memory (a job that builds no DataLoader)."""

    def __init__(self, items):
        self.items, self.i = items, 0

    def __next__(self):
        b = self.items[self.i % len(self.items)]
        self.i += 1
        return b

    def close(self):
        self.items = None


class StepGraph:
    """A whole training step captured once in a CUDA graph and replayed, the whole-network recipe of the
    PyTorch CUDA-graphs docs: each step copies the batch into static input buffers and launches one graph
    (forward, backward and optimizer.step(), the optimizer built with capturable=True).

    body(*static_inputs) is the step on the static inputs; it must not synchronize. Its return value is
    kept as `out` (static outputs, rewritten by each replay)."""

    def __init__(self, body, first_batch, opt, warmup=3):
        self.static = [t.to("cuda").clone() for t in _as_tuple(first_batch)]
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(warmup):
                body(*self.static)
                opt.zero_grad(set_to_none=True)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        # thread_local: a DataLoader's pin-memory thread keeps calling CUDA (cudaHostAlloc, event queries)
        # while the step is captured; in the default global mode those calls break the capture.
        with torch.cuda.graph(self.graph, capture_error_mode="thread_local"):
            self.out = body(*self.static)

    def __call__(self, batch):
        for dst, src in zip(self.static, _as_tuple(batch)):
            dst.copy_(src, non_blocking=True)
        self.graph.replay()
        return self.out


def _as_tuple(batch):
    return tuple(batch) if isinstance(batch, (tuple, list)) else (batch,)


def autocast(enabled, dtype=torch.bfloat16):
    """torch.autocast on CUDA when enabled, else a no-op context (the FP32 base variants)."""
    if not enabled:
        return contextlib.nullcontext()
    return torch.autocast("cuda", dtype=dtype)


def norm_stats(device="cuda"):
    """The ImageNet mean and std (x 255) as (1, 3, 1, 1) GPU tensors, made once."""
    return (torch.tensor(IMAGENET_MEAN, device=device).view(1, 3, 1, 1) * 255,
            torch.tensor(IMAGENET_STD, device=device).view(1, 3, 1, 1) * 255)


def gpu_normalize(x_u8, channels_last=False, stats=None):
    """uint8 NCHW images on the GPU -> normalized float (the 'normalize on the GPU' loader trick).
    Without `stats` it builds mean and std from Python lists on every call, as many scripts do: each
    call is a pageable host-to-device copy, which blocks the host until the GPU has caught up. With
    `stats` (from norm_stats(), made once) there is no copy."""
    mean, std = stats if stats is not None else norm_stats(x_u8.device)
    x = (x_u8.float() - mean) / std
    return x.contiguous(memory_format=torch.channels_last) if channels_last else x


# ----------------------------------------------------------------------------------------------------
# Image data
# ----------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def make_jpegs(n, size, quality=90, seed=0):
    """n JPEG files of size x size pixels, encoded once (cached per process, so the variants share them).
    Content: a random 8x8 colour field upscaled bicubically plus pixel noise, so that the files decode at
    about the cost of photographs of that size (pure noise decodes slower, flat colour faster)."""
    from PIL import Image
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        small = Image.fromarray(rng.integers(0, 256, (8, 8, 3), dtype=np.uint8))
        big = np.asarray(small.resize((size, size), Image.BICUBIC), dtype=np.int16)
        big = np.clip(big + rng.integers(-20, 21, big.shape), 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(big).save(buf, format="JPEG", quality=quality)
        out.append(buf.getvalue())
    return tuple(out)


def imagenet_train_transform(crop):
    """The torchvision ImageNet training recipe's transform."""
    import torchvision.transforms as T
    return T.Compose([T.RandomResizedCrop(crop), T.RandomHorizontalFlip(), T.ToTensor(),
                      T.Normalize(IMAGENET_MEAN, IMAGENET_STD)])


class JpegDataset(Dataset):
    """An ImageFolder-like dataset over JPEG bytes in memory: decode with PIL, then the transform."""

    def __init__(self, jpegs, transform, classes=1000):
        self.jpegs, self.transform, self.classes = jpegs, transform, classes

    def __len__(self):
        return VIRTUAL_LEN

    def __getitem__(self, i):
        from PIL import Image
        img = Image.open(io.BytesIO(self.jpegs[i % len(self.jpegs)])).convert("RGB")
        return self.transform(img), i % self.classes


class ImageBatchDataset(Dataset):
    """Whole uint8 NCHW batches (use with DataLoader(batch_size=None)), taken from a random bank."""

    def __init__(self, batch, res, bank=4, classes=1000, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.bank = [torch.randint(0, 256, (batch, 3, res, res), dtype=torch.uint8, generator=g)
                     for _ in range(bank)]
        self.labels = [torch.randint(0, classes, (batch,), generator=g) for _ in range(bank)]

    def __len__(self):
        return VIRTUAL_LEN

    def __getitem__(self, i):
        k = i % len(self.bank)
        return self.bank[k].clone(), self.labels[k].clone()


# ----------------------------------------------------------------------------------------------------
# Token and text data
# ----------------------------------------------------------------------------------------------------
class TokenDataset(Dataset):
    """Random token sequences of length seq (cheap per sample: the loader keeps up)."""

    def __init__(self, seq, vocab, seed=0):
        self.seq, self.vocab, self.seed = seq, vocab, seed

    def __len__(self):
        return VIRTUAL_LEN

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + i)
        return torch.randint(1, self.vocab, (self.seq,), generator=g)


@functools.lru_cache(maxsize=1)
def word_list(n=8000, seed=1):
    """A vocabulary of made-up words (2-12 letters), the raw material of the generated text."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    return tuple("".join(rng.choice(letters) for _ in range(rng.randint(2, 12))) for _ in range(n))


def make_text(rng, n_words):
    """A 'document': n_words words with capitals and punctuation sprinkled in (Python string work)."""
    words = rng.choices(word_list(), k=n_words)
    parts = []
    for j, w in enumerate(words):
        if j % 17 == 0:
            w = w.capitalize()
        if j % 11 == 10:
            w += rng.choice(".,;:!?")
        parts.append(w)
    return " ".join(parts)


def tokenize(text, seq, vocab):
    """Word-level tokenizer: lower, split, strip punctuation, crc32 into [2, vocab); BOS=1, PAD=0."""
    ids = [1]
    for w in text.lower().split():
        w = w.strip(".,;:!?")
        if not w:
            continue
        ids.append(2 + zlib.crc32(w.encode("utf-8")) % (vocab - 2))
        if len(ids) == seq:
            break
    ids.extend([0] * (seq - len(ids)))
    return ids


def tokenize_batch(rng, batch, seq, vocab):
    """One batch built on the calling thread: generate and tokenize `batch` documents."""
    rows = [tokenize(make_text(rng, seq + 8), seq, vocab) for _ in range(batch)]
    return torch.tensor(rows, dtype=torch.long)


class TextDataset(Dataset):
    """The same generation + tokenization per sample, for DataLoader workers."""

    def __init__(self, seq, vocab, seed=0):
        self.seq, self.vocab, self.seed = seq, vocab, seed

    def __len__(self):
        return VIRTUAL_LEN

    def __getitem__(self, i):
        rng = random.Random(self.seed * 1_000_003 + i)
        return torch.tensor(tokenize(make_text(rng, self.seq + 8), self.seq, self.vocab), dtype=torch.long)


# ----------------------------------------------------------------------------------------------------
# numpy augmentation
# ----------------------------------------------------------------------------------------------------
def numpy_augment(img, crop, rng):
    """Heavy per-image numpy augmentation of an HWC uint8 image -> CHW float32: random crop, flip,
    brightness/contrast/saturation jitter, gaussian noise, per-channel normalization."""
    h, w, _ = img.shape
    y, x = rng.integers(0, h - crop + 1), rng.integers(0, w - crop + 1)
    a = img[y:y + crop, x:x + crop].astype(np.float32) * (1.0 / 255)
    if rng.random() < 0.5:
        a = a[:, ::-1]
    a = a * rng.uniform(0.7, 1.3)  # brightness
    m = a.mean()
    a = (a - m) * rng.uniform(0.7, 1.3) + m  # contrast
    gray = a.mean(axis=2, keepdims=True)
    a = (a - gray) * rng.uniform(0.6, 1.4) + gray  # saturation
    a = a + rng.normal(0.0, 0.03, a.shape).astype(np.float32)
    a = np.clip(a, 0.0, 1.0)
    a = (a - np.asarray(IMAGENET_MEAN, np.float32)) / np.asarray(IMAGENET_STD, np.float32)
    return np.ascontiguousarray(a.transpose(2, 0, 1))


# ----------------------------------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------------------------------
class GPTBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


class MiniGPT(nn.Module):
    """A small GPT: token + position embedding, pre-LN blocks, tied-free LM head."""

    def __init__(self, vocab, d, heads, layers, seq):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, seq, d))
        self.blocks = nn.ModuleList(GPTBlock(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        nn.init.normal_(self.pos, std=0.02)

    def forward(self, idx):
        x = self.tok(idx) + self.pos[:, : idx.shape[1]]
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


def lm_loss(logits, targets):
    """Next-token cross entropy in FP32 (as most training scripts cast the logits)."""
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1))


class ImageClassifierJob(Job):
    """An image classifier trained the common way: uint8 batches from a DataLoader (4 workers, pinned),
    normalized on the GPU with mean/std made once, cross-entropy, SGD momentum, bf16 autocast and
    channels_last (the model and each batch) when asked; `graphed`: the whole step in one CUDA graph
    (StepGraph), each batch copied into its static inputs."""

    def __init__(self, model, batch, res, bf16, lr=0.1, weight_decay=1e-4, channels_last=False, graphed=False):
        self.model = model.cuda().train()
        if channels_last:
            self.model = self.model.to(memory_format=torch.channels_last)
        self.cl = channels_last
        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9, weight_decay=weight_decay)
        self.batches = Batches(DataLoader(ImageBatchDataset(batch, res), batch_size=None, shuffle=True,
                                          num_workers=4, pin_memory=True))
        self.bf16, self.samples_per_step, self.stats = bf16, batch, norm_stats()
        self.graph = None
        if graphed:
            def body(x, y):
                with autocast(self.bf16):
                    loss = F.cross_entropy(self.model(gpu_normalize(x, self.cl, self.stats)), y)
                loss.backward()
                self.opt.step()
                return loss

            self.graph = StepGraph(body, next(self.batches), self.opt)

    def step(self):
        if self.graph is not None:
            self.graph(next(self.batches))
            return
        x, y = next(self.batches)
        x = gpu_normalize(x.to("cuda", non_blocking=True), channels_last=self.cl, stats=self.stats)
        y = y.to("cuda", non_blocking=True)
        with autocast(self.bf16):
            loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)


def hf_model(model_cls, config, attn=None):
    """A transformers model built from `config` directly on the GPU, in training mode; `attn` sets the
    attention implementation ("eager", "sdpa") and is checked afterwards so a variant never runs the
    implementation it does not name."""
    if attn is not None:
        try:
            config._attn_implementation = attn
        except AttributeError:  # a read-only property in this transformers version: set on the model below
            pass
    try:
        with torch.device("cuda"):
            model = model_cls(config)
    except Exception:  # a transformers version that cannot build under a device context
        model = model_cls(config).cuda()
    if attn is not None and getattr(model.config, "_attn_implementation", attn) != attn:
        if hasattr(model, "set_attn_implementation"):
            model.set_attn_implementation(attn)
        if model.config._attn_implementation != attn:
            raise RuntimeError(f"asked attention {attn!r}, model uses {model.config._attn_implementation!r}")
    return model.train()


def count_params(model):
    return sum(p.numel() for p in model.parameters())


def sinusoidal(t, dim):
    """Timestep embedding of a diffusion model: sin/cos at geometric frequencies."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, device=t.device, dtype=torch.float32) / half)
    ang = t.float()[:, None] * freqs[None]
    return torch.cat([ang.sin(), ang.cos()], dim=1)

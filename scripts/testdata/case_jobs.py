#!/usr/bin/env python3
"""Robustness / diagnosis test cases: small Kineto traces of setups the analyzer must not get wrong.

Run on ONE GPU (an H200 with PyTorch 2.11, CUDA 13, NCCL 2.28 was the target):
    NCCL_NVLS_ENABLE=0 python3 scripts/testdata/case_jobs.py --out /tmp/cases
    python3 scripts/testdata/case_jobs.py --out DIR --cases fsdp1,stray_step     # a subset
    python3 scripts/testdata/case_jobs.py --out DIR --quick                       # smoke run: fewer steps, shorter sleep

It writes, gzipped, into --out (default testdata/cases):
  fsdp1.pt.trace.json.gz         FSDP1 (FullyShardedDataParallel) at world size 1, NCCL, per-block auto-wrap,
                                 MixedPrecision(bf16 params, fp32 reduce), AdamW; schedule wait=1 warmup=1 active=3
  fsdp2.pt.trace.json.gz         the same with FSDP2 (fully_shard per block and on the root,
                                 MixedPrecisionPolicy(bf16, fp32), reshard_after_forward=True)
  stray_step.pt.trace.json.gz    profile WITHOUT a schedule: 4 steps each followed by prof.step(), then
                                 time.sleep(2) (host-only "checkpoint saving") before the profiler exits
  stray_step_sched.pt.trace.json.gz  (extra) the same loop and sleep WITH schedule(wait=1, warmup=1, active=4):
                                 the last prof.step() opens a ProfilerStep#5 that holds only the sleep
  outside_steps.pt.trace.json.gz profile WITHOUT a schedule, steps annotated by hand with
                                 record_function("ProfilerStep#N") (no prof.step()), GPU "evaluation" work
                                 before step 1 and between steps 1 and 2, outside every annotated step
  cpu_rank/rank0.pt.trace.json.gz, cpu_rank/rank1.pt.trace.json.gz
                                 gloo, world size 2: rank 0 trains on the GPU, rank 1 the same model on the
                                 CPU (both profiled with CPU+CUDA activities); a gloo all_reduce each step
and DIR/cases.json: per case what it does, the profiler options, the torch version, and facts read back
from the exported traces themselves (step ranges, GPU event counts and times, distributedInfo, ...) that a
test can check.

Each case runs in its own process (and cpu_rank's two ranks in two more), so no state leaks between cases;
a case past --job-timeout is killed with its process group. A failing case is reported (traceback in
cases.json and on stderr), the others still run, and the exit status is 1 if any case failed.
The driver sets TEARDOWN_CUPTI=1 in the case processes unless it is set already (as in whatif_jobs.py),
and always NCCL_NVLS_ENABLE=0 (NVLink multicast off). torch is imported only inside the case processes.

Checked on the nvidia-h200 device machine (torch 2.11.0+cu130, NCCL 2.28.9): all 6 cases ok in 67 s,
traces 89-295 KiB gzipped. A subset run updates cases.json in place (entries of other cases are kept).
"""
import argparse
import collections
import datetime
import gzip
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

SEED = 0
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
SIZE_AIM = 400 * 1024  # gzipped bytes a trace should stay under

SCHED = dict(wait=1, warmup=1, active=3, repeat=1)
SCHED_TEXT = "schedule(wait=1, warmup=1, active=3, repeat=1)"

CASES = {
    "fsdp1": dict(
        desc="FSDP1 (torch.distributed.fsdp.FullyShardedDataParallel) at world size 1, NCCL backend; small GPT "
             "(4 blocks, d=512) wrapped per block (ModuleWrapPolicy({Block})) plus the root; "
             "MixedPrecision(param_dtype=bf16, reduce_dtype=fp32); AdamW; 8 steps, each ending with "
             "torch.cuda.synchronize() then prof.step()",
        files=["fsdp1.pt.trace.json.gz"],
        profiler=dict(activities=["CPU", "CUDA"], schedule=SCHED_TEXT, record_shapes=True, with_stack=False,
                      profile_memory=False)),
    "fsdp2": dict(
        desc="FSDP2 (fully_shard) at world size 1, NCCL backend; the same GPT, fully_shard on each block and "
             "on the root, MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32), "
             "reshard_after_forward=True; AdamW; 8 steps, each ending with torch.cuda.synchronize() then "
             "prof.step()",
        files=["fsdp2.pt.trace.json.gz"],
        profiler=dict(activities=["CPU", "CUDA"], schedule=SCHED_TEXT, record_shapes=True, with_stack=False,
                      profile_memory=False)),
    "stray_step": dict(
        desc="plain training loop (small GPT, bf16 autocast, AdamW, loss.item() logged each step) profiled "
             "WITHOUT a schedule: 4 steps each followed by prof.step(), then, still inside the profiler "
             "context, time.sleep(2.0) (host work with no GPU activity, like checkpoint saving) before the "
             "context exits. 2 warm-up steps before the profiler starts",
        files=["stray_step.pt.trace.json.gz"],
        profiler=dict(activities=["CPU", "CUDA"], schedule=None, record_shapes=False, with_stack=False,
                      profile_memory=False)),
    "stray_step_sched": dict(
        desc="(extra, beside stray_step) the same loop and sleep, profiled WITH schedule(wait=1, warmup=1, "
             "active=4, repeat=1) and 5 steps each followed by prof.step(): the loop ends while the schedule is "
             "still active, so the ProfilerStep#5 opened by the last prof.step() holds only the 2 s sleep (no GPU "
             "work) and ends when the profiler exits; ProfilerStep#2..#4 are real steps",
        files=["stray_step_sched.pt.trace.json.gz"],
        profiler=dict(activities=["CPU", "CUDA"], schedule="schedule(wait=1, warmup=1, active=4, repeat=1)",
                      record_shapes=False, with_stack=False, profile_memory=False)),
    "outside_steps": dict(
        desc="profile WITHOUT a schedule; the loop annotates its own steps with "
             "torch.profiler.record_function('ProfilerStep#N') for N=1..3 (no prof.step()), each step ending "
             "with torch.cuda.synchronize() inside its range; before step 1 an 'evaluation' phase (no_grad "
             "forwards over a few batches, then torch.cuda.synchronize(), ~7 ms of GPU work) and between "
             "step 1 and step 2 another (~5 ms), so GPU work lies outside the annotated steps. "
             "Small GPT, bf16 autocast, AdamW",
        files=["outside_steps.pt.trace.json.gz"],
        profiler=dict(activities=["CPU", "CUDA"], schedule=None, record_shapes=False, with_stack=False,
                      profile_memory=False)),
    "cpu_rank": dict(
        desc="two processes, gloo backend, world size 2: rank 0 trains a small GPT (fp32) on the GPU, rank 1 "
             "the same model on the CPU (no CUDA use in rank 1), both profiled with activities=[CPU, CUDA]; "
             "each step both ranks all_reduce the loss (loss.detach().cpu(), one float) with gloo; "
             "6 steps, each followed by prof.step()",
        files=["cpu_rank/rank0.pt.trace.json.gz", "cpu_rank/rank1.pt.trace.json.gz"],
        profiler=dict(activities=["CPU", "CUDA"], schedule=SCHED_TEXT, record_shapes=False, with_stack=False,
                      profile_memory=False)),
    "symm_mem": dict(
        desc="communication that is not NCCL's: a small GPT (bf16 autocast) whose gradients are summed each step "
             "by PyTorch symmetric memory's one_shot_all_reduce (a CUDA kernel of c10d::symmetric_memory, no "
             "NCCL kernel) at world size 1 on the NCCL process group; 8 steps, schedule wait=1 warmup=1 "
             "active=3",
        files=["symm_mem.pt.trace.json.gz"],
        profiler=dict(activities=["CPU", "CUDA"], schedule=SCHED_TEXT, record_shapes=False, with_stack=False,
                      profile_memory=False)),
}

FULL = dict(sched_steps=8, cpu_rank_steps=6, stray_steps=4, stray_sleep_s=2.0, eval_ms=(7.0, 5.0))
QUICK = dict(sched_steps=6, cpu_rank_steps=5, stray_steps=4, stray_sleep_s=0.5, eval_ms=(7.0, 5.0))


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------------
# Reading an exported trace back (no torch needed)
# ----------------------------------------------------------------------------------------------------
def load_trace(path):
    with gzip.open(path, "rt") as f:
        return json.load(f)


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _r(v):
    return None if v is None else round(v, 3)


def gpu_events(doc):
    return [e for e in doc.get("traceEvents", [])
            if e.get("ph") == "X" and e.get("cat") in GPU_CATS and _num(e.get("ts")) is not None]


def step_ranges(doc):
    """CPU-side ProfilerStep#N ranges (cat user_annotation; the GPU-side copies, cat gpu_user_annotation,
    are left out), sorted by start."""
    out = []
    for e in doc.get("traceEvents", []):
        if (e.get("ph") == "X" and e.get("cat") == "user_annotation"
                and str(e.get("name", "")).startswith("ProfilerStep#")):
            ts, dur = _num(e.get("ts")), _num(e.get("dur")) or 0.0
            out.append(dict(name=e["name"], ts=_r(ts), dur=_r(dur), end=_r(ts + dur)))
    return sorted(out, key=lambda s: s["ts"])


def instant_ts(doc, name):
    for e in doc.get("traceEvents", []):
        if e.get("name") == name and e.get("ph") in ("i", "I"):
            return _r(_num(e.get("ts")))
    return None


def common_facts(path):
    """Facts every case records about each of its traces."""
    doc = load_trace(path)
    ev = doc.get("traceEvents", [])
    gpu = gpu_events(doc)
    kernels = [e for e in gpu if e["cat"] == "kernel"]
    nccl = [e for e in kernels if "nccl" in str(e.get("name", "")).lower()]
    cpu_x = [e for e in ev if e.get("ph") == "X" and e.get("cat") not in GPU_CATS + ("gpu_user_annotation",)
             and _num(e.get("ts")) is not None]
    colls = collections.Counter()
    for e in ev:
        if e.get("name") == "record_param_comms" and e.get("cat") == "cpu_op":
            colls[str((e.get("args") or {}).get("Collective name", "?"))] += 1
    c10d = collections.Counter(str(e.get("name")) for e in cpu_x
                               if str(e.get("name", "")).startswith(("c10d::", "nccl:", "gloo:")))
    runtime = collections.Counter(str(e.get("name")) for e in cpu_x if e.get("cat") in ("cuda_runtime", "cuda_driver"))
    annos = collections.Counter(str(e.get("name")) for e in cpu_x if e.get("cat") == "user_annotation"
                                and not str(e.get("name", "")).startswith("ProfilerStep#"))
    di = doc.get("distributedInfo")
    f = dict(
        trace_bytes=os.path.getsize(path),
        under_size_aim=os.path.getsize(path) < SIZE_AIM,
        events=len(ev),
        gpu_events=len(gpu),
        gpu_events_by_cat=dict(collections.Counter(e["cat"] for e in gpu)),
        gpu_time_us=_r(sum(_num(e.get("dur")) or 0.0 for e in gpu)),
        gpu_streams=sorted({str(e.get("tid")) for e in gpu}),
        kernels=len(kernels),
        nccl_kernels=len(nccl),
        nccl_kernel_names=sorted({str(e.get("name")) for e in nccl}),
        record_param_comms_collectives=dict(colls),
        comm_ops=dict(c10d),
        cuda_runtime_events=sum(runtime.values()),
        cuda_runtime_names=dict(runtime.most_common(12)),
        user_annotations=dict(sorted(annos.items())),
        profiler_steps=step_ranges(doc),
        first_cpu_event_ts=_r(min((_num(e["ts"]) for e in cpu_x), default=None)),
        last_cpu_event_end=_r(max((_num(e["ts"]) + (_num(e.get("dur")) or 0.0) for e in cpu_x), default=None)),
        last_gpu_event_end=_r(max((_num(e["ts"]) + (_num(e.get("dur")) or 0.0) for e in gpu), default=None)),
        iteration_start_ts=instant_ts(doc, "Iteration Start: PyTorch Profiler"),
        record_window_end_ts=instant_ts(doc, "Record Window End"),
        has_distributedInfo=di is not None,
        distributedInfo=di,
        has_deviceProperties=bool(doc.get("deviceProperties")),
        schemaVersion=doc.get("schemaVersion"),
    )
    return doc, f


def gpu_time_in_out(doc):
    """GPU time (sum of the dur of kernel / gpu_memcpy / gpu_memset events, us) inside and outside the CPU
    ProfilerStep#N ranges: an event is inside when its start ts lies in [step ts, step ts + dur) of some step."""
    steps = step_ranges(doc)
    gaps = collections.OrderedDict()
    res = dict(inside_us=0.0, outside_us=0.0, inside_events=0, outside_events=0)
    per_step = {s["name"]: 0.0 for s in steps}
    for e in gpu_events(doc):
        ts, dur = _num(e["ts"]), _num(e.get("dur")) or 0.0
        hit = next((s for s in steps if s["ts"] <= ts < s["end"]), None)
        if hit:
            res["inside_us"] += dur
            res["inside_events"] += 1
            per_step[hit["name"]] += dur
            continue
        res["outside_us"] += dur
        res["outside_events"] += 1
        prev = [s["name"] for s in steps if s["end"] <= ts]
        nxt = [s["name"] for s in steps if s["ts"] > ts]
        key = ("after " + prev[-1] if prev else "start") + " .. " + ("before " + nxt[0] if nxt else "end")
        gaps[key] = gaps.get(key, 0.0) + dur
    res = {k: _r(v) if isinstance(v, float) else v for k, v in res.items()}
    res["inside_by_step_us"] = {k: _r(v) for k, v in per_step.items()}
    res["outside_by_gap_us"] = {k: _r(v) for k, v in gaps.items()}
    res["method"] = ("GPU events = traceEvents with ph 'X' and cat kernel, gpu_memcpy or gpu_memset; steps = "
                     "CPU events with ph 'X', cat user_annotation, name starting 'ProfilerStep#'; an event is "
                     "inside when its ts is in [step.ts, step.ts + step.dur) of any step, else outside; times "
                     "are sums of the events' dur (us)")
    return res


# ----------------------------------------------------------------------------------------------------
# Everything below needs torch; the driver part does not import it.
# ----------------------------------------------------------------------------------------------------
torch = nn = F = None


def _imports():
    global torch, nn, F
    import torch as _torch
    import torch.nn as _nn
    import torch.nn.functional as _F
    torch, nn, F = _torch, _nn, _F


def make_model_classes():
    class Block(nn.Module):
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

    class GPT(nn.Module):
        def __init__(self, vocab, d, heads, layers):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
            self.ln_f = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.emb(idx)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln_f(x))

    return Block, GPT


def model_info(model, vocab, d, heads, layers, seq, batch, **kw):
    ps = list(model.parameters())
    return dict(model="GPT", params=sum(p.numel() for p in ps), param_tensors=len(ps), vocab=vocab, d_model=d,
                heads=heads, layers=layers, seq=seq, batch=batch, **kw)


def token_batches(n, batch, seq, vocab, device):
    g = torch.Generator().manual_seed(SEED)
    return [torch.randint(0, vocab, (batch, seq + 1), generator=g).to(device) for _ in range(n)]


def gpt_loss(model, t, amp=None):
    x, y = t[:, :-1], t[:, 1:]
    dev = "cuda" if t.is_cuda else "cpu"
    with torch.autocast(dev, dtype=amp or torch.float32, enabled=amp is not None):
        out = model(x)
    return F.cross_entropy(out.float().reshape(-1, out.shape[-1]), y.reshape(-1))


def train_step(model, opt, t, amp=None):
    loss = gpt_loss(model, t, amp)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def activities():
    return [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]


def gzip_to(tmp, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(tmp, "rb") as src, gzip.open(path, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    raw = os.path.getsize(tmp)
    os.remove(tmp)
    return raw


def tmp_json(prefix):
    fd, tmp = tempfile.mkstemp(suffix=".json", prefix=prefix)
    os.close(fd)
    return tmp


def env_info(cuda=True):
    e = dict(torch=torch.__version__, cuda=torch.version.cuda, python=sys.version.split()[0],
             TEARDOWN_CUPTI=os.environ.get("TEARDOWN_CUPTI"), NCCL_NVLS_ENABLE=os.environ.get("NCCL_NVLS_ENABLE"))
    if cuda and torch.cuda.is_available():
        e["gpu"] = torch.cuda.get_device_name(0)
        try:
            e["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
        except Exception as ex:  # noqa: BLE001
            e["nccl"] = f"? ({ex!r})"
    return e


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def init_pg(backend, rank, world, port):
    import torch.distributed as dist
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    os.environ["RANK"], os.environ["WORLD_SIZE"] = str(rank), str(world)
    dist.init_process_group(backend=backend, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=90))
    return dist


def record_scheduled(step_fn, n_steps, path, record_shapes, sync=True):
    """Profile n_steps with schedule wait=1 warmup=1 active=3 (ProfilerStep#2..#4 in the trace)."""
    tmp = tmp_json("case_")
    sched = torch.profiler.schedule(**SCHED)
    with torch.profiler.profile(activities=activities(), schedule=sched, record_shapes=record_shapes,
                                on_trace_ready=lambda p: p.export_chrome_trace(tmp)) as prof:
        for _ in range(n_steps):
            step_fn()
            if sync:
                torch.cuda.synchronize()
            prof.step()
    return gzip_to(tmp, path)


# ----------------------------------------------------------------------------------------------------
# The cases. Each returns a dict of facts (traces already written).
# ----------------------------------------------------------------------------------------------------
def case_fsdp(which, out, cfg):
    torch.manual_seed(SEED)
    torch.cuda.set_device(0)
    dist = init_pg("nccl", 0, 1, free_port())
    Block, GPT = make_model_classes()
    vocab, d, heads, layers, seq, batch = 8192, 512, 8, 4, 256, 8
    model = GPT(vocab, d, heads, layers).cuda()
    info = dict(world_size=dist.get_world_size(), backend=dist.get_backend())
    if which == "fsdp1":
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy
        model = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({Block}),
                     mixed_precision=MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32),
                     device_id=torch.cuda.current_device())
        n_units = sum(1 for m in model.modules() if isinstance(m, FSDP))
        strat = getattr(model, "sharding_strategy", None)
        info.update(fsdp="FSDP1 FullyShardedDataParallel", fsdp_units=n_units,
                    wrap="ModuleWrapPolicy({Block}) + root",
                    mixed_precision="MixedPrecision(param_dtype=bf16, reduce_dtype=fp32)",
                    sharding_strategy=str(strat) if strat is not None else None,
                    note="FSDP1 is documented to switch FULL_SHARD to NO_SHARD at world size 1")
    else:
        try:
            from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
            src = "torch.distributed.fsdp"
        except ImportError:
            from torch.distributed._composable.fsdp import fully_shard, MixedPrecisionPolicy
            src = "torch.distributed._composable.fsdp"
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        for blk in model.blocks:
            fully_shard(blk, mp_policy=mp, reshard_after_forward=True)
        fully_shard(model, mp_policy=mp, reshard_after_forward=True)
        info.update(fsdp=f"FSDP2 fully_shard (from {src})", fsdp_units=layers + 1,
                    wrap="fully_shard on each Block, then on the root",
                    mixed_precision="MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32)",
                    reshard_after_forward=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = token_batches(4, batch, seq, vocab, "cuda")
    it = iter(range(1 << 30))

    def step():
        train_step(model, opt, data[next(it) % len(data)])

    path = os.path.join(out, f"{which}.pt.trace.json.gz")
    raw = record_scheduled(step, cfg["sched_steps"], path, record_shapes=True)
    torch.cuda.synchronize()
    dist.destroy_process_group()
    _, f = common_facts(path)
    return dict(env=env_info(), model=model_info(model, vocab, d, heads, layers, seq, batch,
                                                 optimizer="AdamW (default: foreach)", **info),
                steps_run=cfg["sched_steps"], traces={os.path.basename(path): dict(f, trace_json_bytes=raw)})


def case_symm_mem(out, cfg):
    torch.manual_seed(SEED)
    torch.cuda.set_device(0)
    dist = init_pg("nccl", 0, 1, free_port())
    import torch.distributed._symmetric_memory as symm_mem
    Block, GPT = make_model_classes()
    vocab, d, heads, layers, seq, batch = 8192, 512, 8, 4, 256, 8
    model = GPT(vocab, d, heads, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    params = [p for p in model.parameters() if p.requires_grad]
    n = sum(p.numel() for p in params)
    group = dist.group.WORLD.group_name
    buf = symm_mem.empty(n, dtype=torch.float32, device="cuda")
    symm_mem.rendezvous(buf, group)
    data = token_batches(4, batch, seq, vocab, "cuda")
    it = iter(range(1 << 30))

    def step():
        t = data[next(it) % len(data)]
        loss = gpt_loss(model, t, amp=torch.bfloat16)
        loss.backward()
        torch.cat([p.grad.reshape(-1) for p in params], out=buf)
        summed = torch.ops.symm_mem.one_shot_all_reduce(buf, "sum", group)
        off = 0
        for p in params:
            p.grad.copy_(summed[off:off + p.numel()].view_as(p.grad))
            off += p.numel()
        opt.step()
        opt.zero_grad(set_to_none=False)

    path = os.path.join(out, "symm_mem.pt.trace.json.gz")
    raw = record_scheduled(step, cfg["sched_steps"], path, record_shapes=False)
    torch.cuda.synchronize()
    dist.destroy_process_group()
    doc, f = common_facts(path)
    kernels = sorted({e["name"][:120] for e in gpu_events(doc) if "all_reduce_kernel" in e.get("name", "")})
    return dict(env=env_info(), model=model_info(model, vocab, d, heads, layers, seq, batch,
                                                 optimizer="AdamW fused", gradient_sum="symm_mem one_shot_all_reduce"),
                steps_run=cfg["sched_steps"], symmetric_memory_kernels=kernels,
                traces={os.path.basename(path): dict(f, trace_json_bytes=raw)})


def case_stray_step(out, cfg, sched=False):
    torch.manual_seed(SEED)
    Block, GPT = make_model_classes()
    vocab, d, heads, layers, seq, batch = 8192, 512, 8, 4, 256, 8
    model = GPT(vocab, d, heads, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = token_batches(4, batch, seq, vocab, "cuda")
    for i in range(2):  # warm-up outside the profiler
        train_step(model, opt, data[i % 4], torch.bfloat16).item()
    torch.cuda.synchronize()
    tmp = tmp_json("case_stray_")
    losses = []
    t_sleep = None
    kw = dict(schedule=torch.profiler.schedule(wait=1, warmup=1, active=4, repeat=1)) if sched else {}
    n_steps = 5 if sched else cfg["stray_steps"]
    name = "stray_step_sched" if sched else "stray_step"
    with torch.profiler.profile(activities=activities(), **kw) as prof:
        for i in range(n_steps):
            loss = train_step(model, opt, data[i % 4], torch.bfloat16)
            losses.append(loss.item())  # logging: a host sync each step
            prof.step()
        t0 = time.perf_counter()
        time.sleep(cfg["stray_sleep_s"])  # "checkpoint saving": host only, no GPU work
        t_sleep = time.perf_counter() - t0
    prof.export_chrome_trace(tmp)
    path = os.path.join(out, f"{name}.pt.trace.json.gz")
    raw = gzip_to(tmp, path)
    doc, f = common_facts(path)
    steps = f["profiler_steps"]
    facts = dict(
        profiler_steps=steps,
        n_profiler_steps=len(steps),
        last_gpu_event_end=f["last_gpu_event_end"],
        record_window_end_ts=f["record_window_end_ts"],
        last_cpu_event_end=f["last_cpu_event_end"],
        last_step_end=steps[-1]["end"] if steps else None,
        window_end_minus_last_gpu_end_us=(_r(f["record_window_end_ts"] - f["last_gpu_event_end"])
                                          if f["record_window_end_ts"] is not None
                                          and f["last_gpu_event_end"] is not None else None),
        last_step_gpu_events=(sum(1 for e in gpu_events(doc) if steps[-1]["ts"] <= _num(e["ts"]) < steps[-1]["end"])
                              if steps else None),
        steps_run=n_steps, sleep_s_requested=cfg["stray_sleep_s"], sleep_s_measured=round(t_sleep, 4),
        note=("with a schedule: ProfilerStep#2..#4 are training steps, ProfilerStep#5 (opened by the last "
              "prof.step()) holds only the sleep" if sched else
              "torch.profiler.profile without a schedule records no ProfilerStep#N annotations (record_steps "
              "is set only with a schedule; torch 2.11 checked), so n_profiler_steps is expected to be 0; "
              "prof.step() was still called after each step"))
    return dict(env=env_info(), model=model_info(model, vocab, d, heads, layers, seq, batch,
                                                 precision="bf16 autocast", optimizer="AdamW (foreach)"),
                facts=facts, losses=losses, traces={f"{name}.pt.trace.json.gz": dict(f, trace_json_bytes=raw)})


def case_outside_steps(out, cfg):
    torch.manual_seed(SEED)
    Block, GPT = make_model_classes()
    vocab, d, heads, layers, seq, batch = 8192, 512, 8, 4, 256, 8
    model = GPT(vocab, d, heads, layers).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = token_batches(4, batch, seq, vocab, "cuda")
    eval_bs = 128  # large enough that an eval forward is GPU-bound (~4 ms on an H200), so the calibration
    eval_batch = token_batches(1, eval_bs, seq, vocab, "cuda")[0]  # below measures GPU time, not launches

    def eval_fwd():
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
            return model(eval_batch[:, :-1])

    for i in range(2):  # warm-up outside the profiler (training and eval)
        train_step(model, opt, data[i % 4], torch.bfloat16)
        eval_fwd()
    torch.cuda.synchronize()
    # calibrate the number of eval forwards for the target GPU time of each eval phase
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(5):
        eval_fwd()
    e1.record()
    torch.cuda.synchronize()
    per_fwd_ms = e0.elapsed_time(e1) / 5
    n_eval = [max(1, min(40, int(round(t / max(per_fwd_ms, 1e-3))))) for t in cfg["eval_ms"]]

    def eval_phase(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(n):
            eval_fwd()
        b.record()
        torch.cuda.synchronize()
        return a.elapsed_time(b)

    tmp = tmp_json("case_outside_")
    eval_ms = []
    with torch.profiler.profile(activities=activities()) as prof:
        eval_ms.append(eval_phase(n_eval[0]))  # "evaluation" before the first step
        for i in (1, 2, 3):
            with torch.profiler.record_function(f"ProfilerStep#{i}"):
                train_step(model, opt, data[i % 4], torch.bfloat16)
                torch.cuda.synchronize()
            if i == 1:
                eval_ms.append(eval_phase(n_eval[1]))  # "evaluation" between step 1 and step 2
    prof.export_chrome_trace(tmp)
    path = os.path.join(out, "outside_steps.pt.trace.json.gz")
    raw = gzip_to(tmp, path)
    doc, f = common_facts(path)
    facts = dict(gpu_time_in_out(doc), profiler_steps=f["profiler_steps"], n_profiler_steps=len(f["profiler_steps"]),
                 eval_forwards=n_eval, eval_forward_ms_calibrated=round(per_fwd_ms, 4),
                 eval_phase_gpu_ms_cuda_events=[round(x, 4) for x in eval_ms],
                 eval_phases=["before ProfilerStep#1", "between ProfilerStep#1 and ProfilerStep#2"])
    return dict(env=env_info(), model=model_info(model, vocab, d, heads, layers, seq, batch,
                                                 precision="bf16 autocast", optimizer="AdamW (foreach)",
                                                 eval_batch=eval_bs),
                facts=facts, traces={"outside_steps.pt.trace.json.gz": dict(f, trace_json_bytes=raw)})


# cpu_rank: the case process starts one process per rank (this script with --rank), waits for both,
# then reads the two traces back.
def rank_main(rank, world, port, out, cfg):
    _imports()
    torch.manual_seed(SEED)
    use_gpu = rank == 0
    dev = "cuda" if use_gpu else "cpu"
    if not use_gpu:
        torch.set_num_threads(max(1, min(8, (os.cpu_count() or 2) // 2)))
    dist = init_pg("gloo", rank, world, port)
    Block, GPT = make_model_classes()
    vocab, d, heads, layers, seq, batch = 4096, 256, 4, 2, 128, 8
    model = GPT(vocab, d, heads, layers).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    data = token_batches(4, batch, seq, vocab, dev)
    losses = []
    it = iter(range(1 << 30))

    def step():
        loss = train_step(model, opt, data[next(it) % len(data)])
        v = loss.detach().cpu().reshape(1)  # rank 0: a device-to-host copy (and sync)
        dist.all_reduce(v)  # gloo, CPU tensor
        losses.append(float(v[0]) / world)

    path = os.path.join(out, "cpu_rank", f"rank{rank}.pt.trace.json.gz")
    raw = record_scheduled(step, cfg["cpu_rank_steps"], path, record_shapes=False, sync=False)
    info = dict(rank=rank, device=dev, trace_json_bytes=raw, losses_allreduced_mean=losses,
                model=model_info(model, vocab, d, heads, layers, seq, batch, precision="fp32",
                                 optimizer="AdamW (foreach)"),
                env=env_info(cuda=use_gpu),
                cuda_initialized=bool(torch.cuda.is_initialized()) if hasattr(torch.cuda, "is_initialized")
                else None)
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(out, "cpu_rank", f".rank{rank}.json"), "w") as fo:
        json.dump(info, fo, indent=1)


def case_cpu_rank(out, cfg, timeout=100):
    os.makedirs(os.path.join(out, "cpu_rank"), exist_ok=True)
    for r in (0, 1):
        for stale in (f".rank{r}.json", f".rank{r}.error", f"rank{r}.pt.trace.json.gz"):
            if os.path.exists(os.path.join(out, "cpu_rank", stale)):
                os.remove(os.path.join(out, "cpu_rank", stale))
    port = free_port()
    env = dict(os.environ)
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # loopback: no guessing of the host's interface
    procs = []
    for r in (0, 1):
        cmd = [sys.executable, os.path.abspath(__file__), "--rank", str(r), "--world", "2", "--port", str(port),
               "--out", out] + (["--quick"] if cfg.get("quick") else [])
        procs.append(subprocess.Popen(cmd, env=env))
    t_end = time.time() + timeout
    rcs = [None, None]
    while time.time() < t_end and any(rc is None for rc in rcs):
        rcs = [p.poll() for p in procs]
        if any(rc not in (None, 0) for rc in rcs):
            break  # one rank failed: the other would wait in a collective
        time.sleep(0.2)
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    rcs = [p.returncode for p in procs]
    if any(rc != 0 for rc in rcs):
        errs = []
        for r in (0, 1):
            ef = os.path.join(out, "cpu_rank", f".rank{r}.error")
            if os.path.exists(ef):
                with open(ef) as fi:
                    errs.append(f"rank {r}:\n{fi.read()}")
                os.remove(ef)
        raise RuntimeError(f"rank processes ended with {rcs} (negative: killed; timeout {timeout} s)\n"
                           + "\n".join(errs))
    res = dict(ranks={}, traces={}, gpu_events_per_rank={})
    for r in (0, 1):
        side = os.path.join(out, "cpu_rank", f".rank{r}.json")
        with open(side) as fi:
            info = json.load(fi)
        os.remove(side)
        name = f"cpu_rank/rank{r}.pt.trace.json.gz"
        _, f = common_facts(os.path.join(out, name))
        f["trace_json_bytes"] = info.pop("trace_json_bytes")
        res["traces"][name] = f
        res["gpu_events_per_rank"][str(r)] = f["gpu_events"]
        res["ranks"][str(r)] = info
    res["env"] = res["ranks"]["0"].get("env")
    res["model"] = res["ranks"]["0"].get("model")
    return res


def run_case(name, out, cfg):
    if name != "cpu_rank":  # cpu_rank's case process only starts the ranks and reads their traces
        _imports()
    if name in ("fsdp1", "fsdp2"):
        return case_fsdp(name, out, cfg)
    if name == "stray_step":
        return case_stray_step(out, cfg)
    if name == "stray_step_sched":
        return case_stray_step(out, cfg, sched=True)
    if name == "outside_steps":
        return case_outside_steps(out, cfg)
    if name == "cpu_rank":
        return case_cpu_rank(out, cfg, timeout=max(30, cfg["job_timeout"] - 15))
    if name == "symm_mem":
        return case_symm_mem(out, cfg)
    raise ValueError(name)


# ----------------------------------------------------------------------------------------------------
# Driver: one process per case, then cases.json
# ----------------------------------------------------------------------------------------------------
def child_case(name, out, cfg):
    part = os.path.join(out, f".{name}.part.json")
    t0 = time.time()
    log(f"[{name}] start (pid {os.getpid()})")
    try:
        res = run_case(name, out, cfg)
        doc = dict(ok=True, seconds=round(time.time() - t0, 2), **res)
        rc = 0
    except Exception as ex:  # noqa: BLE001
        tb = traceback.format_exc()
        log(f"[{name}] FAILED: {ex!r}\n{tb}")
        doc = dict(ok=False, seconds=round(time.time() - t0, 2), error=tb[-6000:])
        rc = 1
    with open(part, "w") as fo:
        json.dump(doc, fo, indent=1)
    for tn, tf in (doc.get("traces") or {}).items():
        log(f"[{name}] {tn}: {tf['trace_bytes'] / 1024:.0f} KiB gz, {tf['events']} events, "
            f"{tf['gpu_events']} GPU events, {len(tf['profiler_steps'])} ProfilerStep ranges, "
            f"distributedInfo {'yes' if tf['has_distributedInfo'] else 'no'}"
            + ("" if tf["under_size_aim"] else "  (OVER the 400 KiB aim)"))
    log(f"[{name}] {'done' if rc == 0 else 'failed'} in {time.time() - t0:.1f} s")
    sys.stdout.flush()
    os._exit(rc)  # skip interpreter teardown (NCCL / CUPTI atexit handlers can hang or crash at exit)


def run_child(cmd, env, timeout, prefix):
    """Run a case process in its own process group; its output goes to stderr line by line (the last lines
    are kept for the report). On timeout the whole group is killed. Returns (rc or 'timeout', tail)."""
    tail = collections.deque(maxlen=60)
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                         text=True, errors="replace", bufsize=1)

    def pump():
        for line in p.stdout:
            tail.append(line.rstrip("\n"))
            sys.stderr.write(line)
            sys.stderr.flush()

    th = threading.Thread(target=pump, daemon=True)
    th.start()
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        rc = "timeout"
        log(f"{prefix} timed out after {timeout} s: killing its process group {p.pid}")
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    else:
        # the case process is gone; anything it left in its group (a rank process) goes too
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    th.join(timeout=5)
    return rc, list(tail)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="testdata/cases", help="output folder (default testdata/cases)")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of: " + ", ".join(CASES))
    ap.add_argument("--quick", action="store_true", help="smoke run: fewer steps, a shorter sleep")
    ap.add_argument("--job-timeout", type=int, default=120, help="seconds per case process (default 120)")
    ap.add_argument("--case", help=argparse.SUPPRESS)  # internal: run one case in this process
    ap.add_argument("--rank", type=int, help=argparse.SUPPRESS)  # internal: one rank of cpu_rank
    ap.add_argument("--world", type=int, default=2, help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    cfg = dict(QUICK if args.quick else FULL, job_timeout=args.job_timeout, quick=args.quick)
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    if args.rank is not None:
        rc = 0
        try:
            rank_main(args.rank, args.world, args.port, out, cfg)
        except Exception:  # noqa: BLE001
            tb = traceback.format_exc()
            log(f"[cpu_rank rank {args.rank}] FAILED\n{tb}")
            with open(os.path.join(out, "cpu_rank", f".rank{args.rank}.error"), "w") as fo:
                fo.write(tb[-4000:])
            rc = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    if args.case:
        child_case(args.case, out, cfg)
        return
    cases = [c for c in args.cases.split(",") if c]
    for c in cases:
        if c not in CASES:
            sys.exit(f"unknown case {c!r}; known: {', '.join(CASES)}")
    # Kineto leaves CUPTI attached after a profiler session unless TEARDOWN_CUPTI=1 (see whatif_jobs.py);
    # NVLink multicast must stay off on the shared machines.
    child_env = dict(os.environ)
    child_env.setdefault("TEARDOWN_CUPTI", "1")
    child_env["NCCL_NVLS_ENABLE"] = "0"
    child_env.setdefault("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
    child_env.setdefault("PYTHONUNBUFFERED", "1")
    t_all = time.time()
    results, failed = {}, []
    for c in cases:
        t0 = time.time()
        part = os.path.join(out, f".{c}.part.json")
        for stale in [part] + [os.path.join(out, f) for f in CASES[c]["files"]]:
            if os.path.exists(stale):
                os.remove(stale)
        log(f"== {c}: {CASES[c]['desc'][:100]}...")
        cmd = [sys.executable, os.path.abspath(__file__), "--case", c, "--out", out,
               "--job-timeout", str(args.job_timeout)] + (["--quick"] if args.quick else [])
        rc, tail = run_child(cmd, child_env, args.job_timeout, f"== {c}:")
        res = dict(description=CASES[c]["desc"], files=CASES[c]["files"], profiler=CASES[c]["profiler"])
        if os.path.exists(part):
            with open(part) as fi:
                res.update(json.load(fi))
            os.remove(part)
        else:
            res.update(ok=False, error=f"case process ended with {rc} and wrote no result; its last output:\n"
                                       + "\n".join(tail))
        if rc != 0 and res.get("ok"):
            res["ok"] = False
            res["error"] = f"case process ended with {rc} after writing its result"
        res["rc"] = rc
        res["wall_s"] = round(time.time() - t0, 2)
        res["torch"] = (res.get("env") or {}).get("torch")
        missing = [f for f in CASES[c]["files"] if not os.path.exists(os.path.join(out, f))]
        if res.get("ok") and missing:
            res["ok"], res["error"] = False, f"trace files missing: {missing}"
        if not res.get("ok"):
            failed.append(c)
            log(f"== {c}: FAILED (rc={rc}) in {res['wall_s']} s\n{res.get('error', '')[-3000:]}")
        else:
            log(f"== {c}: ok in {res['wall_s']} s")
        results[c] = res
    # keep the entries of cases not run this time (a subset run updates cases.json in place)
    path = os.path.join(out, "cases.json")
    old = {}
    if os.path.exists(path):
        try:
            with open(path) as fi:
                old = json.load(fi).get("cases", {})
        except (OSError, ValueError):
            old = {}
    merged = {c: results[c] if c in results else old[c] for c in CASES if c in results or c in old}
    doc = dict(
        generator="scripts/testdata/case_jobs.py",
        command="python3 scripts/testdata/case_jobs.py " + " ".join(sys.argv[1:]),
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        settings=dict(cfg, seed=SEED, size_aim_bytes=SIZE_AIM),
        gpu_event_categories=list(GPU_CATS),
        notes=("times are the trace's own (us, Kineto's clock); facts are read back from the exported JSON: "
               "GPU events = ph 'X' events of cat kernel/gpu_memcpy/gpu_memset; profiler_steps = CPU events "
               "(cat user_annotation) named ProfilerStep#N"),
        cases=merged, failed=failed)
    with open(path, "w") as fo:
        json.dump(doc, fo, indent=1)
    log(f"\nall cases in {time.time() - t_all:.1f} s; wrote {path}; failed: {failed or 'none'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

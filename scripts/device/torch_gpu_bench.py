#!/usr/bin/env python3
"""PyTorch's figures for the shapes `gpudoctor bench gpu` measures, in the same run on the same GPU:
torch.matmul TFLOP/s per precision (FP32, TF32, FP16, BF16; FP8 e4m3 through torch._scaled_mm),
and F.scaled_dot_product_attention forward with the cuDNN and the flash backends forced (time and
peak memory per sequence length). Timing as gpudoctor does it: CUDA events after warm-up, the median
of the repetitions, two input sets rotated. Prints one JSON document on stdout.
  python3 scripts/device/torch_gpu_bench.py [--quick] [--reps N]
"""
import argparse
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def timed(fn, reps, warmup=3):
    for i in range(warmup):
        fn(i)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        fn(warmup + i)
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends))  # microseconds


def gemm(args, out):
    shapes = [(4096, 4096, 4096)] if args.quick else [(4096, 4096, 4096), (8192, 8192, 8192), (14336, 16384, 4096)]
    cap = torch.cuda.get_device_capability()
    for m, n, k in shapes:
        for prec in ["fp32", "tf32", "fp16", "bf16", "fp8"]:
            rec = {"precision": prec, "m": m, "n": n, "k": k}
            try:
                torch.backends.cuda.matmul.allow_tf32 = prec == "tf32"
                if prec == "fp8":
                    if cap < (8, 9) or not hasattr(torch, "_scaled_mm"):
                        raise RuntimeError("no FP8 (needs sm_89+ and torch._scaled_mm)")
                    # A (m x k) row-major and B (n x k) row-major, i.e. B^T column-major: what _scaled_mm wants.
                    sets = [(torch.empty(m, k, device="cuda").uniform_(-1, 1).to(torch.float8_e4m3fn),
                             torch.empty(n, k, device="cuda").uniform_(-1, 1).to(torch.float8_e4m3fn)) for _ in range(2)]
                    one = torch.ones((), device="cuda", dtype=torch.float32)
                    run = lambda i: torch._scaled_mm(sets[i % 2][0], sets[i % 2][1].t(), scale_a=one, scale_b=one,
                                                     out_dtype=torch.bfloat16)
                else:
                    dt = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[prec]
                    sets = [(torch.empty(m, k, device="cuda", dtype=dt).uniform_(-1, 1),
                             torch.empty(n, k, device="cuda", dtype=dt).uniform_(-1, 1)) for _ in range(2)]
                    run = lambda i: torch.matmul(sets[i % 2][0], sets[i % 2][1].t())
                us = timed(run, args.reps)
                rec.update(median_us=us, tflops=2.0 * m * n * k / (us * 1e-6) / 1e12)
                del sets
            except Exception as e:  # noqa: BLE001 - a figure that cannot be taken is reported, not fatal
                rec["error"] = str(e).splitlines()[0] if str(e) else type(e).__name__
            out["gemm"].append(rec)
            print(f"[torch] gemm {prec} {m}x{n}x{k}: {rec.get('tflops', rec.get('error'))}", file=sys.stderr)
    torch.backends.cuda.matmul.allow_tf32 = False


def attention(args, out):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    tokens, hidden = 16384, 2048
    seqs = [512, 2048] if args.quick else [512, 1024, 2048, 4096, 8192, 16384]
    configs = []
    for s in seqs:
        configs.append((tokens // s, hidden // 128, s, 128, False))
        if not args.quick:
            configs.append((tokens // s, hidden // 128, s, 128, True))
            configs.append((tokens // s, hidden // 64, s, 64, False))
    backends = [("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)]
    for b, h, s, d, causal in configs:
        sets = [tuple(torch.empty(b, h, s, d, device="cuda", dtype=torch.bfloat16).uniform_(-r, r) for r in (2, 2, 1))
                for _ in range(2)]
        flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
        outs = {}
        for name, backend in backends:
            rec = {"impl": name, "batch": b, "heads": h, "seq": s, "head_dim": d, "causal": causal}
            try:
                with sdpa_kernel(backend):
                    run = lambda i: F.scaled_dot_product_attention(*sets[i % 2], is_causal=causal)
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()
                    base = torch.cuda.memory_allocated() - 2 * 3 * b * h * s * d * 2  # one input set stays counted
                    o = run(0)
                    torch.cuda.synchronize()
                    # Q, K, V, O and whatever the backend allocated: comparable with gpudoctor's memory_bytes.
                    rec["memory_bytes"] = torch.cuda.max_memory_allocated() - base - 3 * b * h * s * d * 2
                    outs[name] = o.float()
                    del o
                    us = timed(run, args.reps)
                rec.update(median_us=us, tflops=flops / (us * 1e-6) / 1e12)
            except Exception as e:  # noqa: BLE001
                rec["error"] = str(e).splitlines()[0] if str(e) else type(e).__name__
            out["attention"].append(rec)
            print(f"[torch] attention {name} seq {s} d {d}{' causal' if causal else ''}: "
                  f"{rec.get('tflops', rec.get('error'))}", file=sys.stderr)
        if "cudnn" in outs and "flash" in outs:
            diff = (outs["cudnn"] - outs["flash"]).norm() / outs["flash"].norm()
            out["attention"][-1]["cudnn_vs_flash_rel_l2"] = float(diff)
        del sets, outs
        torch.cuda.empty_cache()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--only", default="gemm,attention")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("torch_gpu_bench: error: no CUDA device visible to PyTorch", file=sys.stderr)
        return 1
    t0 = time.time()
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "gemm": [], "attention": []}
    parts = args.only.split(",")
    if "gemm" in parts:
        gemm(args, out)
    if "attention" in parts:
        attention(args, out)
    out["seconds"] = time.time() - t0
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

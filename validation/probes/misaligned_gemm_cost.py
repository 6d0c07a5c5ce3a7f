"""What a 16-bit GEMM with a dimension that is not a multiple of 8 costs against the same GEMM padded, without
the profiler: the measurement the `gemm.misaligned` finding's prediction rests on.

An LM head is the usual case: tokens x hidden times hidden x vocab, with a vocabulary of 50257 (GPT-2),
50265 (RoBERTa) or 30522 (BERT). cuBLAS then cannot use its current-generation kernels and falls back to
alignment-1 or -2 tensor-op kernels (cutlass_75_tensorop_bf16_s1688gemm_*_align1 on an H200). For each
shape, the three GEMMs of a Linear's forward and backward (forward, input gradient, weight gradient) are
timed with CUDA events in interleaved rounds, at the odd size and padded to a multiple of 64, and the
kernels each ran are named once under the profiler (outside the timed rounds).

One JSON line per (shape, gemm, size):
  {"tokens", "hidden", "vocab", "padded_vocab", "gemm" ("fwd" | "dgrad" | "wgrad"), "size" ("odd" |
   "padded"), "ms" (median over rounds), "rounds_ms", "tflops" (at the odd size's FLOPs, so that the two
   rows compare the same work), "kernels", "dtype", "torch", "gpu", "tag"}

Usage (on the GPU machine, two processes for a band):
  python3 validation/probes/misaligned_gemm_cost.py --out $OUT/gemm_A.jsonl --tag A
"""
import argparse
import json
import statistics

import torch

# (tokens, hidden, vocab): GPT-2 small at batch 8 x 512 and 8 x 1024, RoBERTa-base at 16 x 512,
# BERT/DistilBERT at 32 x 512, a hidden size of 1024 with GPT-2's vocabulary.
SHAPES = [(4096, 768, 50257), (8192, 768, 50257), (8192, 768, 50265), (16384, 768, 30522), (4096, 1024, 50257)]
PAD = 64


def gemms(tokens, hidden, vocab, dtype):
    """The three GEMMs of y = x W^T: callables on fresh random operands."""
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(tokens, hidden, device="cuda", dtype=dtype, generator=g)
    w = torch.randn(vocab, hidden, device="cuda", dtype=dtype, generator=g)
    dy = torch.randn(tokens, vocab, device="cuda", dtype=dtype, generator=g)
    return {"fwd": lambda: x @ w.t(), "dgrad": lambda: dy @ w, "wgrad": lambda: dy.t() @ x}


def time_ms(fn, reps):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps


def kernels_of(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="A")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    a = ap.parse_args()
    dtype = getattr(torch, a.dtype)
    with open(a.out, "a") as out:
        for tokens, hidden, vocab in SHAPES:
            padded = -(-vocab // PAD) * PAD
            sizes = {"odd": gemms(tokens, hidden, vocab, dtype), "padded": gemms(tokens, hidden, padded, dtype)}
            names = {(s, k): kernels_of(f) for s, fs in sizes.items() for k, f in fs.items()}
            for fs in sizes.values():  # warm-up: handles, heuristics, clocks
                for f in fs.values():
                    time_ms(f, 3)
            rounds = {(s, k): [] for s in sizes for k in sizes[s]}
            for r in range(a.rounds):  # interleaved, the order flipped every round
                order = list(rounds) if r % 2 == 0 else list(reversed(list(rounds)))
                for s, k in order:
                    rounds[(s, k)].append(time_ms(sizes[s][k], a.reps))
            flops = 2.0 * tokens * hidden * vocab
            for (s, k), ms in rounds.items():
                med = statistics.median(ms)
                rec = {"tokens": tokens, "hidden": hidden, "vocab": vocab, "padded_vocab": padded, "gemm": k,
                       "size": s, "ms": med, "rounds_ms": ms, "tflops": flops / (med * 1e-3) / 1e12,
                       "kernels": names[(s, k)], "dtype": a.dtype, "torch": torch.__version__,
                       "gpu": torch.cuda.get_device_name(), "tag": a.tag}
                out.write(json.dumps(rec) + "\n")
                out.flush()
                print(json.dumps(rec), flush=True)
            del sizes
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

"""The profiler's cost on the host side: how much longer the training thread takes per recorded event
when torch.profiler (Kineto, CPU + CUDA activities, record_shapes=False, as the lab traces) records it.

Each kind is a loop of N iterations of one small piece of work, whose events the trace counts:
  cpu_op      an ATen op on a small CPU tensor (operators only, no CUDA call)
  cuda_op     an in-place ATen op on a small CUDA tensor (one operator, one launch)
  cuda_chain  three chained ATen ops on CUDA tensors (operators with their allocations and launches)
  module      a small nn.Linear + GELU forward on CUDA (module hooks, several operators and launches)
The host's time per iteration is measured without the profiler and under it, in interleaved rounds;
torch.cuda.synchronize() closes each timed loop (the kernels are ~2 us: the host sets the pace).
Under the profiler, the exported trace gives the iteration's events by category (cpu_op,
cuda_runtime, cuda_driver, others).

Per kind it prints one JSON line:
  {"kind", "n", "plain_us", "profiled_us" (medians over rounds, per iteration), "events" (per iteration,
   by category), "rounds_plain", "rounds_profiled"}
A least-squares split of the added time over operators and CUDA calls is left to the reader (the kinds
differ in their mix).

Usage (on the GPU machine): python3 validation/probes/profiler_host_cost.py --out results.jsonl [--tag A]
Run it in two processes (two tags) for a band.
"""
import argparse
import collections
import json
import os
import statistics
import tempfile
import time

os.environ.setdefault("TEARDOWN_CUPTI", "1")  # before torch is imported

import torch  # noqa: E402


def kinds():
    cpu = torch.ones(16)
    gpu = torch.ones(16, device="cuda")
    lin = torch.nn.Linear(64, 64).cuda()
    act = torch.nn.GELU()
    x = torch.ones(8, 64, device="cuda")

    def cpu_op():
        cpu.add_(1)

    def cuda_op():
        gpu.add_(1)

    def cuda_chain():
        (gpu * 2 + 1).relu_()

    def module():
        act(lin(x))

    return {"cpu_op": cpu_op, "cuda_op": cuda_op, "cuda_chain": cuda_chain, "module": module}


def timed(fn, n):
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter_ns() - t0) / n / 1e3


def profiled(fn, n, trace_path=None):
    prof_mod = torch.profiler
    acts = [prof_mod.ProfilerActivity.CPU, prof_mod.ProfilerActivity.CUDA]
    with prof_mod.profile(activities=acts, record_shapes=False) as prof:
        us = timed(fn, n)
    if trace_path:
        prof.export_chrome_trace(trace_path)
    return us


def events_per_iter(path, n):
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    c = collections.Counter(e.get("cat", "?") for e in ev if e.get("ph") == "X")
    keep = ("cpu_op", "cuda_runtime", "cuda_driver", "python_function", "user_annotation", "kernel")
    return {k: round(c[k] / n, 3) for k in keep if c[k]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="A")
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    ks = kinds()
    for fn in ks.values():  # warm-up: allocator, kernels loaded, the profiler initialized once
        timed(fn, 200)
    profiled(ks["cuda_op"], 50)
    res = {k: {"plain": [], "prof": []} for k in ks}
    for r in range(args.rounds):
        order = list(ks)[r % len(ks):] + list(ks)[:r % len(ks)]
        for k in order:
            res[k]["plain"].append(timed(ks[k], args.n))
            res[k]["prof"].append(profiled(ks[k], args.n))
    with open(args.out, "a") as out:
        for k, fn in ks.items():
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "t.json")
                profiled(fn, 500, path)
                events = events_per_iter(path, 500)
            line = {"tag": args.tag, "kind": k, "n": args.n, "torch": torch.__version__,
                    "plain_us": round(statistics.median(res[k]["plain"]), 3),
                    "profiled_us": round(statistics.median(res[k]["prof"]), 3), "events": events,
                    "rounds_plain": [round(x, 3) for x in res[k]["plain"]],
                    "rounds_profiled": [round(x, 3) for x in res[k]["prof"]]}
            print(json.dumps(line), flush=True)
            out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()

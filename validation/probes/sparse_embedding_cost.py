"""What a sparse embedding gradient costs and saves, per table, without the profiler: the measurement the
`embedding.dense_grads` finding needs before it can predict a speedup (its bound alone is in the trace).

For each table size (rows x dim, fp32) and ids per step, one step is: EmbeddingBag forward on random
skewed ids, a sum loss, backward, the optimizer step and zero_grad(set_to_none=True). Two variants:
  dense:  EmbeddingBag(sparse=False) + AdamW (foreach): the whole table's gradient and update;
  sparse: EmbeddingBag(sparse=True)  + SparseAdam: the looked-up rows only (coalesce, sparse_mask, ...).
Each is timed in interleaved rounds (CUDA events around N steps, after warm-up, no synchronize inside
the steps), and the host's own time per step is timed with the GPU kept busy by a long sleep kernel
queued first (so the host never waits): the host cost per table and the GPU cost per table apart.

One JSON line per (variant, tables, rows, dim, ids):
  {"variant", "tables", "rows", "dim", "ids_per_table", "step_ms" (median over rounds), "rounds_ms",
   "host_ms" (host time per step with the GPU backlogged; a sync inside the step, coalesce's, shows as
   the backlog's wait: compare with step_ms), "torch", "gpu", "tag"}

Usage (on the GPU machine, two processes for a band):
  python3 validation/probes/sparse_embedding_cost.py --out $OUT/sparse_A.jsonl --tag A
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn

SLEEP_CYCLES = 400_000_000  # ~200 ms of backlog at H200 clocks


def build(variant, tables, rows, dim):
    sparse = variant == "sparse"
    with torch.device("cuda"):
        embs = nn.ModuleList(nn.EmbeddingBag(rows, dim, mode="sum", sparse=sparse) for _ in range(tables))
    params = list(embs.parameters())
    opt = torch.optim.SparseAdam(params, lr=1e-3) if sparse else torch.optim.AdamW(params, lr=1e-3)
    return embs, opt


def batches(tables, rows, ids, n=4):
    g = torch.Generator().manual_seed(0)
    bag = 20
    return [(torch.rand(tables, ids // bag, bag, generator=g) ** 3 * rows).long().cuda() for _ in range(n)]


def step(embs, opt, ids):
    loss = sum(e(ids[i]).sum() for i, e in enumerate(embs))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def timed(embs, opt, data, steps):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for k in range(steps):
        step(embs, opt, data[k % len(data)])
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / steps


def host_only(embs, opt, data, steps):
    """Host time per step while the GPU is backlogged: the host never waits for it (unless it syncs)."""
    torch.cuda.synchronize()
    torch.cuda._sleep(SLEEP_CYCLES)
    t0 = time.perf_counter()
    for k in range(steps):
        step(embs, opt, data[k % len(data)])
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) * 1e3 / steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="A")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()
    configs = [(8, 500_000, 64, 40_960), (8, 1_000_000, 128, 40_960), (2, 1_000_000, 128, 40_960),
               (8, 100_000, 64, 40_960), (8, 1_000_000, 128, 4_096)]
    with open(a.out, "a") as out:
        for tables, rows, dim, ids in configs:
            built = {v: build(v, tables, rows, dim) for v in ("dense", "sparse")}
            data = batches(tables, rows, ids)
            for v, (embs, opt) in built.items():
                for _ in range(3):
                    step(embs, opt, data[0])
            rounds = {v: [] for v in built}
            hosts = {v: [] for v in built}
            for _ in range(a.rounds):  # interleaved
                for v, (embs, opt) in built.items():
                    rounds[v].append(timed(embs, opt, data, a.steps))
                    hosts[v].append(host_only(embs, opt, data, min(a.steps, 10)))
            for v in built:
                rec = {"variant": v, "tables": tables, "rows": rows, "dim": dim, "ids_per_table": ids,
                       "step_ms": statistics.median(rounds[v]), "rounds_ms": rounds[v],
                       "host_ms": statistics.median(hosts[v]), "torch": torch.__version__,
                       "gpu": torch.cuda.get_device_name(), "tag": a.tag}
                out.write(json.dumps(rec) + "\n")
                out.flush()
                print(json.dumps(rec), flush=True)
            del built
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

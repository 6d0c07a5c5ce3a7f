#!/usr/bin/env python3
"""How long the GPU idles between the kernels of a CUDA graph replay without the profiler (issue 17:
the un-profiled replay of a graphed trace caps the traced gaps between a graph's kernels at
kProfilerGraphGapCapNs; this measures what they are un-profiled).

A graph of N in-place elementwise kernels on one stream (x.mul_(a).add_(b), N/2 times) on tensors of E
elements is captured once; then
  (a) without the profiler: R replays, each timed with CUDA events around g.replay() (the GPU's time
      from the graph's start to its end), median;
  (b) under torch.profiler (CPU + CUDA, the validation jobs' default options): a few replays, and from
      the trace each replay's kernels: their summed durations, and the gaps between consecutive ones.
Un-profiled gap per node = (a - summed kernel time of one replay in (b)) / (N - 1): CUPTI's kernel
records stretch the gaps, not the kernels (their summed time matches the un-profiled span within the
gaps' share). One JSON line per configuration.
  python3 graph_gap_cost.py [--nodes 100,1000] [--elements 1024,262144,4194304] [--replays 50]
"""
import argparse
import gzip
import json
import os
import statistics
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile


def build(n, elements):
    x = torch.ones(elements, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up outside the capture, as the CUDA-graphs docs do
        for _ in range(3):
            for _ in range(n // 2):
                x.mul_(0.999).add_(0.001)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n // 2):
            x.mul_(0.999).add_(0.001)
    torch.cuda.synchronize()
    return g, x


def unprofiled(g, replays):
    ts = []
    for _ in range(replays):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1e6)  # ns
    return statistics.median(ts)


def profiled(g, n, replays):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            g.replay()
            torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
    kernels = sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    sums, gaps, spans = [], [], []
    for r in range(len(kernels) // n):
        ks = kernels[r * n:(r + 1) * n]
        sums.append(sum(k["dur"] for k in ks) * 1e3)
        spans.append((ks[-1]["ts"] + ks[-1]["dur"] - ks[0]["ts"]) * 1e3)
        gaps += [(ks[i + 1]["ts"] - ks[i]["ts"] - ks[i]["dur"]) * 1e3 for i in range(n - 1)]
    return statistics.median(sums), statistics.median(spans), gaps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", default="100,1000")
    ap.add_argument("--elements", default="1024,262144,4194304")
    ap.add_argument("--replays", type=int, default=50)
    a = ap.parse_args()
    for n in [int(v) for v in a.nodes.split(",")]:
        for elements in [int(v) for v in a.elements.split(",")]:
            g, _ = build(n, elements)
            unprofiled(g, 5)
            t = unprofiled(g, a.replays)
            kernel_sum, span, gaps = profiled(g, n, 5)
            t2 = unprofiled(g, a.replays)  # again after the profiler: the host's drift
            gaps.sort()
            q = lambda p: gaps[min(len(gaps) - 1, int(p * len(gaps)))]
            out = dict(nodes=n, elements=elements, unprofiled_replay_ns=round(t), unprofiled_replay_after_ns=round(t2),
                       profiled_kernel_sum_ns=round(kernel_sum), profiled_span_ns=round(span),
                       unprofiled_gap_per_node_ns=round((min(t, t2) - kernel_sum) / (n - 1), 1),
                       profiled_gap_ns=dict(p10=q(0.1), p50=q(0.5), p90=q(0.9), p99=q(0.99)),
                       kernel_ns=round(kernel_sum / n), torch=torch.__version__,
                       gpu=torch.cuda.get_device_name())
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()

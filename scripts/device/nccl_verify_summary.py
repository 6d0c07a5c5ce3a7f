#!/usr/bin/env python3
"""Summarizes scripts/device/nccl_verify_gpu.sh's raw JSON: per size, median [min-max] out-of-place time of
the fresh processes in each group (default NCCL, with the gpudoctor tuner plugin, PyTorch all_reduce,
gpudoctor on PyTorch's NCCL library), and whether the plugin's range lies apart from the default's."""
import glob
import json
import os
import sys


def load(raw, group):
    runs = []
    for p in sorted(glob.glob(os.path.join(raw, group + "_*.json"))):
        try:
            j = json.load(open(p))
        except (ValueError, OSError):
            continue
        rows = {}
        for r in j["results"]:
            o = r.get("out_of_place", r)
            rows[r["bytes"]] = (o["time_us"], o.get("wrong", 0), o["busbw_gbps"])
        runs.append(rows)
    return runs


def stat(runs, b, k=0):
    v = sorted(r[b][k] for r in runs if b in r)
    return (v[len(v) // 2], v[0], v[-1]) if v else None


def main():
    raw = sys.argv[1]
    groups = {g: load(raw, g) for g in ("default", "plugin", "torch", "torchnccl")}
    sizes = sorted(groups["default"][0].keys()) if groups["default"] else []
    wrong = {g: sum(x[1] for r in runs for x in r.values()) for g, runs in groups.items()}
    print("| bytes | default µs | plugin µs | plugin vs default | PyTorch all_reduce µs | gpudoctor on PyTorch's NCCL µs |")
    print("|---|---|---|---|---|---|")
    fmt = lambda s: f"{s[0]:.2f} [{s[1]:.2f}–{s[2]:.2f}]" if s else "–"
    for b in sizes:
        d, p = stat(groups["default"], b), stat(groups["plugin"], b)
        verdict = ""
        if d and p:
            ch = 100 * (p[0] - d[0]) / d[0]
            verdict = f"{ch:+.1f} %"
            verdict += " (faster, ranges apart)" if p[2] < d[1] else " (slower, ranges apart)" if p[1] > d[2] else " (within noise)"
        print(f"| {b} | {fmt(d)} | {fmt(p)} | {verdict} | {fmt(stat(groups['torch'], b))} | {fmt(stat(groups['torchnccl'], b))} |")
    busbw = lambda g: (stat(groups[g], sizes[-1], 2) or (0,))[0]  # each tool's own busbw (factor 2(n-1)/n), median
    print()
    print(f"runs: " + ", ".join(f"{g} {len(r)}" for g, r in groups.items()) + "; wrong elements: " +
          ", ".join(f"{g} {w}" for g, w in wrong.items()))
    if sizes:
        print(f"busbw at {sizes[-1]} B: " + ", ".join(f"{g} {busbw(g):.1f} GB/s" for g in groups if groups[g]))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Markdown tables from `gpudoctor bench gpu --json` and scripts/device/torch_gpu_bench.py of the same run:
GEMM TFLOP/s per precision beside torch.matmul and the datasheet, bandwidths beside the datasheet,
attention (unfused, this project's fused kernel, cuDNN and flash through PyTorch) by sequence length
with speedups and memory ratios, fusion and CUDA-graph speedups, and every check's verdict.
  python3 scripts/device/gpu_bench_summary.py BENCH_JSON TORCH_JSON > summary.md
"""
import json
import sys

# Dense datasheet figures (H100 / H200 SXM), the same as src/model/ceilings.cc.
SHEET_TFLOPS = {"fp32": 67.0, "tf32": 494.5, "fp16": 989.5, "bf16": 989.5, "fp8": 1979.0}


def sheet_hbm(device):
    return 4800.0 if "H200" in device else 3350.0 if "H100" in device else None


def fmt(v, spec=".1f"):
    return "-" if v is None else format(v, spec)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    bench = json.load(open(sys.argv[1]))
    try:
        torch = json.load(open(sys.argv[2]))
    except (OSError, ValueError) as e:
        torch = {"gemm": [], "attention": [], "error": str(e)}
    dev = bench["device"]["name"]
    known = "H100" in dev or "H200" in dev
    o = [f"# bench gpu on {dev}", "",
         f"driver {bench['device']['driver']}, runtime {bench['device']['runtime']}, {bench['device']['gpus']} GPU(s); "
         f"PyTorch {torch.get('torch', '?')} (CUDA {torch.get('cuda', '?')}, cuDNN {torch.get('cudnn', '?')}). "
         f"All gpudoctor checks passed: **{bench['all_checks_passed']}**.", ""]
    o += ["## GEMM (TFLOP/s, dense)", "", "| shape m x n x k | precision | gpudoctor (cuBLASLt) | torch.matmul | gpudoctor / torch | datasheet | % of datasheet | check |",
          "|---|---|---|---|---|---|---|---|"]
    tg = {(g["precision"], g["m"], g["n"], g["k"]): g for g in torch.get("gemm", [])}
    for g in bench["gemm"]:
        t = tg.get((g["precision"], g["m"], g["n"], g["k"]), {})
        tt = t.get("tflops")
        ds = SHEET_TFLOPS[g["precision"]] if known else None
        o.append(f"| {g['m']}x{g['n']}x{g['k']} | {g['precision']} | {g['tflops']:.1f} | {fmt(tt) if tt else t.get('error', '-')} | "
                 f"{fmt(g['tflops'] / tt, '.2f') if tt else '-'} | {fmt(ds)} | {fmt(100 * g['tflops'] / ds, '.0f') + ' %' if ds else '-'} | "
                 f"{'ok' if g['check']['passed'] else 'FAIL'} (rel L2 {g['check']['rel_l2']:.1e}) |")
    o += ["", "## Bandwidth (GB/s = 1e9 B/s)", "", "| path | GB/s | datasheet | % of datasheet | check |", "|---|---|---|---|---|"]
    for b in bench["bandwidth"]:
        ds = None
        if b["name"].startswith("hbm"):
            ds = sheet_hbm(dev)
        elif b["name"][:3] in ("h2d", "d2h") and known:
            ds = 64.0
        elif b["name"].startswith("p2p") and known:
            ds = 450.0
        o.append(f"| {b['name']} | {b['gbps']:.1f} | {fmt(ds, '.0f')} | {fmt(100 * b['gbps'] / ds, '.0f') + ' %' if ds else '-'} | "
                 f"{'ok' if b['check']['passed'] else 'FAIL'} |")
    o += ["", "## Attention forward (bf16; 16384 tokens per batch, hidden 2048)", "",
          "| seq | d | causal | unfused ms | ours (fused) ms | ours (fused-simple) ms | cuDNN ms | flash (torch) ms | best ours vs unfused | memory unfused / ours | best ours / cuDNN time | best ours TFLOP/s | cuDNN TFLOP/s | checks (unfused/fused/simple) |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    key = lambda a: (a["seq"], a["head_dim"], a["causal"])
    mine = {}
    for a in bench["attention"]:
        mine.setdefault(key(a), {})[a["impl"]] = a
    theirs = {}
    for a in torch.get("attention", []):
        theirs.setdefault(key(a), {})[a["impl"]] = a
    for k in sorted(mine):
        u, f, fs = mine[k].get("unfused"), mine[k].get("fused"), mine[k].get("fused-simple")
        c, fl = theirs.get(k, {}).get("cudnn", {}), theirs.get(k, {}).get("flash", {})
        ms = lambda r: r["median_us"] / 1e3 if r and "median_us" in r else None
        # The ratios use the faster of our two kernels among those whose check passed.
        passing = [r for r in (f, fs) if r and r["check"]["passed"]]
        best = min(passing, key=lambda r: r["median_us"]) if passing else None
        checks = "/".join(("ok" if r["check"]["passed"] else "FAIL") if r else "-" for r in (u, f, fs))
        o.append(f"| {k[0]} | {k[1]} | {'yes' if k[2] else 'no'} | {fmt(ms(u), '.3f')} | {fmt(ms(f), '.3f')} | {fmt(ms(fs), '.3f')} | "
                 f"{fmt(ms(c), '.3f') if ms(c) else c.get('error', '-')} | {fmt(ms(fl), '.3f') if ms(fl) else fl.get('error', '-')} | "
                 f"{fmt(ms(u) / ms(best), '.2f') + 'x' if ms(u) and ms(best) else '-'} | "
                 f"{fmt(u['memory_bytes'] / best['memory_bytes'], '.1f') + 'x' if u and best else '-'} | "
                 f"{fmt(ms(best) / ms(c), '.2f') if ms(best) and ms(c) else '-'} | {fmt(best['tflops'] if best else None)} | "
                 f"{fmt(c.get('tflops'))} | {checks} |")
    o += ["", "## Fusion, launches, CUDA graphs", "", "| what | elements | kernels | median us | us per kernel | check |", "|---|---|---|---|---|---|"]
    for f in bench["fusion"]:
        o.append(f"| {f['name']} | {f['elements']} | {f['kernels']} | {f['median_us']:.2f} | {f['per_kernel_us']:.3f} | "
                 f"{'ok' if f['check']['passed'] else 'FAIL'} |")
    o += ["", "## What each optimization buys here", "", "| optimization | at | speedup | memory ratio |", "|---|---|---|---|"]
    for s in bench["speedups"]:
        o.append(f"| {s['what']} | {s['at']} | {s['speedup']:.2f}x | {fmt(s['memory_ratio'], '.1f') + 'x' if s['memory_ratio'] else ''} |")
    if bench.get("notes"):
        o += ["", "Notes:"] + [f"- {n}" for n in bench["notes"]]
    if bench.get("errors"):
        o += ["", "**Errors (parts stopped early):**"] + [f"- {e}" for e in bench["errors"]]
    if torch.get("error"):
        o += [f"- PyTorch figures missing: {torch['error']}"]
    print("\n".join(o))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a fused optimizer step costs on the GPU beside the foreach one it replaces (the fused_optimizer
fix's optimizer_gpu_scale): the fused step's kernel time per step over the foreach step's, per optimizer
class and per parameter mix, from small tensors (one kernel's launch and tail matter) to embedding tables
of tens of millions of elements (both paths stream memory).

For each (optimizer, mix): the parameters are made on the GPU with a gradient each; each implementation
(foreach=True, fused=True) takes 5 warm-up steps, then 3 profiled steps (CUDA activity only). Per step: the
kernels' summed device time and their count; the median step of the 3. Also each implementation's
un-profiled GPU time per step (CUDA events around 20 steps; for the small mixes this is the host's pace,
not the kernels'). One JSON line per (optimizer, mix): the two kernel times, their ratio (the scale),
the kernels per step, the parameters' elements and the bytes each path moves per element at the
measured time (state and parameter bytes over the kernel time: a check that both stream memory).
  python3 fused_optimizer_scale.py [--mixes small,m32k,medium,large,tables,dlrm] [--optimizers AdamW,Adam,SGD]
"""
import argparse
import json
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

# name -> [(tensors, elements each)]
MIXES = {
    "small": [(200, 16_384)],
    # between small and medium: the foreach kernels' time grows with the elements a launch takes
    "m32k": [(200, 32_768)],
    "m64k": [(200, 65_536)],
    "m256k": [(150, 262_144)],
    # a ResNet-50-like mix: norm weights and biases, 3x3 and 1x1 convolutions, the classifier
    "cnn": [(106, 512), (16, 36_864), (16, 147_456), (12, 589_824), (3, 2_359_296), (1, 2_048_000)],
    "medium": [(100, 1_048_576)],
    "large": [(16, 8_388_608)],
    "tables": [(8, 32_000_000)],
    "dlrm": [(8, 32_000_000), (6, 262_144), (6, 1024)],
    "wide_deep": [(2, 32_000_000), (2, 16_000_000), (2, 6_400_000), (1, 1_000_000), (6, 65_536)],
}


def make_opt(name, params, impl):
    kw = {"foreach": True} if impl == "foreach" else {"fused": True}
    if name == "SGD":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9, **kw)
    if name == "AdamW":
        return torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, **kw)
    return getattr(torch.optim, name)(params, lr=1e-3, **kw)


def kernel_time(opt):
    """(median kernel ns per step, kernels per step) over 3 profiled steps."""
    per_step = []
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(3):
            with torch.profiler.record_function(f"step{i}"):
                opt.step()
            torch.cuda.synchronize()
    ks = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                key=lambda e: e.time_range.start)
    # Steps are separated by the synchronize: split the kernels into 3 runs by their start's largest gaps.
    if len(ks) < 3:
        return None, 0
    gaps = sorted(range(1, len(ks)), key=lambda i: ks[i].time_range.start - ks[i - 1].time_range.end)[-2:]
    cuts = [0] + sorted(gaps) + [len(ks)]
    for a, b in zip(cuts, cuts[1:]):
        per_step.append((sum(e.device_time for e in ks[a:b]) * 1e3, b - a))
    per_step.sort()
    return per_step[1]


def event_time(opt, n=20):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(n):
        opt.step()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) * 1e6 / n


def run(opt_name, mix):
    shapes = MIXES[mix]
    out = {"optimizer": opt_name, "mix": mix, "tensors": sum(c for c, _ in shapes),
           "elements": sum(c * n for c, n in shapes)}
    for impl in ("foreach", "fused"):
        params = [torch.zeros(n, device="cuda", requires_grad=True) for c, n in shapes for _ in range(c)]
        for p in params:
            p.grad = torch.randn_like(p)
        opt = make_opt(opt_name, params, impl)
        for _ in range(5):
            opt.step()
        torch.cuda.synchronize()
        ns, count = kernel_time(opt)
        out[f"{impl}_kernel_ns"] = round(ns)
        out[f"{impl}_kernels"] = count
        out[f"{impl}_event_ns"] = round(event_time(opt))
        del opt, params
        torch.cuda.empty_cache()
    out["scale"] = round(out["fused_kernel_ns"] / out["foreach_kernel_ns"], 4)
    out["foreach_ns_per_kernel"] = round(out["foreach_kernel_ns"] / max(1, out["foreach_kernels"]))
    out["fused_GBps"] = round(out["elements"] * 4 * (7 if opt_name != "SGD" else 5) / out["fused_kernel_ns"], 1)
    out["torch"], out["gpu"] = torch.__version__, torch.cuda.get_device_name()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mixes", default=",".join(MIXES))
    ap.add_argument("--optimizers", default="AdamW,Adam,SGD")
    a = ap.parse_args()
    for m in a.mixes.split(","):
        if m not in MIXES:
            ap.error(f"unknown mix {m} (one of {', '.join(MIXES)})")
    rows = []
    for o in a.optimizers.split(","):
        for m in a.mixes.split(","):
            rows.append(run(o, m))
            print(json.dumps(rows[-1]), flush=True)
    for o in a.optimizers.split(","):
        s = [r["scale"] for r in rows if r["optimizer"] == o]
        print(json.dumps({"optimizer": o, "median_scale": round(statistics.median(s), 4), "scales": s}))


if __name__ == "__main__":
    main()

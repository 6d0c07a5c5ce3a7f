"""What bf16 autocast costs on the host (issue 17's bf16 edit): the same forward + backward of an MLP
of L Linear layers (width W, batch B, tiny so that the host sets the step), in FP32 and under
torch.autocast(dtype=bfloat16), timed without the profiler (perf_counter_ns around 200 steps, one
synchronize at the end), then once under the profiler to count what autocast adds per Linear (host
operators, kernels). The slope over L is the host time autocast adds per Linear layer.
Prints one JSON line per (L, mode) and a summary line.
  python3 autocast_host_cost.py [--layers 4,16,64] [--width 256] [--batch 8] [--steps 200]
With --interleave R: per L, R pairs of rounds (FP32, then bf16), each round preceded by a probe of the
host's speed (the median ns of a 1-element CPU torch.add; this machine's host runs at two speeds about
2x apart): one JSON line per pair, and per L the median of the pairs' differences per cast
(aten::_to_copy per step), over all pairs and over the pairs whose two probes agree within 20 %.
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile


def model_of(layers, width):
    mods = []
    for _ in range(layers):
        mods += [nn.Linear(width, width), nn.GELU()]
    return nn.Sequential(*mods).cuda()


def step(m, x, amp):
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
        y = m(x)
        loss = y.float().square().mean()
    loss.backward()
    for p in m.parameters():
        p.grad = None


def timed(m, x, amp, steps):
    for _ in range(20):
        step(m, x, amp)
    torch.cuda.synchronize()
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(steps):
            step(m, x, amp)
        torch.cuda.synchronize()
        rounds.append((time.perf_counter_ns() - t0) / steps)
    return statistics.median(rounds), rounds


def counts(m, x, amp):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        step(m, x, amp)
        torch.cuda.synchronize()
    ev = prof.events()
    ops = sum(1 for e in ev if e.device_type == torch.autograd.DeviceType.CPU and e.name.startswith("aten::"))
    kernels = sum(1 for e in ev if e.device_type == torch.autograd.DeviceType.CUDA)
    casts = sum(1 for e in ev if e.name == "aten::_to_copy")
    return ops, kernels, casts


def host_probe(n=2000):
    a, b = torch.ones(1), torch.ones(1)
    meds = []
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            torch.add(a, b)
        meds.append((time.perf_counter_ns() - t0) / n)
    return statistics.median(meds)


def one_round(m, x, amp, steps):
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(steps):
        step(m, x, amp)
    torch.cuda.synchronize()
    return (time.perf_counter_ns() - t0) / steps


def interleaved(a):
    for layers in (int(v) for v in a.layers.split(",")):
        m = model_of(layers, a.width)
        x = torch.randn(a.batch, a.width, device="cuda")
        for amp in (False, True):
            for _ in range(20):
                step(m, x, amp)
        casts = counts(m, x, True)[2]
        diffs, same = [], []
        for r in range(a.interleave):
            p32 = host_probe()
            t32 = one_round(m, x, False, a.steps)
            p16 = host_probe()
            t16 = one_round(m, x, True, a.steps)
            d = (t16 - t32) / casts
            diffs.append(d)
            agree = abs(p16 - p32) <= 0.2 * min(p16, p32)
            if agree:
                same.append((p32, d))
            print(json.dumps({"layers": layers, "pair": r, "fp32_ns": round(t32), "bf16_ns": round(t16), "casts": casts,
                              "probe_fp32_ns": round(p32, 1), "probe_bf16_ns": round(p16, 1),
                              "ns_per_cast": round(d)}), flush=True)
        fast = [d for p, d in same if p < 1900]
        slow = [d for p, d in same if p >= 1900]
        med = lambda v: round(statistics.median(v)) if v else None
        print(json.dumps({"summary": True, "layers": layers, "casts_per_step": casts, "ns_per_cast_median": med(diffs),
                          "ns_per_cast_probes_agree": med([d for _, d in same]), "pairs_agree": len(same),
                          "ns_per_cast_fast_host": med(fast), "ns_per_cast_slow_host": med(slow),
                          "torch": torch.__version__}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", default="4,16,64")
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--interleave", type=int, default=0, metavar="R")
    a = ap.parse_args()
    torch.manual_seed(0)
    if a.interleave:
        interleaved(a)
        return
    rows = []
    for layers in (int(v) for v in a.layers.split(",")):
        m = model_of(layers, a.width)
        x = torch.randn(a.batch, a.width, device="cuda")
        for amp in (False, True):
            med, rounds = timed(m, x, amp, a.steps)
            ops, kernels, casts = counts(m, x, amp)
            r = {"layers": layers, "mode": "bf16" if amp else "fp32", "step_ns": round(med), "rounds_ns": [round(v) for v in rounds],
                 "aten_ops": ops, "kernels": kernels, "to_copy_ops": casts, "torch": torch.__version__}
            rows.append(r)
            print(json.dumps(r), flush=True)
    by = {(r["layers"], r["mode"]): r for r in rows}
    ls = sorted({r["layers"] for r in rows})
    extra = [(by[(l, "bf16")]["step_ns"] - by[(l, "fp32")]["step_ns"]) for l in ls]
    # Slope of the extra host time over the layer count (least squares).
    n = len(ls)
    mx, my = sum(ls) / n, sum(extra) / n
    slope = sum((l - mx) * (e - my) for l, e in zip(ls, extra)) / max(1e-9, sum((l - mx) ** 2 for l in ls))
    fp32_slope = (by[(ls[-1], "fp32")]["step_ns"] - by[(ls[0], "fp32")]["step_ns"]) / (ls[-1] - ls[0])
    print(json.dumps({"summary": True, "autocast_extra_ns_per_linear": round(slope), "fp32_ns_per_linear": round(fp32_slope),
                      "extra_per_layers": dict(zip(ls, extra)),
                      "extra_ops_per_linear": (by[(ls[-1], "bf16")]["aten_ops"] - by[(ls[-1], "fp32")]["aten_ops"]) / ls[-1],
                      "extra_kernels_per_linear": (by[(ls[-1], "bf16")]["kernels"] - by[(ls[-1], "fp32")]["kernels"]) / ls[-1]}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Compare `gpudoctor plan` predictions with measurements from scripts/validation/plan_validation_train.py.
    scripts/validation/plan_validation_compare.py build/gpudoctor docs/plan_validation_measured_h200.jsonl [--calibrate]
--calibrate: per precision, the efficiency (share of peak) is fitted on one run (the largest
micro-batch without recomputation) and the other runs are predicted with it, as a user would after
measuring one configuration.
The bf16 runs use PyTorch autocast (fp32 weights), so they are planned with --precision amp.
Memory is compared as allocated bytes (torch.cuda.max_memory_allocated, which excludes the CUDA
context and NCCL): prediction = total - framework. Step time is the median of 10 steps."""
import json, subprocess, sys

gd, measured = sys.argv[1], sys.argv[2]
calibrate = "--calibrate" in sys.argv
rows = [json.loads(l) for l in open(measured) if l.strip()]


def plan(r, eff=None):
    cmd = [gd, "plan", "--model", "gpt2", "--gpu", "h200", "--gpus-per-node", "1", "--json", "-",
           "--global-batch", str(r["micro_batch"]), "--micro-batch", str(r["micro_batch"]),
           "--recompute", r["recompute"], "--precision", "amp" if r["precision"] == "bf16" else r["precision"],
           "--top", "1"]
    if eff:
        cmd += ["--efficiency", str(eff)]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)["plans"][0]


eff = {}
if calibrate:
    for prec in sorted({r["precision"] for r in rows}):
        ref = max((r for r in rows if r["precision"] == prec and r["recompute"] == "none"), key=lambda r: r["micro_batch"])
        p = plan(ref)
        t = p["time_s"]
        e0 = 0.55
        eff[prec] = e0 * t["compute"] / (ref["step_s"] - (t["step"] - t["compute"]))
        print(f"calibrated on {prec} micro-batch {ref['micro_batch']}: efficiency {eff[prec]:.3f} of peak")
print(f"{'precision':<9} {'mb':>3} {'recompute':<9} {'meas GB':>8} {'pred GB':>8} {'err':>7} "
      f"{'meas s':>7} {'pred s':>7} {'err':>7}")
worst_m = worst_t = 0
for r in rows:
    p = plan(r, eff.get(r["precision"]))
    pm = p["memory_bytes"]["total"] - p["memory_bytes"]["framework"]
    pt = p["time_s"]["step"]
    em = (pm - r["peak_allocated"]) / r["peak_allocated"]
    et = (pt - r["step_s"]) / r["step_s"]
    worst_m, worst_t = max(worst_m, abs(em)), max(worst_t, abs(et))
    print(f"{r['precision']:<9} {r['micro_batch']:>3} {r['recompute']:<9} {r['peak_allocated']/1e9:>8.2f} {pm/1e9:>8.2f} "
          f"{100*em:>6.1f}% {r['step_s']:>7.3f} {pt:>7.3f} {100*et:>6.1f}%")
print(f"worst memory error {100*worst_m:.1f}%, worst step-time error {100*worst_t:.1f}%")

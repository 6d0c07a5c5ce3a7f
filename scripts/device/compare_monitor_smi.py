#!/usr/bin/env python3
"""Pairs each `gpudoctor monitor` sample with the nvidia-smi --query-gpu line of the same GPU nearest
in time (both sampled every second over the same window) and prints, per GPU and figure, the mean of
each and the mean and largest absolute difference: utilization (%), memory used (MiB), power (W),
temperature (C), SM clock (MHz). nvidia-smi's utilization covers its own sample period, so single
pairs differ more than means. With a third argument, the phase lines of scripts/device/gpu_load.py --phases:
per phase and GPU the means of both inside the phase (its first second left out), and in the copy
phases the monitor's PCIe rate beside the bytes the load actually moved per second.
  compare_monitor_smi.py MONITOR.jsonl SMI.csv [PHASES.jsonl]"""
import csv
import datetime
import json
import sys


def main():
    mon, smi = sys.argv[1], sys.argv[2]
    samples = [json.loads(l) for l in list(open(mon))[1:] if l.endswith("\n")]
    rows = []
    for r in csv.reader(open(smi)):
        if len(r) < 8:
            continue
        try:
            t = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").timestamp()
            rows.append((t, int(r[1]), float(r[2]), float(r[3]), float(r[5]), float(r[6]), float(r[7])))
        except ValueError:
            continue
    if not samples or not rows:
        print("compare: no data (monitor samples %d, nvidia-smi rows %d)" % (len(samples), len(rows)))
        return 1
    # nvidia-smi prints local time; monitor records UTC ns. Align on the best constant offset (hours).
    t0m = samples[0]["t_ns"] / 1e9
    offset = round((rows[0][0] - t0m) / 3600) * 3600
    print("gpu figure            monitor    nvidia-smi  mean|diff|  max|diff|  pairs")
    paired = []
    for gpu in sorted({g["i"] for s in samples for g in s["g"]}):
        pairs = []
        for s in samples:
            g = next((g for g in s["g"] if g["i"] == gpu), None)
            if g is None or g.get("lost"):
                continue
            t = s["t_ns"] / 1e9 + offset
            cand = [r for r in rows if r[1] == gpu]
            if not cand:
                continue
            r = min(cand, key=lambda r: abs(r[0] - t))
            if abs(r[0] - t) > 1.0:
                continue
            mine = (100 * (g["util"] or 0), g["mem_used"] / 2**20, g["power_w"] or 0, g["temp_c"] or 0, g["sm_mhz"] or 0)
            pairs.append((mine, r[2:]))
            paired.append((gpu, s["t_ns"] / 1e9, mine, r[2:], g))
        for k, name in enumerate(["util %", "memory MiB", "power W", "temp C", "SM MHz"]):
            if not pairs:
                continue
            a = [p[0][k] for p in pairs]
            b = [p[1][k] for p in pairs]
            d = [abs(x - y) for x, y in zip(a, b)]
            print(f"{gpu:>3} {name:<14} {sum(a)/len(a):>10.1f} {sum(b)/len(b):>12.1f} {sum(d)/len(d):>10.2f} {max(d):>10.2f} {len(pairs):>6}")
    if len(sys.argv) > 3:
        phases(sys.argv[3], paired)
    return 0


def phases(path, paired):
    """Per phase of the load and GPU: monitor vs nvidia-smi means; PCIe against the bytes moved."""
    print()
    print("phase        gpu  n  util % (mon / smi)  memory MiB (mon / smi)  power W (mon / smi)  PCIe GB/s: monitor rx / tx, load moved")
    for line in open(path):
        if not line.startswith("{"):
            continue
        ph = json.loads(line)
        gpu, lo, hi = ph["rank"], ph["start"] + 1.0, ph["end"] - 0.2
        inside = [p for p in paired if p[0] == gpu and lo <= p[1] <= hi]
        if not inside:
            print(f"{ph['phase']:<12} {gpu:>3}  0  (no samples inside)")
            continue
        mean = lambda xs: sum(xs) / len(xs)
        cols = []
        for k in range(3):
            cols.append("%8.1f / %-8.1f" % (mean([p[2][k] for p in inside]), mean([p[3][k] for p in inside])))
        rx = [p[4]["pcie_rx"] for p in inside if p[4].get("pcie_rx") is not None]
        tx = [p[4]["pcie_tx"] for p in inside if p[4].get("pcie_tx") is not None]
        pcie = "%6.2f / %6.2f" % (mean(rx) / 1e9 if rx else float("nan"), mean(tx) / 1e9 if tx else float("nan"))
        if ph.get("bytes"):
            pcie += ", %6.2f (%s)" % (ph["bytes"] / (ph["end"] - ph["start"]) / 1e9, ph["phase"])
        print(f"{ph['phase']:<12} {gpu:>3} {len(inside):>2}  {cols[0]}   {cols[1]}   {cols[2]}  {pcie}")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Independent cross-check of `gpudoctor analyze`: recomputes the per-step breakdown straight from
the trace JSON with Python's json module (exact decimal timestamps, a sweep-line instead of interval
merging) and compares it with `gpudoctor analyze --json -`. Exits non-zero on any mismatch larger
than 0.01 % of the step window.

    scripts/checks/crosscheck_breakdown.py --gpudoctor build/gpudoctor TRACE_OR_DIR...
"""
import argparse, decimal, gzip, json, os, subprocess, sys

NS = decimal.Decimal(1000)


def load(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=decimal.Decimal)


def to_ns(v):
    return int((decimal.Decimal(v) * NS).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def covered(spans, lo, hi):
    """Length of the union of spans inside [lo, hi), by a sweep over +1/-1 edges."""
    edges = []
    for b, e in spans:
        b, e = max(b, lo), min(e, hi)
        if b < e:
            edges.append((b, 1))
            edges.append((e, -1))
    edges.sort()
    depth, last, total = 0, None, 0
    for t, d in edges:
        if depth > 0:
            total += t - last
        depth += d
        last = t
    return total


def covered_both(a, b, lo, hi):
    """Length of (union a) ∩ (union b) inside [lo, hi)."""
    edges = []
    for spans, k in ((a, 0), (b, 1)):
        for s, e in spans:
            s, e = max(s, lo), min(e, hi)
            if s < e:
                edges.append((s, k, 1))
                edges.append((e, k, -1))
    edges.sort()
    depth, last, total = [0, 0], None, 0
    for t, k, d in edges:
        if depth[0] > 0 and depth[1] > 0:
            total += t - last
        depth[k] += d
        last = t
    return total


def expected(path):
    d = load(path)
    base = int(d.get("baseTimeNanoseconds", 0))
    ev = [e for e in d["traceEvents"] if e.get("ph") == "X" and "ts" in e]
    gpu_pids = set()
    work = []      # (start, end, kind, is_nccl, correlation)
    launches = {}  # correlation -> (start, end)
    steps = []
    for e in ev:
        s = base + to_ns(e["ts"])
        en = s + max(0, to_ns(e.get("dur", 0)))
        cat = e.get("cat")
        args = e.get("args", {})
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            nccl = cat == "kernel" and e["name"].startswith(("ncclDevKernel", "ncclKernel"))
            work.append((s, en, cat, nccl, args.get("correlation")))
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            launches[args["correlation"]] = (s, en)
        elif cat == "user_annotation" and e["name"].startswith("ProfilerStep#"):
            steps.append((s, en, int(e["name"][13:])))
    steps.sort()
    windows = []
    for i, (s, en, n) in enumerate(steps):
        end = steps[i + 1][0] if i + 1 < len(steps) else en
        if i + 1 == len(steps):
            for ws, we, _, _, c in work:
                if c in launches and s <= launches[c][0] < en:
                    end = max(end, we)
        windows.append((n, s, end))
    allw = [(s, e) for s, e, *_ in work]
    comp = [(s, e) for s, e, k, nc, _ in work if k == "kernel" and not nc]
    comm = [(s, e) for s, e, k, nc, _ in work if nc]
    kern = comp + comm
    mcpy = [(s, e) for s, e, k, *_ in work if k == "gpu_memcpy"]
    by_corr = {w[4] for w in work if w[4] is not None}
    out = {}
    for n, lo, hi in windows:
        busy = covered(allw, lo, hi)
        c = covered(comp, lo, hi)
        m = covered(comm, lo, hi)
        ov = covered_both(comm, comp, lo, hi)
        out[n] = {
            "wall_ns": hi - lo,
            "gpu_busy_ns": busy,
            "compute_ns": c,
            "comm_ns": m,
            "comm_overlap_ns": ov,
            "comm_exposed_ns": m - ov,
            "copy_exposed_ns": busy - covered(kern, lo, hi),
            "idle_ns": hi - lo - busy,
            "memcpy_ns": covered(mcpy, lo, hi),
            # launch-latency samples: launch calls inside the window whose GPU work is in the trace
            "launches": sum(1 for c_, (ls, _) in launches.items() if lo <= ls < hi and c_ in by_corr),
        }
    return d.get("distributedInfo", {}).get("rank"), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpudoctor", required=True)
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    files = []
    for p in a.paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith((".json", ".json.gz")))
        else:
            files.append(p)
    worst, checked = 0.0, 0
    for f in files:
        rank, exp = expected(f)
        got = json.loads(subprocess.run([a.gpudoctor, "analyze", "-q", "--json", "-", f], check=True,
                                        capture_output=True, text=True).stdout)
        steps = {s["step"]: s for s in got["ranks"][0]["steps"]}
        if set(steps) != set(exp):
            print(f"FAIL {f}: steps {sorted(steps)} != expected {sorted(exp)}")
            return 1
        for n, e in exp.items():
            g = steps[n]
            for k, v in e.items():
                gv = g["host"]["launch_latency"]["count"] if k == "launches" else g[k]
                err = abs(gv - v) / e["wall_ns"]
                worst = max(worst, err)
                checked += 1
                if err > 1e-4:
                    print(f"FAIL {f} step {n} {k}: gpudoctor {gv} vs independent {v}")
                    return 1
        print(f"ok   {os.path.basename(f)} (rank {rank}): {len(exp)} steps match")
    print(f"crosscheck: {checked} figures in {len(files)} traces agree; worst difference {worst * 100:.6f}% of the window")
    return 0


if __name__ == "__main__":
    sys.exit(main())

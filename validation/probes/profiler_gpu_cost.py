"""The profiler's cost on the GPU side: how much longer kernels run, and how much longer a backlogged
stream takes per kernel, when torch.profiler (Kineto/CUPTI) traces them.

For each kernel shape, K kernels are queued behind a long sleep kernel, so the stream is backlogged and
the host's launch speed does not matter. CUDA events around the K kernels give the GPU's time per kernel
(the kernel plus the gap to the next one). This is done without the profiler and under it, in interleaved
rounds. Under the profiler, the trace's own kernel durations are read too.

Per shape it prints one JSON line:
  {"shape", "kernels", "plain_us" (event time per kernel, no profiler; median over rounds),
   "profiled_us" (event time per kernel under the profiler), "traced_dur_us" (median kernel duration in the
   trace), "traced_gap_us" (median gap between consecutive traced kernels), "rounds"}

Usage (on the GPU machine): python3 validation/probes/profiler_gpu_cost.py --out results.jsonl [--tag A]
Run it in two processes (two tags) for a band.
"""
import argparse
import gzip
import json
import os
import statistics
import tempfile

os.environ.setdefault("TEARDOWN_CUPTI", "1")  # before torch is imported

import torch  # noqa: E402

SLEEP_CYCLES = 200_000_000  # ~100 ms at H200 clocks: enough backlog for K launches


def shapes():
    """name -> (setup() -> state, run(state)): one kernel per call where possible."""
    def ew(n):
        def setup():
            return torch.randn(n, device="cuda")

        def run(x):
            x.mul_(1.0000001)
        return setup, run

    def gemm(n, dtype):
        def setup():
            a = torch.randn(n, n, device="cuda", dtype=dtype)
            return a, torch.randn(n, n, device="cuda", dtype=dtype), torch.empty(n, n, device="cuda", dtype=dtype)

        def run(s):
            torch.mm(s[0], s[1], out=s[2])
        return setup, run

    return {
        "ew_4k": ew(4096),
        "ew_1m": ew(1 << 20),
        "ew_64m": ew(64 << 20),
        "gemm_512_fp32": gemm(512, torch.float32),
        "gemm_2048_bf16": gemm(2048, torch.bfloat16),
        "gemm_4096_fp32": gemm(4096, torch.float32),
    }


def timed(run, state, k):
    """GPU ms per kernel of k kernels queued behind a sleep (events bracket the k kernels only)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(SLEEP_CYCLES)
    start.record()
    for _ in range(k):
        run(state)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / k


def traced(run, state, k, path):
    """The same under torch.profiler; returns (event ms per kernel, trace kernel durations, gaps) in us."""
    prof_mod = torch.profiler
    with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU, prof_mod.ProfilerActivity.CUDA],
                          record_shapes=False) as prof:
        ms = timed(run, state, k)
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    os.remove(path)
    kern = sorted((e["ts"], e["dur"]) for e in events
                  if e.get("cat") == "kernel" and "sleep" not in e.get("name", "").lower())
    kern = kern[-k:]
    durs = [d for _, d in kern]
    gaps = [b[0] - (a[0] + a[1]) for a, b in zip(kern, kern[1:])]
    return ms * 1e3, durs, gaps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", default="A")
    ap.add_argument("--kernels", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    with open(args.out, "a") as out:
        for name, (setup, run) in shapes().items():
            state = setup()
            k = args.kernels if not name.startswith("gemm_4096") else args.kernels // 4
            for _ in range(3):
                timed(run, state, k)  # warm-up, cuBLAS heuristics, clocks
            plain, prof, durs, gaps = [], [], [], []
            for r in range(args.rounds):
                plain.append(timed(run, state, k) * 1e3)
                us, d, g = traced(run, state, k, os.path.join(tmp, f"{name}_{r}.json"))
                prof.append(us)
                durs += d
                gaps += g
            rec = {"tag": args.tag, "shape": name, "kernels": k, "rounds": args.rounds,
                   "gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                   "plain_us": round(statistics.median(plain), 3), "plain_rounds_us": [round(x, 3) for x in plain],
                   "profiled_us": round(statistics.median(prof), 3), "profiled_rounds_us": [round(x, 3) for x in prof],
                   "traced_dur_us": round(statistics.median(durs), 3) if durs else None,
                   "traced_gap_us": round(statistics.median(gaps), 3) if gaps else None}
            out.write(json.dumps(rec) + "\n")
            out.flush()
            print(json.dumps(rec), flush=True)
            del state
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

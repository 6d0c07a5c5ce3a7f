"""Does the profiler's host cost follow the host's speed, within one job? The lab machine's host runs at
speeds about 2x apart, between processes and within one (run_lab.py's host probe: 1.3 against 2.8 us for
a 1-element CPU torch.add). Across jobs the cost per event the replay needs tracks the trace's own
host-speed gauge (the quarter-point of the host gaps before operators), but across jobs that gauge also
reads each job's structure. Here one job is traced again and again in one process, each trace right after
a timed un-profiled round, so the only thing that changes from one trace to the next is the host's speed.

Per job (one process per job, as run_lab.py runs them): the base variant is built and warmed up, then K
rounds of
  host probe; drain; N steps timed without the profiler (synchronize only around the N); host probe;
  one trace exactly as the lab's (run_lab.trace_one: drain, 5 steps, wait 1, warm-up 2, active 5);
  host probe; with --with-stack, a second trace with Python frames recorded (with_stack=True) and a probe.
Each round's trace is kept as <job>__r<k>.pt.trace.json.gz (<job>__r<k>_stack.pt.trace.json.gz). Score each against its own round's un-profiled
step (gpudoctor analyze TRACE --measured-step-ms MS gives the factor on the estimated cost it needed).

Writes to OUT: profiler_speed.jsonl (one line per round: job, round, probes, un-profiled ms/step, trace
name) and speed_traces_<k>.tar (the traces, each tar under 15 MB).
  python3 validation/probes/profiler_speed_probe.py --out DIR --jobs a,b [--rounds 8] [--steps 30]
"""
import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.dirname(HERE)
sys.path.insert(0, LAB)
import run_lab  # noqa: E402  (job loading, timing, the host probe, the lab's trace)


def worker(job_name, rounds, steps, trace_dir, out_jsonl, with_stack):
    for k, v in run_lab.WORKER_ENV.items():
        os.environ.setdefault(k, v)
    os.environ.setdefault("TEARDOWN_CUPTI", "1")  # before torch is imported
    import torch
    job = run_lab.load_job_module(job_name).build("base")
    run_lab.steps(torch, job, max(5, job.warmup_steps))
    for r in range(rounds):
        line = {"job": job_name, "round": r, "probe_before_ns": run_lab.host_probe_ns(torch)}
        job.drain()
        line["unprofiled_ms"] = round(run_lab.steps(torch, job, steps), 4)
        line["probe_mid_ns"] = run_lab.host_probe_ns(torch)
        name = f"{job_name}__r{r}.pt.trace.json.gz"
        t0 = time.perf_counter()
        run_lab.trace_one(torch, job, os.path.join(trace_dir, name), quick=False)
        line["trace"], line["trace_s"] = name, round(time.perf_counter() - t0, 2)
        line["probe_after_ns"] = run_lab.host_probe_ns(torch)
        if with_stack:
            line["trace_stack"] = f"{job_name}__r{r}_stack.pt.trace.json.gz"
            run_lab.trace_one(torch, job, os.path.join(trace_dir, line["trace_stack"]), quick=False, with_stack=True)
            line["probe_after_stack_ns"] = run_lab.host_probe_ns(torch)
        line["gpu"], line["torch"] = torch.cuda.get_device_name(0), torch.__version__
        with open(out_jsonl, "a") as f:
            f.write(json.dumps(line) + "\n")
        print(f"[{job_name}] round {r}: {line['unprofiled_ms']:.3f} ms/step un-profiled, probes "
              f"{line['probe_before_ns']}/{line['probe_mid_ns']}/{line['probe_after_ns']} ns", flush=True)
    job.close()


def pack(trace_dir, out):
    files = sorted(f for f in os.listdir(trace_dir) if f.endswith(".pt.trace.json.gz"))
    k, size, tar = 0, 0, None
    for f in files:
        n = os.path.getsize(os.path.join(trace_dir, f))
        if tar is None or size + n > run_lab.TAR_LIMIT - 64 * 1024:
            if tar:
                tar.close()
            k, size = k + 1, 0
            tar = tarfile.open(os.path.join(out, f"speed_traces_{k}.tar"), "w")
        tar.add(os.path.join(trace_dir, f), arcname=f)
        size += n + 1024
    if tar:
        tar.close()
    return k


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--jobs", required=True, help="comma-separated lab jobs (validation/jobs)")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--steps", type=int, default=30, help="un-profiled steps timed per round")
    ap.add_argument("--job-timeout", type=int, default=150, help="seconds per job's process")
    ap.add_argument("--with-stack", action="store_true", help="each round also traced with Python frames")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--trace-dir", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.rounds < 1 or a.steps < 1:
        sys.exit("profiler_speed_probe: --rounds and --steps must be at least 1")
    out_jsonl = os.path.join(a.out, "profiler_speed.jsonl")
    if a.worker:
        worker(a.worker, a.rounds, a.steps, a.trace_dir, out_jsonl, a.with_stack)
        return
    names = [j for j in a.jobs.split(",") if j]
    unknown = [j for j in names if j not in run_lab.job_names()]
    if unknown:
        sys.exit(f"profiler_speed_probe: unknown jobs {unknown}")
    os.makedirs(a.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="speed_") as scratch:
        for j in names:
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", j, "--out", a.out, "--jobs", j,
                   "--rounds", str(a.rounds), "--steps", str(a.steps), "--trace-dir", scratch] + \
                  (["--with-stack"] if a.with_stack else [])
            try:
                rc = subprocess.run(cmd, timeout=a.job_timeout).returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
            if rc != 0:
                print(f"[{j}] process ended with {rc}", flush=True)
        print(f"packed {pack(scratch, a.out)} tar(s)", flush=True)


if __name__ == "__main__":
    main()

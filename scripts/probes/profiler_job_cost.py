#!/usr/bin/env python3
"""What torch.profiler costs on the host for real training steps, per option (issue 17, the un-profiled
step). profiler_event_cost.py measured one-input toy operators; this measures the validation jobs' own
steps (scripts/validation/whatif_jobs.py builds them), so the cost per event comes from operators with real inputs,
launches under them and the jobs' own Python frames.

For each (job, variant), in a fresh process (TEARDOWN_CUPTI=1, as whatif_jobs.py runs its jobs): build the
variant, warm it up, then R rounds; in each round a probe of the host's speed (median ns of a 1-element
CPU torch.add) and then every configuration timed for S steps, the configurations' order rotated round by
round so a drift of the host's speed falls on each alike:
  none      no profiler
  default   CPU + CUDA activities
  shapes    + record_shapes
  stack     + with_stack
  memory    + profile_memory
Each step is bracketed by torch.cuda.synchronize() + perf_counter_ns (as the validation set times it); under
the profiler the step is one of an active window of S steps after one warm-up step (not exported). Then one
trace of 3 active steps per profiled configuration counts the events per step the replay sees: operators
(cpu_op), annotations, Python function events, runtime and driver calls, kernels, copies and sets, memory
instant events, and the operators' recorded inputs (record_shapes' Input Dims entries).

Only host-bound steps show the profiler's host cost in the step time: the variants below are the validation
set's host-bound ones (GPU kernel time well under the un-profiled step).
Writes one JSON line per (job, variant) to OUT/profiler_job_cost.jsonl as each finishes.
  python3 scripts/probes/profiler_job_cost.py --out DIR [--rounds 5] [--steps 8] [--only job/variant,...]
"""
import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "validation"))  # whatif_jobs.py
import whatif_jobs as W  # noqa: E402  (the jobs' builders; torch is imported by W._imports())

VARIANTS = [
    "gpt_launch_bound/base", "foreach_false_optimizer/base", "gpt_fp32_naive/bf16", "mask_nonzero/bf16",
    "grad_accum_fp16/base", "pageable_copies/pinned+bf16", "gpt_fp32_naive/bf16+sdpa",
    "foreach_false_optimizer/fused", "resnet_fp32/bf16_channels_last", "accum_bf16_large/base",
    "loader_bound/bf16", "ckpt_large/base", "item_sync/log_every_100", "grad_accum_fp16/microbatch8_no_accum",
]
CONFIGS = {
    "none": None,
    "default": dict(record_shapes=False, with_stack=False, profile_memory=False),
    "shapes": dict(record_shapes=True, with_stack=False, profile_memory=False),
    "stack": dict(record_shapes=False, with_stack=True, profile_memory=False),
    "memory": dict(record_shapes=False, with_stack=False, profile_memory=True),
}


def count_events(runner, popts, keep=None):
    """Events per traced step (3 active steps after wait=1 warmup=1), by the kinds the replay charges.
    keep: a path to keep the trace at, gzipped (else it is removed)."""
    tmp = W.export_trace(runner, popts)
    with open(tmp) as f:
        ev = json.load(f)["traceEvents"]
    if keep:
        with open(tmp, "rb") as f, gzip.open(keep, "wb") as g:
            g.write(f.read())
    os.remove(tmp)
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in ev  # the host's step ranges (not the GPU-side copies)
             if e.get("ph") == "X" and e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("ProfilerStep#")]
    n = max(1, len(steps))

    def inside(e):
        t = e.get("ts")
        return t is not None and any(a <= t <= b for a, b in steps)

    k = dict(cpu_op=0, user_annotation=0, python_function=0, cuda_runtime=0, cuda_driver=0, kernel=0,
             gpu_memcpy=0, gpu_memset=0, memory_events=0, op_inputs=0)
    for e in ev:
        if not inside(e):
            continue
        cat = e.get("cat", "")
        if e.get("ph") == "X" and cat in k and not str(e.get("name", "")).startswith("ProfilerStep#"):
            k[cat] += 1
            if cat == "cpu_op":
                k["op_inputs"] += len((e.get("args") or {}).get("Input Dims") or [])
        elif e.get("ph") == "i" and e.get("name") == "[memory]":
            k["memory_events"] += 1
    return {key: round(v / n, 1) for key, v in k.items()}


def run_one(spec, rounds, steps, out, keep_dir=None):
    job, variant = spec.split("/")
    W._imports()
    torch = W.torch
    torch.cuda.init()
    fixes = W.JOBS[job]["variants"][variant]
    t0 = time.time()
    r, _, _ = W.build(job, fixes)
    W.time_steps(r, 8)
    names = list(CONFIGS)
    got = {c: [] for c in names}
    probes = []
    for rd in range(rounds):
        probes.append(W.host_probe(1000))
        order = names[rd % len(names):] + names[:rd % len(names)]
        for c in order:
            ts = W.time_steps(r, steps) if CONFIGS[c] is None else W.time_profiled(r, CONFIGS[c], steps)
            got[c].append(int(statistics.median(ts)))
    def keep(c):
        return os.path.join(keep_dir, f"{job}__{variant}__{c}.pt.trace.json.gz") if keep_dir else None
    counts = {c: count_events(r, CONFIGS[c], keep(c)) for c in names if CONFIGS[c] is not None}
    r.close()
    med = {c: int(statistics.median(v)) for c, v in got.items()}
    line = dict(job=job, variant=variant, trace_profiler=W.JOBS[job]["profiler"], rounds=rounds, steps=steps,
                step_ns=med, rounds_ns=got, host_probe_ns=probes, events_per_step=counts,
                seconds=round(time.time() - t0, 1), torch=torch.__version__, gpu=torch.cuda.get_device_name(0))
    with open(out, "a") as f:
        f.write(json.dumps(line) + "\n")
    base = med["none"]
    print(f"{spec:42s} none {base / 1e6:7.2f} ms  " +
          "  ".join(f"{c} +{(med[c] - base) / 1e6:6.2f}" for c in names[1:]) +
          f"  ops {counts['default']['cpu_op']:.0f}  ({time.time() - t0:.0f} s)", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for profiler_job_cost.jsonl (appended to)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=8, help="timed steps per configuration and round")
    ap.add_argument("--only", default=",".join(VARIANTS), help="comma-separated job/variant list")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per variant's process")
    ap.add_argument("--budget", type=int, default=0, help="stop starting variants after this many seconds (0: none)")
    ap.add_argument("--keep-traces", metavar="DIR",
                    help="keep each configuration's trace there, gzipped (JOB__VARIANT__CONFIG.pt.trace.json.gz): "
                         "scripts/probes/option_trace_score.py scores the replay's un-profiled estimate of each against 'none'")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one job/variant in this process
    a = ap.parse_args()
    if a.rounds < 1 or a.steps < 1:
        sys.exit("profiler_job_cost: --rounds and --steps must be at least 1")
    os.makedirs(a.out, exist_ok=True)
    out = os.path.join(a.out, "profiler_job_cost.jsonl")
    if a.keep_traces:
        os.makedirs(a.keep_traces, exist_ok=True)
    if a.one:
        run_one(a.one, a.rounds, a.steps, out, a.keep_traces)
        return
    specs = [s for s in a.only.split(",") if s]
    for s in specs:
        job, _, variant = s.partition("/")
        if job not in W.JOBS or variant not in W.JOBS[job]["variants"]:
            sys.exit(f"profiler_job_cost: unknown job/variant {s}")
    env = dict(os.environ)
    env.setdefault("TEARDOWN_CUPTI", "1")
    t_all = time.time()
    for s in specs:
        if a.budget and time.time() - t_all > a.budget:
            print(f"budget of {a.budget} s spent; not started: {s}", flush=True)
            continue
        cmd = [sys.executable, os.path.abspath(__file__), "--one", s, "--out", a.out,
               "--rounds", str(a.rounds), "--steps", str(a.steps)] + (["--keep-traces", a.keep_traces] if a.keep_traces else [])
        try:
            rc = subprocess.run(cmd, timeout=a.timeout, env=env).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        if rc != 0:
            print(f"{s}: process ended with {rc}", flush=True)
    print(f"all in {time.time() - t_all:.0f} s", flush=True)


if __name__ == "__main__":
    main()

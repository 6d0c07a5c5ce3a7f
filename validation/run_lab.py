#!/usr/bin/env python3
"""Validation lab driver: times and traces every job of validation/jobs/ on one GPU.

    python3 validation/run_lab.py --out DIR [--jobs a,b | --shard 1/3] [--variants base,bf16]
                                  [--mode time|trace|both] [--proc-tag A] [--rounds 3] [--steps N]
                                  [--budget-s 540] [--quick]
    python3 validation/run_lab.py --list          # the jobs, their kind and variants (no torch needed)

The driver starts one process per job (this script with --worker JOB), so jobs never share state; a job that
fails or runs past its timeout is recorded with its error and the driver goes on. Per job process:

  timing (mode time/both)  every variant built up front and warmed up (>= 5 steps, compile jobs more); then
      R interleaved rounds, the variants' order rotated each round; in a round, per variant: a probe of
      the host's speed (host_probe_ns, kept beside the round), drain its loader (Job.drain),
      torch.cuda.synchronize(), t0, N x job.step(), torch.cuda.synchronize(), t1; ms/step = (t1 - t0) / N. The steps themselves never synchronize. N: 3 steps measured per variant
      after warm-up, N = round-s / median step, clamped to [10, 60] (or --steps).
      With --profiled, each round also times the same N steps under an active profiler, with the
      traces' options and a prof.step() after each step, nothing exported: the profiler's cost on this
      job, in this process (profiled and plain alternate which goes first, round by round). --profiled
      cpu+cuda,cpu,cuda times each listed set of activities in turn: the operators' side of the cost
      (CPU: RecordFunction) apart from CUPTI's (CUDA: runtime callbacks and GPU records).
  tracing (mode trace/both, after the timing, TEARDOWN_CUPTI=1 set before torch is imported): per variant,
      drain, 5 steps, then torch.profiler.profile(CPU + CUDA, schedule wait=1 warmup=2 active=5 (2 W + 2 for
      a DataLoader of W workers), record_shapes=False) with prof.step() after each step and no synchronize; the trace is written to
      <job>__<variant>.pt.trace.json and gzipped.

Outputs in DIR (at most 8 files, what one remote command can bring back):
  results_<tag>.jsonl     one JSON line per job (written as each job ends)
  traces_<tag>_<k>.tar    plain tars of the .pt.trace.json.gz files, each tar <= 15 MB, k numbered after the
                          tars of that tag already in DIR (a second run adds its own); base traces are packed
                          first; each run's first tar also holds traces_manifest.json (what went where, what
                          did not fit). With --shard K/N the name is traces_<tag>_s<K>_<k>.tar.
Loose traces and the workers' partial results live in a scratch directory outside DIR, removed at the end
(--keep-scratch keeps it).

Budget: the whole run stays inside --budget-s (default 540 s; one remote command may run 600 s). Each job
gets max(30, remaining / jobs_left * 1.5, 1.5 x its TIME_HINT_S) seconds, capped at what remains; a job
whose TIME_HINT_S no longer fits is skipped and recorded as skipped.
"""
import argparse
import ast
import io
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS_DIR = os.path.join(HERE, "jobs")
WORKER_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "HF_HUB_OFFLINE": "1",
              "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONUNBUFFERED": "1"}
TAR_LIMIT = 15_000_000   # bytes per tar (below 15 MiB as well as 15 MB)
MAX_TARS = 6
EXIT_GRACE_S = 15         # a worker that finished gets this long to exit
PACK_RESERVE_S = 15      # kept back from the budget for packing the traces
MIN_JOB_S = 20           # below this much time left, no job is started
META_KEYS = ("DESC", "KIND", "VARIANTS", "VARIANT_NOTES", "SCORE_AS", "TIME_HINT_S")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------------
# Job metadata, read without importing the job (the driver never imports torch)
# ----------------------------------------------------------------------------------------------------
def job_names():
    return sorted(f[:-3] for f in os.listdir(JOBS_DIR) if f.endswith(".py") and not f.startswith("_"))


def job_meta(name, variants=None):
    """The job file's literal module-level constants (DESC, KIND, VARIANTS, ...). With `variants` (a list of
    names), VARIANTS keeps only those the job has, and TIME_HINT_S shrinks in proportion."""
    with open(os.path.join(JOBS_DIR, name + ".py")) as f:
        tree = ast.parse(f.read())
    meta = {"VARIANT_NOTES": {}, "SCORE_AS": {}, "TIME_HINT_S": 20}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            key = node.targets[0].id
            if key in META_KEYS:
                meta[key] = ast.literal_eval(node.value)
    if variants:
        every = meta["VARIANTS"]
        meta["VARIANTS"] = {v: fx for v, fx in every.items() if v in variants}
        meta["TIME_HINT_S"] = max(10, meta["TIME_HINT_S"] * len(meta["VARIANTS"]) / max(1, len(every)))
    return meta


# ----------------------------------------------------------------------------------------------------
# Worker: one job, all its variants, in this process
# ----------------------------------------------------------------------------------------------------
def load_job_module(name):
    import importlib.util
    sys.path.insert(0, HERE)  # `import common` from the job files
    spec = importlib.util.spec_from_file_location(f"lab_job_{name}", os.path.join(JOBS_DIR, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def new_record(name, meta, tag):
    """The results line of a job before anything ran (also what a failed or skipped job reports)."""
    variants = {v: {"fixes": list(fx), "round_ms": [], "host_probe_ns": [], "median_ms": None, "profiled_round_ms": [],
                    "profiled_median_ms": None, "profiled_cpu_round_ms": [], "profiled_cuda_round_ms": [], "samples_per_step": None,
                    "notes": meta["VARIANT_NOTES"].get(v), "score_as": meta["SCORE_AS"].get(v), "error": None,
                    "trace": None} for v, fx in meta["VARIANTS"].items()}
    return {"job": name, "kind": meta["KIND"], "desc": meta["DESC"], "proc": tag, "variants": variants,
            "steps_per_round": None, "error": None, "torch": None, "gpu": None, "host_cpus": os.cpu_count(),
            "build_s": None}


def write_json_atomic(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path)


def steps(torch, job, n, after_step=None):
    """n steps bracketed by synchronize, after_step() after each (timed with it); ms per step."""
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        job.step()
        if after_step:
            after_step()
    torch.cuda.synchronize()
    return (time.perf_counter_ns() - t0) / n / 1e6


def host_probe_ns(torch, n=2000):
    """The host's speed now: the median ns of a 1-element CPU torch.add over 3 runs of n (the lab machine's
    host runs at speeds up to 2x apart between processes and within one). Recorded before each timed round."""
    a, b = torch.ones(1), torch.ones(1)
    runs = []
    for _ in range(3):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            torch.add(a, b)
        runs.append((time.perf_counter_ns() - t0) / n)
    return round(statistics.median(runs), 1)


def build_all(torch, mod, rec, quick):
    """Builds and warms up every variant; a variant that fails is recorded and left out."""
    jobs = {}
    t0 = time.perf_counter()
    for v in rec["variants"]:
        try:
            job = mod.build(v)
            rec["variants"][v]["samples_per_step"] = job.samples_per_step
            steps(torch, job, 2 if quick else max(5, job.warmup_steps))
            jobs[v] = job
            log(f"  [{rec['job']}] built + warmed up {v} ({time.perf_counter() - t0:.1f} s so far)")
        except Exception as ex:
            rec["variants"][v]["error"] = "build: " + traceback.format_exc()[-1500:]
            log(f"  [{rec['job']}] {v}: build FAILED: {ex!r}")
            torch.cuda.empty_cache()
    rec["build_s"] = round(time.perf_counter() - t0, 2)
    return jobs


def pick_n(torch, jobs, args):
    """Steps per round: --steps, 3 in --quick, else round-s over the median variant's step, in [10, 60]."""
    if args.quick:
        return 3
    if args.steps:
        return args.steps
    probe = []
    for job in jobs.values():
        job.drain()  # else the probe reads batches prefetched during warm-up and picks too many steps
        probe.append(steps(torch, job, 3))
    return int(min(60, max(10, round(args.round_s * 1000 / max(statistics.median(probe), 1e-3)))))


# The traces' warm-up steps (recorded, not kept: the tracer's first records cost more), also before the
# profiled rounds' timed steps.
TRACE_WARMUP, TRACE_ACTIVE = 2, 5  # the traces' schedule: warm-up and active steps

# --profiled's sets of activities, and where each one's rounds are recorded.
PROFILED_SETS = {"cpu+cuda": "profiled_round_ms", "cpu": "profiled_cpu_round_ms", "cuda": "profiled_cuda_round_ms"}


def profiled_sets(value):
    sets = [v.strip() for v in value.split(",") if v.strip()]
    bad = [v for v in sets if v not in PROFILED_SETS]
    if bad or not sets:
        raise argparse.ArgumentTypeError(f"unknown activity sets {bad or value!r}; known: {', '.join(PROFILED_SETS)}")
    return sets


def profiled_steps(torch, job, n, activities="cpu+cuda"):
    """n steps under the profiler (the traces' options, a prof.step() after each), bracketed by synchronize
    inside one active window; ms per step. Nothing is exported. activities: a key of PROFILED_SETS.
    The schedule opens with a wait step: a session with wait=0 after an earlier one in the process records
    the operators but no CUDA activity (scripts/probes/profiler_wait0_check.py); and the window is one
    step longer than the timed steps, so the tracer's collection at its end falls outside the timing."""
    prof_mod = torch.profiler
    acts = [a for name, a in (("cpu", prof_mod.ProfilerActivity.CPU), ("cuda", prof_mod.ProfilerActivity.CUDA))
            if name in activities.split("+")]
    with prof_mod.profile(activities=acts,
                          schedule=prof_mod.schedule(wait=1, warmup=TRACE_WARMUP, active=n + 1, repeat=1),
                          record_shapes=False) as prof:
        for _ in range(1 + TRACE_WARMUP):
            job.step()
            prof.step()
        return steps(torch, job, n, prof.step)


def time_rounds(torch, jobs, rec, args):
    """R interleaved rounds, the order rotated each round; every round's ms/step recorded (and, with
    --profiled, the same steps' time under the profiler)."""
    n = pick_n(torch, jobs, args)
    rec["steps_per_round"] = n
    rounds = 1 if args.quick else args.rounds
    names = list(jobs)
    for r in range(rounds):
        k = r % max(1, len(names))
        for v in names[k:] + names[:k]:
            if v not in jobs:
                continue
            try:
                e = rec["variants"][v]
                sets = args.profiled or []
                sets = sets[r % len(sets):] + sets[:r % len(sets)] if sets else []
                order = ([None] + sets) if r % 2 == 0 else (sets + [None])
                for profiled in order:
                    probe = None if profiled else host_probe_ns(torch)  # before the drain: no head start
                    jobs[v].drain()
                    if profiled:
                        e[PROFILED_SETS[profiled]].append(round(profiled_steps(torch, jobs[v], n, profiled), 4))
                    else:
                        e["host_probe_ns"].append(probe)
                        e["round_ms"].append(round(steps(torch, jobs[v], n), 4))
            except Exception as ex:
                rec["variants"][v]["error"] = f"round {r}: " + traceback.format_exc()[-1500:]
                log(f"  [{rec['job']}] {v}: round {r} FAILED: {ex!r}")
                close_quietly(jobs.pop(v))
    for v, e in rec["variants"].items():
        if e["round_ms"]:
            e["median_ms"] = round(statistics.median(e["round_ms"]), 4)
            log(f"  [{rec['job']}] {v:32s} {e['median_ms']:9.3f} ms/step  rounds {e['round_ms']}")
        if e["profiled_round_ms"]:
            e["profiled_median_ms"] = round(statistics.median(e["profiled_round_ms"]), 4)
        for name, key in PROFILED_SETS.items():
            if e[key]:
                log(f"  [{rec['job']}] {v:32s} {statistics.median(e[key]):9.3f} ms/step profiled {name:8s} "
                    f"rounds {e[key]}")


def trace_one(torch, job, path_gz, quick, with_stack=False):
    """Steady state (drain + 5 steps), then the profiled steps (TRACE_ACTIVE, or the job's trace_active:
    a DataLoader pool's period needs two of its bursts); writes the gzipped Kineto trace
    (with_stack: Python frames recorded too, as some users trace; the lab's own traces have none)."""
    import gzip
    import shutil
    job.drain()
    for _ in range(5):
        job.step()
    warm, active = (1, 2) if quick else (TRACE_WARMUP, max(TRACE_ACTIVE, job.trace_active))
    path_json = path_gz[:-3]
    prof_mod = torch.profiler
    with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CPU, prof_mod.ProfilerActivity.CUDA],
                          schedule=prof_mod.schedule(wait=1, warmup=warm, active=active, repeat=1),
                          record_shapes=False, with_stack=with_stack,
                          on_trace_ready=lambda p: p.export_chrome_trace(path_json)) as prof:
        for _ in range(1 + warm + active):
            job.step()
            prof.step()  # closes ProfilerStep#N; no synchronize inside the profiled steps
    with open(path_json, "rb") as src, gzip.open(path_gz, "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(path_json)


def trace_all(torch, jobs, rec, args):
    for v, job in jobs.items():
        name = f"{rec['job']}__{v}.pt.trace.json.gz"
        t0 = time.perf_counter()
        try:
            before = host_probe_ns(torch)
            trace_one(torch, job, os.path.join(args.trace_dir, name), args.quick)
            # the host's speed on either side of the trace: a host-bound trace replays at the speed it ran
            rec["variants"][v]["trace_host_probe_ns"] = [before, host_probe_ns(torch)]
            rec["variants"][v]["trace"] = name
            log(f"  [{rec['job']}] traced {v} ({time.perf_counter() - t0:.1f} s)")
        except Exception as ex:
            e = rec["variants"][v]
            e["error"] = (e["error"] + "; " if e["error"] else "") + "trace: " + traceback.format_exc()[-1500:]
            log(f"  [{rec['job']}] {v}: trace FAILED: {ex!r}")
        write_json_atomic(args.part, rec)


def close_quietly(job):
    try:
        job.close()
    except Exception:
        pass


def worker_main(args):
    for k, v in WORKER_ENV.items():
        os.environ.setdefault(k, v)
    os.environ.setdefault("TEARDOWN_CUPTI", "1")  # before torch is imported: Kineto reads it at load
    meta = job_meta(args.worker, args.variants)
    rec = new_record(args.worker, meta, args.proc_tag)
    write_json_atomic(args.part, rec)
    jobs = {}
    try:
        import torch
        rec["torch"], rec["gpu"] = torch.__version__, torch.cuda.get_device_name(0)
        mod = load_job_module(args.worker)
        jobs = build_all(torch, mod, rec, args.quick)
        write_json_atomic(args.part, rec)
        if args.mode in ("time", "both") and jobs:
            time_rounds(torch, jobs, rec, args)
            write_json_atomic(args.part, rec)
        if args.mode in ("trace", "both") and jobs:
            trace_all(torch, jobs, rec, args)
    except Exception:
        rec["error"] = traceback.format_exc()[-2000:]
        log(f"  [{args.worker}] FAILED:\n{rec['error']}")
    finally:
        for job in jobs.values():
            close_quietly(job)
        rec["finished"] = True  # the driver stops waiting for an exit that hangs (interpreter teardown)
        write_json_atomic(args.part, rec)
    return 1 if rec["error"] else 0


# ----------------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------------
def select_jobs(args):
    names = job_names()
    if args.jobs:
        want = [j.strip() for j in args.jobs.split(",") if j.strip()]
        unknown = [j for j in want if j not in names]
        if unknown:
            sys.exit(f"unknown jobs: {unknown}; known: {names}")
        names = want
    if args.shard:
        k, n = (int(x) for x in args.shard.split("/"))
        names = names[k - 1::n]
    return names


def worker_cmd(name, args, part, trace_dir):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, "--mode", args.mode,
           "--proc-tag", args.proc_tag, "--rounds", str(args.rounds), "--round-s", str(args.round_s),
           "--part", part, "--trace-dir", trace_dir]
    if args.steps:
        cmd += ["--steps", str(args.steps)]
    if args.quick:
        cmd.append("--quick")
    if args.profiled:
        cmd += ["--profiled", ",".join(args.profiled)]
    if args.variants:
        cmd += ["--variants", ",".join(args.variants)]
    return cmd


def finished(part):
    try:
        with open(part) as f:
            return bool(json.load(f).get("finished"))
    except (OSError, ValueError):
        return False


def wait_worker(p, part, timeout):
    """The worker's exit status; None when it ran past `timeout`. A worker whose record says it finished
    but whose process has not exited EXIT_GRACE_S later (a hang in the interpreter's or CUDA's teardown)
    counts as exited with 0. Either way its process group (its DataLoader workers too) is killed."""
    t0, done_at, rc = time.monotonic(), None, None
    while rc is None and time.monotonic() - t0 < timeout:
        try:
            rc = p.wait(timeout=1)
        except subprocess.TimeoutExpired:
            if done_at is None and finished(part):
                done_at = time.monotonic()
            if done_at is not None and time.monotonic() - done_at > EXIT_GRACE_S:
                log(f"  worker finished but did not exit in {EXIT_GRACE_S:.0f} s: killed")
                rc = 0
    try:
        os.killpg(p.pid, signal.SIGKILL)  # the worker and its DataLoader workers (its process group)
    except ProcessLookupError:
        pass
    p.wait()
    return rc


def run_one(name, meta, args, timeout, scratch):
    """One job in its own process (own session, so a timeout kills its loader workers too)."""
    part = os.path.join(scratch, f"{name}.part.json")
    env = dict(os.environ, **{k: os.environ.get(k, v) for k, v in WORKER_ENV.items()})
    env.setdefault("TEARDOWN_CUPTI", "1")
    p = subprocess.Popen(worker_cmd(name, args, part, os.path.join(scratch, "traces")), env=env,
                         stdout=sys.stderr, stderr=sys.stderr, start_new_session=True)
    error, rc = None, wait_worker(p, part, timeout)
    if rc is None:
        error = f"timed out after {timeout:.0f} s (what it had measured is kept)"
    rec = new_record(name, meta, args.proc_tag)
    if os.path.exists(part):
        with open(part) as f:
            rec = json.load(f)
    if error:
        rec["error"] = error + ("; " + rec["error"] if rec.get("error") else "")
    elif rc != 0 and not rec.get("error"):
        rec["error"] = f"worker exited with status {rc}"
    return rec


def job_timeout(meta, remaining, left, mode, profiled=False):
    """max(30, fair share x 1.5, 1.5 x the job's own estimate), capped at what remains; None: skip it.
    Each set of profiled rounds adds about the timing's share (0.7 of the estimate)."""
    need = meta["TIME_HINT_S"] * ((0.7 if mode == "time" else 1.0) + 0.7 * len(profiled or []))
    if remaining < max(MIN_JOB_S, need):
        return None
    return min(remaining, max(30.0, remaining / left * 1.5, 1.5 * need))


def drive(args, names, scratch):
    results = os.path.join(args.out, f"results_{args.proc_tag}.jsonl")
    start = time.monotonic()
    reserve = PACK_RESERVE_S if args.mode != "time" else 2
    status = {"ok": [], "failed": [], "skipped": []}
    for i, name in enumerate(names):
        meta = job_meta(name, args.variants)
        remaining = args.budget_s - (time.monotonic() - start) - reserve
        timeout = job_timeout(meta, remaining, len(names) - i, args.mode, args.profiled)
        if timeout is None:
            rec = new_record(name, meta, args.proc_tag)
            rec["error"] = f"skipped: {remaining:.0f} s of the budget left, the job needs ~{meta['TIME_HINT_S']} s"
            log(f"[{i + 1}/{len(names)}] {name}: SKIPPED ({rec['error']})")
        else:
            log(f"[{i + 1}/{len(names)}] {name} ({meta['KIND']}, {len(meta['VARIANTS'])} variants): "
                f"timeout {timeout:.0f} s, {remaining:.0f} s of the budget left")
            t0 = time.monotonic()
            rec = run_one(name, meta, args, timeout, scratch)
            rec["wall_s"] = round(time.monotonic() - t0, 1)
            bad = [v for v, e in rec["variants"].items() if e.get("error")]
            log(f"[{i + 1}/{len(names)}] {name}: {'FAILED' if rec['error'] else 'ok'} in {rec['wall_s']:.1f} s"
                + (f": {rec['error'].strip().splitlines()[-1][:200]}" if rec["error"] else "")
                + (f" (variants with errors: {bad})" if bad else ""))
        status["skipped" if rec["error"] and rec["error"].startswith("skipped") else
               "failed" if rec["error"] else "ok"].append(name)
        with open(results, "a") as f:
            f.write(json.dumps(rec) + "\n")
    log(f"done in {time.monotonic() - start:.0f} s: {len(status['ok'])} ok, failed {status['failed']}, "
        f"skipped {status['skipped']}; results in {results}")


def tar_size(sizes):
    """Bytes a plain tar of members of these sizes takes: 512-byte header + data padded to 512, then
    two zero blocks, the whole padded to tarfile's 10240-byte record."""
    body = sum(512 + -(-s // 512) * 512 for s in sizes) + 1024
    return -(-body // 10240) * 10240


def plan_tars(files, manifest_room=64 * 1024):
    """First-fit of (name, size) into at most MAX_TARS tars of TAR_LIMIT bytes, base traces first."""
    tars, left_out = [], []
    for name, size in sorted(files, key=lambda f: ("__base." not in f[0], f[0])):
        for t in tars:
            extra = manifest_room if t is tars[0] else 0
            if tar_size([s for _, s in t] + [size, extra]) <= TAR_LIMIT:
                t.append((name, size))
                break
        else:
            if len(tars) < MAX_TARS and tar_size([size, manifest_room if not tars else 0]) <= TAR_LIMIT:
                tars.append([(name, size)])
            else:
                left_out.append({"trace": name, "bytes": size, "why": "no room in the tars"})
    return tars, left_out


def pack_traces(trace_dir, out, tag):
    """Packs the traces into traces_<tag>_<k>.tar (tag includes the shard, e.g. A_s2, when --shard is given),
    k numbered after the tars of that tag already in `out`: a second run into the same folder adds its own."""
    if not os.path.isdir(trace_dir):
        return
    files = [(f, os.path.getsize(os.path.join(trace_dir, f))) for f in os.listdir(trace_dir)
             if f.endswith(".pt.trace.json.gz")]
    if not files:
        return
    tars, left_out = plan_tars(files)
    taken = [int(m.group(1)) for f in os.listdir(out) if (m := re.fullmatch(rf"traces_{re.escape(tag)}_(\d+)\.tar", f))]
    first = max(taken, default=0) + 1
    names = [f"traces_{tag}_{first + k}.tar" for k in range(len(tars))]
    manifest = {"proc": tag, "tars": {n: [m for m, _ in t] for n, t in zip(names, tars)}, "left_out": left_out}
    for k, (tname, members) in enumerate(zip(names, tars)):
        with tarfile.open(os.path.join(out, tname), "w", format=tarfile.GNU_FORMAT) as tf:
            if k == 0:
                data = json.dumps(manifest, indent=1).encode()
                info = tarfile.TarInfo("traces_manifest.json")
                info.size, info.mtime = len(data), int(time.time())
                tf.addfile(info, io.BytesIO(data))
            for m, _ in members:
                tf.add(os.path.join(trace_dir, m), arcname=m)
        size = os.path.getsize(os.path.join(out, tname))
        log(f"packed {len(members)} traces into {tname} ({size / 1e6:.1f} MB)"
            + ("  OVER THE LIMIT" if size > TAR_LIMIT else ""))
    for lo in left_out:
        log(f"left out of the tars: {lo['trace']} ({lo['bytes'] / 1e6:.1f} MB)")


def driver_main(args):
    names = select_jobs(args)
    if args.list:
        for n in names:
            m = job_meta(n)
            print(f"{n:30s} {m['KIND']:13s} " + ", ".join(f"{v}={fx}" for v, fx in m["VARIANTS"].items()))
        return 0
    if not args.out:
        sys.exit("--out DIR is needed")
    os.makedirs(args.out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=f"vlab_{args.proc_tag}_")
    os.makedirs(os.path.join(scratch, "traces"))
    log(f"{len(names)} jobs, mode {args.mode}, proc {args.proc_tag}, budget {args.budget_s:.0f} s, "
        f"scratch {scratch}")
    try:
        drive(args, names, scratch)
        shard = f"_s{args.shard.split('/')[0]}" if args.shard else ""
        pack_traces(os.path.join(scratch, "traces"), args.out, args.proc_tag + shard)
    finally:
        if not args.keep_scratch:
            import shutil
            shutil.rmtree(scratch, ignore_errors=True)
    return 0


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="directory for results_<tag>.jsonl and traces_<tag>_<k>.tar")
    ap.add_argument("--jobs", help="comma-separated job names (default: every job)")
    ap.add_argument("--shard", help="K/N: every N-th job starting at the K-th (after --jobs)")
    ap.add_argument("--mode", choices=("time", "trace", "both"), default="both")
    ap.add_argument("--proc-tag", default="A", help="names this run's results and tars (A, B, ...)")
    ap.add_argument("--variants", type=lambda v: [x.strip() for x in v.split(",") if x.strip()],
                    help="comma-separated variant names to run (default: every variant of each job), e.g. base")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=0, help="steps per round (default: automatic, 10-60)")
    ap.add_argument("--round-s", type=float, default=0.6, help="target seconds per variant and round")
    ap.add_argument("--budget-s", type=float, default=540.0)
    ap.add_argument("--quick", action="store_true", help="smoke test: 1 round of 3 steps, traces active=2")
    ap.add_argument("--profiled", nargs="?", const=["cpu+cuda"], type=profiled_sets,
                    help="time mode: each round also times the steps under an active profiler (nothing exported); "
                         "optionally the activity sets to time, e.g. cpu+cuda,cpu,cuda (default cpu+cuda)")
    ap.add_argument("--keep-scratch", action="store_true")
    ap.add_argument("--list", action="store_true", help="print the jobs and exit")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--part", help=argparse.SUPPRESS)
    ap.add_argument("--trace-dir", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main():
    args = parse_args()
    if args.worker:
        return worker_main(args)
    return driver_main(args)


if __name__ == "__main__":
    sys.exit(main())

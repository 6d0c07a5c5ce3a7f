"""What torch.profiler costs per recorded event, per option (issue 17: the un-profiled step is estimated
by removing the profiler's own cost from the trace; this measures that cost instead of fitting it).

Three host-bound workloads, each a step of K iterations:
  gpu_op   one tiny CUDA operator per iteration (an operator, a launch call, a kernel)
  cpu_op   one tiny CPU operator per iteration (an operator alone)
  py_call  a chain of D Python calls per iteration around one tiny CPU operator (Python frames)
Each is timed (perf_counter_ns around the step, synchronize at its end; median of 5 rounds of S steps,
the configurations interleaved round by round) without the profiler and under it with CPU+CUDA
activities and: nothing else, record_shapes, with_stack, profile_memory. One traced step of each
counts its events (operators, Python function events, runtime calls, kernels). The cost per event of
a kind is the added step time over the added events, from the workload that adds only that kind:
  per operator          cpu_op, default            (added time / operators)
  per launch            gpu_op minus cpu_op         (per call + kernel record)
  shapes per operator   cpu_op, record_shapes minus default
  per Python event      py_call, with_stack minus default, less cpu_op's (the stack per operator), over
                        the Python events it adds over cpu_op
  memory per operator   cpu_op with an allocation, profile_memory minus default
Prints one JSON line per (workload, configuration) and a summary line.
  python3 profiler_event_cost.py [--iters 200] [--depth 8] [--steps 20]
"""
import argparse
import json
import os
import statistics
import tempfile
import time

import torch
from torch.profiler import ProfilerActivity, profile

CONFIGS = {
    "none": None,
    "default": {},
    "record_shapes": dict(record_shapes=True),
    "with_stack": dict(with_stack=True),
    "profile_memory": dict(profile_memory=True),
}


def workloads(iters, depth):
    g = torch.zeros(16, device="cuda")
    c = torch.zeros(16)

    def gpu_op():
        for _ in range(iters):
            g.add_(1)

    def cpu_op():
        for _ in range(iters):
            c.add_(1)

    def cpu_alloc():  # an allocation per iteration (profile_memory records each)
        for _ in range(iters):
            torch.add(c, 1)

    def chain(n):
        if n == 0:
            c.add_(1)
            return
        chain(n - 1)

    def py_call():
        for _ in range(iters):
            chain(depth)

    return dict(gpu_op=gpu_op, cpu_op=cpu_op, cpu_alloc=cpu_alloc, py_call=py_call)


def run_steps(fn, steps, prof=None):
    ts = []
    for _ in range(steps):
        t0 = time.perf_counter_ns()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter_ns() - t0)
        if prof is not None:
            prof.step()
    return ts


def timed(fn, opts, steps):
    if opts is None:
        return run_steps(fn, steps)
    # wait=1: with wait=0, a session after an earlier one (TEARDOWN_CUPTI=1) records no CUDA activity
    # (scripts/probes/profiler_wait0_check.py); the figures committed before session 18 were measured so.
    sched = torch.profiler.schedule(wait=1, warmup=1, active=steps + 1)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched, **opts) as p:
        p.step()  # the wait step
        p.step()  # the warm-up step
        return run_steps(fn, steps, p)


def counts(fn, opts):
    path = os.path.join(tempfile.mkdtemp(), "t.json")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], **opts) as p:
        fn()
        torch.cuda.synchronize()
    p.export_chrome_trace(path)
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    k = {}
    for e in ev:
        if e.get("ph") == "X":
            k[e.get("cat", "")] = k.get(e.get("cat", ""), 0) + 1
    return dict(cpu_op=k.get("cpu_op", 0), python_function=k.get("python_function", 0),
                cuda_runtime=k.get("cuda_runtime", 0) + k.get("cuda_driver", 0), kernel=k.get("kernel", 0))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()
    torch.cuda.init()
    w = workloads(a.iters, a.depth)
    for fn in w.values():
        run_steps(fn, 5)
    rounds = {(wn, cn): [] for wn in w for cn in CONFIGS}
    for _ in range(5):
        for wn, fn in w.items():
            for cn, opts in CONFIGS.items():
                rounds[(wn, cn)].append(statistics.median(timed(fn, opts, a.steps)))
    step = {key: statistics.median(v) for key, v in rounds.items()}
    cnt = {(wn, cn): counts(fn, opts) for wn, fn in w.items() for cn, opts in CONFIGS.items() if opts is not None}
    for (wn, cn), v in step.items():
        print(json.dumps(dict(workload=wn, config=cn, iters=a.iters, depth=a.depth, step_ns=round(v),
                              rounds_ns=[round(x) for x in rounds[(wn, cn)]], events=cnt.get((wn, cn)),
                              torch=torch.__version__, gpu=torch.cuda.get_device_name(0))), flush=True)

    def added(wn, cn, base="none"):
        return step[(wn, cn)] - step[(wn, base)]

    ops = cnt[("cpu_op", "default")]["cpu_op"]
    per_op = added("cpu_op", "default") / ops
    launches = cnt[("gpu_op", "default")]["cuda_runtime"]
    per_launch = (added("gpu_op", "default") - per_op * cnt[("gpu_op", "default")]["cpu_op"]) / max(1, launches)
    shapes = (step[("cpu_op", "record_shapes")] - step[("cpu_op", "default")]) / ops
    stack_per_op = (step[("cpu_op", "with_stack")] - step[("cpu_op", "default")]) / ops
    py = cnt[("py_call", "with_stack")]["python_function"] - cnt[("cpu_op", "with_stack")]["python_function"]
    per_py = (step[("py_call", "with_stack")] - step[("py_call", "default")] -
              (step[("cpu_op", "with_stack")] - step[("cpu_op", "default")])) / max(1, py)
    mem_ops = cnt[("cpu_alloc", "default")]["cpu_op"]
    per_mem = (step[("cpu_alloc", "profile_memory")] - step[("cpu_alloc", "default")]) / max(1, mem_ops)
    print(json.dumps(dict(summary="profiler cost per event (ns)", per_operator=round(per_op),
                          per_launch_call=round(per_launch), record_shapes_per_operator=round(shapes),
                          with_stack_per_python_event=round(per_py), with_stack_per_operator=round(stack_per_op),
                          profile_memory_per_operator=round(per_mem))), flush=True)


if __name__ == "__main__":
    main()

"""What a forward and backward pass costs the host when only the model is graphed (issue 17's
cuda_graphs edit where GradScaler keeps the optimizer step eager): torch.cuda.make_graphed_callables
replaces the model's operators and launches with two graph replays per pass, but each call still
copies its inputs into static buffers, launches the graph, detaches one output per parameter, and
autograd still hands each parameter's gradient to .grad (an AccumulateGrad node per parameter).

For MLP stacks of L Linear+GELU layers (2 parameters each) with tensors so small that the host sets
the pace, fp16 autocast (cache disabled, as the CUDA-graphs docs require):

  eager:   out = model(x); loss = out.float().square().mean(); loss.backward()
  graphed: the same with model = make_graphed_callables(model, (x,))

--grads accumulate (the default) keeps adding into .grad, so each AccumulateGrad node launches an add;
--grads set_to_none runs model.zero_grad(set_to_none=True) after each pass, as training loops do (the
node then only assigns the new gradient), in both modes alike; zero_grad's own time is left out of the pass.

Each mode is timed per pass (wall time of N passes, synchronized at both ends: the GPU work is
microseconds) in R rounds that alternate the modes, with a probe of the host's speed (the median
of 200 one-element torch.add calls) before each round. One JSON line per configuration: the
median ns per pass of each mode, the parameters P, and the eager pass's recorded host events; and,
under `traced`, one profiled pass of each mode: its events, its wall time and the replay's host-speed
gauge over it (the host gap p25), so a trace's gauge can place the line on another host.
The replay's edit charges graphed_pass = a + b * P per backward pass (fit: scripts prints it).
  python3 graphed_callables_cost.py [--layers 2,8,24,64] [--rounds 7] [--passes 200] [--grads accumulate|set_to_none]
"""
import argparse
import bisect
import json
import statistics
import time

import torch
from torch.profiler import ProfilerActivity, profile

from probe_host import host_probe  # beside this script


def gap_p25(events):
    """The replay's host-speed gauge (ReplayModel::hostGapP25) over one profiled pass: per thread, the
    time before each recorded event since the thread's last event start or end; the 25th percentile, ns."""
    by_thread = {}
    for e in events:
        by_thread.setdefault(e.thread, []).append((e.time_range.start * 1000, e.time_range.end * 1000))
    gaps = []
    for evs in by_thread.values():
        evs.sort()
        ends = []  # sorted
        for i, (start, end) in enumerate(evs):
            k = bisect.bisect_right(ends, start)
            bounds = ([evs[i - 1][0]] if i else []) + ([ends[k - 1]] if k else [])
            if bounds:
                gaps.append(start - max(bounds))
            bisect.insort(ends, end)
    return statistics.quantiles(gaps, n=4)[0] if len(gaps) >= 4 else None


def make(layers, width):
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(width, width), torch.nn.GELU()]
    return torch.nn.Sequential(*mods).cuda()


def per_pass(fn, x, passes, zero=None):
    """ns per forward and backward pass; with `zero` (a module), its gradients are set to None after each
    pass, and that call's own time is left out (a training trace records zero_grad apart)."""
    zeroing = 0
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(passes):
        with torch.autocast("cuda", dtype=torch.float16, cache_enabled=False):
            out = fn(x)
        out.float().square().mean().backward()
        if zero is not None:
            z0 = time.perf_counter_ns()
            zero.zero_grad(set_to_none=True)
            zeroing += time.perf_counter_ns() - z0
    torch.cuda.synchronize()
    return (time.perf_counter_ns() - t0 - zeroing) / passes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", default="2,8,24,64")
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--passes", type=int, default=200)
    ap.add_argument("--grads", choices=("accumulate", "set_to_none"), default="accumulate",
                    help="what happens to .grad between passes (see above)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("graphed_callables_cost.py: no CUDA device")
    rows = []
    for layers in [int(v) for v in a.layers.split(",")]:
        torch.manual_seed(0)
        x = torch.randn(a.batch, a.width, device="cuda")
        eager = make(layers, a.width)
        graphed_model = make(layers, a.width)
        with torch.autocast("cuda", dtype=torch.float16, cache_enabled=False):
            graphed = torch.cuda.make_graphed_callables(graphed_model, (x.clone().requires_grad_(False),))
        params = sum(1 for p in eager.parameters() if p.requires_grad)
        zero = a.grads == "set_to_none"
        per_pass(eager, x, 20, eager if zero else None)
        per_pass(graphed, x, 20, graphed_model if zero else None)
        traced = {}
        for mode, fn, owner in (("eager", eager, eager), ("graphed", graphed, graphed_model)):
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                ns = per_pass(fn, x, 1, owner if zero else None)
            traced[mode] = dict(events=len(prof.events()), pass_ns=ns, gap_p25_ns=gap_p25(prof.events()))
        host_events = traced["eager"]["events"]
        t = {"eager": [], "graphed": []}
        probes = []
        for r in range(a.rounds):
            probes.append(host_probe())
            for mode in (("eager", "graphed") if r % 2 == 0 else ("graphed", "eager")):
                fn, owner = (eager, eager) if mode == "eager" else (graphed, graphed_model)
                t[mode].append(per_pass(fn, x, a.passes, owner if zero else None))
        row = dict(layers=layers, params=params, width=a.width, batch=a.batch, grads=a.grads, eager_host_events=host_events,
                   eager_pass_ns=statistics.median(t["eager"]), graphed_pass_ns=statistics.median(t["graphed"]),
                   eager_rounds_ns=t["eager"], graphed_rounds_ns=t["graphed"], host_probe_ns=probes, traced=traced,
                   torch=torch.__version__, gpu=torch.cuda.get_device_name())
        rows.append(row)
        print(json.dumps(row), flush=True)
    # graphed_pass = a + b * P, least squares over the configurations.
    ps = [r["params"] for r in rows]
    gs = [r["graphed_pass_ns"] for r in rows]
    if len(rows) >= 2:
        mp, mg = statistics.mean(ps), statistics.mean(gs)
        b = sum((p - mp) * (g - mg) for p, g in zip(ps, gs)) / sum((p - mp) ** 2 for p in ps)
        print(json.dumps(dict(fit="graphed_pass_ns = a + b * params", grads=a.grads, a=mg - b * mp, b=b)), flush=True)


if __name__ == "__main__":
    main()

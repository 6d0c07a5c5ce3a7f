"""What capturing a per-parameter optimizer step in a CUDA graph costs on the GPU (issue 17's
cuda_graphs edit): torch.cuda.graphs need capturable=True, whose per-parameter loop computes the
bias corrections on the GPU. For AdamW and Adam with foreach=False (--impl loop, the default) or
foreach=True (--impl foreach), P parameters of N elements:

  eager:   capturable=False, kernels per parameter and their summed GPU time per step (profiler)
  graphed: capturable=True, the step captured in a CUDA graph and replayed; GPU time per replay
           (CUDA events around 50 replays), and its kernel count (profiler over one replay)

Prints one JSON line per configuration: extra GPU ns per eager kernel = (graphed - eager) / eager
kernels, the figure the replay's edit uses for the loop, and extra GPU ns per parameter = (graphed -
eager) / P, the one it uses for foreach. Also prints the torch source lines of the capturable
branch, as the basis.
  python3 capturable_optimizer_cost.py [--impl loop|foreach] [--params 50,200] [--numel 1024,262144,1048576]
"""
import argparse
import inspect
import json

import torch
from torch.profiler import ProfilerActivity, profile


def kernels_of(prof):
    ks = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return len(ks), sum(e.device_time for e in ks) * 1e3  # device_time in us -> ns


def run(opt_name, p, n, impl):
    dev = torch.device("cuda")
    params = [torch.randn(n, device=dev, requires_grad=True) for _ in range(p)]
    for q in params:
        q.grad = torch.randn_like(q)
    cls = getattr(torch.optim, opt_name)
    kw = dict(lr=1e-3, foreach=impl == "foreach")
    if opt_name == "AdamW":
        kw["weight_decay"] = 0.01
    eager = cls(params, capturable=False, **kw)
    for _ in range(3):
        eager.step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        eager.step()
        torch.cuda.synchronize()
    ek, ens = kernels_of(prof)
    # Graphed, capturable: warm up on a side stream, capture one step, replay.
    params2 = [torch.randn(n, device=dev, requires_grad=True) for _ in range(p)]
    for q in params2:
        q.grad = torch.randn_like(q)
    opt = cls(params2, capturable=True, **kw)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            opt.step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        opt.step()
    for _ in range(5):
        g.replay()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    reps = 50
    a.record()
    for _ in range(reps):
        g.replay()
    b.record()
    torch.cuda.synchronize()
    graphed_ns = a.elapsed_time(b) * 1e6 / reps
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        g.replay()
        torch.cuda.synchronize()
    gk, gns = kernels_of(prof)
    return {"optimizer": opt_name, "impl": impl, "params": p, "numel": n, "eager_kernels": ek, "eager_kernel_ns": round(ens),
            "graphed_kernels": gk, "graphed_kernel_ns": round(gns), "graphed_replay_ns": round(graphed_ns),
            "extra_ns_per_eager_kernel": round((graphed_ns - ens) / ek, 1) if ek else None,
            "extra_ns_per_param": round((graphed_ns - ens) / p, 1),
            "kernels_per_param": [round(ek / p, 2), round(gk / p, 2)], "torch": torch.__version__}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--params", default="50,200")
    ap.add_argument("--numel", default="1024,262144,1048576")
    ap.add_argument("--impl", choices=["loop", "foreach"], default="loop")
    a = ap.parse_args()
    import torch.optim.adam as adam
    src = inspect.getsource(adam._single_tensor_adam).splitlines()
    keep = [l for l in src if "capturable" in l or "bias_correction" in l or "step_size" in l or "denom" in l or "step_t +=" in l]
    print(json.dumps({"source": "torch.optim.adam._single_tensor_adam", "lines": keep[:40]}))
    for opt_name in ("AdamW", "Adam"):
        for p in (int(x) for x in a.params.split(",")):
            for n in (int(x) for x in a.numel.split(",")):
                print(json.dumps(run(opt_name, p, n, a.impl)), flush=True)
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Summarize and check the what-if validation set made by scripts/validation/whatif_jobs.py (no torch needed).

    python3 scripts/validation/whatif_report.py testdata/whatif            # markdown table + checks on stdout
    python3 scripts/validation/whatif_report.py testdata/whatif --details  # also per-trace facts

For each trace it reads the raw events (ProfilerStep#N durations, kernel names and times, copies, syncs,
DataLoader fetches, optimizer kernels) and checks that each fix changed what it should (bf16 kernels
appear, the materialized softmax is gone with SDPA, pinned copies replace pageable ones, ...).
Exit status 1 if a check fails.
"""
import argparse
import collections
import gzip
import json
import os
import re
import statistics
import sys

# nvjet (cuBLAS's Hopper tensor-core GEMMs) in both its _h_ and _v_ forms: seen here only for bf16/fp16
# operands (matmul TF32 is off in these jobs; FP32 GEMMs run as sm80_xmma_gemm_f32f32 / cutlass simt sgemm)
HALF = re.compile(r"bf16|bfloat16|f16|fp16|half|_h_|__half|nvjet", re.I)
FP32_GEMM = re.compile(r"sgemm|f32f32|ffma|tf32|gemm.*f32|f32.*gemm|cutlass_80_simt", re.I)
MATRIX = re.compile(r"gemm|nvjet|xmma|cutlass|conv|fprop|dgrad|wgrad|implicit", re.I)
NOT_MATRIX = re.compile(r"nchwToNhwc|nhwcToNchw|bn_|batch_norm|sdpa|flash|fmha|attention", re.I)
ATTN_FUSED = re.compile(r"flash|fmha|sdpa|efficient_attention|mem_eff|attention", re.I)


def trace_facts(path):
    with gzip.open(path, "rt") as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    steps = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"
             and str(e.get("name", "")).startswith("ProfilerStep#")]
    nsteps = max(1, len(steps))
    kern = [e for e in ev if e.get("cat") == "kernel"]
    ktime = sum(e.get("dur", 0) for e in kern) or 1e-9
    mat = [e for e in kern if MATRIX.search(e["name"]) and not NOT_MATRIX.search(e["name"])]
    mtime = sum(e.get("dur", 0) for e in mat) or 1e-9
    names = collections.Counter()
    for e in kern:
        names[e["name"]] += e.get("dur", 0)
    cpu = collections.Counter(e["name"] for e in ev if e.get("cat") == "cpu_op")
    rt = collections.Counter(e["name"] for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver"))
    memcpy = collections.Counter(e["name"] for e in ev if e.get("cat") == "gpu_memcpy")
    loader = [e for e in ev if str(e.get("name", "")).startswith("enumerate(DataLoader)")]
    f = dict(
        steps=len(steps),
        traced_step_us=[round(e["dur"], 1) for e in sorted(steps, key=lambda e: e["ts"])],
        kernels_per_step=len(kern) / nsteps,
        kernel_us_per_step=ktime / nsteps,
        matrix_half_share=sum(e.get("dur", 0) for e in mat if HALF.search(e["name"])) / mtime,
        matrix_fp32_share=sum(e.get("dur", 0) for e in mat
                              if FP32_GEMM.search(e["name"]) and not HALF.search(e["name"])) / mtime,
        matrix_us_per_step=mtime / nsteps,
        softmax_kernels_per_step=sum(1 for e in kern if "softmax" in e["name"].lower()) / nsteps,
        fused_attention_kernels_per_step=sum(1 for e in kern if ATTN_FUSED.search(e["name"])) / nsteps,
        attention_fwd_kernels_per_step=sum(1 for e in kern if ATTN_FUSED.search(e["name"])
                                           and re.search(r"fwd|fprop|forward", e["name"], re.I)
                                           and not re.search(r"bwd|bprop|backward", e["name"], re.I)) / nsteps,
        memcpy=dict(memcpy),
        pageable_htod_per_step=sum(n for k, n in memcpy.items() if "Pageable" in k and "HtoD" in k) / nsteps,
        pinned_htod_per_step=sum(n for k, n in memcpy.items() if "Pinned" in k and "HtoD" in k) / nsteps,
        item_per_step=cpu["aten::item"] / nsteps,
        local_scalar_dense_per_step=cpu["aten::_local_scalar_dense"] / nsteps,
        nonzero_per_step=cpu["aten::nonzero"] / nsteps,
        stream_sync_per_step=rt["cudaStreamSynchronize"] / nsteps,
        device_sync_per_step=rt["cudaDeviceSynchronize"] / nsteps,
        graph_launch_per_step=rt["cudaGraphLaunch"] / nsteps,
        launch_kernel_per_step=(rt["cudaLaunchKernel"] + rt["cudaLaunchKernelExC"] + rt["cuLaunchKernel"]
                                + rt["cuLaunchKernelEx"]) / nsteps,
        cuda_sync_events=sum(1 for e in ev if e.get("cat") == "cuda_sync"),
        python_function_events=sum(1 for e in ev if e.get("cat") == "python_function"),
        memory_events=sum(1 for e in ev if e.get("name") == "[memory]"),
        loader_names=sorted({e["name"] for e in loader}),
        loader_us_per_step=sum(e.get("dur", 0) for e in loader if e.get("ph") == "X") / nsteps,
        multi_tensor_kernels_per_step=sum(1 for e in kern if "multi_tensor" in e["name"]) / nsteps,
        fused_adam_kernels_per_step=sum(1 for e in kern if re.search(r"fused_adam|FusedAdam|fused_adamw",
                                                                     e["name"], re.I)) / nsteps,
        amp_unscale_per_step=cpu["aten::_amp_foreach_non_finite_check_and_unscale_"] / nsteps,
        forward_embedding_per_step=cpu["aten::embedding"] / nsteps,
        has_shapes=any("Input Dims" in (e.get("args") or {}) for e in ev if e.get("cat") == "cpu_op"),
        top_kernels=[(n, round(t / nsteps, 1)) for n, t in names.most_common(3)],
    )
    return f


def check(job, fixes, f, base):
    """(name, ok) pairs: did the variant change what its fix targets?"""
    c = []
    fx = set(fixes)
    if job == "gpt_fp32_naive":
        if "bf16" in fx:
            c.append(("bf16 matrix kernels (>50 % of matrix time)", f["matrix_half_share"] > 0.5))
        else:
            c.append(("fp32 matrix kernels (>50 % of matrix time)", f["matrix_fp32_share"] > 0.5))
        if "sdpa" in fx:
            c.append(("fused attention kernels; softmax kernels only the loss's (2 per step)",
                      f["softmax_kernels_per_step"] <= 2 and f["fused_attention_kernels_per_step"] > 0))
        else:
            c.append(("materialized softmax kernels", f["softmax_kernels_per_step"] > 0))
    elif job == "gpt_launch_bound":
        if "cuda_graphs" in fx:
            c.append(("cudaGraphLaunch each step, few kernel launches",
                      f["graph_launch_per_step"] >= 1 and f["launch_kernel_per_step"] < 0.2 * base["launch_kernel_per_step"]))
        else:
            c.append(("hundreds of kernel launches per step", f["launch_kernel_per_step"] > 200))
    elif job == "loader_bound":
        want = "_MultiProcessingDataLoaderIter" if "workers4" in fx else "_SingleProcessDataLoaderIter"
        c.append((f"DataLoader fetch is {want}", any(want in n for n in f["loader_names"])))
        c.append(("bf16 matrix kernels" if "bf16" in fx else "fp32 matrix kernels",
                  (f["matrix_half_share"] > 0.5) if "bf16" in fx else (f["matrix_fp32_share"] > 0.5)))
    elif job == "pageable_copies":
        if "pinned" in fx:
            c.append(("HtoD copies pinned, none pageable", f["pinned_htod_per_step"] >= 1 and f["pageable_htod_per_step"] == 0))
        else:
            c.append(("HtoD copies from pageable memory", f["pageable_htod_per_step"] >= 1))
        c.append(("with_stack: python_function events", f["python_function_events"] > 0))
    elif job == "item_sync":
        # aten::item on CPU tensors (AdamW's step counters) is no sync: count the stream syncs instead
        if "log_every_100" in fx:
            c.append(("no cudaStreamSynchronize (no GPU aten::item) in the traced steps",
                      f["stream_sync_per_step"] == 0))
        else:
            c.append(("a GPU aten::item (cudaStreamSynchronize) every step", f["stream_sync_per_step"] >= 1))
        c.append(("with_stack: python_function events", f["python_function_events"] > 0))
    elif job == "mask_nonzero":
        if "where" in fx:
            c.append(("no aten::nonzero", f["nonzero_per_step"] == 0))
        else:
            c.append(("aten::nonzero in the step (>= 4)", f["nonzero_per_step"] >= 4))
    elif job == "foreach_false_optimizer":
        if "fused" in fx:
            c.append(("fused AdamW kernel, far fewer launches", f["fused_adam_kernels_per_step"] >= 1
                      and f["launch_kernel_per_step"] < 0.5 * base["launch_kernel_per_step"]))
        elif "foreach" in fx:
            c.append(("multi_tensor_apply kernels, far fewer launches", f["multi_tensor_kernels_per_step"] >= 1
                      and f["launch_kernel_per_step"] < 0.5 * base["launch_kernel_per_step"]))
        elif "cuda_graphs" in fx:
            c.append(("cudaGraphLaunch each step, few kernel launches",
                      f["graph_launch_per_step"] >= 1 and f["launch_kernel_per_step"] < 0.2 * base["launch_kernel_per_step"]))
        else:
            c.append(("per-parameter loop: >= 1400 launches per step", f["launch_kernel_per_step"] >= 1400))
    elif job == "resnet_fp32":
        if "bf16" in fx:
            c.append(("bf16 conv/GEMM kernels (>50 % of matrix time)", f["matrix_half_share"] > 0.5))
        else:
            c.append(("no half-precision matrix kernels", f["matrix_half_share"] < 0.05))
    elif job == "grad_accum_fp16":
        c.append(("GradScaler unscale present" if "bf16_no_scaler" not in fx else "no GradScaler",
                  (f["amp_unscale_per_step"] >= 1) == ("bf16_no_scaler" not in fx)))
        if "cuda_graphs" in fx:  # make_graphed_callables: a forward and a backward graph per micro-batch
            c.append(("cudaGraphLaunch per micro-batch (8 per step)", f["graph_launch_per_step"] >= 8))
        else:
            want = 1 if "microbatch8_no_accum" in fx else 4
            c.append((f"{want} forward pass(es) per step", round(f["forward_embedding_per_step"]) == want))
    elif job == "accum_bf16_large":
        want = 1 if "microbatch16_no_accum" in fx else 4
        c.append((f"{want} forward pass(es) per step", round(f["forward_embedding_per_step"]) == want))
    elif job in ("activation_checkpointing", "ckpt_large"):
        if "no_checkpointing" in fx:
            c.append(("half the forward attention kernels of base",
                      f["attention_fwd_kernels_per_step"] > 0
                      and abs(2 * f["attention_fwd_kernels_per_step"] - base["attention_fwd_kernels_per_step"]) < 0.5))
        else:
            c.append(("forward attention recomputed (2 per layer)",
                      f["attention_fwd_kernels_per_step"] >= (8 if job == "activation_checkpointing" else 16)))
        if job == "activation_checkpointing":
            c.append(("profile_memory: [memory] events", f["memory_events"] > 0))
        else:
            c.append(("with_stack: python_function events", f["python_function_events"] > 0))
    elif job == "healthy":
        c.append(("multi-process DataLoader", any("_MultiProcessing" in n for n in f["loader_names"])))
        c.append(("bf16 matrix kernels", f["matrix_half_share"] > 0.5))
        c.append(("fused AdamW", f["fused_adam_kernels_per_step"] >= 1))
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--details", action="store_true")
    args = ap.parse_args()
    with open(os.path.join(args.dir, "measurements.json")) as f:
        m = json.load(f)
    entries = m["entries"]
    facts = {}
    for e in entries:
        p = os.path.join(args.dir, e["trace"])
        if os.path.exists(p):
            facts[(e["job"], e["variant"])] = trace_facts(p)
        for x in e.get("extra_traces", []):
            p = os.path.join(args.dir, x["trace"])
            if os.path.exists(p):
                facts[(e["job"], e["variant"], x["trace"])] = trace_facts(p)
    base = {e["job"]: e for e in entries if e["variant"] == "base"}
    print(f"env: {json.dumps(m.get('env'))}\nsettings: {json.dumps(m.get('settings'))}\n")
    print("| job | variant | unprofiled step ms: median [p10–p90] | speedup vs base | profiled ms | "
          "inflation | traced step ms | GPU kernel ms/step | trace KiB |")
    print("|---|---|---|---|---|---|---|---|---|")
    failed = 0
    for e in entries:
        u = e.get("unprofiled_step_ns_median")
        b = base.get(e["job"], {}).get("unprofiled_step_ns_median")
        bs = base.get(e["job"], {}).get("samples_per_step")
        if u and b:
            sp = b / u
            if e.get("samples_per_step") and bs and e["samples_per_step"] != bs:  # per-sample speedup
                sp = (b / bs) / (u / e["samples_per_step"])
                sps = f"{sp:.2f}× per sample ({b / u:.2f}× per step)"
            else:
                sps = f"{sp:.2f}×" if e["variant"] != "base" else "1"
        else:
            sps = "–"
        fa = facts.get((e["job"], e["variant"]))
        traced = statistics.median(fa["traced_step_us"]) / 1e3 if fa and fa["traced_step_us"] else None
        us = (f"{u / 1e6:.2f} [{e['unprofiled_step_ns_p10'] / 1e6:.2f}–{e['unprofiled_step_ns_p90'] / 1e6:.2f}]"
              if u else "–")
        gk = f"{fa['kernel_us_per_step'] / 1e3:.2f}" if fa else "–"
        p = e.get("profiled_step_ns_median")
        print(f"| {e['job']} | {e['variant']} | {us} | {sps} | {p / 1e6 if p else float('nan'):.2f} | "
              f"{e.get('profiler_inflation', float('nan')):.2f} | "
              f"{traced if traced else float('nan'):.2f} | {gk} | {e.get('trace_bytes', 0) / 1024:.0f} |")
        for x in e.get("extra_traces", []):
            fx = facts.get((e["job"], e["variant"], x["trace"]))
            px = x.get("profiled_step_ns_median")
            tx = statistics.median(fx["traced_step_us"]) / 1e3 if fx and fx["traced_step_us"] else float("nan")
            gx = f"{fx['kernel_us_per_step'] / 1e3:.2f}" if fx else "–"
            print(f"| {e['job']} | {e['variant']} (trace with cuda_sync events) | (same) | | "
                  f"{px / 1e6 if px else float('nan'):.2f} | {px / u if px and u else float('nan'):.2f} | "
                  f"{tx:.2f} | {gx} | {x.get('trace_bytes', 0) / 1024:.0f} |")
    print()
    tot = sum(os.path.getsize(os.path.join(args.dir, n)) for n in os.listdir(args.dir))
    print(f"total size of {args.dir}: {tot} bytes ({tot / 2**20:.2f} MiB)\n")
    print("checks (did each variant change what its fix targets?):")
    for e in entries:
        if e.get("errors"):
            print(f"  ERROR {e['job']}/{e['variant']}: {e['errors'][0].splitlines()[-1] if e['errors'] else ''}")
            failed += 1
        fa = facts.get((e["job"], e["variant"]))
        fb = facts.get((e["job"], "base"))
        if not fa or not fb:
            continue
        for name, ok in check(e["job"], e.get("fixes", []), fa, fb):
            print(f"  {'ok  ' if ok else 'FAIL'} {e['job']}/{e['variant']}: {name}")
            failed += not ok
    for k, fx in facts.items():
        if len(k) == 3:
            ok = fx["cuda_sync_events"] > 0
            print(f"  {'ok  ' if ok else 'FAIL'} {k[2]}: cuda_sync events present ({fx['cuda_sync_events']})")
            failed += not ok
    if args.details:
        print("\nper-trace facts:")
        for k, fx in facts.items():
            print(f"  {'/'.join(k)}:")
            for kk, vv in fx.items():
                if isinstance(vv, float):
                    vv = round(vv, 3)
                print(f"      {kk}: {vv}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

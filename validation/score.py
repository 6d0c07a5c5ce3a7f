#!/usr/bin/env python3
"""Scores gpudoctor's what-if predictions against the validation lab's measurements (no torch needed).

    python3 validation/score.py --lab DIR --results DIR/results_A.jsonl DIR/results_B.jsonl \
        --gpudoctor build/gpudoctor [--json out.json] [--trace-tag A] [--anchor] [--analyze-arg ARG ...]

Truth (from the results files, one line per job and process):
  a variant's step   median over processes of that process's median over rounds; band: min..max of them
  a fix's speedup    per process: base median / variant median (per sample when the variant changes the
                     batch: samples_per_step differs); truth: median over processes; band: min..max
Prediction (gpudoctor analyze <job>__base.pt.trace.json.gz --json -):
  un-profiled step   diagnosis.what_if.unprofiled_step_ns
  one fix            the speedup of the finding that advises it (diagnosis.findings[].what_if.speedup; the
                     finding -> fix id map is the plan's, else src/diagnosis/what_if.cc's fixOfFinding);
                     a variant with SCORE_AS names an alternative (what_if.alternatives[].fix) instead; a fix
                     gpudoctor can edit but did not flag counts as a predicted 1.0
  combined fixes     the plan's cumulative speedup after exactly those fixes (diagnosis.plan[k-1].speedup),
                     fixes that are not plan steps counting as 1.0; otherwise unscored
The profiler's cost, where a process timed the base under the profiler too (run_lab.py --profiled): measured
  profiled - plain median of one process (the trace's own where it did, else the median over processes);
  the replay's, the traced step less its un-profiled step (diagnosis.what_if.traced_step_ns).
Reported separately for the split's holdout, fit and all jobs (validation/split.json): un-profiled step
error, fix speedup error |pred/meas - 1|, the plan's first fix against the measured best, healthy jobs' fixes
predicted above 1.05x, violations of the physical bound (predicted step >= GPU busy per step, the median
of ranks[0].steps[].gpu_busy_ns), and findings whose stated bound (gain_ms_per_step: what the fix can save at
most) a single fix's measured saving exceeds (the least saving the bands allow), or, where the finding states
the floor its fix cannot take the step below (floor_step_ms), whose fixed step measured below it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# Fix ids gpudoctor's replay can edit today (src/diagnosis/what_if.cc, fixEdit / fixOfFinding)
KNOWN_FIXES = {"bf16", "sdpa", "loader_workers", "no_host_syncs", "pinned_copies", "cuda_graphs", "fused_optimizer",
               "host_work_off_thread", "pad_gemm_dims", "channels_last", "moe_grouped_dispatch",
               "sparse_embedding_grads"}
FINDING_FIX = {"precision.fp32_gemm": "bf16", "input.loader_on_critical_path": "loader_workers",
               "sync.blocking": "no_host_syncs", "host.own_work": "host_work_off_thread",
               "input.pageable_copies": "pinned_copies", "gemm.misaligned": "pad_gemm_dims", "layout.channels_last": "channels_last",
               "launch.overhead": "cuda_graphs", "optimizer.unfused": "fused_optimizer",
               "attention.materialized": "sdpa", "communication.straggler": "straggler_at_median",
               "memory.recomputation": "no_checkpointing", "memory.accumulation": "micro_batch",
               "moe.per_expert_dispatch": "moe_grouped_dispatch", "embedding.dense_grads": "sparse_embedding_grads"}
# Fixes that leave the GPU's work as it is: their predicted step cannot be below the GPU busy time
HOST_ONLY_FIXES = {"loader_workers", "no_host_syncs", "host_work_off_thread", "cuda_graphs", "cuda_graphs_model"}
# The traced GPU busy time holds the profiler's own GPU cost (CUPTI's records stretch the gaps between
# kernels; profiled GPU work runs 0-17 % longer, ../shared/DESIGN.md), and the measured un-profiled steps
# of some jobs are below it: a prediction is flagged only below it by more than this share.
BOUND_TOLERANCE = 0.05
WORTH = 1.05             # a fix that buys less than 5 % is "nothing"


# ----------------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------------
def load_split(path):
    with open(path) as f:
        s = json.load(f)
    return {**{j: "fit" for j in s["fit"]}, **{j: "holdout" for j in s["holdout"]}}


def load_results(paths):
    """job -> list of records (one per process), and job -> record metadata (kind, variants' fixes).
    Exits when the files come from more than one GPU model: a band over two cards measures no one job."""
    recs, gpus = {}, {}
    for p in paths:
        with open(p) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    recs.setdefault(r["job"], []).append(r)
                    if r.get("gpu"):
                        gpus.setdefault(r["gpu"], set()).add(os.path.basename(p))
    if len(gpus) > 1:
        sys.exit("score.py: the results come from more than one GPU ("
                 + "; ".join(f"{g}: {', '.join(sorted(fs))}" for g, fs in sorted(gpus.items()))
                 + "): score each machine's results alone")
    return recs


def index_traces(lab):
    """trace file name -> list of (tar path or None, path or member), for loose files and tar members."""
    idx = {}
    for root, _, files in os.walk(lab):
        for f in sorted(files):
            p = os.path.join(root, f)
            if f.endswith(".pt.trace.json.gz"):
                idx.setdefault(f, []).append((None, p))
            elif f.endswith(".tar"):
                with tarfile.open(p) as tf:
                    for m in tf.getnames():
                        if m.endswith(".pt.trace.json.gz"):
                            idx.setdefault(os.path.basename(m), []).append((p, m))
    return idx


def trace_path(idx, name, tag, tmp):
    """(a readable path of trace `name`, the proc tag of its tar or None), from a tar of proc `tag` when
    there is one; (None, None) if absent."""
    hits = idx.get(name) or []
    if not hits:
        return None, None
    pref = []
    for t in (tag or "").split(","):  # the first tag in the list that has this trace
        pref = pref or [h for h in hits if h[0] and os.path.basename(h[0]).startswith(f"traces_{t}_")]
    tar, member = (pref or hits)[0]
    if tar is None:
        return member, None
    out = os.path.join(tmp, name)
    if not os.path.exists(out):
        with tarfile.open(tar) as tf, open(out, "wb") as dst:
            dst.write(tf.extractfile(member).read())
    return out, os.path.basename(tar).split("_")[1]


def analyze(gpudoctor, trace, extra, measured_ms):
    """gpudoctor analyze TRACE --json - ; the parsed document, or raises with its stderr."""
    cmd = [gpudoctor, "analyze", trace, "--json", "-"] + list(extra)
    if measured_ms:
        cmd += ["--measured-step-ms", f"{measured_ms:.4f}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-500:]}")
    return json.loads(p.stdout)


# ----------------------------------------------------------------------------------------------------
# Truth
# ----------------------------------------------------------------------------------------------------
def per_proc_medians(records):
    """One dict per process: variant -> (median ms over its rounds, samples per step)."""
    out = []
    for r in records:
        d = {v: (e["median_ms"], e.get("samples_per_step")) for v, e in r["variants"].items() if e.get("median_ms")}
        if d:
            out.append(d)
    return out


def set_aside_slow_rounds(recs, ratio):
    """Host speed: run_lab.py times a probe of the host's speed before each variant's round (host_probe_ns);
    the lab's H100 host ran up to 2.5x slower at times, and a host-bound step is as slow as its host. A
    process's round k (every variant timed once, interleaved) is set aside when any of its probes is over
    `ratio` times the lab's median probe (every round of every loaded process): each variant's median_ms
    becomes the median of its other rounds, so base and variant stay paired within rounds. A process whose
    every round is slow is kept whole and counted. Returns (median probe ns, rounds set aside, processes
    kept whole)."""
    probes = [p for rs in recs.values() for r in rs for e in r["variants"].values() for p in e.get("host_probe_ns") or []]
    if not probes or ratio <= 0:
        return None, 0, 0
    limit, aside, whole = ratio * statistics.median(probes), 0, 0
    for rs in recs.values():
        for r in rs:
            # round k's probe is taken before its timing (a variant that failed may hold one probe more)
            timed = [(e, e["round_ms"], (e.get("host_probe_ns") or [])[:len(e["round_ms"])])
                     for e in r["variants"].values() if e.get("round_ms")]
            slow = {k for _, ms, pr in timed for k, p in enumerate(pr) if p > limit}
            if not slow:
                continue
            if all(k in slow for _, ms, _ in timed for k in range(len(ms))):
                whole += 1
                continue
            for e, ms, _ in timed:
                kept = [m for k, m in enumerate(ms) if k not in slow]
                if kept:  # a variant with no other round keeps its own median
                    e["median_ms"], e["rounds_set_aside"] = statistics.median(kept), len(ms) - len(kept)
            aside += len(slow)
    return statistics.median(probes), aside, whole


def band(xs):
    return {"x": statistics.median(xs), "lo": min(xs), "hi": max(xs), "n": len(xs)}


def truth(records):
    """Per variant: step ms (median over processes, band); per non-base variant: speedup over base."""
    procs = per_proc_medians(records)
    steps, speedups = {}, {}
    for v in sorted({v for p in procs for v in p}):
        ms = [p[v][0] for p in procs if v in p]
        steps[v] = band(ms)
        if v == "base":
            continue
        xs, per_sample = [], False
        for p in procs:
            if "base" in p and v in p:
                (bm, bs), (vm, vs) = p["base"], p[v]
                per_sample = bool(bs and vs and bs != vs)
                xs.append((bm / bs) / (vm / vs) if per_sample else bm / vm)
        if xs:
            speedups[v] = dict(band(xs), per_sample=per_sample)
    return steps, speedups


# ----------------------------------------------------------------------------------------------------
# Predictions
# ----------------------------------------------------------------------------------------------------
def gpu_busy_ms(doc):
    ranks = doc.get("ranks") or []
    busy = [s["gpu_busy_ns"] for s in (ranks[0].get("steps") or [])] if ranks else []
    return statistics.median(busy) / 1e6 if busy else None


def predictions(doc):
    """What the report predicts: un-profiled step, each flagged fix's speedup, alternatives, the plan."""
    diag = doc.get("diagnosis") or {}
    wi, plan = diag.get("what_if") or {}, diag.get("plan") or []
    fix_of = dict(FINDING_FIX)
    for p in plan:
        fix_of[p["finding"]] = p["fix"]
        for a in p.get("within_accuracy") or []:
            fix_of[a["finding"]] = a["fix"]
    fixes, alts = {}, {}
    # Each finding's stated bound: what its fix can save at most (ms a step; 0: none stated, or the gain
    # is an estimate, not a bound: gain_is_bound false).
    bounds = {f["id"]: (f.get("gain_ms_per_step") or 0) if f.get("gain_is_bound", True) else 0
              for f in diag.get("findings") or []}
    # ... and where a finding states the floor its fix cannot take the step below (floor_step_ms), that
    floors = {f["id"]: f["floor_step_ms"] for f in diag.get("findings") or [] if f.get("floor_step_ms")}
    for f in diag.get("findings") or []:
        w = f.get("what_if")
        fix = (w or {}).get("fix") or fix_of.get(f.get("id"))
        if not w or not fix or fix in fixes:  # two findings advising one fix: the first, as the plan does
            continue
        fixes[fix] = {"speedup": w["speedup"], "step_ms": w["step_ns"] / 1e6, "finding": f["id"],
                      "host_ms": w.get("host_ns", 0) / 1e6, "busy_ms": w.get("gpu_busy_ns", 0) / 1e6}
        for a in w.get("alternatives") or []:
            alts.setdefault(a["fix"], {"speedup": a["speedup"], "step_ms": a["step_ns"] / 1e6, "finding": f["id"]})
    unprof, traced = wi.get("unprofiled_step_ns"), wi.get("traced_step_ns")
    return {"unprofiled_ms": unprof / 1e6 if unprof else None, "traced_ms": traced / 1e6 if traced else None, "fixes": fixes, "alternatives": alts, "plan": plan,
            "known": KNOWN_FIXES | set(fix_of.values()) | {p["fix"] for p in plan},
            "busy_ms": gpu_busy_ms(doc), "what_if_basis": wi.get("basis"), "bounds": bounds, "floors": floors,
            "unprof_busy_ms": ((wi.get("unprofiled_parts") or {}).get("gpu_busy_ns") or 0) / 1e6 or None}


def predict_variant(fixes, score_as, P):
    """(predicted speedup or None, how it was read / why it is unscored)."""
    if score_as:
        a = P["alternatives"].get(score_as)
        if a:
            return a["speedup"], f"alternative {score_as}"
        if len(fixes) == 1 and fixes[0] not in P["fixes"] and fixes[0] in P["known"]:
            return 1.0, f"not flagged (so no {score_as} either): 1.0"  # as a fix not flagged, below
        return None, f"the report has no {score_as} alternative"
    if len(fixes) == 1:
        f = fixes[0]
        if f in P["fixes"]:
            return P["fixes"][f]["speedup"], f"finding {P['fixes'][f]['finding']}"
        if f in P["known"]:
            return 1.0, "not flagged: 1.0"
        return None, f"gpudoctor has no fix id {f!r}"
    unknown = [f for f in fixes if f not in P["known"]]
    if unknown:
        return None, f"combined, gpudoctor has no fix id {unknown}"
    plan_fixes = [p["fix"] for p in P["plan"]]
    flagged = {f for f in fixes if f in plan_fixes}
    if not flagged:
        return 1.0, "combined, no plan step: 1.0"
    k = len(flagged)
    if set(plan_fixes[:k]) == flagged:
        rest = " (the others not plan steps: 1.0)" if k < len(fixes) else ""
        return P["plan"][k - 1]["speedup"], f"plan after {plan_fixes[:k]}{rest}"
    return None, f"combined, the plan's first {k} fixes are {plan_fixes[:k]}, not {sorted(flagged)}"


# ----------------------------------------------------------------------------------------------------
# Per-job scoring
# ----------------------------------------------------------------------------------------------------
def score_fixes(variants, speedups, P):
    """One row per non-base variant: measured speedup and band, prediction, error, or why unscored."""
    rows = []
    for v, meta in variants.items():
        if v == "base":
            continue
        m = speedups.get(v)
        row = {"variant": v, "fixes": meta["fixes"], "meas": m, "pred": None, "err": None, "note": ""}
        if m is None:
            row["note"] = "unscored: not measured"
        elif P is None:
            row["note"] = "unscored: no prediction (no base trace or analyze failed)"
        else:
            pred, how = predict_variant(meta["fixes"], meta.get("score_as"), P)
            row["pred"], row["note"] = pred, how if pred is not None else "unscored: " + how
            if pred is not None:
                row["err"] = pred / m["x"] - 1
                row["inside"] = m["lo"] <= pred <= m["hi"]
                row["within10"] = abs(row["err"]) <= 0.10
        rows.append(row)
    return rows


def plan_first(variants, speedups, P):
    """The plan's first fix against the measured best single fix (best variant per fix id). Counted only
    when the best is outside the runner-up's band and the plan's first fix is one the job tested."""
    if P is None:
        return None
    best_of = {}
    for v, meta in variants.items():
        if v != "base" and len(meta["fixes"]) == 1 and v in speedups and meta["fixes"][0] in P["known"]:
            f, m = meta["fixes"][0], speedups[v]
            if f not in best_of or m["x"] > best_of[f]["x"]:
                best_of[f] = m
    if not best_of:
        return None
    ranked = sorted(best_of.items(), key=lambda kv: -kv[1]["x"])
    (bf, bm), runner = ranked[0], (ranked[1] if len(ranked) > 1 else None)
    plan = P["plan"]
    if bm["x"] < WORTH:  # nothing measured buys 5 %: the right plan starts with nothing worth it
        best, clear = "none", bm["hi"] < WORTH
        match = not plan or plan[0]["speedup"] < WORTH
    else:
        best, clear = bf, runner is None or bm["x"] > runner[1]["hi"]
        match = bool(plan) and plan[0]["fix"] == bf
    first = plan[0]["fix"] if plan else "none"
    judged = clear and (first == "none" or first in best_of)  # an untested first fix is not judged
    tied = bool(plan) and best in [a["fix"] for a in plan[0].get("within_accuracy") or []]
    return {"measured_best": best, "plan_first": first, "clear": clear, "counted": judged, "match": match,
            "tied": tied}


def bound_violations(job, P):
    """Predicted steps below the GPU busy time per step (base, and fixes that leave the GPU work alone): the
    GPU's work as the replay runs it without the profiler (CUPTI lengthens some kernels: gpt2_eager_attention_fp32
    measured 130.4 ms un-profiled where its trace keeps the GPU busy 138.6 ms a step), else the trace's."""
    out = []
    busy = P.get("unprof_busy_ms") or P.get("busy_ms")
    if not busy:
        return out
    floor = busy * (1 - BOUND_TOLERANCE)
    if P["unprofiled_ms"] is not None and P["unprofiled_ms"] < floor:
        out.append(f"{job}: un-profiled step {P['unprofiled_ms']:.3f} ms < GPU busy {busy:.3f} ms/step")
    for kind in ("fixes", "alternatives"):
        for f, w in P[kind].items():
            if f in HOST_ONLY_FIXES and w["step_ms"] < floor:
                out.append(f"{job}: {f} predicts {w['step_ms']:.3f} ms < GPU busy {busy:.3f} ms/step")
    return out


def measured_over_bound(job, variants, steps, P):
    """Single fixes that measured a larger saving than their finding states it can buy at most: the least
    saving the bands allow (the base's fastest process against the variant's slowest) above the bound
    (with BOUND_TOLERANCE). Where the finding states a floor (floor_step_ms), the claim is the floor: the
    variant's slowest process below it (by more than BOUND_TOLERANCE). A bound a measurement breaks is a
    false statement, whatever the prediction."""
    out = []
    base = steps.get("base")
    for v, meta in variants.items():
        if v == "base" or len(meta["fixes"]) != 1 or v not in steps or not base:
            continue
        w = P["fixes"].get(meta["fixes"][0])
        floor = P.get("floors", {}).get(w["finding"], 0) if w else 0
        if floor:
            if steps[v]["hi"] < floor * (1 - BOUND_TOLERANCE):
                out.append(f"{job}: {v} measured {steps[v]['hi']:.3f} ms/step, below the {floor:.3f} ms floor "
                           f"{w['finding']} states")
            continue
        bound = P["bounds"].get(w["finding"], 0) if w else 0
        least = base["lo"] - steps[v]["hi"]
        if bound > 0 and least > bound * (1 + BOUND_TOLERANCE):
            out.append(f"{job}: {v} saved at least {least:.3f} ms/step, above the {bound:.3f} ms/step "
                       f"{w['finding']} states")
    return out


def healthy_flags(P, measured=None):
    """Fixes predicted above WORTH, for jobs written as healthy: (false alarms, fixes found). A fix whose
    variant measured above WORTH too was no false alarm: the job was not as healthy as it was written
    (it is reported apart, never dropped)."""
    flags = {f: w["speedup"] for f, w in P["fixes"].items() if w["speedup"] > WORTH}
    flags.update({f: w["speedup"] for f, w in P["alternatives"].items() if w["speedup"] > WORTH})
    if P["plan"] and P["plan"][0]["speedup"] > WORTH:
        flags.setdefault(P["plan"][0]["fix"], P["plan"][0]["speedup"])
    found = {f: x for f, x in flags.items() if (measured or {}).get(f, 0) > WORTH}
    return {f: x for f, x in flags.items() if f not in found}, found


def current_score_as(job):
    """SCORE_AS of validation/jobs/<job>.py as it stands ({} when the file or the constant is absent)."""
    sys.path.insert(0, HERE)
    from run_lab import JOBS_DIR, job_meta
    return job_meta(job)["SCORE_AS"] if os.path.exists(os.path.join(JOBS_DIR, job + ".py")) else {}


def score_job(job, records, split, args, idx, tmp):
    """Truth, prediction and every score of one job."""
    last = records[-1]
    variants, kind = {}, last["kind"]
    for r in records:  # every variant any process ran (a run may time only some, e.g. --variants base)
        variants.update(r["variants"])
    score_as = current_score_as(job)  # the job file's mapping wins over the one its older results carry
    for v, meta in variants.items():
        if v in score_as:
            meta["score_as"] = score_as[v]
    steps, speedups = truth(records)
    P, error = None, None
    trace, trace_proc = trace_path(idx, f"{job}__base.pt.trace.json.gz", args.trace_tag, tmp)
    if trace is None:
        error = "no base trace in the lab directory"
    else:
        try:
            anchor = steps["base"]["x"] if args.anchor and "base" in steps else None
            P = predictions(analyze(args.gpudoctor, trace, args.analyze_arg, anchor))
        except Exception as ex:
            error = f"analyze failed: {ex}"
    base = steps.get("base")
    res = {"job": job, "split": split.get(job, "unsplit"), "kind": kind, "base": base, "steps": steps,
           "speedups": speedups, "pred_ms": P["unprofiled_ms"] if P else None, "unprof_err": None,
           "unprof_inside": None, "fixes": score_fixes(variants, speedups, P), "plan_first": plan_first(
               variants, speedups, P), "bounds": bound_violations(job, P) if P else [],
           "over_bound": measured_over_bound(job, variants, steps, P) if P else [],
           "truth_below_busy": bool(P and base and P["busy_ms"] and base["x"] < P["busy_ms"]),
           "healthy_flags": {}, "healthy_found": {}, "error": error,
           "busy_ms": P["busy_ms"] if P else None,
           "plan": [(p["fix"], round(p["speedup"], 3)) for p in P["plan"]] if P else [],
           "record_errors": [r["error"] for r in records if r.get("error")]}
    if P and kind == "healthy":  # each single-fix variant's measured speedup, by its fix
        measured = {v["fixes"][0]: speedups[k]["x"] for k, v in variants.items()
                    if k != "base" and len(v["fixes"]) == 1 and k in speedups}
        res["healthy_flags"], res["healthy_found"] = healthy_flags(P, measured)
    if base and res["pred_ms"]:
        res["unprof_err"] = res["pred_ms"] / base["x"] - 1
        res["unprof_inside"] = base["lo"] <= res["pred_ms"] <= base["hi"]
    # The trace's own process: the same host as the trace (hosts of one GPU type run Python at
    # speeds up to 2x apart, which a host-bound job's step follows).
    own = [r["variants"]["base"]["median_ms"] for r in records
           if r.get("proc") == trace_proc and r["variants"].get("base", {}).get("median_ms")]
    res["trace_proc"], res["own_base_ms"] = trace_proc, own[0] if own else None
    res["unprof_err_own"] = res["pred_ms"] / own[0] - 1 if own and res["pred_ms"] else None
    res["profiler_cost"] = profiler_cost(records, trace_proc, P)
    res["host_probes"] = host_probes(records)
    # The host's speed around the base trace (run_lab.py's trace_host_probe_ns), where it was recorded.
    tp = [r["variants"]["base"].get("trace_host_probe_ns") for r in records if r.get("proc") == trace_proc]
    res["trace_host_probe_ns"] = tp[0] if tp and tp[0] else None
    # Each fix against the speedup the trace's own process measured (where it timed the variant too).
    own_speedups = truth([r for r in records if r.get("proc") == trace_proc])[1] if trace_proc else {}
    for row in res["fixes"]:
        row["sides"] = sides(row, P, job, args, idx, tmp, trace_proc)
        m = own_speedups.get(row["variant"])
        row["meas_own"] = m["x"] if m else None
        row["err_own"] = row["pred"] / m["x"] - 1 if m and row["pred"] is not None else None
    return res


def host_probes(records):
    """Per process that recorded them (run_lab.py's host_probe_ns): variant -> the median ns of the host
    probe before its rounds. A host- or launch-bound variant's step follows the host's speed."""
    out = {}
    for r in records:
        d = {v: statistics.median(e["host_probe_ns"]) for v, e in r["variants"].items() if e.get("host_probe_ns")}
        if d:
            out[r.get("proc")] = d
    return out


def sides(row, P, job, args, idx, tmp, trace_proc):
    """A single fix's predicted steady-state parts (host step, GPU busy) against the un-profiled replay of
    the variant's own trace from the base trace's process: which side of the prediction is off. None
    without that trace."""
    if not P or row["pred"] is None or len(row["fixes"]) != 1 or row["fixes"][0] not in P["fixes"] or not trace_proc:
        return None
    trace, proc = trace_path(idx, f"{job}__{row['variant']}.pt.trace.json.gz", trace_proc, tmp)
    if trace is None or proc != trace_proc:
        return None
    try:
        parts = ((analyze(args.gpudoctor, trace, args.analyze_arg, None).get("diagnosis") or {})
                 .get("what_if") or {}).get("unprofiled_parts")
    except Exception:
        return None
    pred = P["fixes"][row["fixes"][0]]
    if not parts or not parts.get("gpu_busy_ns") or not pred["busy_ms"]:
        return None
    host, busy = parts["host_ns"] / 1e6, parts["gpu_busy_ns"] / 1e6
    return {"pred_host_ms": pred["host_ms"], "pred_busy_ms": pred["busy_ms"], "trace_host_ms": host,
            "trace_busy_ms": busy, "busy_err": pred["busy_ms"] / busy - 1}


# Below this measured profiler cost (ms per step) its relative error is noise and not scored.
MIN_PROFILER_COST_MS = 0.5


def profiler_cost(records, trace_proc, P):
    """The profiler's cost on the base step: measured (profiled - plain in one process: the trace's own, else
    the median over processes) against the replay's (traced - un-profiled); None without a profiled timing."""
    per_proc = {r.get("proc"): (b["profiled_median_ms"], b["median_ms"]) for r in records
                for b in [r["variants"].get("base") or {}] if b.get("profiled_median_ms") and b.get("median_ms")}
    if not per_proc:
        return None
    if trace_proc in per_proc:
        proc, (prof, plain) = trace_proc, per_proc[trace_proc]
    else:
        proc = "median"
        prof = statistics.median(v[0] for v in per_proc.values())
        plain = statistics.median(v[1] for v in per_proc.values())
    out = {"proc": proc, "profiled_ms": prof, "plain_ms": plain, "measured_ms": prof - plain,
           "replay_ms": None, "traced_ms": None, "err": None}
    if P and P.get("traced_ms") and P.get("unprofiled_ms"):
        out["traced_ms"], out["replay_ms"] = P["traced_ms"], P["traced_ms"] - P["unprofiled_ms"]
        if out["measured_ms"] >= MIN_PROFILER_COST_MS:
            out["err"] = out["replay_ms"] / out["measured_ms"] - 1
    return out


# ----------------------------------------------------------------------------------------------------
# Summaries and printing
# ----------------------------------------------------------------------------------------------------
def err_stats(errs):
    """n, median |err|, worst err (signed, by magnitude)."""
    if not errs:
        return {"n": 0, "median_abs": None, "worst": None}
    return {"n": len(errs), "median_abs": statistics.median(abs(e) for e in errs), "worst": max(errs, key=abs)}


def summarize(jobs, subset):
    sel = [j for j in jobs if subset == "all" or j["split"] == subset]
    rows = [r for j in sel for r in j["fixes"] if r["err"] is not None]
    pf = [j["plan_first"] for j in sel if j["plan_first"] and j["plan_first"]["counted"]]
    healthy = [j for j in sel if j["kind"] == "healthy" and j["pred_ms"] is not None]
    fix = err_stats([r["err"] for r in rows])
    fix.update(inside_band=sum(1 for r in rows if r["inside"]), within_10pct=sum(1 for r in rows if r["within10"]))
    return {"jobs": len(sel),
            "unprofiled": dict(err_stats([j["unprof_err"] for j in sel if j["unprof_err"] is not None]),
                               inside_band=sum(1 for j in sel if j["unprof_inside"])),
            "unprofiled_own": err_stats([j["unprof_err_own"] for j in sel if j.get("unprof_err_own") is not None]),
            "profiler_cost": err_stats([j["profiler_cost"]["err"] for j in sel
                                        if j.get("profiler_cost") and j["profiler_cost"]["err"] is not None]),
            "fixes": fix,
            "fixes_own": err_stats([r["err_own"] for r in rows if r.get("err_own") is not None]),
            "fixes_gpu_side": err_stats([r["sides"]["busy_err"] for r in rows if r.get("sides")]),
            "unscored_variants": sum(1 for j in sel for r in j["fixes"] if r["err"] is None),
            "plan_first": {"counted": len(pf), "match": sum(1 for p in pf if p["match"]),
                           "tied": sum(1 for p in pf if not p["match"] and p["tied"])},
            "healthy": {"jobs": len(healthy), "flagged": {j["job"]: j["healthy_flags"] for j in healthy
                                                          if j["healthy_flags"]},
                        "found": {j["job"]: j["healthy_found"] for j in healthy if j.get("healthy_found")}},
            "bound_violations": sum(len(j["bounds"]) for j in sel),
            "measured_over_bound": sum(len(j.get("over_bound") or []) for j in sel),
            "truth_below_busy": sum(1 for j in sel if j.get("truth_below_busy"))}


def pct(x):
    return "   -   " if x is None else f"{100 * x:+6.1f}%"


def print_job(j):
    b = j["base"]
    meas = f"{b['x']:8.2f} [{b['lo']:.2f}, {b['hi']:.2f}]" if b else "   not measured   "
    pred = f"{j['pred_ms']:8.2f}" if j["pred_ms"] is not None else "      - "
    own = (f"  own {j['trace_proc']} {j['own_base_ms']:.2f} ({pct(j['unprof_err_own']).strip()})"
           if j.get("own_base_ms") and j.get("unprof_err_own") is not None else "")
    print(f"{j['job']:28s} {j['split']:7s} {j['kind']:12s} base {meas} ms  pred {pred} ms  err {pct(j['unprof_err'])}"
          + own + (f"  busy {j['busy_ms']:.2f}" if j["busy_ms"] else "") + (f"  [{j['error']}]" if j["error"] else ""))
    c = j.get("profiler_cost")
    if c:
        replay = (f"replay removes {c['replay_ms']:.2f} (traced {c['traced_ms']:.2f}) err {pct(c['err']).strip()}"
                  if c["replay_ms"] is not None else "no replay")
        print(f"    profiler's cost: measured {c['measured_ms']:.2f} ms (proc {c['proc']}: profiled {c['profiled_ms']:.2f}"
              f" vs plain {c['plain_ms']:.2f}), {replay}")
    if j.get("host_probes"):
        print("    host probe before the rounds (ns, median per process): " + "; ".join(
            f"{proc} " + ", ".join(f"{v} {ns:.0f}" for v, ns in d.items()) for proc, d in j["host_probes"].items())
              + (f"; around the base trace {j['trace_host_probe_ns'][0]:.0f} and {j['trace_host_probe_ns'][1]:.0f}"
                 if j.get("trace_host_probe_ns") else ""))
    for r in j["fixes"]:
        m = r["meas"]
        meas = f"{m['x']:5.2f}x [{m['lo']:.2f}, {m['hi']:.2f}]" + ("/smp" if m.get("per_sample") else "    ") \
            if m else "        -             "
        pred = f"{r['pred']:5.2f}x" if r["pred"] is not None else "   -  "
        flag = "" if r["err"] is None else (" in-band" if r["inside"] else "") + (" <=10%" if r["within10"] else "")
        own = f"  own {r['meas_own']:.2f}x ({pct(r['err_own']).strip()})" if r.get("err_own") is not None else ""
        print(f"    {r['variant']:30s} {'+'.join(r['fixes']):38s} meas {meas} pred {pred} err {pct(r['err'])}"
              f"{flag}{own}  ({r['note']})")
        sd = r.get("sides")
        if sd:
            print(f"      after it: predicted host {sd['pred_host_ms']:.2f} ms, GPU busy {sd['pred_busy_ms']:.2f} ms; the "
                  f"variant's trace un-profiled: host {sd['trace_host_ms']:.2f}, GPU busy {sd['trace_busy_ms']:.2f} "
                  f"(GPU side {pct(sd['busy_err']).strip()})")
    pf = j["plan_first"]
    if pf:
        verdict = "match" if pf["match"] else ("tied" if pf["tied"] else "MISS")
        print(f"    plan {j['plan']}  first {pf['plan_first']} vs measured best {pf['measured_best']}: {verdict}"
              + ("" if pf["counted"] else " (not counted: best not clear of the runner-up, or untested)"))


def print_summary(name, s):
    u, f, p, h = s["unprofiled"], s["fixes"], s["plan_first"], s["healthy"]
    print(f"== {name}: {s['jobs']} jobs")
    if u["n"]:
        print(f"   un-profiled step: n {u['n']}, median |err| {100 * u['median_abs']:.1f} %, worst "
              f"{100 * u['worst']:+.1f} %, inside the band {u['inside_band']}")
    o = s.get("unprofiled_own") or {"n": 0}
    if o["n"]:
        print(f"   ... against the trace's own process: n {o['n']}, median |err| {100 * o['median_abs']:.1f} %, worst "
              f"{100 * o['worst']:+.1f} %")
    c = s.get("profiler_cost") or {"n": 0}
    if c["n"]:
        print(f"   profiler's cost removed by the replay against measured (>= {MIN_PROFILER_COST_MS} ms): n {c['n']}, "
              f"median |err| {100 * c['median_abs']:.1f} %, worst {100 * c['worst']:+.1f} %")
    if f["n"]:
        print(f"   fix speedups: n {f['n']}, median |pred/meas - 1| {100 * f['median_abs']:.1f} %, worst "
              f"{100 * f['worst']:+.1f} %, inside band {f['inside_band']}, within 10 % {f['within_10pct']}; "
              f"unscored {s['unscored_variants']}")
    fo = s.get("fixes_own") or {"n": 0}
    if fo["n"]:
        print(f"   ... against the trace's own process: n {fo['n']}, median |pred/meas - 1| "
              f"{100 * fo['median_abs']:.1f} %, worst {100 * fo['worst']:+.1f} %")
    g = s.get("fixes_gpu_side") or {"n": 0}
    if g["n"]:
        print(f"   ... the GPU's busy time after the fix against the variant's own trace: n {g['n']}, median |err| "
              f"{100 * g['median_abs']:.1f} %, worst {100 * g['worst']:+.1f} %")
    print(f"   plan's first fix == measured best: {p['match']} of {p['counted']} counted ({p['tied']} more tied)")
    print(f"   healthy jobs with a fix predicted > {WORTH}x that measured less: {len(h['flagged'])} of {h['jobs']} "
          f"{h['flagged'] or ''}")
    if h.get("found"):
        print(f"   ... and with a fix predicted > {WORTH}x that measured > {WORTH}x too (not healthy after all): "
              f"{h['found']}")
    print(f"   physical-bound violations: {s['bound_violations']} (jobs whose measured un-profiled step is itself "
          f"below the traced GPU busy: {s.get('truth_below_busy', 0)})")
    print(f"   findings' stated bounds a measurement breaks (a saving above it, or a step below its floor): {s.get('measured_over_bound', 0)}")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lab", required=True, help="directory holding the traces (loose or in traces_*.tar)")
    ap.add_argument("--results", nargs="+", required=True, help="results_<tag>.jsonl files (one per process)")
    ap.add_argument("--gpudoctor", required=True, help="path of the gpudoctor binary")
    ap.add_argument("--split", default=os.path.join(HERE, "split.json"))
    ap.add_argument("--trace-tag", help="prefer the traces of these proc tags, in order: G,C (traces_<tag>_k.tar)")
    ap.add_argument("--anchor", action="store_true",
                    help="pass the measured base step as --measured-step-ms (scores the fixes alone)")
    ap.add_argument("--analyze-arg", action="append", default=[], help="extra argument for gpudoctor analyze")
    ap.add_argument("--jobs", help="comma-separated subset")
    ap.add_argument("--json", help="write every figure to this file")
    ap.add_argument("--host-speed", type=float, default=0, metavar="RATIO",
                    help="set aside each process's rounds in which a host probe was over RATIO x the lab's median "
                         "probe (the host ran slower than the machine does), e.g. 1.5; 0 keeps every round (default)")
    return ap.parse_args()


def main():
    args = parse_args()
    split = load_split(args.split)
    recs = load_results(args.results)
    med_probe, aside, marked = set_aside_slow_rounds(recs, args.host_speed)  # the lab's median: every job's
    if args.jobs:
        keep = set(args.jobs.split(","))
        recs = {j: r for j, r in recs.items() if j in keep}
    if med_probe:
        print(f"host speed: the lab's median probe {med_probe:.0f} ns; {aside} rounds with a probe over "
              f"{args.host_speed:g}x it set aside; {marked} processes with no other round kept whole")
    idx = index_traces(args.lab)
    with tempfile.TemporaryDirectory(prefix="vlab_score_") as tmp:
        jobs = [score_job(j, recs[j], split, args, idx, tmp) for j in sorted(recs)]
    for j in jobs:
        print_job(j)
    print()
    summary = {name: summarize(jobs, name) for name in ("holdout", "fit", "all")}
    for name, s in summary.items():
        print_summary(name, s)
    unscored = [(j["job"], r["variant"], r["note"]) for j in jobs for r in j["fixes"] if r["err"] is None]
    print(f"\nunscored variants ({len(unscored)}):")
    for job, v, note in unscored:
        print(f"   {job} / {v}: {note}")
    violations = [v for j in jobs for v in j["bounds"]]
    print(f"\nphysical-bound violations ({len(violations)}):" + "".join(f"\n   {v}" for v in violations))
    over = [v for j in jobs for v in j.get("over_bound") or []]
    print(f"\nfindings' stated bounds a measurement breaks ({len(over)}):" + "".join(f"\n   {v}" for v in over))
    missing = sorted(set(split) - set(recs))
    if missing:
        print(f"\njobs of the split without results: {missing}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "host_speed": {"ratio": args.host_speed, "median_probe_ns": med_probe,
                                                          "rounds_set_aside": aside, "kept_whole": marked},
                       "jobs": jobs, "unscored": unscored, "bound_violations": violations,
                       "measured_over_bound": over},
                      f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())

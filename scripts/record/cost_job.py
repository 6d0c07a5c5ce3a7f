"""One timed run of a validation-lab job variant, for the recorder's cost benchmark (cost_by_job.sh).

    python3 cost_job.py JOB [--variant base] [--seconds 4] [--windows 3]

Builds validation/jobs/JOB.py's variant, warms it up, then times W windows of about S/W seconds each:
torch.cuda.synchronize() around each window, never inside it (the steps themselves run as the job's loop
does, the host ahead of the GPU). Prints one JSON line: job, variant, the windows' ms per step, their
median, the steps per window. The same process runs plain or under `gpudoctor record`; nothing here knows
which.
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.join(HERE, "..", "..", "validation")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("job")
    ap.add_argument("--variant", default="base")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--windows", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, LAB)
    import importlib.util

    import torch
    spec = importlib.util.spec_from_file_location("cost_job_" + args.job, os.path.join(LAB, "jobs", args.job + ".py"))
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.join(LAB, "jobs"))
    spec.loader.exec_module(mod)
    job = mod.build(args.variant)
    from run_lab import steps  # n steps bracketed by synchronize: ms per step, as the lab times

    def run(n):
        return steps(torch, job, n)

    run(max(5, job.warmup_steps))
    probe = run(5)
    n = max(5, int(args.seconds / args.windows * 1000 / max(probe, 1e-3)))
    windows = [round(run(n), 4) for _ in range(args.windows)]
    job.close()
    print(json.dumps({"job": args.job, "variant": args.variant, "window_ms": windows,
                      "median_ms": statistics.median(windows), "steps_per_window": n}), flush=True)


if __name__ == "__main__":
    main()

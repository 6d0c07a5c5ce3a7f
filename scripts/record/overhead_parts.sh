#!/usr/bin/env bash
# What each part of a recording costs: the same PyTorch job (torch_job.py) plain and recorded with
# one set of CUPTI activity kinds at a time (GPUDOCTOR_RECORD_KINDS), interleaved, REPEATS rounds.
# Prints each configuration's median step time against plain. ARGS go to torch_job.py.
#   scripts/record/overhead_parts.sh OUT_DIR CARRY_DIR REPEATS [ARGS...]
set -u
out=${1:?usage: overhead_parts.sh OUT_DIR CARRY_DIR REPEATS [ARGS...]}; carry=$(cd "$2" && pwd); repeats=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
configs=("plain" "kernel" "kernel,memcpy,memset,device" "kernel,memcpy,memset,device,sync"
         "kernel,memcpy,memset,device,runtime" "kernel,memcpy,memset,device,driver" "all")
for r in $(seq 1 "$repeats"); do
  for c in "${configs[@]}"; do
    if [ "$c" = plain ]; then python3 "$here/torch_job.py" "$@"
    elif [ "$c" = all ]; then "$carry/gpudoctor" record -q -o "$out/tmp" -- python3 "$here/torch_job.py" "$@"
    else GPUDOCTOR_RECORD_KINDS=$c "$carry/gpudoctor" record -q -o "$out/tmp" -- python3 "$here/torch_job.py" "$@"
    fi | tail -1 | sed "s/^{/{\"config\": \"$c\", \"round\": $r, /" >> "$out/parts.jsonl"
    rm -rf "$out/tmp"
  done
done
python3 - "$out/parts.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows: by.setdefault(r["config"], []).append(r["median_step_ns"])
base = statistics.median(by["plain"])
for k, v in by.items():
    m = statistics.median(v)
    print(f"{k:40s} {m/1e6:8.3f} ms  {100*(m/base-1):+6.2f} %  runs {[round(x/1e6,3) for x in v]}")
PY

#!/usr/bin/env bash
# One device run of `gpudoctor record`'s checks (issue 21), on one GPU: a CUDA C++ program, a PyTorch
# job (launch-period steps and NVTX steps), a JAX step, torchrun with two processes sharing the GPU
# (gloo), the profiler already holding CUPTI, and the overhead: the same job's step time plain,
# recorded, recorded detached and under torch.profiler(record_shapes=True), interleaved, REPEATS times.
# Needs the carried binaries (scripts/pack_carry.sh build .carry; the CUDA program is built there).
#   scripts/record/record_checks.sh OUT_DIR [CARRY_DIR (.carry)] [REPEATS (3)]
set -u
out=${1:?usage: record_checks.sh OUT_DIR [CARRY_DIR] [REPEATS]}
carry=$(cd "${2:-.carry}" && pwd)
repeats=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
gd="$carry/gpudoctor"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
log() { echo "== $* ($(date +%T))"; }

log env
nvidia-smi -L
ls /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* /usr/local/cuda/lib64/libcupti.so* 2>/dev/null
python3 -c "import torch, jax; print('torch', torch.__version__, 'jax', jax.__version__)" 2>&1 | tail -1

log "cuda program"
"$gd" record -o "$out/cuda" --json "$out/cuda.record.json" -- "$carry/steps" 20 30 8 > "$out/cuda.program.json"
echo "record rc=$?"; cat "$out/cuda.program.json"
"$gd" analyze "$out/cuda" --json "$out/cuda.analyze.json" > "$out/cuda.analyze.txt" 2>&1; echo "analyze rc=$?"
head -40 "$out/cuda.analyze.txt"

log "torch, launch-period steps"
"$gd" record -o "$out/torch" --json "$out/torch.record.json" -- python3 "$here/torch_job.py" --steps 20 --warmup 5
echo "record rc=$?"
"$gd" analyze "$out/torch" --json "$out/torch.analyze.json" > "$out/torch.analyze.txt" 2>&1; echo "analyze rc=$?"
head -60 "$out/torch.analyze.txt"
python3 "$here/torch_job.py" --steps 5 --warmup 5 --profile --trace "$out/torch.kineto.json" | tail -1

log "torch, NVTX steps"
"$gd" record -o "$out/torch_nvtx" --nvtx-step '^train_step$' -- python3 "$here/torch_job.py" --steps 10 --warmup 3 --nvtx
echo "record rc=$?"
"$gd" analyze "$out/torch_nvtx" > "$out/torch_nvtx.analyze.txt" 2>&1; echo "analyze rc=$?"; head -20 "$out/torch_nvtx.analyze.txt"

log "jax"
"$gd" record -o "$out/jax" --json "$out/jax.record.json" -- python3 "$here/jax_job.py" --steps 20
echo "record rc=$?"
"$gd" analyze "$out/jax" > "$out/jax.analyze.txt" 2>&1; echo "analyze rc=$?"; head -30 "$out/jax.analyze.txt"

log "torchrun, 2 processes on one GPU (gloo)"
timeout 180 "$gd" record -o "$out/ddp" --json "$out/ddp.record.json" -- \
  torchrun --standalone --nproc-per-node 2 "$here/torch_job.py" --ddp --steps 10 --warmup 3
echo "record rc=$?"
"$gd" analyze "$out/ddp" > "$out/ddp.analyze.txt" 2>&1; echo "analyze rc=$?"; head -30 "$out/ddp.analyze.txt"

log "profiler inside a recorded job"
timeout 120 "$gd" record -o "$out/coexist" -- python3 "$here/torch_job.py" --steps 5 --warmup 2 --profile \
  --trace "$out/coexist.kineto.json" > "$out/coexist.stdout" 2> "$out/coexist.stderr"
echo "record rc=$?"; tail -5 "$out/coexist.stderr"; tail -1 "$out/coexist.stdout"
ls -la "$out/coexist" "$out/coexist.kineto.json" 2>&1 | tail -4

log "overhead ($repeats rounds: plain, record, detached, all-api, profiler)"
for r in $(seq 1 "$repeats"); do
  for mode in plain record detached allapi profiler; do
    d="$out/ovh/$mode.$r"; mkdir -p "$out/ovh"
    case $mode in
      plain) python3 "$here/torch_job.py" --steps 60 --warmup 15 ;;
      record) "$gd" record -q -o "$d" -- python3 "$here/torch_job.py" --steps 60 --warmup 15 ;;
      detached) "$gd" record -q -o "$d" --detached --signal USR2 -- python3 "$here/torch_job.py" --steps 60 --warmup 15 ;;
      allapi) "$gd" record -q -o "$d" --all-api -- python3 "$here/torch_job.py" --steps 60 --warmup 15 ;;
      profiler) python3 "$here/torch_job.py" --steps 60 --warmup 15 --profile ;;
    esac | tail -1 | sed "s/^{/{\"config\": \"$mode\", \"round\": $r, /" >> "$out/overhead.jsonl"
    rm -rf "$d"
  done
done
python3 - "$out/overhead.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows: by.setdefault(r["config"], []).append(r["median_step_ns"])
base = statistics.median(by["plain"])
for k, v in by.items():
    m = statistics.median(v)
    print(f"{k:10s} median of {len(v)} runs' medians {m/1e6:8.3f} ms  vs plain {100*(m/base-1):+6.2f} %  runs: {[round(x/1e6,3) for x in v]}")
PY
du -sh "$out"/*

#!/usr/bin/env bash
# One device run of `gpudoctor record`'s checks (issue 21), on one GPU: a CUDA C++ program, a PyTorch
# job (launch-period steps and NVTX steps), a JAX step, torchrun with two processes sharing the GPU
# (gloo), the profiler already holding CUPTI, and the overhead: the same job's step time plain,
# recorded, recorded detached and under torch.profiler(record_shapes=True), interleaved, REPEATS times.
# Needs the carried binaries (scripts/device/pack_carry.sh build .carry; the CUDA program is built there).
#   [PARTS=checks,overhead] scripts/record/record_checks.sh OUT_DIR [CARRY_DIR (.carry)] [REPEATS (3)]
# PARTS=checks runs the recordings only, PARTS=overhead the step-time comparison only.
set -u
final=${1:?usage: record_checks.sh OUT_DIR [CARRY_DIR] [REPEATS]}
out="$final/work"  # everything goes here; packed into OUT_DIR/record_checks.tgz at the end
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

parts=",${PARTS:-checks,overhead},"
if [[ $parts == *,checks,* ]]; then
log "cuda program"
"$gd" record -o "$out/cuda" --json "$out/cuda.record.json" -- "$carry/steps" 20 30 8 > "$out/cuda.program.json"
echo "record rc=$?"; cat "$out/cuda.program.json"
"$gd" analyze "$out/cuda" --json "$out/cuda.analyze.json" > "$out/cuda.analyze.txt" 2>&1; echo "analyze rc=$?"
head -40 "$out/cuda.analyze.txt"

log "torch, launch-period steps"
"$gd" record -o "$out/torch" --json "$out/torch.record.json" -- python3 "$here/torch_job.py" --steps 8 --warmup 2 --layers 2 --dim 256 --seq 128
echo "record rc=$?"
"$gd" analyze "$out/torch" --json "$out/torch.analyze.json" > "$out/torch.analyze.txt" 2>&1; echo "analyze rc=$?"
head -60 "$out/torch.analyze.txt"

log "torch, NVTX steps"
"$gd" record -o "$out/torch_nvtx" --nvtx-step '^train_step$' -- python3 "$here/torch_job.py" --steps 6 --warmup 2 --layers 2 --dim 256 --seq 128 --nvtx
echo "record rc=$?"
"$gd" analyze "$out/torch_nvtx" > "$out/torch_nvtx.analyze.txt" 2>&1; echo "analyze rc=$?"; head -20 "$out/torch_nvtx.analyze.txt"

log "torch, --steps 3-5 of 8 NVTX steps"
"$gd" record -o "$out/torch_steps" --json "$out/torch_steps.record.json" --steps 3-5 --nvtx-step '^train_step$' -- \
  python3 "$here/torch_job.py" --steps 6 --warmup 2 --layers 2 --dim 256 --seq 128 --nvtx
echo "record rc=$?"
python3 "$here/gdrec_dump.py" "$out"/torch_steps/*.gdrec
"$gd" analyze "$out/torch_steps" > "$out/torch_steps.analyze.txt" 2>&1; echo "analyze rc=$?"; head -12 "$out/torch_steps.analyze.txt"
log "--steps on a job without step ranges (expect one line, exit 1)"
"$gd" record -o "$out/torch_nosteps" --steps 3-5 -- python3 "$here/torch_job.py" --steps 4 --warmup 1 --layers 1 --dim 128 --seq 64 | tail -2
echo "record rc=${PIPESTATUS[0]}"

log "NCCL payloads: DDP over NCCL, one rank"
python3 -c "import torch; print('torch nccl', torch.cuda.nccl.version())"
BACKEND=nccl timeout 180 "$gd" record -o "$out/nccl1" --json "$out/nccl1.record.json" -- \
  torchrun --standalone --nproc-per-node 1 "$here/torch_job.py" --ddp --steps 6 --warmup 2 --layers 2 --dim 256 --seq 128
echo "record rc=$?"
python3 "$here/gdrec_dump.py" "$out"/nccl1/*.gdrec | tail -2
"$gd" analyze "$out/nccl1" > "$out/nccl1.analyze.txt" 2>&1; echo "analyze rc=$?"; grep -i -A6 "collective\|nccl" "$out/nccl1.analyze.txt" | head -30
log "NCCL payloads: two ranks on one GPU (NCCL_MULTI_RANK_GPU_ENABLE=1; NCCL before 2.30 refuses)"
BACKEND=nccl NCCL_MULTI_RANK_GPU_ENABLE=1 timeout 180 "$gd" record -o "$out/nccl2" --json "$out/nccl2.record.json" -- \
  torchrun --standalone --nproc-per-node 2 "$here/torch_job.py" --ddp --steps 6 --warmup 2 --layers 2 --dim 256 --seq 128 \
  > "$out/nccl2.log" 2>&1
echo "record rc=$?"; grep -E "WARN|Error|error" "$out/nccl2.log" | head -5
for f in "$out"/nccl2/*.gdrec; do [ -e "$f" ] && python3 "$here/gdrec_dump.py" "$f" | tail -2; done
"$gd" analyze "$out/nccl2" > "$out/nccl2.analyze.txt" 2>&1; echo "analyze rc=$?"; grep -i -A6 "collective\|nccl" "$out/nccl2.analyze.txt" | head -30

log "jax"
"$gd" record -o "$out/jax" --json "$out/jax.record.json" -- python3 "$here/jax_job.py" --steps 20
XLA_FLAGS=--xla_gpu_autotune_level=0 "$gd" record -o "$out/jax_small" -- python3 "$here/jax_job.py" --steps 10 --warmup 2

log "attach window: --delay 9 --duration 2 on a 1500-step job"
"$gd" record -o "$out/window" --delay 9 --duration 2 -- python3 "$here/torch_job.py" --steps 1500 --warmup 5 | cut -c1-160
"$gd" analyze "$out/window" 2>&1 | head -3; rm -rf "$out/window"
echo "record rc=$?"
"$gd" analyze "$out/jax" > "$out/jax.analyze.txt" 2>&1; echo "analyze rc=$?"; head -30 "$out/jax.analyze.txt"

log "torchrun, 2 processes on one GPU (gloo)"
timeout 180 "$gd" record -o "$out/ddp" --json "$out/ddp.record.json" -- \
  torchrun --standalone --nproc-per-node 2 "$here/torch_job.py" --ddp --steps 6 --warmup 2 --layers 2 --dim 256 --seq 128
echo "record rc=$?"
"$gd" analyze "$out/ddp" > "$out/ddp.analyze.txt" 2>&1; echo "analyze rc=$?"; head -30 "$out/ddp.analyze.txt"

log "profiler before CUDA, inside a recorded job"
"$gd" record -o "$out/profiler_first" -- python3 "$here/profiler_first.py"; echo "record rc=$?"
log "profiler inside a recorded job"
timeout 120 "$gd" record -o "$out/coexist" -- python3 "$here/torch_job.py" --steps 5 --warmup 2 --profile \
  --trace "$out/coexist.kineto.json" > "$out/coexist.stdout" 2> "$out/coexist.stderr"
echo "record rc=$?"; tail -5 "$out/coexist.stderr"; tail -1 "$out/coexist.stdout"
ls -la "$out/coexist" "$out/coexist.kineto.json" 2>&1 | tail -4

fi  # checks

if [[ $parts == *,overhead,* ]]; then
log "overhead ($repeats rounds of plain, record, detached, profiler)"
# Two jobs: the launch-bound one (about 300 kernels of ~10 us a step) and a GPU-bound one.
small="--steps 60 --warmup 15"
big="--steps 20 --warmup 3 --batch 64 --dim 1024 --layers 8"
for job in small big; do
  args=${!job}
  for r in $(seq 1 "$repeats"); do
    for mode in plain record detached profiler; do
      d="$out/ovh/$mode.$r"; mkdir -p "$out/ovh"
      case $mode in
        plain) python3 "$here/torch_job.py" $args ;;
        record) "$gd" record -q -o "$d" -- python3 "$here/torch_job.py" $args ;;
        detached) "$gd" record -q -o "$d" --detached --signal USR2 -- python3 "$here/torch_job.py" $args ;;
        profiler) python3 "$here/torch_job.py" $args --profile ;;
      esac 2>/dev/null | tail -1 | sed "s/^{/{\"job\": \"$job\", \"config\": \"$mode\", \"round\": $r, /" >> "$out/overhead.jsonl"
      rm -rf "$d"
    done
  done
done
python3 - "$out/overhead.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for job in ("small", "big"):
    by = {}
    for r in rows:
        if r["job"] == job: by.setdefault(r["config"], []).append(r["median_step_ns"])
    if "plain" not in by: continue
    base = statistics.median(by["plain"])
    for k, v in by.items():
        m = statistics.median(v)
        print(f"{job:5s} {k:15s} median of {len(v)} runs' medians {m/1e6:9.3f} ms  vs plain {100*(m/base-1):+7.2f} %  runs {[round(x/1e6,3) for x in v]}")
    if "record" in by and "profiler" in by:
        rec, prof = (statistics.median(by[k]) / base - 1 for k in ("record", "profiler"))
        print(f"{job:5s} record's inflation {100*rec:+.2f} % is {rec/prof if prof else float('nan'):.3f} of the profiler's ({100*prof:+.2f} %)")
PY
rm -rf "$out/ovh"
fi  # overhead
rec_dirs="cuda torch torch_nvtx torch_steps nccl1 nccl2 jax jax_small ddp profiler_first coexist"
[[ $parts == *,checks,* ]] && (cd "$out" && tar czf recordings.tgz $rec_dirs 2>/dev/null; rm -rf $rec_dirs torch_nosteps)
du -sh "$out"/*
tar czf "$final/record_checks.tgz" -C "$final" work && rm -rf "$out"

#!/usr/bin/env bash
# On a GPU machine (budget: under 6 minutes on one H200; the step limits sum to 350 s, expected 2-3 min): the bench gpu unit tests, `gpudoctor bench gpu`
# (tables, JSON, ceilings), PyTorch's matmul / SDPA (cuDNN, flash) on the same shapes in the same run,
# `analyze --ceilings` on the bundled example with the measured ceilings, and OUT_DIR/summary.md
# comparing them. Each step has a time limit; the summary lists each step's exit status.
#   scripts/device/gpu_check_bench.sh OUT_DIR [GPUDOCTOR_BIN (default: build/gpudoctor)]
set -u
out=${1:?usage: scripts/device/gpu_check_bench.sh OUT_DIR [GPUDOCTOR_BIN]}
here=$(cd "$(dirname "$0")" && pwd)
bin=${2:-$here/../build/gpudoctor}
mkdir -p "$out"
status="$out/status.txt"
: > "$status"
step() {  # step NAME SECONDS CMD...: stdout to OUT/NAME.out, stderr to OUT/NAME.err, exit status to status.txt
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout --signal=TERM --kill-after=10 "$limit" "$@" > "$out/$name.out" 2> "$out/$name.err"
  local rc=$?
  echo "$name: exit $rc in $((SECONDS - t0)) s (limit $limit s)" | tee -a "$status"
  return $rc
}
# cuBLASLt 13 for bench gpu (dlopen): the loader's path or /usr/local/cuda; else the one PyTorch's wheel brings.
if [ -z "${GPUDOCTOR_CUBLASLT_LIBRARY:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcublasLt.so.13' \
   && [ ! -e /usr/local/cuda/lib64/libcublasLt.so.13 ]; then
  lt=$(python3 -c 'import glob, os, site; print(next(iter(sorted(p for d in site.getsitepackages() for p in glob.glob(os.path.join(d, "nvidia", "**", "libcublasLt.so.13*"), recursive=True))), ""))' 2>/dev/null)
  if [ -n "$lt" ]; then export GPUDOCTOR_CUBLASLT_LIBRARY=$lt; echo "cuBLASLt from PyTorch's wheel: $lt" | tee -a "$status"; fi
fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv; nvidia-smi topo -m; } > "$out/nvidia_smi.txt" 2>&1
# 1. Correctness of every kernel on small shapes (the binary's own check runs again in step 2).
tests=$(dirname "$bin")/gpudoctor_gpu_tests
if [ -x "$tests" ]; then step gpu_unit_tests 45 "$tests" --gtest_brief=1; fi
# 2. The measurement: text tables on stdout, every figure as JSON, the ceilings file for analyze.
step bench_gpu 180 "$bin" bench gpu --json "$out/bench_gpu.json" --ceilings-out "$out/ceilings.json"
# 3. PyTorch on the same shapes.
step torch_gpu_bench 110 python3 "$here/torch_gpu_bench.py"
# 4. analyze --ceilings with what was just measured (the bundled 2 x H200 example, 1 TFLOP per step as an example).
if [ -s "$out/ceilings.json" ]; then
  step analyze_ceilings 15 "$bin" analyze -q "$here/../examples/ddp_bf16_flash" --ceilings "$out/ceilings.json" --flops-per-step 1e12
fi
# 5. The comparison.
if [ -s "$out/bench_gpu.json" ]; then
  python3 "$here/gpu_bench_summary.py" "$out/bench_gpu.json" "$out/torch_gpu_bench.out" > "$out/summary.md" 2> "$out/summary.err"
  echo "summary: exit $? ($out/summary.md)" | tee -a "$status"
fi

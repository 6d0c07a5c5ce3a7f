#!/usr/bin/env bash
# Issue 10's runs on a 4- or 8-GPU node (nvidia-h200-x4 / -x8), one phase per device call (each under
# 10 minutes), outputs under OUT_DIR/<phase>. Needs the carried binaries (scripts/device/pack_carry.sh).
#   scripts/device/gpu_node_scale.sh topo    OUT_DIR [CARRY_DIR]  # topo vs nvidia-smi, --measure, place K=2..N vs measured
#   scripts/device/gpu_node_scale.sh bench   OUT_DIR [CARRY_DIR]  # nccl bench, all 7 collectives, 8 B - 8 GB
#   scripts/device/gpu_node_scale.sh tune    OUT_DIR [CARRY_DIR]  # nccl tune allreduce, allgather, reducescatter (COLLS=)
#   scripts/device/gpu_node_scale.sh verify  OUT_DIR [CARRY_DIR]  # default vs plugin vs PyTorch, 8 B - 8 GB
#     (each device call starts with an empty OUT_DIR: copy the tune phase's tuner.csv to CARRY_DIR/tuner_node.csv first)
# The tune phase on 8 GPUs may need COLLS=allreduce to fit one call.
#   scripts/device/gpu_node_scale.sh trace   OUT_DIR [CARRY_DIR]  # a DDP trace on every GPU, then analyze
set -u
phase=${1:?usage: scripts/device/gpu_node_scale.sh topo|bench|tune|verify|trace OUT_DIR [CARRY_DIR]}
out=${2:?usage: scripts/device/gpu_node_scale.sh PHASE OUT_DIR [CARRY_DIR]}
carry=$(cd "${3:-.carry}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export NCCL_NVLS_ENABLE=0
n=$(nvidia-smi -L | wc -l)
mkdir -p "$out/$phase"
o=$out/$phase
case $phase in
topo)
  timeout 240 "$here/gpu_check_topo.sh" "$o" "$carry/gpudoctor" >/dev/null 2>&1
  tail -n +2 "$o/topo_measure_json.txt" >"$o/measure.json"  # the check's own --measure --json - (its first line is the command)
  places=()
  for k in $(seq 2 "$n"); do
    "$carry/gpudoctor" place --gpus "$k" --json - >"$o/place_$k.json" 2>>"$o/place.err" && places+=("$o/place_$k.json")
  done
  cat "$o/summary.txt"
  [ ${#places[@]} -gt 0 ] && python3 "$here/place_vs_measured.py" "$o/measure.json" "${places[@]}" | tee "$o/place_vs_measured.txt"
  ;;
bench)
  timeout 540 "$carry/gpudoctor" nccl bench -g "$n" -b 8 -e 8G -f 4 --collectives all -n 20 -w 5 >"$o/nccl_bench.txt" 2>"$o/nccl_bench.err"
  echo "nccl bench exit $?"; grep -E '^#|  8589934592 |  2147483648 ' "$o/nccl_bench.txt" | head -40
  ;;
tune)
  GPUS=$n COLLS=${COLLS:-allreduce,allgather,reducescatter} timeout 570 "$here/nccl_verify_gpu.sh" tune "$carry" "$o"
  ;;
verify)
  if [ -f "$out/tune/tuner.csv" ]; then cp "$out/tune/tuner.csv" "$o/"
  elif [ -f "$carry/tuner_node.csv" ]; then cp "$carry/tuner_node.csv" "$o/tuner.csv"
  else echo "no tuner configuration: run the tune phase, then copy its tuner.csv to $carry/tuner_node.csv"; exit 1; fi
  GPUS=$n timeout 570 "$here/nccl_verify_gpu.sh" bench "$carry" "$o"
  tar czf "$o/raw.tgz" -C "$o" raw && rm -rf "$o/raw"  # few files travel back
  ;;
trace)
  timeout 240 torchrun --nproc-per-node "$n" "$here/../testdata/make_traces.py" --scenario bf16_flash --out "$o" >"$o/make_traces.txt" 2>&1
  echo "make_traces exit $?"
  "$carry/gpudoctor" analyze "$o" >"$o/analyze.txt" 2>&1; echo "analyze exit $?"; head -40 "$o/analyze.txt"
  ;;
*) echo "unknown phase $phase"; exit 2 ;;
esac

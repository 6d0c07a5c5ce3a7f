#!/usr/bin/env bash
# On a GPU machine: runs `gpudoctor topo` (text, --json, --nccl-xml, --measure) and `place --gpus 2`
# beside `nvidia-smi topo -m`, compares the GPU matrix cell by cell, and runs one NCCL allreduce with
# the written XML as NCCL_TOPO_FILE. Every output goes to OUT_DIR; the summary is OUT_DIR/summary.txt.
#   scripts/device/gpu_check_topo.sh OUT_DIR [GPUDOCTOR_BIN (default: build/gpudoctor)]
set -u
out=${1:?usage: scripts/device/gpu_check_topo.sh OUT_DIR [GPUDOCTOR_BIN]}
bin=${2:-$(cd "$(dirname "$0")/../.." && pwd)/build/gpudoctor}
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
run() {  # run NAME CMD...: stdout+stderr to OUT/NAME.txt, exit status to the summary
  local name=$1; shift
  { echo "\$ $*"; "$@"; } > "$out/$name.txt" 2>&1
  local rc=$?
  echo "$name: exit $rc" >> "$summary"
  return $rc
}
run nvidia_smi_topo nvidia-smi topo -m
run nvidia_smi_nvlink nvidia-smi nvlink --status
run topo "$bin" topo
run topo_json "$bin" topo --json -
run topo_nccl_xml "$bin" topo --nccl-xml "$out/nccl_topo.xml"
run topo_measure "$bin" topo --measure
run topo_measure_json "$bin" topo --measure --json -
run place_2 "$bin" place --gpus 2
run place_1_json "$bin" place --gpus 1 --json -
run measure_check "$(dirname "$0")/../checks/check_topo_measure.sh" "$bin"

# The GPU-to-GPU cells of both matrices and each GPU's CPU and NUMA affinity, one "GPUa GPUb CELL" per line (nvidia-smi's colours removed).
cells() {
  sed 's/\x1b\[[0-9;]*m//g' "$1" | awk '
    !ngpu && /GPU0/ && !/^GPU/ { for (i = 1; i <= NF; i++) if ($i ~ /^GPU[0-9]+$/) ngpu++; next }
    ngpu && /^GPU[0-9]+[ \t]/ { for (i = 2; i <= ngpu + 1; i++) print $1, "GPU" (i - 2), $i
                                 print $1, "CPU-affinity", $(ngpu + 2); print $1, "NUMA-affinity", $(ngpu + 3) }'
}
cells "$out/nvidia_smi_topo.txt" > "$out/cells_nvidia_smi.txt"
cells "$out/topo.txt" > "$out/cells_gpudoctor.txt"
if [ -s "$out/cells_nvidia_smi.txt" ] && diff "$out/cells_nvidia_smi.txt" "$out/cells_gpudoctor.txt" > "$out/cells_diff.txt"; then
  echo "matrix: gpudoctor topo agrees with nvidia-smi topo -m ($(wc -l < "$out/cells_gpudoctor.txt") cells)" >> "$summary"
else
  echo "matrix: DIFFERS from nvidia-smi topo -m (see cells_diff.txt)" >> "$summary"
fi

# NCCL accepts the file: one allreduce with NCCL_TOPO_FILE set (nccl bench is in CUDA builds).
if [ -s "$out/nccl_topo.xml" ]; then
  NCCL_TOPO_FILE="$out/nccl_topo.xml" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,ENV \
    run nccl_with_topo_file "$bin" nccl bench -b 64M -e 64M --collectives allreduce
  grep -m3 -E "NCCL_TOPO_FILE|[Tt]opology file|busbw|#wrong" "$out/nccl_with_topo_file.txt" >> "$summary" || true
  grep -iE "WARN" "$out/nccl_with_topo_file.txt" | head -5 >> "$summary" || true
fi
grep -A4 -m1 "Measured copy bandwidth" "$out/topo_measure.txt" >> "$summary" || true
cat "$summary"

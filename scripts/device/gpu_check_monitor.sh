#!/usr/bin/env bash
# On a GPU machine: `gpudoctor monitor` beside nvidia-smi under a load we start (scripts/device/gpu_load.py
# --phases 6 on every GPU: full, half and quarter duty, idle, 16 GiB more memory, host<->device copies),
# sampled over the same 50 s; then the comparison, overall and per phase
# (scripts/device/compare_monitor_smi.py), the monitor's overhead with NVML, and a Prometheus scrape.
#   scripts/device/gpu_check_monitor.sh OUT_DIR [BIN_DIR (gpudoctor, scrape_load)]
set -u
out=${1:?usage: scripts/device/gpu_check_monitor.sh OUT_DIR [BIN_DIR]}
bindir=${2:-$(cd "$(dirname "$0")/../.." && pwd)/build}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
ngpu=$(nvidia-smi -L | wc -l)
torchrun --nproc_per_node "$ngpu" --master_port 29700 "$here/gpu_load.py" --phases 6 >"$out/load.txt" 2>&1 &
load=$!
sleep 12  # past start-up, into the steady loop
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,memory.total,power.draw,temperature.gpu,clocks.sm \
  --format=csv,noheader,nounits -lms 1000 >"$out/smi_query.csv" 2>&1 &
smi=$!
nvidia-smi dmon -s pucmt -o T -d 1 -c 50 >"$out/dmon.txt" 2>&1 &
dmon=$!
"$bindir/gpudoctor" monitor -q --interval 1 --duration 50 --record "$out/monitor.jsonl" 2>"$out/monitor.err"
echo "monitor exit $?" >"$out/summary.txt"
kill $smi 2>/dev/null; wait $dmon 2>/dev/null
nvidia-smi -q -d POWER,MEMORY,UTILIZATION,CLOCK,TEMPERATURE >"$out/smi_q.txt" 2>&1 &
"$bindir/gpudoctor" monitor --once --json - >"$out/monitor_once.json" 2>>"$out/monitor.err"
wait $load
grep '^{' "$out/load.txt" >"$out/phases.jsonl"
python3 "$here/compare_monitor_smi.py" "$out/monitor.jsonl" "$out/smi_query.csv" "$out/phases.jsonl" >>"$out/summary.txt" 2>&1
"$bindir/gpudoctor" monitor report "$out/monitor.jsonl" >>"$out/summary.txt" 2>&1
# Overhead with NVML, and the exporter under load (no GPU load now: the cost is the monitor's own).
"$(cd "$here/.." && pwd)/bench/bench_monitor.sh" "$bindir" 10 >>"$out/summary.txt" 2>&1
cat "$out/summary.txt"

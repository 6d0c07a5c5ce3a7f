#!/usr/bin/env bash
# The GPU check of `gpudoctor nccl tune` + the tuner plugin (issue 6), on one node:
#   scripts/device/nccl_verify_gpu.sh tune  BIN_DIR OUT_DIR   # the sweep; writes OUT_DIR/tuner.csv
#   scripts/device/nccl_verify_gpu.sh bench BIN_DIR OUT_DIR   # default vs plugin vs PyTorch, 8 B - 8 GB
# BIN_DIR holds gpudoctor and libnccl-tuner-gpudoctor.so. Runs are interleaved (default, plugin,
# default, ...) so drift hits both sides alike; each is a fresh process.
set -euo pipefail
phase=$1 bin=$(realpath "$2") out=$(realpath "$3")
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
gpus=${GPUS:-2}
case $phase in
tune)
  /usr/bin/time -f "tune wall %e s" "$bin/gpudoctor" nccl tune -g "$gpus" -b 8 -e 64M -f 4 -n 20 -w 5 --repeats 5 --ctas 8,16 \
    --collectives "${COLLS:-allreduce}" --plugin "$bin/libnccl-tuner-gpudoctor.so" --out "$out/tuner.csv" >"$out/tune.txt" 2>"$out/tune.err" || { tail -5 "$out/tune.err"; exit 1; }
  tail -1 "$out/tune.err"; cat "$out/tune.txt"
  ;;
bench)
  [ -f "$out/tuner.csv" ] || { echo "no $out/tuner.csv: run the tune phase first"; exit 1; }
  mkdir -p "$out/raw"
  sweep=(-g "$gpus" -b 8 -e 8G -f 4 -n 20 -w 5 --collectives allreduce --out-of-place-only --json -)
  torchnccl=$(python3 -c "import nvidia.nccl,os;print(os.path.join(list(nvidia.nccl.__path__)[0],'lib','libnccl.so.2'))" 2>/dev/null || true)
  for i in 1 2 3 4 5; do
    # Correctness is checked in round 1 (every size, every group); later rounds only time.
    [ "$i" = 2 ] && sweep+=(--no-check)
    "$bin/gpudoctor" nccl bench "${sweep[@]}" >"$out/raw/default_$i.json"
    dbg=(); [ "$i" = 1 ] && dbg=(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING,ENV NCCL_DEBUG_FILE="$out/raw/plugin_nccl.%p.log")
    env "${dbg[@]}" NCCL_TUNER_PLUGIN="$bin/libnccl-tuner-gpudoctor.so" GPUDOCTOR_TUNER_CONFIG="$out/tuner.csv" \
      "$bin/gpudoctor" nccl bench "${sweep[@]}" >"$out/raw/plugin_$i.json"
    if [ "$i" -le 3 ]; then
      torchrun --nproc_per_node "$gpus" --master_port 29600 "$(dirname "$0")/torch_allreduce_bench.py" -b 8 -e 8G -f 4 -n 20 -w 5 \
        2>/dev/null | grep '^{' >"$out/raw/torch_$i.json"
      [ -n "$torchnccl" ] && GPUDOCTOR_NCCL_LIBRARY=$torchnccl "$bin/gpudoctor" nccl bench "${sweep[@]}" >"$out/raw/torchnccl_$i.json"
    fi
    echo "round $i done"
  done
  grep -h "TUNER\|gpudoctor tuner" "$out"/raw/plugin_nccl.*.log | head -20 >"$out/plugin_loaded.txt" || true
  python3 "$(dirname "$0")/nccl_verify_summary.py" "$out/raw" >"$out/summary.md"
  cat "$out/plugin_loaded.txt" "$out/summary.md"
  ;;
*) echo "usage: $0 tune|bench BIN_DIR OUT_DIR"; exit 2 ;;
esac

#!/usr/bin/env bash
# Benchmark of `gpudoctor analyze` on a large trace, against Python's json.load on the same file in
# the same run. Prints MB/s of JSON and peak RSS for each, and the speed-up with threads over
# several ranks. Usage: bench/bench_analyze.sh [BUILD_DIR] [SIZE_MB] [WORK_DIR]
set -euo pipefail
build=${1:-build}
size_mb=${2:-1100}
work=${3:-/tmp/gpudoctor-bench}
src=$(cd "$(dirname "$0")/.." && pwd)
example=$src/examples/ddp_bf16_flash/bf16_flash_rank0.pt.trace.json.gz
mkdir -p "$work"
big=$work/big_rank0.json
if [ ! -s "$big" ] || [ "$(stat -c %s "$big")" -lt $((size_mb * 1000000)) ]; then
  "$build/inflate_trace" "$example" "$big" --target-mb "$size_mb"
fi
bytes=$(stat -c %s "$big")
mb=$(awk -v b="$bytes" 'BEGIN{printf "%.1f", b/1e6}')
echo "trace: $big ($mb MB of JSON, inflated from the bundled example)"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
echo "cpu: $cpu, $(nproc) cores"

measure() {  # label, command...
  local label=$1; shift
  local t0 t1 rss
  sync; t0=$(date +%s.%N)
  /usr/bin/time -o "$work/time.txt" -f "%M" "$@" >/dev/null 2>&1
  t1=$(date +%s.%N)
  rss=$(tail -1 "$work/time.txt")
  awk -v l="$label" -v t0="$t0" -v t1="$t1" -v b="$bytes" -v r="$rss" \
    'BEGIN{s=t1-t0; printf "%-34s %8.2f s %9.0f MB/s %9.0f MB peak RSS (%.2fx the JSON)\n", l, s, b/1e6/s, r/1024, r*1024/b}'
}
cat "$big" > /dev/null  # warm the page cache for both contenders
echo
echo "one rank, end to end (read, analyze, report):"
# Five runs: shared VMs are noisy, so the best run is the machine's speed and the spread is shown.
for i in 1 2 3 4 5; do measure "gpudoctor analyze (run $i)" "$build/gpudoctor" analyze -q --threads 1 "$big"; done
measure "python3 json.load (no analysis)" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$big"

gz=$work/big_rank0.json.gz
if [ ! -s "$gz" ]; then gzip -1 -c "$big" > "$gz"; fi
echo
echo "the same trace gzipped ($(awk -v b="$(stat -c %s "$gz")" 'BEGIN{printf "%.0f", b/1e6}') MB on disk; MB/s counts JSON bytes):"
measure "gpudoctor analyze .json.gz" "$build/gpudoctor" analyze -q --threads 1 "$gz"

echo
echo "several ranks: threads scaling (ranks 0..3, each $((size_mb / 4)) MB)"
ranks=$work/ranks
mkdir -p "$ranks"
for r in 0 1 2 3; do
  f=$ranks/rank$r.json
  [ -s "$f" ] || "$build/inflate_trace" "$example" "$f" --target-mb $((size_mb / 4)) --rank $r 2>/dev/null
done
bytes=$(cat "$ranks"/rank*.json | wc -c)
cat "$ranks"/rank*.json > /dev/null
for i in 1 2 3; do
  measure "4 ranks, 1 thread (run $i)" "$build/gpudoctor" analyze -q --threads 1 "$ranks"
  measure "4 ranks, $(nproc) threads (run $i)" "$build/gpudoctor" analyze -q --threads "$(nproc)" "$ranks"
done

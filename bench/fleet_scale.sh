#!/usr/bin/env bash
# Cluster-scale benchmark (issue 22): N-rank jobs made from the bundled example's rank-0 trace
# with three injected faults (a slow rank, one rank's GC pause in one step, a slow pipeline stage),
# analyzed in the streaming mode; prints per N: files, MB of trace JSON, seconds, ranks/s, MB/s and
# peak RSS (from analyze's own JSON), scores every answer (scripts/fleet/fleet_score.py), and the
# ratio of the largest N's peak RSS to the smallest's. One core (--threads 1) and all cores.
#   bench/fleet_scale.sh [BUILD_DIR] [N...]        (default: build 128 1024)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(128 1024)
src=$here/examples/ddp_bf16_flash/bf16_flash_rank0.pt.trace.json.gz
work=${FLEET_WORK:-/tmp/gpudoctor_fleet_scale}
mkdir -p "$work"
printf "%6s %8s %9s %8s %9s %8s %10s %7s  %s\n" N threads MB seconds ranks/s MB/s peak_MB score faults
declare -A peak
for n in "${sizes[@]}"; do
  dir=$work/n$n
  if [ ! -f "$dir/expected.json" ]; then
    rm -rf "$dir"
    "$build/fleet_traces" "$src" "$dir" --ranks "$n" --stages 4 --repeat 3 --slow-rank 5 --gc $((n / 2 + 2)):7 \
      --slow-stage 2 2>/dev/null
  fi
  for threads in 1 0; do
    out=$dir/analyze_t$threads.json
    "$build/gpudoctor" analyze "$dir/traces" --stream -q --threads "$threads" --json "$out" >/dev/null
    score=ok
    python3 "$here/scripts/fleet/fleet_score.py" "$dir/expected.json" "$out" >"$dir/score_t$threads.txt" || score=FAIL
    read -r mb sec rps mbs rss th < <(python3 -c "
import json,sys; t=json.load(open(sys.argv[1]))['timing']
print(t['bytes']/1e6, t['seconds'], t['ranks_per_second'], t['mb_per_second'], t['peak_rss_bytes']/1e6, t['threads'])" "$out")
    printf "%6s %8s %9.0f %8.2f %9.1f %8.1f %10.1f %7s  %s\n" "$n" "$th" "$mb" "$sec" "$rps" "$mbs" "$rss" "$score" \
      "$(grep -c '^ok' "$dir/score_t$threads.txt")/$(wc -l <"$dir/score_t$threads.txt") checks"
    [ "$threads" = 0 ] && peak[$n]=$rss
  done
  # The MPI mode on this machine: 2 processes x 1 thread; its document must equal the streaming one's.
  if command -v mpirun >/dev/null 2>&1 && "$build/gpudoctor" analyze --help | grep -q -- --mpi; then
    out=$dir/analyze_mpi.json
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo \
      OMPI_MCA_oob_tcp_if_include=lo mpirun --oversubscribe -np 2 "$build/gpudoctor" analyze --mpi "$dir/traces" -q \
      --threads 1 --json "$out" >/dev/null 2>"$dir/mpi.err"
    same=$(python3 -c "
import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); a.pop('timing'); b.pop('timing')
print('same' if a==b else 'DIFFERENT')" "$dir/analyze_t0.json" "$out")
    read -r mb sec rps mbs rss < <(python3 -c "
import json,sys; t=json.load(open(sys.argv[1]))['timing']
print(t['bytes']/1e6, t['seconds'], t['ranks_per_second'], t['mb_per_second'], t['peak_rss_bytes']/1e6)" "$out")
    printf "%6s %8s %9.0f %8.2f %9.1f %8.1f %10.1f %7s  %s\n" "$n" "mpi 2x1" "$mb" "$sec" "$rps" "$mbs" "$rss" "$same" \
      "report vs streaming, timing apart"
  fi
done
first=${sizes[0]}
last=${sizes[-1]}
python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'peak RSS, all cores: N={sys.argv[3]} {b:.1f} MB vs N={sys.argv[4]} {a:.1f} MB: ratio {b/a:.3f}')" \
  "${peak[$first]}" "${peak[$last]}" "$last" "$first"

#!/usr/bin/env bash
# The monitor's overhead, printed as figures (a benchmark, not a test):
#  1. CPU time of `gpudoctor monitor` at 1 s and 0.1 s intervals (recording on, as in production);
#  2. Prometheus scrapes per second on loopback from a second process (bench/scrape_load, 2 threads,
#     bounded to SECONDS), while the monitor samples every 0.1 s, and whether sampling kept its pace
#     under that load (largest interval in the recording).
# Usage: bench/bench_monitor.sh BUILD_DIR [SECONDS] [extra monitor flags, e.g. --no-gpu]
set -euo pipefail
build=$1; secs=${2:-20}; shift; shift || true
bin=$build/gpudoctor
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for iv in 1 0.1; do
  /usr/bin/time -f "%U %S" -o "$tmp/time" "$bin" monitor -q --interval "$iv" --duration "$secs" --record "$tmp/r$iv.jsonl" "$@"
  read -r u s <"$tmp/time"
  python3 - "$iv" "$secs" "$u" "$s" "$tmp/r$iv.jsonl" <<'PY'
import json, sys
iv, secs, u, s, rec = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
n = sum(1 for _ in open(rec)) - 1
print(f"interval {iv:g} s: {n} samples in {secs:g} s, CPU {u+s:.2f} s = {100*(u+s)/secs:.2f} % of one core "
      f"({1e3*(u+s)/max(n,1):.2f} ms per sample)")
PY
done
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
"$bin" monitor -q --interval 0.1 --duration $((secs + 3)) --prometheus "$port" --record "$tmp/load.jsonl" "$@" &
mon=$!
sleep 1
"$build/scrape_load" "$port" 2 "$secs"
wait $mon
python3 - "$tmp/load.jsonl" <<'PY'
import json, sys
iv = [json.loads(l)["interval_s"] for l in list(open(sys.argv[1]))[1:]]
iv.sort()
print(f"sampling under scrape load: {len(iv)} samples, interval median {iv[len(iv)//2]*1e3:.1f} ms, max {iv[-1]*1e3:.1f} ms (target 100 ms)")
PY

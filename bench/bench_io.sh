#!/usr/bin/env bash
# The many-small-files problem measured on this machine: 100,000 x 4 KB files against the same data in
# tar shards, warm and cold page cache, and the DataLoader workers a target rate needs (`bench io`);
# then the cost of `gpudoctor pack` on a real tree of 100,000 files, and GNU tar reading the shards.
# Usage: bench/bench_io.sh [BUILD_DIR] [WORK_DIR] [TARGET_SAMPLES_PER_S]
set -euo pipefail
build=${1:-build}
base=${2:-/tmp}
target=${3:-20000}
bin=$build/gpudoctor
work=$(mktemp -d "$base/gpudoctor-bench-io.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores," \
     "$(awk '/MemTotal/ {printf "%.0f GB RAM", $2/1e6}' /proc/meminfo); $(. /etc/os-release && echo "$PRETTY_NAME")"
echo "storage: $(df -hT "$work" | awk 'NR==2 {print $1, $2, $3 " total"}')"
echo
echo "== 1. gpudoctor bench io: 100,000 x 4 KB files, the same packed into 16 MB shards, a 1 GB file"
"$bin" bench io "$work" --files 100000 --file-size 4K --large-size 1G --seconds 0.5 --threads 1,2,4,8 \
       --target-samples "$target" --progress
echo
echo "== 2. gpudoctor pack on a tree of 100,000 x 4 KB files (1,000 per folder)"
python3 - "$work/src" <<'PY'
import os, sys
root = sys.argv[1]
data = bytes(range(256)) * 16
for i in range(100000):
    d = os.path.join(root, "%03d" % (i // 1000))
    if i % 1000 == 0:
        os.makedirs(d)
    with open(os.path.join(d, "%08d.bin" % i), "wb") as f:
        f.write(data)
PY
sync
/usr/bin/time -f "pack: %e s wall, %U s user, %S s sys, %M KB max RSS" \
  "$bin" pack --threads 2 --shard-size 64M "$work/src" "$work/shards"
/usr/bin/time -f "pack again (resume: every shard verified and kept): %e s wall" \
  "$bin" pack --threads 2 --shard-size 64M "$work/src" "$work/shards"
n=0
for s in "$work"/shards/*.tar; do n=$((n + $(tar -tf "$s" | wc -l))); done
echo "GNU tar lists $n members in $(ls "$work"/shards/*.tar | wc -l) shards"

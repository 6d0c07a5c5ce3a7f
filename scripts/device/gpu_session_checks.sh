#!/usr/bin/env bash
# One device run for the GPU checks of `topo` (issue 5), `monitor` (issue 4) and `bench gpu` (issue 7),
# under 10 minutes (limits 90+150+340 s) on 2 x H200. Needs the carried binaries (scripts/device/pack_carry.sh build .carry).
# Each check's folder is also packed into OUT_DIR/<check>.tgz, so few files travel back.
#   scripts/device/gpu_session_checks.sh OUT_DIR [CARRY_DIR (.carry)]
set -u
out=${1:?usage: scripts/device/gpu_session_checks.sh OUT_DIR [CARRY_DIR]}
carry=$(cd "${2:-.carry}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
export NCCL_NVLS_ENABLE=0
t0=$SECONDS
timeout 90 "$here/gpu_check_topo.sh" "$out/topo" "$carry/gpudoctor" >/dev/null 2>&1
echo "== topo ($((SECONDS - t0)) s)"; cat "$out/topo/summary.txt" 2>/dev/null
t0=$SECONDS
timeout 150 "$here/gpu_check_monitor.sh" "$out/monitor" "$carry" >/dev/null 2>&1
echo "== monitor ($((SECONDS - t0)) s)"; cat "$out/monitor/summary.txt" 2>/dev/null
t0=$SECONDS
timeout 340 "$here/gpu_check_bench.sh" "$out/bench" "$carry/gpudoctor" >/dev/null 2>&1
echo "== bench gpu ($((SECONDS - t0)) s)"; cat "$out/bench/status.txt" "$out/bench/summary.md" 2>/dev/null
cd "$out" && for d in topo monitor bench; do [ -d "$d" ] && tar czf "$d.tgz" "$d" && rm -rf "$d"; done

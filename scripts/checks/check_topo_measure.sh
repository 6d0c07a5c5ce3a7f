#!/usr/bin/env bash
# ctest (label gpu): `gpudoctor topo --measure` on this machine reports a bandwidth for every GPU pair
# and every GPU's host copies. Exit 77 (skipped) where there is no NVIDIA driver or no CUDA build.
set -u
bin=${1:?usage: check_topo_measure.sh GPUDOCTOR_BIN}
out=$("$bin" topo --measure --measure-bytes 64M --repeats 5 --json - 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
  case "$out" in
    *"cannot load NVML"*|*"nvmlInit failed"*|*"needs a build with CUDA"*|*"no CUDA devices"*|*"cudaGetDeviceCount"*) echo "skipped: $out"; exit 77 ;;
  esac
  echo "$out"; exit 1
fi
python3 - "$out" <<'PY'
import json, sys
j = json.loads(sys.argv[1])
m = j["measured"]
n = len(j["gpu"])
assert len(m["p2p_gbps"]) == n and all(len(r) == n for r in m["p2p_gbps"]), "matrix shape"
assert all(v > 0 for r in m["p2p_gbps"] for v in r), "a pair without bandwidth"
assert all(v > 0 for v in m["h2d_gbps"] + m["d2h_gbps"]), "a GPU without host bandwidth"
print("p2p GB/s:", m["p2p_gbps"], "h2d:", m["h2d_gbps"], "d2h:", m["d2h_gbps"])
PY

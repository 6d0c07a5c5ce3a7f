#!/usr/bin/env bash
# ctest (label gpu): `gpudoctor bench gpu --quick` runs every part, every check passes and the JSON has
# a figure for each part. Exit 77 (skipped) where there is no usable GPU or no CUDA build.
set -u
bin=${1:?usage: check_bench_gpu.sh GPUDOCTOR_BIN}
out=$("$bin" bench gpu --quick -q --json - 2>&1)
rc=$?
case "$out" in
  *"no usable GPU"*|*"needs a build with CUDA"*|*"no CUDA devices"*) echo "skipped: $out"; exit 77 ;;
esac
python3 - "$out" "$rc" <<'PY'
import json, sys
j = json.loads(sys.argv[1])
for part in ("gemm", "bandwidth", "attention", "fusion"):
    assert j[part], f"no {part} figures"
bad = [f"{p}: {f.get('name') or f.get('impl') or f.get('precision')}" for p in ("gemm", "bandwidth", "attention", "fusion")
       for f in j[p] if not f["check"]["passed"]]
assert not bad and sys.argv[2] == "0", f"checks failed (exit {sys.argv[2]}): {bad}"
print("bench gpu --quick:", len(j["gemm"]), "GEMM,", len(j["bandwidth"]), "bandwidth,", len(j["attention"]), "attention,",
      len(j["fusion"]), "fusion figures, all checks passed")
PY

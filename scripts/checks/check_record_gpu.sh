#!/usr/bin/env bash
# `gpudoctor record` end to end on a real GPU: records the CUDA program scripts/record/steps.cu and
# checks that every kernel it launched is in the recording and that analyze finds its steps.
# Exit 77 (skipped) without an NVIDIA driver and GPU.
#   scripts/checks/check_record_gpu.sh GPUDOCTOR RECORD_STEPS_BINARY
set -u
gd=${1:?usage: check_record_gpu.sh GPUDOCTOR RECORD_STEPS}; prog=${2:?usage}
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
"$gd" record -q -o "$d/rec" --json "$d/rec.json" -- "$prog" 20 30 8 > "$d/prog.json" || { echo "record failed"; exit 1; }
python3 - "$d/prog.json" "$d/rec.json" <<'PY' || exit 1
import json, sys
prog = json.load(open(sys.argv[1])); rec = json.load(open(sys.argv[2]))
r = rec["recordings"]
assert len(r) == 1, f"{len(r)} recordings"
r = r[0]
assert r["kernels"] == prog["kernels"], (r["kernels"], prog["kernels"])
assert r["graph_kernels"] == prog["graph_kernels"], (r["graph_kernels"], prog["graph_kernels"])
assert r["launches_without_gpu_work"] == 0 and r["dropped_records"] == 0, r
assert r["steps"] == prog["steps"] - 1, (r["steps"], r["steps_note"])
print(f"record: {r['kernels']} kernels of {prog['kernels']} launched, {r['steps']} steps ({r['steps_note']})")
PY
# The JSON against its schema (the checker exits 77 where python3-jsonschema is missing, as on the
# GPU machine: then only this check is skipped).
python3 "$(dirname "$0")/check_json_schemas.py" - "$(cd "$(dirname "$0")/../.." && pwd)" - --files record="$d/rec.json"
rc=$?; [ "$rc" = 0 ] || [ "$rc" = 77 ] || exit 1
"$gd" analyze "$d/rec" > "$d/analyze.txt" || { echo "analyze failed"; exit 1; }
grep -q "19 steps" "$d/analyze.txt" || { head -3 "$d/analyze.txt"; exit 1; }
echo "analyze: $(head -1 "$d/analyze.txt")"

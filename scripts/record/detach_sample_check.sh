#!/usr/bin/env bash
# Two of issue 21's measurements in one device call:
#  1. What the recorder costs on the truly launch-bound microbenchmark (launch_cost.cu, 10 us of
#     host work per launch) when loaded but detached, detached with GPUDOCTOR_RECORD_KEEP_API=1,
#     and sampled (--sample 0.5/5), against plain runs interleaved with them, ROUNDS rounds. The
#     figure is the mean ns per launch over all blocks (a sampled run is attached part of the time).
#  2. The GPUDOCTOR_RECORD_KEEP_API experiment on a sampled PyTorch job (--sample 0.5/5, 1,200
#     steps): with and without it, how many API calls shared a correlation id after the late
#     attaches (shared_correlation_calls), and in how many windows steps were found.
# Writes OUT_DIR/detach_sample.jsonl and the record summaries; prints a table.
#   [PARTS=micro,sampled] scripts/record/detach_sample_check.sh OUT_DIR CARRY_DIR [ROUNDS (3)]
set -u
out=${1:?usage: detach_sample_check.sh OUT_DIR CARRY_DIR [ROUNDS]}; carry=$(cd "${2:?}" && pwd); rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
gd="$carry/gpudoctor"
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
nvcc -O2 -o "$out/launch_cost" "$here/launch_cost.cu" || exit 1
micro() { "$out/launch_cost" 300000 10 3; }
parts=",${PARTS:-micro,sampled},"
[[ $parts == *,micro,* ]] && for r in $(seq 1 "$rounds"); do
  echo "== micro round $r ($(date +%T))"
  for c in plain detached detached_keep_api sample; do
    case $c in
      plain) line=$(micro | tail -1) ;;
      detached) line=$("$gd" record -q -o "$out/tmp" --detached --signal USR2 -- "$out/launch_cost" 300000 10 3 | tail -1) ;;
      detached_keep_api) line=$(GPUDOCTOR_RECORD_KEEP_API=1 "$gd" record -q -o "$out/tmp" --detached --signal USR2 -- "$out/launch_cost" 300000 10 3 | tail -1) ;;
      sample) line=$("$gd" record -q -o "$out/tmp" --sample 0.5/5 -- "$out/launch_cost" 300000 10 3 | tail -1) ;;
    esac
    rm -rf "$out/tmp"
    echo "{\"part\": \"micro\", \"config\": \"$c\", \"round\": $r, \"result\": ${line:-null}}" >> "$out/detach_sample.jsonl"
  done
done
[[ $parts == *,sampled,* ]] && for keep in 0 1; do
  echo "== sampled torch job, KEEP_API=$keep ($(date +%T))"
  line=$(GPUDOCTOR_RECORD_KEEP_API=$keep "$gd" record -q -o "$out/sampled_$keep" --json "$out/sampled_$keep.record.json" \
         --sample 0.5/5 -- python3 "$here/torch_job.py" --steps 1200 --warmup 15 | tail -1)
  "$gd" analyze "$out/sampled_$keep" > "$out/sampled_$keep.analyze.txt" 2>&1
  head -c 600 "$out/sampled_$keep.record.json"; echo
  echo "{\"part\": \"sampled_torch\", \"config\": \"keep_api=$keep\", \"round\": 1, \"result\": ${line:-null}}" >> "$out/detach_sample.jsonl"
  for f in "$out/sampled_$keep"/*.gdrec; do [ -e "$f" ] && gzip -c "$f" > "$out/sampled_keep_api_$keep.gdrec.gz"; done
  rm -rf "$out/sampled_$keep"
done
python3 - "$out" <<'PY'
import json, statistics, sys
out = sys.argv[1]
rows = [json.loads(l) for l in open(out + "/detach_sample.jsonl") if l.strip()]
by = {}
for r in rows:
    if r["part"] == "micro" and r["result"]:
        by.setdefault(r["config"], []).append(statistics.mean(r["result"]["blocks_ns"]))
if "plain" in by:
    base = statistics.median(by["plain"])
    print(f"-- micro: mean ns per launch, median over rounds (plain {base:.0f})")
    for k, v in by.items():
        m = statistics.median(v)
        print(f"  {k:18s} {m:9.0f}  {100*(m/base-1):+7.2f} %  runs {[round(x) for x in v]}")
for keep in (0, 1):
    try:
        j = json.load(open(f"{out}/sampled_{keep}.record.json"))
    except (OSError, ValueError):
        print(f"-- sampled torch KEEP_API={keep}: no summary"); continue
    for rec in j["recordings"]:
        print(f"-- sampled torch KEEP_API={keep}: windows {rec['windows']} steps {rec['steps']} kernels {rec['kernels']} "
              f"launch calls {rec['launch_calls']} shared_correlation_calls {rec['shared_correlation_calls']} "
              f"without GPU work {rec['launches_without_gpu_work']}; {rec['steps_note']}")
PY

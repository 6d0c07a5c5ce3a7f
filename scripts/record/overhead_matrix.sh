#!/usr/bin/env bash
# What each part of a recording costs, measured two ways in one run: the launch microbenchmark
# (launch_cost.cu: ns per launch at 0 and 10 us of host work per launch) and the launch-bound
# PyTorch job (torch_job.py, default size: ~300 small kernels per step). Each configuration records
# one set of CUPTI activity kinds (GPUDOCTOR_RECORD_KINDS) or sets CUPTI attributes
# (GPUDOCTOR_RECORD_CUPTI_ATTRS); configurations interleaved, ROUNDS rounds. Then the sampled mode
# (--sample) on a long job: every step's time, mean and median, against plain.
# Writes OUT_DIR/matrix.jsonl and prints a table (median over rounds, against plain in the same run).
#   [CONFIGS="plain|| kernel|kernel| ..."] scripts/record/overhead_matrix.sh OUT_DIR CARRY_DIR [ROUNDS (3)] [PARTS (micro,torch,sample)]
set -u
out=${1:?usage: overhead_matrix.sh OUT_DIR CARRY_DIR [ROUNDS] [PARTS]}; carry=$(cd "${2:?}" && pwd); rounds=${3:-3}
parts=${4:-micro,torch,sample}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
gd="$carry/gpudoctor"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
nvcc -O2 -o "$out/launch_cost" "$here/launch_cost.cu" || exit 1
# name|kinds|attrs
configs=("plain||" "all||" "kernel|kernel|" "apis|runtime,driver|" "kernel+runtime|kernel,runtime|"
         "kernel+apis|kernel,runtime,driver|" "no-marker-overhead|kernel,memcpy,memset,sync,runtime,driver|"
         "all,pinned|" "all,per_thread=0|" "all,devbuf64|")
# CONFIGS="name|kinds|attrs ..." replaces the list (the first must be plain).
[ -n "${CONFIGS:-}" ] && read -r -a configs <<< "$CONFIGS"
run_one() {  # config-spec tag cmd...
  local spec=$1 tag=$2; shift 2
  local name=${spec%%|*} rest=${spec#*|}; local kinds=${rest%%|*} attrs=${rest#*|}
  case $name in
    all,pinned) attrs=pinned=1 ;; all,per_thread=0) attrs=per_thread=0 ;; all,devbuf64) attrs=device_buffer_mb=64 ;;
  esac
  local line
  if [ "$name" = plain ]; then line=$("$@" | tail -1)
  else line=$(GPUDOCTOR_RECORD_KINDS=$kinds GPUDOCTOR_RECORD_CUPTI_ATTRS=$attrs "$gd" record -q -o "$out/tmp" -- "$@" | tail -1)
  fi
  rm -rf "$out/tmp"
  echo "{\"part\": \"$tag\", \"config\": \"$name\", \"round\": $r, \"result\": ${line:-null}}" >> "$out/matrix.jsonl"
}
for r in $(seq 1 "$rounds"); do
  echo "== round $r ($(date +%T))"
  for c in "${configs[@]}"; do
    case ",$parts," in *,micro,*)
      run_one "$c" micro0 "$out/launch_cost" 45000 0 3
      run_one "$c" micro10 "$out/launch_cost" 45000 10 3 ;; esac
    case ",$parts," in *,torch,*) run_one "$c" torch python3 "$here/torch_job.py" --steps 60 --warmup 15 ;; esac
  done
done
case ",$parts," in *,sample,*)
  for r in 1 2; do
    echo "== sample round $r ($(date +%T))"
    for c in plain "0.5/5" "1/10"; do
      if [ "$c" = plain ]; then line=$(python3 "$here/torch_job.py" --steps 1200 --warmup 15 | tail -1)
      else tag=${c//\//_}
           line=$("$gd" record -q -o "$out/sample" --json "$out/sample_${tag}_$r.json" --sample "$c" -- \
                  python3 "$here/torch_job.py" --steps 1200 --warmup 15 | tail -1)
           "$gd" analyze "$out/sample" > "$out/sample_analyze_${tag}_$r.txt" 2>&1
           [ "$r" = 1 ] && [ "$c" = "0.5/5" ] && cp "$out"/sample/*.gdrec "$out/sampled.gdrec"
           rm -rf "$out/sample"
      fi
      echo "{\"part\": \"sample\", \"config\": \"$c\", \"round\": $r, \"result\": ${line:-null}}" >> "$out/matrix.jsonl"
    done
  done ;; esac
python3 - "$out/matrix.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows:
    res = r["result"]
    if not res: continue
    if r["part"].startswith("micro"): v = res["ns_per_launch"]
    elif r["part"] == "sample": v = statistics.mean(res["step_ns"])
    else: v = res["median_step_ns"]
    by.setdefault(r["part"], {}).setdefault(r["config"], []).append(v)
for part, cfgs in by.items():
    base = statistics.median(cfgs["plain"])
    unit = "ns/launch" if part.startswith("micro") else ("mean step ns" if part == "sample" else "median step ns")
    print(f"-- {part} ({unit}; plain {base:.0f})")
    for k, v in cfgs.items():
        m = statistics.median(v)
        print(f"  {k:22s} {m:12.0f}  {100*(m/base-1):+7.2f} %  runs {[round(x) for x in v]}")
if "sample" in by:
    print("-- sample: median step of each run")
    for r in rows:
        if r["part"] == "sample" and r["result"]: print(f"  {r['config']:6s} round {r['round']}: median {r['result']['median_step_ns']}")
PY

#!/usr/bin/env bash
# What `gpudoctor record` costs per kind of job: for each job, PAIRS pairs of independent processes, one
# plain and one recorded (`gpudoctor record -q`), the order flipped every pair (plain first in odd pairs),
# the jobs interleaved within a pair round. Each process is scripts/record/cost_job.py: a validation-lab
# job variant, warmed up, timed in 3 windows without a per-step synchronize. The first recording of each
# job is kept (OUT/recordings.tar) with `gpudoctor analyze --json` of it.
# Writes OUT/cost.jsonl (one line per process) and prints the table (scripts/record/cost_table.py).
#   [JOBS="bert_base_mlm_fp32:base tiny_gpt_batch2:base"] scripts/record/cost_by_job.sh OUT CARRY_DIR [PAIRS (6)] [SECONDS (3)]
set -u
out=${1:?usage: cost_by_job.sh OUT CARRY_DIR [PAIRS] [SECONDS]}; carry=$(cd "${2:?}" && pwd)
pairs=${3:-6}; secs=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
gd="$carry/gpudoctor"
read -r -a jobs <<< "${JOBS:-bert_base_mlm_fp32:base tiny_gpt_batch2:base tiny_gpt_batch2:graphed_step tokenize_on_thread:base}"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
mkdir -p "$out/keep"
one() {  # mode job variant pair
  local mode=$1 job=$2 var=$3 p=$4 line t0 t1
  t0=$(date +%s.%N)
  if [ "$mode" = plain ]; then
    line=$(python3 "$here/cost_job.py" "$job" --variant "$var" --seconds "$secs" 2>"$out/err.txt" | tail -1)
  else
    rm -rf "$out/rec"
    line=$("$gd" record -q -o "$out/rec" -- python3 "$here/cost_job.py" "$job" --variant "$var" --seconds "$secs" \
           2>"$out/err.txt" | tail -1)
    local keep="$out/keep/${job}__${var}.gdrec"
    if [ ! -e "$keep" ] && ls "$out"/rec/*.gdrec >/dev/null 2>&1; then
      cp "$(ls -S "$out"/rec/*.gdrec | head -1)" "$keep"
    fi
  fi
  t1=$(date +%s.%N)
  case $line in \{*) ;; *) line="null"; tail -3 "$out/err.txt" >&2 ;; esac
  echo "{\"job\": \"$job\", \"variant\": \"$var\", \"mode\": \"$mode\", \"pair\": $p, \"wall_s\": $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}"), \"result\": $line}" >> "$out/cost.jsonl"
}
for p in $(seq 1 "$pairs"); do
  echo "== pair $p ($(date +%T))"
  for j in "${jobs[@]}"; do
    if [ $((p % 2)) = 1 ]; then one plain "${j%%:*}" "${j#*:}" "$p"; one recorded "${j%%:*}" "${j#*:}" "$p"
    else one recorded "${j%%:*}" "${j#*:}" "$p"; one plain "${j%%:*}" "${j#*:}" "$p"; fi
  done
done
rm -rf "$out/rec" "$out/err.txt"
for f in "$out"/keep/*.gdrec; do
  [ -e "$f" ] || continue
  "$gd" analyze "$f" --json "${f%.gdrec}.analyze.json" > "${f%.gdrec}.analyze.txt" 2>&1
  gzip -9 "$f"
done
tar -C "$out/keep" -cf "$out/recordings.tar" . && rm -rf "$out/keep"
python3 "$here/cost_table.py" "$out/cost.jsonl"

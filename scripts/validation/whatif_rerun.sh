#!/bin/bash
# A second, independent run of whatif_jobs.py (new processes, same method) for the trace-to-trace spread:
# each job into its own OUT/<job>/ (traces + measurements.json), so a call cut by the device's time limit
# keeps every job it finished; a job that already has OUT/<job>/measurements.json is skipped, so the next
# call picks up where this one stopped.
#   NCCL_NVLS_ENABLE=0 scripts/validation/whatif_rerun.sh OUT BUDGET_S job [job ...]
# BUDGET_S: no job starts after this many seconds. All 28 jobs take about 11 minutes: two device calls.
# Bring OUT back in pieces under the device's 16 MiB a file (all jobs' traces are about 28 MiB):
#   tar cf - OUT | split -b 12m - $OUT/rerun.tar.part.
# Score with
#   python3 scripts/validation/whatif_spread.py testdata/whatif OUT  (builds the merged set, runs replay_calibrate)
set -u
out=$1 budget=$2
shift 2
start=$(date +%s)
here=$(cd "$(dirname "$0")" && pwd)
for j in "$@"; do
  if [ -f "$out/$j/measurements.json" ]; then continue; fi
  if (( $(date +%s) - start > budget )); then echo "whatif_rerun: budget of ${budget} s spent; not started: $j"; continue; fi
  PYTHONUNBUFFERED=1 python3 "$here/whatif_jobs.py" --out "$out/$j" --jobs "$j" --job-timeout 200 \
    | grep -E '^== |profiled |FAILED' || true
done

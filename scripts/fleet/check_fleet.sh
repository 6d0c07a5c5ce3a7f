#!/usr/bin/env bash
# ctest fleet_faults: the cross-rank analyses end to end on generated jobs (bench/fleet_traces).
#   1. 32 ranks, 4 stages, a slow rank, a GC pause and a slow stage: every fault named exactly
#      (scripts/fleet/fleet_score.py), in the streaming mode.
#   2. 8 healthy ranks: nothing named.
#   1b. The findings of the ranks read in full name the slow rank as the straggler; from summaries
#      alone, no findings and the traces they need.
#   3. Summaries round-trip: analyze(traces) and analyze(their summaries) give the same "fleet".
#   4. The in-memory mode (32 traces, not streamed) gives the same "fleet" as the streaming mode.
#   5. With mpirun: `mpirun -np 2 gpudoctor analyze --mpi` gives the streaming mode's document,
#      timing apart (skipped without mpirun).
#   6. Bad input: a cut summary, a missing rank.
# usage: check_fleet.sh GPUDOCTOR FLEET_TRACES
set -euo pipefail
gd=$1
gen=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
src=$here/examples/ddp_bf16_flash/bf16_flash_rank0.pt.trace.json.gz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
score=$here/scripts/fleet/fleet_score.py

"$gen" "$src" "$work/faults" --ranks 32 --stages 4 --repeat 3 --slow-rank 5 --gc 18:7 --slow-stage 2 2>/dev/null
"$gd" analyze "$work/faults/traces" --stream -q --json "$work/faults.json" --summary-out "$work/faults.gdsum.gz" >/dev/null
python3 "$score" "$work/faults/expected.json" "$work/faults.json"

"$gen" "$src" "$work/healthy" --ranks 8 --repeat 2 2>/dev/null
"$gd" analyze "$work/healthy/traces" --stream -q --json "$work/healthy.json" >/dev/null
python3 "$score" "$work/healthy/expected.json" "$work/healthy.json"

same() {  # same FILE_A FILE_B KEY...: the documents agree on every key but timing
  python3 - "$@" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
keys = sys.argv[3:]
if keys:
    a = {k: a[k] for k in keys}
    b = {k: b[k] for k in keys}
else:
    a.pop("timing"); b.pop("timing")
if a != b:
    print("FAIL: %s and %s differ" % (sys.argv[1], sys.argv[2]))
    sys.exit(1)
print("ok   %s = %s%s" % (sys.argv[1].rsplit("/", 1)[-1], sys.argv[2].rsplit("/", 1)[-1], (" (" + ", ".join(keys) + ")") if keys else " (timing apart)"))
PY
}
"$gd" analyze "$work/faults.gdsum.gz" -q --json "$work/from_summary.json" >/dev/null
# (all but the findings of the ranks read in full: summaries keep no events to diagnose)
same "$work/faults.json" "$work/from_summary.json" tool schema_version version mode units definitions fleet
python3 - "$work/faults/expected.json" "$work/faults.json" "$work/from_summary.json" <<'PY'
import json, sys
exp, doc, summ = (json.load(open(p)) for p in sys.argv[1:4])
slow = exp["slow_rank"]
picked = {r["rank"]: r for r in doc["analyzed_in_full"]["ranks"]}
ok = (slow in picked and picked[slow]["analyzed"] and "straggler" in picked[slow]["reasons"] and len(picked) <= 3
      and any(f["id"] == "communication.straggler" and f["title"].startswith("Rank %d " % slow)
              for f in doc["diagnosis"]["findings"]) and doc["diagnosis"]["plan"])
print(("ok  " if ok else "FAIL") + " streaming findings: ranks %s read in full, the straggler finding names rank %d"
      % (sorted(picked), slow))
ok2 = summ["diagnosis"] is None and "need the traces" in summ["analyzed_in_full"]["note"]
print(("ok  " if ok2 else "FAIL") + " summaries alone: no findings, the traces they need named")
sys.exit(0 if ok and ok2 else 1)
PY
"$gd" analyze "$work/faults/traces" -q --json "$work/in_memory.json" >/dev/null
same "$work/faults.json" "$work/in_memory.json" fleet
# The per-rank report's straggler too: with one data-parallel group per stage, the k-th NCCL kernel
# of one rank is not another's k-th operation; the straggler is judged per group (was: rank 0).
python3 - "$work/faults/expected.json" "$work/in_memory.json" <<'PY'
import json, sys
exp, doc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
s = doc["straggler"]
ok = s["rank"] == exp["slow_rank"] and any(f["id"] == "communication.straggler" and ("Rank %d " % exp["slow_rank"]) in f["title"]
                                          for f in doc["diagnosis"]["findings"])
print(("ok  " if ok else "FAIL") + " analyze's straggler (per process group): rank %s; %s" % (s["rank"], s["note"][:80]))
sys.exit(0 if ok else 1)
PY

if command -v mpirun >/dev/null 2>&1 && "$gd" analyze --help | grep -q -- --mpi; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo \
    OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_rmaps_base_oversubscribe=1
  if mpirun --oversubscribe -np 2 "$gd" analyze --mpi "$work/faults/traces" -q --json "$work/mpi.json" >/dev/null 2>"$work/mpi.err"; then
    same "$work/faults.json" "$work/mpi.json"
    # A process's bad file: one line naming it, a non-zero exit for the whole job.
    cp "$work/faults/traces/rank00003.pt.trace.json.gz" "$work/bad.json.gz"
    mkdir "$work/badset" && cp "$work/faults/traces/"rank0000[0-2]* "$work/badset/" && head -c 5000 "$work/bad.json.gz" >"$work/badset/rank00003.pt.trace.json.gz"
    if mpirun --oversubscribe -np 2 "$gd" analyze --mpi "$work/badset" -q >/dev/null 2>"$work/mpi_bad.err"; then
      echo "FAIL: --mpi with a cut trace exited 0"; exit 1
    fi
    grep -q "rank00003.pt.trace.json.gz" "$work/mpi_bad.err" || { echo "FAIL: the error does not name the file:"; cat "$work/mpi_bad.err"; exit 1; }
    echo "ok   --mpi: a cut trace on process 1 is named: $(grep -m1 rank00003 "$work/mpi_bad.err")"
    # A process that dies: process 1 blocks on a FIFO posing as its first trace and is killed; mpirun
    # names the rank and the job exits non-zero (process 0 does not wait forever).
    mkdir "$work/dieset" && cp "$work/faults/traces/"rank0000[0,2,3]* "$work/dieset/" && mkfifo "$work/dieset/rank00001.pt.trace.json"
    # (named one by one: a directory's listing skips what is not a regular file)
    mpirun --oversubscribe -np 2 "$gd" analyze --mpi "$work/dieset/rank00000.pt.trace.json.gz" "$work/dieset/rank00001.pt.trace.json" \
      "$work/dieset/rank00002.pt.trace.json.gz" "$work/dieset/rank00003.pt.trace.json.gz" -q >/dev/null 2>"$work/mpi_die.err" &
    mpi_pid=$!
    victim=""
    for _ in $(seq 1 100); do
      for p in $(pgrep -f "analyze --mpi $work/dieset" || true); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=1" && victim=$p
      done
      [ -n "$victim" ] && break
      sleep 0.1
    done
    [ -n "$victim" ] || { echo "FAIL: MPI process 1 not found"; kill "$mpi_pid"; exit 1; }
    sleep 0.5
    kill -9 "$victim"
    if timeout 60 tail --pid="$mpi_pid" -f /dev/null && wait "$mpi_pid"; then echo "FAIL: a killed MPI process left exit 0"; exit 1; fi
    grep -qi "rank 1" "$work/mpi_die.err" || { echo "FAIL: the killed process is not named:"; cat "$work/mpi_die.err"; exit 1; }
    echo "ok   --mpi: a killed process: non-zero exit, mpirun names it: $(grep -i -m1 'rank 1' "$work/mpi_die.err" | sed 's/^ *//')"
  else
    echo "skip --mpi: mpirun could not start two processes here:"; head -3 "$work/mpi.err"
  fi
else
  echo "skip --mpi: no mpirun, or a build without MPI"
fi

# Bad input.
zcat "$work/faults.gdsum.gz" >"$work/full.gdsum"  # (not piped into head: pipefail and SIGPIPE)
head -c 20000 "$work/full.gdsum" >"$work/cut.gdsum"
if "$gd" analyze "$work/cut.gdsum" -q >/dev/null 2>"$work/cut.err"; then echo "FAIL: a cut summary exited 0"; exit 1; fi
[ "$(wc -l <"$work/cut.err")" -eq 1 ] && grep -q "cut.gdsum" "$work/cut.err" || { echo "FAIL: cut summary:"; cat "$work/cut.err"; exit 1; }
echo "ok   cut summary: $(cat "$work/cut.err")"
rm "$work/faults/traces/rank00009.pt.trace.json.gz"
if "$gd" analyze "$work/faults/traces" --stream -q >/dev/null 2>"$work/missing.err"; then echo "FAIL: a missing rank exited 0"; exit 1; fi
grep -q "rank 9 of the job's 32 has no trace" "$work/missing.err" || { echo "FAIL: missing rank:"; cat "$work/missing.err"; exit 1; }
echo "ok   missing rank: $(cat "$work/missing.err")"
"$gd" analyze "$work/faults/traces" --stream -q --allow-missing-ranks --json "$work/partial.json" >/dev/null
python3 -c "import json,sys; n=json.load(open(sys.argv[1]))['fleet']['notes']; assert any('missing: 9' in x for x in n), n" "$work/partial.json"
echo "ok   --allow-missing-ranks: analyzed, the missing rank named in the notes"

#!/usr/bin/env bash
# Refactors must not change what `analyze --json` says. Writes `analyze --json` of every committed
# trace and recording (testdata/{whatif,cases,kineto,record}, examples/) into OUT with the timing fields
# (read_seconds, parse_seconds) removed; with a second directory, diffs the two and says which differ.
#   scripts/dev/json_unchanged.sh GPUDOCTOR OUT            # snapshot
#   scripts/dev/json_unchanged.sh GPUDOCTOR OUT BEFORE     # snapshot, then diff against BEFORE
# Exit 0: snapshot written (and identical to BEFORE); 1: some differ (listed); 2: usage.
set -u
gd=${1:?usage: json_unchanged.sh GPUDOCTOR OUT [BEFORE]}; out=${2:?usage}; before=${3:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
n=0
for f in "$src"/testdata/whatif/*.json.gz "$src"/testdata/cases/*.json.gz "$src"/testdata/kineto/*.json.gz \
         "$src"/testdata/record/*.gdrec.gz "$src"/examples/*; do
  case $f in *trace*|*.gdrec.gz|*/examples/*) ;; *) continue ;; esac
  name=$(echo "${f#"$src"/}" | tr '/' '_')
  "$gd" analyze "$f" --json - 2>/dev/null |
    python3 -c 'import json,sys
def strip(o):
    if isinstance(o, dict): return {k: strip(v) for k, v in o.items() if k not in ("read_seconds", "parse_seconds")}
    if isinstance(o, list): return [strip(v) for v in o]
    return o
try: d = json.load(sys.stdin)
except ValueError: d = {"no_json": True}
json.dump(strip(d), sys.stdout, indent=0, sort_keys=True)' > "$out/$name.json"
  n=$((n + 1))
done
echo "$n documents in $out"
[ -z "$before" ] && exit 0
bad=0
for f in "$out"/*.json; do
  b="$before/$(basename "$f")"
  if [ ! -e "$b" ] || ! cmp -s "$f" "$b"; then echo "differs: $(basename "$f")"; bad=$((bad + 1)); fi
done
echo "$bad of $n differ"
[ "$bad" = 0 ]

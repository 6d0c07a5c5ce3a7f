#!/usr/bin/env bash
# clang-tidy (.clang-tidy: likely bugs, needless copies, functions of at most 150 lines) on the C++ files
# under src/ that a change touches: those that differ from BASE, tests left out.
#   scripts/dev/check_tidy.sh [SOURCE_DIR (.)] [BUILD_DIR (SOURCE_DIR/build)] [BASE]
# BASE: the merge base with origin/main where there is one, else HEAD~1 (GPUDOCTOR_TIDY_BASE overrides).
# At most GPUDOCTOR_TIDY_MAX_FILES (20) files are checked, the most recently changed first; the rest are named.
# Exit 0: clean; 1: findings (printed); 2: usage; 77: no clang-tidy, no compile_commands.json or no git.
src=$(cd "${1:-.}" && pwd) || exit 2
build=${2:-$src/build}
cd "$src" || exit 2
tidy=$(command -v clang-tidy-14 || command -v clang-tidy) || { echo "clang-tidy is not installed: skipped"; exit 77; }
[ -f "$build/compile_commands.json" ] || { echo "no $build/compile_commands.json: skipped"; exit 77; }
git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
base=${3:-${GPUDOCTOR_TIDY_BASE:-}}
if [ -z "$base" ]; then
  base=$(git merge-base HEAD origin/main 2>/dev/null)
  [ -n "$base" ] && [ "$base" != "$(git rev-parse HEAD)" ] || base=$(git rev-parse -q --verify HEAD~1) || {
    echo "no earlier commit to compare with: skipped"; exit 77; }
fi
max=${GPUDOCTOR_TIDY_MAX_FILES:-20}
mapfile -t changed < <( { git diff --name-only "$base" -- 'src/*.cc'; git diff --name-only HEAD -- 'src/*.cc'; } |
                        grep -v '_test\.cc$' | awk '!seen[$0]++' | while read -r f; do [ -f "$f" ] && echo "$f"; done)
if [ ${#changed[@]} -eq 0 ]; then echo "tidy: no C++ source under src/ changed since ${base:0:12}"; exit 0; fi
files=("${changed[@]:0:$max}")
[ ${#changed[@]} -gt "$max" ] && echo "tidy: ${#changed[@]} files changed, the first $max checked; not checked: ${changed[*]:$max}"
# A unity build's database names the batches, not the files: configure (no build) a database of the
# files themselves beside it.
db=$build
if grep -q '/Unity/unity_' "$build/compile_commands.json"; then
  db=$build/tidy_db
  cmake -S "$src" -B "$db" -G Ninja -DGPUDOCTOR_UNITY_BUILD=OFF -DCMAKE_UNITY_BUILD=OFF >"$build/tidy_db.log" 2>&1 || {
    echo "tidy: configuring a compile database in $db failed:"; tail -5 "$build/tidy_db.log"; exit 1; }
fi
out=$("$tidy" -p "$db" --quiet --extra-arg=-Wno-unknown-warning-option "${files[@]}" 2>&1)
bad=$(echo "$out" | grep -E '^/.*: (warning|error): ')
if [ -n "$bad" ]; then
  echo "clang-tidy findings in the files changed since ${base:0:12} (.clang-tidy):"
  echo "$bad"
  exit 1
fi
echo "tidy: ${#files[@]} changed files clean (since ${base:0:12})"

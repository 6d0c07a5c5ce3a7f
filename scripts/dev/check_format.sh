#!/usr/bin/env bash
# The C++ sources (src, bench, fuzz, scripts) against .clang-format: any diff fails.
#   scripts/dev/check_format.sh [SOURCE_DIR (.)] [--fix]
# Exit 0: formatted; 1: the files that are not (and `--fix` formats them in place); 77: no clang-format.
cd "${1:-.}" || exit 2
cf=$(command -v clang-format-14 || command -v clang-format) || { echo "clang-format is not installed: skipped"; exit 77; }
mapfile -t files < <(find src bench fuzz scripts -type f \( -name '*.cc' -o -name '*.h' -o -name '*.cu' \) | sort)
if [ "${2:-}" = --fix ]; then "$cf" -i "${files[@]}"; exit 0; fi
bad=$("$cf" --dry-run "${files[@]}" 2>&1 | grep -E '^[^ :]+\.(cc|h|cu):[0-9]+:[0-9]+: (warning|error)' | cut -d: -f1 | sort -u)
if [ -n "$bad" ]; then
  echo "not formatted ($(echo "$bad" | wc -l) files; scripts/dev/check_format.sh . --fix formats them):"
  echo "$bad" | tr -d ':' ; exit 1
fi
echo "format: ${#files[@]} files formatted"

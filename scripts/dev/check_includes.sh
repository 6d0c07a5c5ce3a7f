#!/usr/bin/env bash
# Every project include is rooted at src/ ("analysis/replay/replay.h"), never relative ("../x.h",
# "./x.h"): a file's dependencies read the same wherever it lives, and the layer rules in
# src/*/CMakeLists.txt (which folders a target may include) see every one.
#   scripts/dev/check_includes.sh [SOURCE_DIR (.)]   exit 0: none; 1: each offender printed
cd "${1:-.}" || exit 2
bad=$(grep -rnE '^\s*#\s*include\s+"\.\.?/' src tools bench 2>/dev/null)
if [ -n "$bad" ]; then
  echo "relative includes (root them at src/):"; echo "$bad"; exit 1
fi
echo "includes: none relative"

#!/usr/bin/env bash
# The device takes at most 64 MiB of working tree (tracked files and untracked ones git does not ignore);
# the committed traces (testdata/, validation/traces/) are more. Before a call that needs neither (the
# lab's parts run from validation/ and scripts/), take them out of the index and ignore them; after it,
# put them back. Nothing in the working tree or in a commit changes.
#   scripts/device/slim_index.sh on      before the calls
#   scripts/device/slim_index.sh off     after them (always: a commit in between would delete the traces)
set -eu
cd "$(git rev-parse --show-toplevel)"
exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")" && touch "$exclude"
case "${1:-}" in
  on)
    if ! git diff --cached --quiet; then echo "slim_index.sh: staged changes; commit them first" >&2; exit 2; fi
    git rm -r -q --cached testdata validation/traces
    printf '/testdata/\n/validation/traces/\n' >> "$exclude"
    echo "slim_index.sh: $(git ls-files | xargs du -cb 2>/dev/null | tail -1 | cut -f1) bytes tracked now" ;;
  off)
    sed -i '\#^/testdata/$#d; \#^/validation/traces/$#d' "$exclude"
    git reset -q -- testdata validation/traces
    git diff --cached --quiet && echo "slim_index.sh: the index is whole again" ;;
  *) echo "usage: scripts/device/slim_index.sh on|off" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Loads gpudoctor's HTML report in headless Chromium: it must load without script errors, run its
# inline script and hold its charts (per-rank bars, per-step bars and trend, timelines, host side, operators,
# memory or its note, kernel classes, collectives). Exit 77 (ctest: skipped) when Chromium is not installed.
set -euo pipefail
bin=$1
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$chrome" ] || { echo "chromium not installed: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" analyze -q --html "$dir/report.html" >/dev/null
# A 1000-pixel-wide window: nothing may be wider than it (issue 20: long kernel names pushed the
# table off-screen); the page's script records whether the document scrolls sideways.
"$chrome" --headless --window-size=1000,900 --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
  --disable-component-update --disable-sync --user-data-dir="$dir/profile" --enable-logging=stderr --v=0 \
  --virtual-time-budget=2000 --dump-dom "file://$dir/report.html" >"$dir/dom.html" 2>"$dir/console.log" || true
fail=0
charts=$(grep -o 'data-rendered="[0-9]*"' "$dir/dom.html" | grep -o '[0-9]*' || true)
[ "${charts:-0}" -ge 8 ] || { echo "FAIL: the inline script did not run or found fewer than 8 charts (${charts:-none})"; fail=1; }
grep -q 'data-overflow="0"' "$dir/dom.html" || { echo "FAIL: the page is wider than a 1000-pixel window"; fail=1; }
grep -q "id=\"timeline-pick\"" "$dir/dom.html" || { echo "FAIL: no step/rank menu for the timeline"; fail=1; }
for id in chart-ranks chart-timeline chart-trend chart-classes chart-collectives ranks straggler kernels \
  chart-steps-0 steps-pick host-side host-syncs-heading chart-operators operators memory-none; do
  grep -q "id=\"$id\"" "$dir/dom.html" || { echo "FAIL: chart $id missing from the rendered page"; fail=1; }
done
grep -q 'size ?' "$dir/dom.html" && { echo "FAIL: a collective drawn with an unknown size"; fail=1; }
n=$(grep -o '<rect' "$dir/dom.html" | wc -l)
[ "$n" -gt 20 ] || { echo "FAIL: only $n chart rectangles rendered"; fail=1; }
if grep -E 'Uncaught|CONSOLE\(.*(Error|error)' "$dir/console.log"; then echo "FAIL: script errors in the console"; fail=1; fi
[ $fail -eq 0 ] && echo "ok: report loads in $("$chrome" --version 2>/dev/null | head -1) with its charts and $n rectangles, no wider than 1000 px"
exit $fail

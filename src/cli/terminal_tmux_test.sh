#!/usr/bin/env bash
# The terminal report as a user sees it, in a real terminal (tmux): analyze fits the pane's width
# between 80 and 160 columns, compare, topo and bench io an 80-column one, it is coloured on the terminal and not with NO_COLOR set, the critical findings
# come before the others, and the fixes are code lines that paste (no "fix:" prefix).
#   src/cli/terminal_tmux_test.sh GPUDOCTOR
# Exit 0: all hold; 1: one does not (printed); 2: usage; 77: tmux is not installed (skipped).
set -u
bin=${1:?usage: terminal_tmux_test.sh GPUDOCTOR}
command -v tmux >/dev/null || { echo "tmux is not installed: skipped"; exit 77; }
[ -x "$bin" ] || { echo "terminal_tmux_test: $bin is not an executable"; exit 2; }
work=$(mktemp -d)
sock="$work/tmux.sock"
trap 'tmux -S "$sock" kill-server >/dev/null 2>&1; rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Runs `gpudoctor ARGS` in a detached tmux pane of WIDTH columns with ENV set; the pane's whole history
# (with escapes where -e) goes to OUT.
pane() {
  local width=$1 env=$2 out=$3; shift 3
  local name="t$RANDOM"
  tmux -S "$sock" -f /dev/null new-session -d -s "$name" -x "$width" -y 50 \
    "env -u COLUMNS $env $bin $*; echo __done__ \$?; tmux wait-for -S $name; sleep 30"
  tmux -S "$sock" set-option -t "$name" history-limit 10000 >/dev/null
  timeout 120 tmux -S "$sock" wait-for "$name" || { fail "gpudoctor $* did not finish in 120 s"; return; }
  tmux -S "$sock" capture-pane -t "$name" -p -J -S - -e >"$out.esc"
  tmux -S "$sock" capture-pane -t "$name" -p -J -S - >"$out"  # -J: a wrapped line counts whole
  tmux -S "$sock" kill-session -t "$name"
}

# The widest line of prose: code to paste (indented 8 or more under "fix:"), one-line messages
# ("gpudoctor: ...", which name paths) and table rows (4 or more gaps of 2 spaces) are not wrapped.
widest() {
  awk '!/^        / && !/^gpudoctor: / && gsub(/[^ ]  +/, "&") < 4 { if (length($0) > m) m = length($0) }
       END { print m + 0 }' "$1"
}
# Tables keep at most 100 columns, whatever the width.
widest_table() { awk 'gsub(/[^ ]  +/, "&") >= 4 { if (length($0) > m) m = length($0) } END { print m + 0 }' "$1"; }

for width in 80 120 160; do
  pane "$width" "TERM=xterm-256color" "$work/w$width" analyze
  grep -q "^__done__ 0$" "$work/w$width" || fail "analyze in a $width-column pane did not exit 0"
  w=$(widest "$work/w$width")
  [ "$w" -le "$width" ] || fail "a line of $w columns in a $width-column pane"
  t=$(widest_table "$work/w$width")
  [ "$t" -le 100 ] || fail "a table row of $t columns in a $width-column pane"
  # The report uses the width it has: some line is longer than the narrowest pane allows.
  [ "$width" -le 80 ] || [ "$w" -gt 80 ] || fail "no line over 80 columns in a $width-column pane"
done

# compare, topo and bench io (a small run in the test's scratch folder) fit an 80-column pane too.
src=$(cd "$(dirname "$0")/../.." && pwd)
pane 80 "TERM=xterm-256color" "$work/cmp" compare "$src/testdata/whatif/ckpt_large__base.pt.trace.json.gz" \
  "$src/testdata/whatif/ckpt_large__no_checkpointing.pt.trace.json.gz"
pane 80 "TERM=xterm-256color" "$work/topo" topo --topology "$src/testdata/topology/dgx_h100.toml"
mkdir -p "$work/io"
pane 80 "TERM=xterm-256color" "$work/bio" bench io "$work/io" --large-size 16M --files 200 --seconds 0.05 --threads 1
for v in cmp topo bio; do
  grep -q "^__done__ 0$" "$work/$v" || fail "$v in an 80-column pane did not exit 0"
  w=$(widest "$work/$v")
  [ "$w" -le 80 ] || fail "$v: a line of $w columns in an 80-column pane"
  t=$(widest_table "$work/$v")
  [ "$t" -le 100 ] || fail "$v: a table row of $t columns in an 80-column pane"
done

grep -q $'\e\\[' "$work/w120.esc" || fail "no colour on a terminal"
pane 120 "TERM=xterm-256color NO_COLOR=1" "$work/nc" analyze
grep -q $'\e\\[[0-9;]*m' "$work/nc.esc" && fail "colour although NO_COLOR is set"
pane 120 "TERM=dumb" "$work/dumb" analyze
grep -q $'\e\\[[0-9;]*m' "$work/dumb.esc" && fail "colour on TERM=dumb"

# Critical findings first: the first numbered finding is critical.
first=$(grep -m1 -E '^ ?[0-9]+\. \[' "$work/w120")
case "$first" in *"[critical]"*) ;; *) fail "the first finding is not critical: $first" ;; esac
grep -q "^ *fix: " "$work/w120" && fail "a fix printed as a 'fix:' line, which does not paste"

if [ "$failures" -gt 0 ]; then
  echo "terminal_tmux_test: $failures failure(s); the 120-column pane:"
  cat "$work/w120"
  exit 1
fi
echo "terminal_tmux_test: width (analyze at 80, 120, 160 columns; compare, topo and bench io at 80), colour, NO_COLOR, TERM=dumb, order and pasteable fixes hold"

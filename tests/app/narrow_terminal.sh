#!/usr/bin/env bash
# narrow_terminal.sh MINIMODEL SOURCE_DIR
# The phase table and the summary in a terminal (a pseudo-terminal made by
# script(1), its size set by stty):
#   - 80 columns, one process and mpirun -np 2 (the launcher's terminal,
#     with --bandwidth's x floor column): no line over 80 characters; the
#     table without the ranks' columns, saying where they are; a case's
#     summary on three lines (the case, its figures, its history);
#   - 120 columns: the whole table and the summary on one line;
#   - not a terminal (a pipe): the whole table, whatever $COLUMNS says;
#   - a terminal as wide as that table shows the ranks' columns, one
#     column narrower does not (with and without --bandwidth);
#   - 61, 46, 45 and 33 columns: the compact table (per step s, no calls
#     nor GB/s) down to 46 columns, the minimal one (total s and share)
#     below, no line wider than the terminal (the other lines broken at
#     blanks), what the table leaves out said;
#   - 40 columns, two cases that fail: each case's line of the summary
#     on two lines (the case, then FAILED and its exit status);
#   - the summary's edge: a terminal as wide as a case's line of the
#     summary (measured on a pipe) has it on one line, one column less on
#     three; and wherever it is on three, the line it would have been is
#     wider than the terminal (worked out from the three lines).
set -u
mm="$1"; src="$2"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
command -v script >/dev/null || { echo "SKIP: no script(1)"; exit 77; }
work="$(mktemp -d /tmp/mm-narrow.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cp "$src/configs/flat.ini" "$work/flat.ini"
cd "$work" || exit 1
fail() { echo "FAIL: $*"; cat "$work/out"; exit 1; }
in_terminal() { # COLUMNS COMMAND...: the command's output in a terminal that wide
  local cols="$1"; shift
  script -qec "stty cols $cols rows 40; $*" /dev/null </dev/null | tr -d '\r' >"$work/out"
}
args="--quiet --set run.steps=4 --set output.dir=o flat.ini"
for how in "$mm" "timeout -k 5 60 mpirun --oversubscribe -np 2 $mm --bandwidth 50"; do
  rm -rf o
  in_terminal 80 "$how $args"
  grep -q "summary of 1 case" "$work/out" || fail "$how: no summary"
  awk 'length($0) > 80 { print "line " NR " has " length($0) " characters"; bad = 1 } END { exit bad }' \
    "$work/out" || fail "$how at 80 columns: a line wider than the terminal"
  grep -q "min rank" "$work/out" && fail "$how at 80 columns: the ranks' columns"
  tr '\n' ' ' <"$work/out" | tr -s ' ' | grep -q "slowest rank's: in the timing file, or in a terminal of" ||
    fail "$how at 80 columns: no word of where the ranks' columns are"
  grep -qE "^      -> o/flat.nc$" "$work/out" || fail "$how at 80 columns: the history not on a line of its own"
  rm -rf o
  in_terminal 120 "$how $args"
  grep -qE "^  phase +total s +per step s +share +min rank +mean rank +max rank +calls" "$work/out" ||
    fail "$how at 120 columns: not the whole table"
  grep -qE "^  flat.ini +ok .* -> o/flat.nc$" "$work/out" || fail "$how at 120 columns: the summary not on one line"
  echo "ok: $how"
done
# narrower: the widest form of the table that fits (the compact one from
# 46 columns, the minimal one from 33), each line no wider than the
# terminal, what is left out said
for how in "$mm" "timeout -k 5 60 mpirun --oversubscribe -np 2 $mm --bandwidth 50"; do
  for cols in 61 46 45 33; do
    rm -rf o
    in_terminal $cols "$how $args"
    grep -q "summary of 1 case" "$work/out" || fail "$how at $cols columns: no summary"
    awk -v c=$cols 'length($0) > c { print "line " NR " has " length($0) " characters"; bad = 1 }
      END { exit bad }' "$work/out" || fail "$how at $cols columns: a line wider than the terminal"
    if [ $cols -ge 46 ]; then
      head="^  phase +total s +per step s +share$"
      left="calls, GB/s, "
    else
      head="^  phase +total s +share$"
      left="per step s, calls, GB/s, "
    fi
    grep -qE "$head" "$work/out" || fail "$how at $cols columns: not the table's head $head"
    grep -qE "^  step +[0-9.]+ +[0-9.e+-]*\s*100\.0%$" "$work/out" ||
      fail "$how at $cols columns: no line of the step"
    tr '\n' ' ' <"$work/out" | tr -s ' ' |
      grep -q "(total: mean over ranks of each rank's total; $left.*the fastest and slowest rank's: in the timing file, or in a terminal of [0-9]* columns)" ||
      fail "$how at $cols columns: no word of what the table leaves out"
    grep -qE "^ +-> o/flat.nc$" "$work/out" || fail "$how at $cols columns: the history not said"
  done
  echo "ok: $how at 61, 46, 45 and 33 columns"
done
# a case that fails (a NaN planted after step 1), beside one that runs: its
# line of the summary fits as well, the case then its fate
rm -rf o
sed "s/^name = flat$/name = other/" flat.ini >other.ini
in_terminal 40 "MINIMODEL_FAULT_NAN_STEP=1 $mm --quiet --set run.steps=4 --set output.dir=o flat.ini other.ini"
# (the error messages, one line each, are the terminal's to wrap)
awk '!/^minimodel: error: / && length($0) > 40 { print "line " NR " has " length($0) " characters"; bad = 1 }
  END { exit bad }' "$work/out" || fail "a failed case at 40 columns: a line wider than the terminal"
[ "$(grep -cxE '      FAILED \(exit 1\)' "$work/out")" = 2 ] && grep -qx "  flat.ini" "$work/out" ||
  fail "a failed case at 40 columns: not the case, then FAILED (exit 1), for each"
echo "ok: failed cases at 40 columns"

rm -rf o
COLUMNS=40 $mm $args >"$work/out" 2>&1 || fail "piped run"
grep -qE "^  phase +total s +per step s +share +min rank +mean rank +max rank +calls" "$work/out" ||
  fail "piped: not the whole table"
echo "ok: piped, the whole table"

# the rule's edge: a terminal as wide as the table's head (measured on a
# pipe) shows the ranks' columns, one column less does not
for bw in "" "--bandwidth 50"; do
  rm -rf o
  $mm $bw $args >"$work/out" 2>&1 || fail "piped run $bw"
  width=$(awk '/^  phase +total s/ { print length($0) }' "$work/out")
  [ -n "$width" ] || fail "piped $bw: no head of the table"
  for cols in "$width" $((width - 1)); do
    rm -rf o
    in_terminal "$cols" "$mm $bw $args"
    if [ "$cols" = "$width" ]; then
      grep -q "min rank" "$work/out" || fail "$bw at $cols columns (the table's width): no ranks' columns"
    else
      grep -q "min rank" "$work/out" && fail "$bw at $cols columns (one less than the table): the ranks' columns"
    fi
  done
  echo "ok: ${bw:-no --bandwidth}: the whole table from $width columns, not at $((width - 1))"
done

# the summary's edge. A case's line is "  " + the case padded to 32 + " " +
# its figures + "  -> " + its history; its figures (the run's time) may
# change length from one run to the next, so each terminal run is checked
# against the line it would have printed itself, and the edge is tried
# again (3 times) where the figures changed between the pipe and the terminal
summary_check() { # COLUMNS: the summary in $work/out against the terminal
  awk -v c="$1" '
    /^summary of 1 case/ { s = 1; next }
    s && /^  flat\.ini +ok / { one = length($0); next }
    s && /^  flat\.ini$/ { name = 8; next }
    s && name && !stats && /^      ok / { stats = $0; sub(/^ +/, "", stats); next }
    s && name && /^      -> / { to = $0; sub(/^      -> /, "", to) }
    END {
      if (one) { if (one > c) { print "one line of " one " columns in " c; exit 1 }; print "one"; exit 0 }
      if (!stats || to == "") { print "no summary of the case"; exit 1 }
      w = 2 + (name > 32 ? name : 32) + 1 + length(stats) + 5 + length(to)
      if (w <= c) { print "three lines, yet its line was " w " columns in " c; exit 1 }
      print "three " w
    }' "$work/out"
}
edge=""
for attempt in 1 2 3; do
  rm -rf o
  $mm $args >"$work/out" 2>&1 || fail "piped run for the summary's width"
  width=$(awk '/^  flat\.ini +ok .* -> o\/flat\.nc$/ { print length($0) }' "$work/out")
  [ -n "$width" ] || fail "piped: no summary line of the case"
  for cols in "$width" $((width - 1)); do
    rm -rf o
    in_terminal "$cols" "$mm $args"
    got=$(summary_check "$cols") || fail "summary at $cols columns: $got"
    [ "$cols" = "$width" ] && [ "$got" = one ] && edge=yes
  done
  [ -n "$edge" ] && break
done
[ -n "$edge" ] || fail "the summary's line was never on one line in a terminal as wide as it (3 tries)"
echo "ok: the summary's line of the case on one line at its width ($width columns), on three below"

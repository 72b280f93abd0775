#!/usr/bin/env bash
# check_progress.sh KIND STEPS COMMAND...: run COMMAND (a minimodel run of
# STEPS steps, stdout a pipe as under ctest) and check its progress output:
#   lines  "step STEPS/STEPS (100%)" on a line of its own, and no '\r'
#   bar    a bar redrawn with '\r' that reaches "100%  step STEPS/STEPS"
#   none   no progress at all, but the timing table
# With COLUMNS set, no redraw of the bar may be wider than COLUMNS - 1 (a
# wider one wraps and leaves a row behind on every redraw).
# Fails when COMMAND fails.
kind="$1"; steps="$2"; shift 2
cmd="$*"
out=$("$@" 2>&1); rc=$?
fail() { printf 'check_progress %s: %s\n--- output of %s:\n%s\n' "$kind" "$1" "$cmd" "$out"; exit 1; }
[ "$rc" -eq 0 ] || fail "exit status $rc"
grep -qE "^[a-z_0-9]+: $steps steps? of " <<<"$out" || fail "no timing table"
has_cr=0; [[ "$out" == *$'\r'* ]] && has_cr=1
case "$kind" in
  lines)
    grep -qE "^step $steps/$steps \(100%\)  model .* wall .* ETA .* points/s$" <<<"$out" ||
      fail "no final progress line"
    [ "$has_cr" -eq 0 ] || fail "carriage returns (a bar) in output that is not a terminal" ;;
  bar)
    [ "$has_cr" -eq 1 ] || fail "no bar (no carriage return)"
    # fitted to the width: fields dropped from the right; below 17 columns
    # no bar, and below the width of "100%  step 13/13" the percentage alone
    reach="\[#+\] 100%  step $steps/$steps  model .* ETA .* points/s"
    if [ -n "${COLUMNS:-}" ]; then
      reach="\[#+\] 100%"
      [ "$COLUMNS" -lt 37 ] && reach="(\[#+\] )?100%  step $steps/$steps"
      [ "$COLUMNS" -lt 17 ] && reach="100%"
      [ "$COLUMNS" -lt 5 ] && reach=""
    fi
    tr '\r' '\n' <<<"$out" | grep -qE "^$reach" || fail "the bar never reaches /$reach/"
    if [ -n "${COLUMNS:-}" ]; then
      # every redraw: what follows a carriage return, up to the next one or
      # the end of the line
      widest=$(awk 'BEGIN { RS = "\r" } NR > 1 { sub(/\n.*/, ""); if (length($0) > w) w = length($0) } END { print w + 0 }' <<<"$out")
      [ "$widest" -lt "$COLUMNS" ] || fail "a redraw of $widest characters on $COLUMNS columns"
      # a field is dropped whole, never cut: a cut step ("step 1090/300"
      # of 3000) reads as another number
      cut=$(awk -v s="$steps" 'BEGIN { RS = "\r" } NR > 1 { sub(/\n.*/, ""); if ($0 ~ /step/ && $0 !~ ("step [0-9]+/" s "(  |$)")) { print; exit } }' <<<"$out")
      [ -z "$cut" ] || fail "a redraw with its step cut: '$cut' on $COLUMNS columns"
      # narrower than "100%": nothing, not a cut percentage ("10")
      [ "$COLUMNS" -ge 5 ] || [ "$widest" -eq 0 ] ||
        fail "a redraw of $widest characters (a cut percentage) on $COLUMNS columns"
    fi ;;
  none)
    ! grep -qE "step [0-9]+/$steps" <<<"$out" || fail "progress printed"
    [ "$has_cr" -eq 0 ] || fail "carriage returns in the output" ;;
  *) echo "check_progress: unknown kind $kind"; exit 2 ;;
esac
echo "ok: progress $kind"

#!/usr/bin/env bash
# nan.sh MINIMODEL PYTHON SOURCE_DIR WORK
# A NaN injected into temp on rank 1 of 2 (MINIMODEL_FAULT_NAN_STEP) stops
# every rank with exit 1 and a message that names the step, the variable and
# the cell; <name>.crash.nc holds the last good state, bit for bit the state
# of a run stopped at that step; a timing file of an earlier run of the case
# is not left beside it, nor is the crash file beside a run of the case again
# that runs well. Once with history records every 5 steps,
# once with output.interval = 0 (the check then runs every 10 steps).
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
ini="$src/configs/flat.ini"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
run() { timeout -k 10 60 mpirun --oversubscribe -np 2 "$mm" --quiet "$@" "$ini" >"$work/log" 2>&1; }
step_of() { ncdump -h "$1" | sed -n 's/^[[:space:]]*:step = \([0-9]*\)LL ;/\1/p'; }
rm -rf "$work"; mkdir -p "$work"
# flat.ini: 24 x 18 columns, all wet; ranks 1 x 2, so rank 1 holds rows j = 9..17
common=(--set output.dir="$work" --set grid.ranks_x=1 --set grid.ranks_y=2)

check_case() { # name nan_step interval detect_step good_step place steps
  local name="$1" nan="$2" interval="$3" detect="$4" good="$5" place="$6" steps="$7"
  # a timing file of an earlier run of the case: gone, not taken for this one
  echo '{"name": "earlier"}' >"$work/$name.timing.json"
  MINIMODEL_FAULT_NAN_STEP=$nan MINIMODEL_FAULT_RANK=1 \
    run "${common[@]}" --set run.name="$name" --set output.interval="$interval" \
    --set run.steps="$steps"
  local rc=$?
  [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "$name: the run hung (exit $rc)"
  [ $rc -eq 1 ] || fail "$name: exit $rc, expected 1"
  grep -qE "numerical blow-up at step $detect: temp = NaN/Inf at $place .*last good state \(step $good\) written to $work/$name.crash.nc" "$work/log" ||
    fail "$name: the message does not name step $detect, temp, the cell ($place) and the crash file"
  [ -f "$work/$name.crash.nc" ] || fail "$name: no crash file"
  [ ! -e "$work/$name.timing.json" ] || fail "$name: an earlier run's timing file left beside the crash"
  [ "$(step_of "$work/$name.crash.nc")" = "$good" ] || fail "$name: crash file step is not $good"
  # the same state, written as a restart by a clean run of $good steps
  run "${common[@]}" --set run.name="ref$good" --set run.steps="$good" \
    --set output.restart_interval="$good" || fail "$name: reference run of $good steps"
  "$py" "$src/scripts/compare.py" --quiet "$work/$name.crash.nc" "$work/ref$good.restart.nc" ||
    fail "$name: the crash file is not the state of step $good"
  echo "ok: $name: stopped at step $detect, crash file = state of step $good"
}
# NaN on a record step: found there, in the injected cell; last good = record 5
check_case records 10 5 10 5 "i=0 j=9 k=0" 20
# no records before step 25: found by the check of step 20 (the NaN has
# spread by then); the check every 10 steps kept the state of step 10
check_case interval0 13 0 20 10 "i=[0-9]+ j=[0-9]+ k=[0-9]+" 25
# the check can fail: without the fault the run passes and writes no crash file
run "${common[@]}" --set run.name=clean --set run.steps=20 || fail "clean run failed"
[ ! -e "$work/clean.crash.nc" ] || fail "crash file written by a clean run"
# the case run again without the fault (the blow-up mended): the crash file
# of the earlier run is removed, not left beside a history that ran well
run "${common[@]}" --set run.name=records --set run.steps=20 || fail "records: the run again failed"
[ ! -e "$work/records.crash.nc" ] || fail "records: the earlier run's crash file left beside the run again"
echo "ok"

#!/usr/bin/env bash
# restart.sh MINIMODEL PYTHON SOURCE_DIR WORK
# N steps straight must equal N/2 steps, a restart, and N/2 more, bit for bit.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
ini="$src/configs/gyre_bowl.ini"
run() { local np="$1"; shift; mpirun --oversubscribe -np "$np" "$mm" --quiet "$@" "$ini" >"$work/log" 2>&1; }
cmp_nc() { "$py" "$src/scripts/compare.py" --quiet "$@"; }
fail() { echo "FAIL: $*"; cat "$work/log"; exit 1; }
"$src/tests/fresh.sh" "$work" -- mkdir -p "$work" || exit 1  # no earlier run's files
common=(--set output.dir="$work" --set output.interval=0 --set output.initial_record=false)  # each key once: run.steps per run; the continued runs start histories of their own, so no record of the starting state
run 2 "${common[@]}" --set run.steps=24 --set run.name=straight --set output.restart_interval=24 ||
  fail "straight run"
run 2 "${common[@]}" --set run.name=half --set run.steps=12 --set output.restart_interval=12 || fail "half run"
[ -f "$work/half.restart.nc" ] || fail "no restart file"
[ ! -e "$work/half.restart.nc.tmp" ] || fail "temporary restart file left behind"
run 2 "${common[@]}" --set run.steps=24 --set run.name=cont --set initial.restart="$work/half.restart.nc" \
  --set output.restart_interval=24 || fail "continued run"
"$src/tests/steps_run.sh" "$work/cont.timing.json" 12 || fail "the continued run did not continue"
cmp_nc "$work/straight.nc" "$work/cont.nc" || fail "history after restart differs"
cmp_nc "$work/straight.restart.nc" "$work/cont.restart.nc" || fail "restart state differs"
# continued on 3 ranks from a restart written by 2: still the same bits
run 3 "${common[@]}" --set run.steps=24 --set run.name=cont3 --set initial.restart="$work/half.restart.nc" || fail "continued on 3 ranks"
"$src/tests/steps_run.sh" "$work/cont3.timing.json" 12 || fail "the run on 3 ranks did not continue"
cmp_nc "$work/straight.nc" "$work/cont3.nc" || fail "restart on 3 ranks differs"
# the comparison can fail: the half-way state is not the final one
cmp_nc --vars temp "$work/half.restart.nc" "$work/straight.restart.nc" && fail "compare.py did not see a difference"
# a restart for another configuration or grid is refused with exit 2
run 2 "${common[@]}" --set run.steps=24 --set run.name=bad --set physics.kappa_v=2e-5 --set initial.restart="$work/half.restart.nc"
rc=$?; [ $rc -eq 2 ] || fail "restart for another configuration: exit $rc, expected 2"
grep -q "configuration" "$work/log" || fail "no reason given for the configuration mismatch"
run 2 "${common[@]}" --set run.steps=24 --set run.name=bad --set grid.nz=11 --set initial.restart="$work/half.restart.nc"
rc=$?; [ $rc -eq 2 ] || fail "restart for another grid: exit $rc, expected 2"
echo "ok: restart is bitwise identical to the straight run"

#!/usr/bin/env bash
# inputs_first.sh MINIMODEL PYTHON SOURCE_DIR WORK
# The input files of every case are checked before the first case runs, as
# the configurations are: a bad initial.file or initial.restart in case 2
# (missing, a directory, other dimensions, another configuration, a step
# beyond run.steps) ends the run with exit 2 and a message naming case 2
# and the file, and case 1 has written nothing. An input that an earlier
# case of the same invocation writes is checked when its case reads it; such
# a case is not run where that earlier case failed, and refused (exit 2)
# before any case runs where the earlier case writes no restart file in the
# steps it runs (also as a continuation, from its own restart file or an
# earlier case's), or one beyond the later case's run.steps.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
run() { timeout -k 5 120 mpirun --oversubscribe -np 2 "$mm" --quiet "$@" >"$work/log" 2>&1; }
rm -rf "$work"; mkdir -p "$work/in" "$work/in/dir.nc"
cd "$work" || exit 1
case_ini() { # FILE NAME DIR [more lines]: a short case on a 12 x 10 x 4 grid, $STEPS steps (4)
  local f="$1" name="$2" dir="$3"; shift 3
  { printf '[run]\nname = %s\nsteps = %s\n[grid]\nnx = 12\nny = 10\nnz = 4\n[output]\ndir = %s\nrestart_interval = 2\n' \
      "$name" "${STEPS:-4}" "$dir"; printf '%s\n' "$@"; } >"$f"
}
# inputs: a restart of this grid at step 4, one of a 14 x 10 x 4 grid
case_ini in.ini input in
run in.ini || fail "making the input files"
case_ini wide.ini wide in
run --set grid.nx=14 wide.ini || fail "making the input files"

case_ini good.ini good out
bad() { # REGEX [more lines of bad.ini]: good.ini bad.ini is refused, nothing written
  local regex="$1"; shift
  case_ini bad.ini bad out2 "$@"
  run good.ini bad.ini; local rc=$?
  [ ! -e out ] && [ ! -e out2 ] || fail "case 1 ran before the input of case 2 was checked ($*)"
  [ $rc = 2 ] || fail "exit $rc, expected 2, with bad.ini: $*"
  grep -qE -- "error: bad.ini: $regex" "$work/log" || fail "output does not match /bad.ini: $regex/"
  echo "ok: refused before any case ran: $*"
}
bad "in/missing.nc: cannot open" '[initial]' 'file = in/missing.nc'
bad "in/dir.nc: cannot open" '[initial]' 'file = in/dir.nc'
bad "in/wide.restart.nc: temp: expected dimensions \(z, y, x\) = \(4, 10, 12\)" '[initial]' 'file = in/wide.restart.nc'
bad "in/missing.nc: cannot" '[initial]' 'restart = in/missing.nc'
bad "in/wide.restart.nc: written for another grid" '[initial]' 'restart = in/wide.restart.nc'
bad "in/input.restart.nc: written for another configuration .*: physics.kappa_h = 0 there, 90 here" '[initial]' 'restart = in/input.restart.nc' '[physics]' 'kappa_h = 90'
STEPS=3 bad "in/input.restart.nc: restart at step 4 is beyond run.steps = 3" '[initial]' 'restart = in/input.restart.nc'

# the same inputs, good: both cases run
STEPS=6 case_ini ok.ini ok out2 '[initial]' 'restart = in/input.restart.nc'
run good.ini ok.ini || fail "good.ini ok.ini"
[ -f out/good.nc ] && [ -f out2/ok.nc ] || fail "good.ini ok.ini: output missing"
# case 2 continues from the restart file that case 1 writes
rm -rf out out2
STEPS=6 case_ini next.ini next out2 '[initial]' 'restart = out/good.restart.nc'
run good.ini next.ini || fail "a case that reads the restart file of the case before it"
[ -f out2/next.nc ] || fail "good.ini next.ini: output missing"
# ... but not when case 1 failed: the restart file there is this earlier
# run's (case 1 blows up at step 1, before its first restart; injected NaN)
cp out2/next.nc next.before
MINIMODEL_FAULT_NAN_STEP=1 run good.ini next.ini; rc=$?
[ $rc = 1 ] || fail "case 1 failed: exit $rc, expected 1"
grep -q "case 2 of 2 (next.ini): not run: initial.restart = out/good.restart.nc is the restart file of case 1 (good.ini), which did not end well" \
  "$work/log" || fail "case 1 failed: case 2 not refused with its reason"
# the summary says it was not run, and why (it said "FAILED (exit 1)")
grep -qE "^  next.ini +NOT RUN \(case 1 failed\)$" "$work/log" ||
  fail "case 1 failed: the summary does not say that case 2 was not run"
cmp -s out2/next.nc next.before || fail "case 1 failed: case 2 wrote its history"
echo "ok: a chain from a case that failed: the later case not run"
# ... nor from a case that writes no restart file in the steps it runs:
# mid continues from good's restart of step 4 to step 5, and no multiple of
# restart_interval (2) is among its steps; the mid.restart.nc there is
# another run's. Refused before any case runs (it was found after case 2
# had run: exit 1)
rm -rf out out2 out3
STEPS=5 case_ini mid.ini mid out2 '[initial]' 'restart = out/good.restart.nc'
STEPS=8 case_ini last.ini last out3 '[initial]' 'restart = out2/mid.restart.nc'
mkdir -p out2 && cp in/input.restart.nc out2/mid.restart.nc
run good.ini mid.ini last.ini; rc=$?
[ $rc = 2 ] || fail "a chain from a case that writes no restart in its steps: exit $rc, expected 2"
grep -q "error: last.ini:12: initial.restart = out2/mid.restart.nc is case 2's (mid.ini) restart file, but that case writes none: it runs steps 5 to 5, and no multiple of output.restart_interval = 2 is among them" \
  "$work/log" || fail "a chain from a case that writes no restart in its steps: no message"
[ ! -e out ] && [ "$(ls out2)" = mid.restart.nc ] && [ ! -e out3 ] ||
  fail "a chain from a case that writes no restart in its steps: a case ran"
echo "ok: a chain from a case that writes no restart file in its steps: refused before any case"
# ... the same where that case continues from a file of its own (its start
# step read from it: 4, run to 5)
rm -rf out2 out3
STEPS=5 case_ini mid.ini mid out2 '[initial]' 'restart = in/input.restart.nc'
run mid.ini last.ini; rc=$?
[ $rc = 2 ] && [ ! -e out2 ] && [ ! -e out3 ] || fail "a chain from a continuation: exit $rc"
grep -q "error: last.ini:12: initial.restart = out2/mid.restart.nc is case 1's (mid.ini) restart file, but that case writes none: it runs steps 5 to 5" \
  "$work/log" || fail "a chain from a continuation: no message"
echo "ok: a chain from a continuation that writes no restart file: refused before any case"
# ... and where the restart it writes is beyond the later case's run.steps
STEPS=8 case_ini mid.ini mid out2 '[initial]' 'restart = in/input.restart.nc'
STEPS=7 case_ini last.ini last out3 '[initial]' 'restart = out2/mid.restart.nc'
run mid.ini last.ini; rc=$?
[ $rc = 2 ] && [ ! -e out2 ] && [ ! -e out3 ] || fail "a chain beyond run.steps: exit $rc"
grep -q "error: last.ini:12: initial.restart = out2/mid.restart.nc is case 1's (mid.ini) restart file, of step 8, beyond this case's run.steps = 7" \
  "$work/log" || fail "a chain beyond run.steps: no message"
echo "ok: a chain to a case whose run.steps ends before the restart: refused before any case"
# ... nor from a case that writes no restart file: refused before any case
rm -rf out out2
run --set output.restart_interval=0 good.ini next.ini; rc=$?
[ $rc = 2 ] && [ ! -e out ] && [ ! -e out2 ] || fail "a chain from a case without restarts: exit $rc"
grep -q "error: next.ini:12: initial.restart = out/good.restart.nc is case 1's (good.ini) restart file, but that case writes none" \
  "$work/log" || fail "a chain from a case without restarts: no message"
echo "ok: a chain from a case that writes no restart file: refused"
echo "ok"

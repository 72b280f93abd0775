#!/usr/bin/env bash
# restart_at_stop.sh MINIMODEL PYTHON SOURCE_DIR WORK
# output.restart_at_stop = true: a stop signal completes the step it came in
# as a restart step (the blow-up check, its record where one falls, the
# restart file) and ends the run there, exit 128 + N; the run continued from
# that restart, in place, gives the history and the restart of a straight run
# bit for bit. Without the key the step is abandoned and no restart is
# written at the stop (the contrast: reliability.signal has the rest).
#  1. one process, SIGTERM raised at the end of step 40 (a record step) and
#     of step 47 (none), MINIMODEL_FAULT_SIGNAL_STEP; restarts only at the stop
#     (output.restart_interval = 0) and between periodic ones (every 20);
#  2. mpirun -np 2, the signal on rank 1 alone: both ranks stop after step
#     47 with its restart, continued on 3 ranks;
#  3. a real SIGTERM and SIGUSR1 to mpirun (Open MPI passes them on to the
#     ranks), at a step no one chose;
#  4. a blow-up in the step of the stop: the blow-up's exit 1 and crash file,
#     no restart of the bad state; a restart that cannot be written at the
#     stop: exit 1 and its message, not the stop's 143;
#  5. a directory at the restart file's name in a case that writes restarts
#     only at a stop: refused before the run, exit 2.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
ini="$src/configs/gyre_bowl.ini"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
step_of() { ncdump -h "$1" | sed -n 's/^[[:space:]]*:step = \([0-9]*\)LL ;/\1/p'; }
rm -rf "$work"; mkdir -p "$work"
# records every 20 steps, small records (2 levels)
common=(--quiet --set output.dir="$work" --set output.interval=20 --set grid.nz=2)
at_stop=(--set output.restart_at_stop=true)
mpi() { timeout -k 5 120 mpirun --oversubscribe "$@"; }

# records FILE: the steps of the history's records, space-separated
records() {
  "$py" -c 'import sys, netCDF4; print(*netCDF4.Dataset(sys.argv[1])["step"][:])' "$1"
}
# stopped NAME STOP RECORD [SIG CODE]: the one line (SIGTERM, 143 unless
# given), the restart of step STOP, no .tmp, no lock
stopped() {
  local name="$1" stop="$2" record="$3" sig="${4:-TERM}" code="${5:-143}"
  local want="minimodel: stopped by SIG$sig after step $stop of 1000000; written by this run: history up to step $record ($work/$name.nc), restart of step $stop ($work/$name.restart.nc); exit status $code"
  [ "$(grep -c '^minimodel:' "$work/log")" = 1 ] || fail "$name: not one line from minimodel"
  [ "$(grep '^minimodel:' "$work/log")" = "$want" ] || fail "$name: the line is not '$want'"
  [ "$(step_of "$work/$name.restart.nc")" = "$stop" ] || fail "$name: restart file not of step $stop"
  [ ! -e "$work/$name.restart.nc.tmp" ] || fail "$name: half-written restart left behind"
  [ ! -e "$work/$name.lock" ] || fail "$name: lock file left behind"
}
# straight NAME END RESTARTS [LAUNCH...]: a run of END steps without a stop
straight() {
  local name="$1" end="$2" restarts="$3"; shift 3
  "$@" "$mm" "${common[@]}" --set run.steps="$end" --set output.restart_interval="$restarts" \
    --set run.name="$name" "$ini" >"$work/log" 2>&1 || fail "straight run $name of $end steps"
}
# continued NAME END RESTARTS [LAUNCH...]: NAME continued in place from its
# restart to step END; its history and restart equal those of straight_END
continued() {
  local name="$1" end="$2" restarts="$3" from; shift 3
  from=$(step_of "$work/$name.restart.nc")
  "$@" "$mm" "${common[@]}" --set run.steps="$end" --set output.restart_interval="$restarts" \
    --set run.name="$name" --set initial.restart="$work/$name.restart.nc" "$ini" \
    >"$work/log" 2>&1 || fail "$name: continuing from the restart of the stop"
  "$src/tests/steps_run.sh" "$work/$name.timing.json" $((end - from)) ||
    fail "$name: did not continue from the restart of step $from"
  "$py" "$src/scripts/compare.py" --quiet "$work/$name.nc" "$work/straight_$end.nc" ||
    fail "$name: the continued history differs from the straight run's"
  "$py" "$src/scripts/compare.py" --quiet "$work/$name.restart.nc" "$work/straight_$end.restart.nc" ||
    fail "$name: the continued restart differs from the straight run's"
  [ "$(records "$work/$name.nc")" = "$(records "$work/straight_$end.nc")" ] ||
    fail "$name: records of steps $(records "$work/$name.nc"), the straight run's $(records "$work/straight_$end.nc")"
}
straight straight_100 100 100

# 1. one process, the stop at a record step and between records
for how in 40:0 47:0 47:20; do
  IFS=: read -r stop restarts <<<"$how"
  name=np1_${stop}_every$restarts
  MINIMODEL_FAULT_SIGNAL_STEP=$stop timeout -k 5 120 "$mm" "${common[@]}" "${at_stop[@]}" \
    --set run.steps=1000000 --set output.restart_interval="$restarts" --set run.name="$name" \
    "$ini" >"$work/log" 2>&1
  rc=$?
  [ $rc = 143 ] || fail "$name: exit $rc, expected 143"
  stopped "$name" "$stop" $((stop - stop % 20))
  want=$(seq -s ' ' 0 20 "$stop")
  [ "$(records "$work/$name.nc")" = "$want" ] ||
    fail "$name: history records $(records "$work/$name.nc"), expected $want"
  continued "$name" 100 100
  echo "ok: $name: exit 143, restart of step $stop, continued in place to 100 bit for bit"
done

# without the key: the step of the signal abandoned, no restart at the stop
name=np1_47_default
MINIMODEL_FAULT_SIGNAL_STEP=47 timeout -k 5 120 "$mm" "${common[@]}" --set run.steps=1000000 \
  --set run.name="$name" "$ini" >"$work/log" 2>&1
rc=$?
[ $rc = 143 ] || fail "$name: exit $rc, expected 143"
grep -qx "minimodel: stopped by SIGTERM after step 46 of 1000000; written by this run: history up to step 40 ($work/$name.nc), no restart file; exit status 143" "$work/log" ||
  fail "$name: not stopped after step 46 without a restart"
[ ! -e "$work/$name.restart.nc" ] || fail "$name: a restart file written without output.restart_at_stop"
echo "ok: $name: without the key, stopped after step 46, no restart"

# 2. two ranks, the signal on rank 1 alone; continued on 3 ranks
name=np2_rank1_47
MINIMODEL_FAULT_SIGNAL_STEP=47 MINIMODEL_FAULT_RANK=1 mpi -x MINIMODEL_FAULT_SIGNAL_STEP \
  -x MINIMODEL_FAULT_RANK -np 2 "$mm" "${common[@]}" "${at_stop[@]}" --set run.steps=1000000 \
  --set run.name="$name" "$ini" >"$work/log" 2>&1
rc=$?
[ $rc = 143 ] || fail "$name: exit $rc, expected 143"
stopped "$name" 47 40
continued "$name" 100 100 mpi -np 3
echo "ok: $name: both ranks stopped after step 47 with its restart, continued on 3 ranks bit for bit"

# 3. a real signal to mpirun, at a step no one chose; continued to a step
# 30 past it. Open MPI passes SIGTERM on odls_base_sigkill_timeout s later,
# SIGKILL as long after (5 s leave the stop room on a loaded machine), and
# SIGUSR1 on as it is, with no SIGKILL after it
for how in TERM:143 USR1:138; do
  IFS=: read -r sig code <<<"$how"
  name=np2_mpirun_$sig
  timeout -k 5 120 mpirun --oversubscribe --mca odls_base_sigkill_timeout 5 -np 2 "$mm" \
    "${common[@]}" "${at_stop[@]}" --set run.steps=1000000 --set output.restart_interval=100 \
    --set run.name="$name" "$ini" >"$work/log" 2>&1 &
  pid=$!
  for ((i = 0; i < 3000; i++)); do
    [ -e "$work/$name.restart.nc" ] && break
    kill -0 $pid 2>/dev/null || fail "$name: the run ended before the signal"
    sleep 0.02
  done
  [ -e "$work/$name.restart.nc" ] || fail "$name: no restart within 60 s"
  sleep 0.2
  kill -$sig "$(pgrep -P $pid)" # mpirun, not timeout(1)
  wait $pid
  line=$(grep '^minimodel:' "$work/log")
  re="^minimodel: stopped by SIG$sig after step ([0-9]+) of 1000000; .*restart of step ([0-9]+) \\($work/$name\\.restart\\.nc\\); exit status $code\$"
  [[ "$line" =~ $re ]] || fail "$name: the line does not match /$re/"
  stop=${BASH_REMATCH[1]}
  [ "${BASH_REMATCH[2]}" = "$stop" ] || fail "$name: stopped after step $stop, restart of ${BASH_REMATCH[2]}"
  stopped "$name" "$stop" $((stop - stop % 20)) "$sig" "$code"
  end=$((stop + 30))
  straight "straight_$end" "$end" "$end" mpi -np 2
  continued "$name" "$end" "$end" mpi -np 2
  echo "ok: $name: SIG$sig to mpirun, restart of step $stop, continued to $end bit for bit"
done

# 4. a blow-up in the step of the stop: no restart of the bad state
name=nan_at_stop
MINIMODEL_FAULT_SIGNAL_STEP=47 MINIMODEL_FAULT_NAN_STEP=47 timeout -k 5 120 "$mm" "${common[@]}" \
  "${at_stop[@]}" --set run.steps=1000000 --set output.restart_interval=20 --set run.name="$name" \
  "$ini" >"$work/log" 2>&1
rc=$?
[ $rc = 1 ] || fail "$name: exit $rc, expected 1 (the blow-up)"
grep -q "numerical blow-up at step 47" "$work/log" || fail "$name: no blow-up message"
[ "$(step_of "$work/$name.restart.nc")" = 40 ] || fail "$name: the restart in place is not step 40's"
[ -f "$work/$name.crash.nc" ] || fail "$name: no crash file"
echo "ok: $name: exit 1 for the blow-up, the restart of step 40 kept, crash file written"

# the restart of the stop cannot be written: its error, not the stop
name=unwritable_at_stop
MINIMODEL_FAULT_SIGNAL_STEP=47 MINIMODEL_FAULT_OPEN=restart timeout -k 5 120 "$mm" "${common[@]}" \
  "${at_stop[@]}" --set run.steps=1000000 --set run.name="$name" "$ini" >"$work/log" 2>&1
rc=$?
[ $rc = 1 ] || fail "$name: exit $rc, expected 1"
grep -q "^minimodel: error: .*restart" "$work/log" || fail "$name: no message about the restart"
! grep -q "stopped by" "$work/log" || fail "$name: the stop's line, as if the restart were written"
[ "$(records "$work/$name.nc")" = "0 20 40" ] || fail "$name: history records $(records "$work/$name.nc")"
[ ! -e "$work/$name.lock" ] || fail "$name: lock file left behind"
echo "ok: $name: exit 1 with the restart's error, the history kept"

# 5. a case that writes restarts only at a stop: a directory at the name
name=dir_at_restart
mkdir -p "$work/$name.restart.nc"
timeout -k 5 120 "$mm" "${common[@]}" "${at_stop[@]}" --set run.steps=10 --set run.name="$name" \
  "$ini" >"$work/log" 2>&1
rc=$?
[ $rc = 2 ] || fail "$name: exit $rc, expected 2"
grep -q "$work/$name.restart.nc is a directory, where the case writes its restart file" "$work/log" ||
  fail "$name: the directory not named"
[ ! -e "$work/$name.nc" ] || fail "$name: a history written before the refusal"
echo "ok: $name: refused before the run, exit 2"
echo "ok"

#!/usr/bin/env bash
# signal.sh MINIMODEL PYTHON SOURCE_DIR WORK
# The stop signals stop a run at a step boundary on every rank:
# one line names the signal, the step and what was written; every rank
# exits with 128 + N; the history is readable and holds every record up to
# that step; the restart file is complete (no .tmp left) and continues to
# the bits of an uninterrupted run; the lock file is gone.
#  1. one process without mpirun: SIGTERM, SIGINT, SIGHUP (143, 130, 129),
#     SIGQUIT and the signals of batch systems before a kill: SIGUSR1,
#     SIGUSR2, SIGXCPU, SIGALRM, and a failing power supply's SIGPWR (131,
#     138, 140, 152, 142, 158: they killed the process with no word,
#     leaving the lock and no restart of the stop);
#  2. mpirun -np 1 and -np 2, SIGTERM and SIGINT to mpirun (Open MPI sends
#     its ranks SIGTERM: 143 on every rank);
#  3. mpirun -np 2, SIGTERM to rank 1 alone: both ranks stop after the same
#     step (rank 0 must not wait for rank 1 in the halo exchange);
#  4. a signal while MPI starts (MINIMODEL_FAULT_SIGNAL_IN_INIT: raised
#     before MPI_Init, held back until the handlers are in place): the line
#     "stopped by SIG... before case 1", 128 + N, nothing written; one
#     process (TERM, INT, HUP) and mpirun -np 2 (TERM, every rank);
#  5. a signal to mpirun once the ranks are done, while MPI ends
#     (MINIMODEL_FAULT_SIGNAL_LAUNCHER): the run had ended, every rank exits
#     0 (they waited in MPI_Finalize for the launcher that was ending, and
#     its SIGKILL ended them), its files complete.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
ini="$src/configs/gyre_bowl.ini"
here="$(cd "$(dirname "$0")" && pwd)"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
step_of() { ncdump -h "$1" | sed -n 's/^[[:space:]]*:step = \([0-9]*\)LL ;/\1/p'; }
rm -rf "$work"; mkdir -p "$work"
set -m # background jobs keep SIGINT (without job control a shell's background jobs ignore it)
# records every 20 steps, restarts every 100, small records (2 levels); a
# run that does not end by itself
common=(--quiet --set output.dir="$work" --set output.interval=20
        --set output.restart_interval=100 --set grid.nz=2)
endless=(--set run.steps=1000000)

# wait_for FILE PID: until FILE exists (the run is under way)
wait_for() {
  local i
  for ((i = 0; i < 3000; i++)); do
    [ -e "$1" ] && return 0
    kill -0 "$2" 2>/dev/null || fail "the run ended before the signal: $(cat "$work/log")"
    sleep 0.02
  done
  fail "$1 did not appear within 60 s"
}

# check NAME SIGNAME STATUS: the line, the history, the restart, no .tmp, no lock
check() {
  local name="$1" sig="$2" code="$3"
  local lines n_lines
  lines=$(grep -c '^minimodel:' "$work/log")
  [ "$lines" = 1 ] || fail "$name: $lines lines from minimodel, expected one"
  local re="^minimodel: stopped by $sig after step ([0-9]+) of 1000000; written by this run: history up to step ([0-9]+) \\($work/$name\\.nc\\), restart of step ([0-9]+) \\($work/$name\\.restart\\.nc\\); exit status $code\$"
  local line
  line=$(grep '^minimodel:' "$work/log")
  [[ "$line" =~ $re ]] || fail "$name: the line does not match /$re/"
  stop=${BASH_REMATCH[1]}; record=${BASH_REMATCH[2]}; restart=${BASH_REMATCH[3]}
  # every step up to the stop ended with its output
  [ "$record" = $((stop - stop % 20)) ] || fail "$name: stopped after step $stop, last record $record"
  [ "$restart" = $((stop - stop % 100)) ] || fail "$name: stopped after step $stop, last restart $restart"
  "$py" - "$work/$name.nc" "$record" <<'EOF' || fail "$name: history not readable or incomplete"
import sys
import netCDF4
import numpy as np
with netCDF4.Dataset(sys.argv[1]) as ds:
    steps = ds["step"][:]
    want = np.arange(0, int(sys.argv[2]) + 1, 20)  # the initial state, then every 20th
    assert np.array_equal(steps, want), f"records of steps {steps[:3]}..{steps[-3:]}, expected 0, 20..{sys.argv[2]}"
    for v in ("temp", "salt", "time", "heat_content"):
        data = ds[v][:]  # every record reads
        assert data.shape[0] == len(want), v
EOF
  [ "$(step_of "$work/$name.restart.nc")" = "$restart" ] ||
    fail "$name: restart file not of step $restart"
  [ ! -e "$work/$name.restart.nc.tmp" ] || fail "$name: half-written restart left behind"
  [ ! -e "$work/$name.lock" ] || fail "$name: lock file left behind"
}

# statuses EXPECTED NRANKS: what rank_status.py recorded for every rank
statuses() {
  local r s
  for ((r = 0; r < $2; r++)); do
    s=$(cat "$work/status.$r" 2>/dev/null)
    [ "$s" = "$1" ] || fail "rank $r ended with '${s:-nothing recorded}', expected exit $1 ($(cat "$work"/events.* 2>/dev/null))"
  done
}

# 1. one process, no launcher
for sig in TERM INT HUP QUIT USR1 USR2 XCPU ALRM PWR; do
  code=$((128 + $(kill -l $sig)))
  name=direct_$sig
  timeout -k 5 120 "$mm" "${common[@]}" "${endless[@]}" --set run.name=$name "$ini" >"$work/log" 2>&1 &
  pid=$!
  wait_for "$work/$name.restart.nc" $pid
  sleep 0.2
  kill -$sig "$(pgrep -P $pid)" # minimodel, not timeout(1)
  wait $pid; rc=$?
  [ $rc = $code ] || fail "$name: exit $rc, expected $code"
  check $name SIG$sig $code
  echo "ok: $name: exit $rc after step $stop, history to $record, restart $restart"
done

# 2. and 3. under mpirun, every rank's ending recorded by rank_status.py
for how in mpirun:1:TERM mpirun:1:INT mpirun:2:TERM mpirun:2:INT rank1:2:TERM; do
  IFS=: read -r target np sig <<<"$how"
  name=${target}_np${np}_$sig
  rm -f "$work"/status.* "$work"/pid.* "$work"/events.*
  # Open MPI passes a signal to mpirun on as SIGTERM odls_base_sigkill_timeout
  # seconds later, and SIGKILL as long after that: 5 s instead of 1 leave
  # the stop room on a loaded machine (a sanitizer build, other jobs)
  timeout -k 5 120 mpirun --oversubscribe --mca odls_base_sigkill_timeout 5 -np "$np" \
    "$py" "$here/rank_status.py" "$work" \
    "$mm" "${common[@]}" "${endless[@]}" --set run.name="$name" "$ini" >"$work/log" 2>&1 &
  pid=$!
  wait_for "$work/$name.restart.nc" $pid
  sleep 0.2
  echo "$(date +%s.%3N) signal $sig to $target" >"$work/events.sent"
  if [ "$target" = mpirun ]; then
    kill -$sig "$(pgrep -P $pid)" # mpirun, not timeout(1)
  else
    kill -$sig "$(cat "$work/pid.1")"
  fi
  wait $pid; rc=$?
  [ $rc != 124 ] && [ $rc != 137 ] || fail "$name: hung (exit $rc)"
  statuses 143 "$np"
  check "$name" SIGTERM 143
  echo "ok: $name: every rank exit 143 (mpirun $rc) after step $stop, history to $record, restart $restart"
  [ "$target" = rank1 ] || rm -f "$work/$name".* # the last one is continued below
done

# 4. a signal while MPI starts: the line and the status, not a silent death
for sig in 15:TERM:143 2:INT:130 1:HUP:129; do
  IFS=: read -r num sig code <<<"$sig"
  name=init_$sig
  MINIMODEL_FAULT_SIGNAL_IN_INIT=$num timeout -k 5 120 "$mm" "${common[@]}" --set run.name=$name \
    "$ini" >"$work/log" 2>&1
  rc=$?
  [ $rc = $code ] || fail "$name: exit $rc, expected $code"
  grep -qx "minimodel: stopped by SIG$sig before case 1 ($ini); exit status $code" "$work/log" ||
    fail "$name: no line 'stopped by SIG$sig before case 1'"
  [ -z "$(ls "$work" | grep "^$name")" ] || fail "$name: files written: $(ls "$work" | grep "^$name")"
  echo "ok: $name: exit $rc, the line, nothing written"
done
rm -f "$work"/status.* "$work"/pid.* "$work"/events.*
MINIMODEL_FAULT_SIGNAL_IN_INIT=15 timeout -k 5 120 mpirun --oversubscribe \
  -x MINIMODEL_FAULT_SIGNAL_IN_INIT -np 2 "$py" "$here/rank_status.py" "$work" \
  "$mm" "${common[@]}" --set run.name=init_np2 "$ini" >"$work/log" 2>&1
statuses 143 2
[ "$(grep -c "^minimodel: stopped by SIGTERM before case 1 ($ini); exit status 143\$" "$work/log")" = 1 ] ||
  fail "init_np2: not one line 'stopped by SIGTERM before case 1'"
[ -z "$(ls "$work" | grep "^init_np2")" ] || fail "init_np2: files written"
echo "ok: init_np2: every rank exit 143, one line, nothing written"

# 5. a signal to mpirun after the last step, while MPI ends
rm -f "$work"/status.* "$work"/pid.* "$work"/events.*
# (SIGKILL 5 s after the SIGTERM, as above: room on a loaded machine)
MINIMODEL_FAULT_SIGNAL_LAUNCHER=1 timeout -k 5 120 mpirun --oversubscribe \
  --mca odls_base_sigkill_timeout 5 -x MINIMODEL_FAULT_SIGNAL_LAUNCHER -np 2 \
  "$py" "$here/rank_status.py" "$work" \
  "$mm" "${common[@]}" --set run.steps=40 --set run.name=late_np2 "$ini" >"$work/log" 2>&1
statuses 0 2
"$py" - "$work/late_np2.nc" <<'EOF' || fail "late_np2: the history is not whole"
import sys
import netCDF4
with netCDF4.Dataset(sys.argv[1]) as ds:
    assert list(ds["step"][:]) == [0, 20, 40], list(ds["step"][:])
EOF
[ ! -e "$work/late_np2.lock" ] || fail "late_np2: lock file left behind"
echo "ok: late_np2: a signal to mpirun after the last step: every rank exit 0, the files whole"

# the restart of a stopped run continues to the bits of an uninterrupted one
name=rank1_np2_TERM # the last one checked: $restart is its restart step
end=$((restart + 100)) # a restart step
timeout -k 5 120 mpirun --oversubscribe -np 2 "$mm" "${common[@]}" --set run.steps=$end \
  --set run.name=straight "$ini" >"$work/log" 2>&1 || fail "straight run of $end steps"
timeout -k 5 120 mpirun --oversubscribe -np 2 "$mm" "${common[@]}" --set run.steps=$end \
  --set run.name=continued --set initial.restart="$work/$name.restart.nc" "$ini" >"$work/log" 2>&1 ||
  fail "continuing from the restart of the stopped run"
"$src/tests/steps_run.sh" "$work/continued.timing.json" $((end - restart)) ||
  fail "did not continue from the restart of step $restart"
"$py" "$src/scripts/compare.py" --quiet "$work/straight.restart.nc" "$work/continued.restart.nc" ||
  fail "continued run differs from the straight run"
echo "ok: continued from step $restart to $end, bitwise equal"
echo "ok"

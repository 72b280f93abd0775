#!/usr/bin/env bash
# kill.sh MINIMODEL PYTHON SOURCE_DIR WORK
# A run killed with SIGKILL part-way continues from its last complete restart
# file and ends bitwise identical to an uninterrupted run:
#  1. rank 0 killed in the middle of writing the 3rd restart file
#     (MINIMODEL_FAULT_KILL_IN_RESTART): the .tmp is left, the restart file
#     of the 2nd is intact, and mpirun ends the job instead of hanging;
#  2. kill -9 of mpirun alone, in a run far too long to end by itself: the
#     ranks must end by themselves within $orphan_s s (Open MPI's ranks notice
#     the lost launcher after about 2 s, docs/reliability.md); they may write
#     further restart files until then, so the run continues to a few steps
#     past the restart file left behind and is compared with a straight run
#     of as many steps;
#  3. kill -9 of mpirun and every rank at once (a node lost), in a run as
#     long, continued and compared in the same way.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
ini="$src/configs/gyre_bowl.ini"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
mpi=(mpirun --oversubscribe -np 2 "$mm" --quiet)
common=(--set output.dir="$work" --set output.interval=0 --set output.restart_interval=4)
long=100000 # steps of a run that cannot end by itself before it is killed (minutes)
orphan_s=10 # the ranks of a killed mpirun must have ended this many seconds after
# run [--steps N] ARGS...: a run of N steps (40 by default)
run() {
  local steps=40
  if [ "$1" = --steps ]; then steps="$2"; shift 2; fi
  timeout -k 10 120 "${mpi[@]}" "${common[@]}" --set run.steps="$steps" "$@" "$ini" \
    >"$work/log" 2>&1
}
step_of() { ncdump -h "$1" | sed -n 's/^[[:space:]]*:step = \([0-9]*\)LL ;/\1/p'; }
cmp_nc() { "$py" "$src/scripts/compare.py" --quiet "$@"; }
# continue NAME from its restart file to step STEPS (40); compare with the
# straight run STRAIGHT of as many steps
continue_and_compare() {
  local name="$1" straight="${2:-straight}" steps="${3:-40}" from
  from=$(step_of "$work/$name.restart.nc")
  run --steps "$steps" --set run.name="$name" --set initial.restart="$work/$name.restart.nc" ||
    fail "$name: continuing from the restart file"
  "$src/tests/steps_run.sh" "$work/$name.timing.json" $((steps - from)) ||
    fail "$name: did not continue from the restart of step $from"
  [ "$(step_of "$work/$name.restart.nc")" = "$steps" ] ||
    fail "$name: the continued run did not end at step $steps"
  cmp_nc "$work/$straight.nc" "$work/$name.nc" ||
    fail "$name: history differs from the straight run $straight"
  cmp_nc "$work/$straight.restart.nc" "$work/$name.restart.nc" ||
    fail "$name: final restart differs from the straight run $straight"
  [ ! -e "$work/$name.restart.nc.tmp" ] || fail "$name: temporary restart file left behind"
}
alive() { local p; for p in "$@"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
rm -rf "$work"; mkdir -p "$work"
run --set run.name=straight || fail "straight run"
[ "$(step_of "$work/straight.restart.nc")" = 40 ] || fail "straight run: restart not at step 40"

# 1. killed while writing the 3rd restart file (step 12)
MINIMODEL_FAULT_KILL_IN_RESTART=3 MINIMODEL_FAULT_RANK=0 run --set run.name=in_restart
rc=$?
[ $rc -ne 124 ] && [ $rc -ne 0 ] || fail "in_restart: exit $rc: mpirun hung or the kill did not happen"
[ -e "$work/in_restart.restart.nc.tmp" ] || fail "in_restart: no half-written .tmp: killed elsewhere?"
[ "$(step_of "$work/in_restart.restart.nc")" = 8 ] ||
  fail "in_restart: the restart file is not the complete one of step 8"
continue_and_compare in_restart
echo "ok: killed in the 3rd restart write (exit $rc), continued from step 8, bitwise equal"

# 2. and 3. kill -9 while running, right after the first restart file appeared
for how in mpirun all; do
  name="kill_$how"
  # a run that cannot end by itself before it is killed (of 40 steps, the
  # kill of every rank at once came after the end where the machine was
  # busy: "killed only after the end (step 40 of 40)")
  steps=$long
  "${mpi[@]}" "${common[@]}" --set run.steps="$steps" --set run.name="$name" "$ini" \
    >"$work/log" 2>&1 &
  pid=$!
  for ((i = 0; i < 3000; i++)); do
    [ -e "$work/$name.restart.nc" ] && break
    kill -0 "$pid" 2>/dev/null || fail "$name: the run ended before it could be killed"
    sleep 0.02
  done
  ranks=$(pgrep -P "$pid" | tr '\n' ' ')
  [ -n "$ranks" ] || fail "$name: no ranks found under mpirun $pid"
  if [ "$how" = all ]; then kill -9 "$pid" $ranks; else kill -9 "$pid"; fi
  killed=$(date +%s%N)
  wait "$pid" 2>/dev/null
  # the ranks must not outlive mpirun for long (no orphans computing on)
  while alive $ranks && (($(date +%s%N) - killed < orphan_s * 1000000000)); do sleep 0.05; done
  if alive $ranks; then
    kill -9 $ranks 2>/dev/null
    fail "$name: ranks $ranks still running $orphan_s s after mpirun was killed"
  fi
  ended_ms=$((($(date +%s%N) - killed) / 1000000))
  step=$(step_of "$work/$name.restart.nc")
  [ -n "$step" ] || fail "$name: the restart file left behind is not readable"
  [ "$step" -lt "$steps" ] || fail "$name: killed only after the end (step $step of $steps)"
  # continue a few steps past the restart file left behind (after mpirun
  # alone was killed the ranks ran on for a while, and may have written more)
  to=$((step + 8))
  run --steps "$to" --set run.name="straight_$to" || fail "$name: straight run of $to steps"
  continue_and_compare "$name" "straight_$to" "$to"
  echo "ok: kill -9 of $how: the ranks ended ${ended_ms} ms after, continued from step $step" \
    "to $to, bitwise equal"
done
echo "ok"

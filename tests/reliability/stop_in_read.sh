#!/usr/bin/env bash
# stop_in_read.sh MINIMODEL SOURCE_DIR WORK
# A stop signal while an input file is read that never finishes (a damaged
# NetCDF-4 file on which libhdf5 loops) ends the run within a second, not
# at the read's time limit (600 s by default, or none), with 128 + N and a
# line that names the signal and the file. The test read (io/probe.c) is
# ended 0.1 s after the signal and the run stops through its errors; the
# run's own read, which cannot be ended, by the read watchdog (app/run.c)
# 0.5 s after it. The case's outputs are not written, and no test read is
# left running.
#  1. one process, SIGINT during the test read (the helper loops): 130;
#  2. one process, the test read passed (MINIMODEL_PROBE_HELPER=true), so
#     the run's own read loops, with no time limit (MINIMODEL_READ_TIMEOUT=0):
#     SIGTERM, 143;
#  3. mpirun -np 2, SIGTERM to rank 1 alone while rank 0 test-reads: 143;
#  4. mpirun -np 2, SIGTERM to mpirun (it sends the ranks SIGTERM, then
#     SIGKILL 1 s later): the line comes before the SIGKILL;
#  5. the test read of the history that a continued run appends to (here
#     the damaged file), SIGTERM: 143;
#  6. no signal: the run's own read at its time limit (MINIMODEL_READ_TIMEOUT,
#     the test read passed): the watchdog's exit 2;
#  7. the continued run's own read of its history (a read that never ends,
#     injected), at its time limit: exit 2 naming the history, which is left
#     as it was, and the case's lock released (it hung: that read had no
#     watchdog);
#  8. the same read, no time limit, SIGTERM: 143;
#  9. mpirun -np 2, SIGTERM to rank 1 alone while rank 0 test-reads the
#     history (the damaged file): 143, rank 1's line (it waited for rank 0,
#     with no watch, until the read's time limit, and the signal was lost);
# 10. mpirun -np 2, SIGTERM to rank 1 alone during rank 0's own read of the
#     history, no time limit: 143 (it hung);
# 11. no signal: the test read of the history (the damaged file) at its
#     time limit: exit 2 naming the history, which is left as it was, the
#     lock released, no test read left running.
# A read ended by the watchdog leaves no MPI-IO lock file beside the input
# (loop.nc-<job>-<pid>.lock, Open MPI's: the rank removes its own before it
# exits).
set -u
mm="$1"; src="$2"; work="$3"
job=
# on failure the run under test is ended too (its own process group: set -m)
fail() {
  echo "FAIL: $*"
  cat "$work/log" 2>/dev/null
  [ -n "$job" ] && kill -KILL -- "-$job" 2>/dev/null
  exit 1
}
rm -rf "$work"; mkdir -p "$work"
cd "$work" || exit 1
set -m # background jobs keep SIGINT
# a copy: a run ended while the file is open leaves Open MPI's MPI-IO lock
# file beside it
cp "$src/fuzz/regress/hangs/restart_hdf5_global_heap_loop.nc" loop.nc || fail "copy"
flat="$src/configs/flat.ini"
true_exe="$(type -P true)"
[ -x "$true_exe" ] || fail "no true program"

# settle PID [FILE]: the run is into the read (it loops for ever): with
# FILE (a pattern), once the test read's helper runs on it; then 1.5 s
# more, past the start-up of the run (the signal handlers are installed
# after MPI_Init)
settle() {
  if [ -n "${2:-}" ]; then
    local i
    for ((i = 0; i < 600; i++)); do
      pgrep -f "minimodel-probe $2" >/dev/null && break
      sleep 0.1
    done
    pgrep -f "minimodel-probe $2" >/dev/null || fail "no test read of $2 within 60 s"
  fi
  sleep 1.5
  kill -0 "$1" 2>/dev/null || fail "the run ended before the signal"
}

# opened PATTERN: the run (the process whose command line matches PATTERN)
# holds loop.nc open, so it is in its own read: its signal handlers are
# installed (a machine under load can take more than 1.5 s for MPI_Init)
opened() {
  local i p f
  for ((i = 0; i < 600; i++)); do
    for p in $(pgrep -f -- "$1"); do
      for f in /proc/"$p"/fd/*; do
        [ "$(readlink "$f" 2>/dev/null)" = "$work/loop.nc" ] && return 0
      done
    done
    sleep 0.1
  done
  fail "the run did not open loop.nc within 60 s"
}

# the lines of the test read and of the watchdog: probe_line SIGNO NAME
# [FILE], watch_line SIGNAME
probe_line() { echo "stopped by signal $1 ($2) while test-reading .*${3:-loop.nc}: the test read had not ended 0.1 s after the signal"; }
watch_line() { echo "stopped by $1 (rank [01]) in case flat while reading .*/loop.nc: the read had not ended 0.5 s after the signal; exit status"; }

# no_mpi_lock NAME: no MPI-IO lock file left beside loop.nc
no_mpi_lock() {
  local left
  left=$(ls "$work" | grep '^loop\.nc-.*\.lock$')
  [ -z "$left" ] || fail "$1: left beside the input: $left"
}

# judge NAME RC CODE LINE SECONDS OUTDIR
judge() {
  [ "$2" = "$3" ] || fail "$1: exit $2, expected $3"
  grep -q "$4" log || fail "$1: message"
  [ "$5" -le 15 ] || fail "$1: ended $5 s after the signal, expected within 15 s"
  [ ! -e "$6" ] || fail "$1: $6 was written"
  no_mpi_lock "$1"
  for _ in $(seq 50); do pgrep -f "minimodel-probe $work/loop.nc" >/dev/null || break; sleep 0.1; done
  ! pgrep -f "minimodel-probe $work/loop.nc" >/dev/null || fail "$1: a test read is left running"
  echo "ok: $1: exit $2 within $5 s of the signal"
}

# Under mpirun a rank that one signal stopped has Open MPI's
# odls_base_sigkill_timeout (1 s) before the others get SIGTERM and, as long
# after, SIGKILL; the read's watchdog takes 0.5 s of that by design
# (app/run.c). 5 s leave the stop room on a loaded machine, as in signal.sh.
slow_kill="--mca odls_base_sigkill_timeout 5"

# signal NAME SIG PID CODE LINE OUTPATH: SIG to PID (the run, one of its
# ranks or mpirun), then the run's job is waited for and judged
signal() {
  local t0 rc
  t0=$(date +%s)
  kill "-$2" "$3"
  wait $job
  rc=$?
  judge "$1" $rc "$4" "$5" $(($(date +%s) - t0)) "$6"
}

# 1. SIGINT during the test read, the default limit
timeout -k 5 120 "$mm" --set initial.restart="$work/loop.nc" --set output.dir=out1 "$flat" \
  >log 2>&1 &
job=$!
settle $job "$work/loop.nc"
signal "SIGINT during the test read" INT $job 130 "$(probe_line 2 Interrupt)" out1

# 2. SIGTERM during the run's own read, no time limit
MINIMODEL_PROBE_HELPER="$true_exe" MINIMODEL_READ_TIMEOUT=0 timeout -k 5 120 \
  "$mm" --set initial.restart="$work/loop.nc" --set output.dir=out2 "$flat" >log 2>&1 &
job=$!
opened "^$mm --set initial.restart=$work/loop.nc --set output.dir=out2"
settle $job
signal "SIGTERM during the read itself, MINIMODEL_READ_TIMEOUT=0" TERM $job 143 \
  "$(watch_line SIGTERM)" out2

# 3. two ranks, SIGTERM to rank 1 alone (rank 0 holds the test read)
timeout -k 5 120 mpirun --oversubscribe $slow_kill -np 2 "$mm" --set initial.restart="$work/loop.nc" \
  --set output.dir=out3 "$flat" >log 2>&1 &
job=$!
settle $job "$work/loop.nc"
ranks=$(pgrep -f -- "^$mm --set initial.restart=$work/loop.nc --set output.dir=out3" | sort -n)
[ "$(echo "$ranks" | wc -l)" = 2 ] || fail "two ranks expected: $ranks"
# mpirun passes on the status of the first rank that failed
signal "SIGTERM to rank 1 of 2" TERM "$(echo "$ranks" | tail -1)" 143 "$(watch_line SIGTERM)" out3

# 4. two ranks, SIGTERM to mpirun (exit 1: mpirun's own, docs/reliability.md)
timeout -k 5 120 mpirun --oversubscribe $slow_kill -np 2 "$mm" --set initial.restart="$work/loop.nc" \
  --set output.dir=out4 "$flat" >log 2>&1 &
job=$!
settle $job "$work/loop.nc"
launcher=$(pgrep -f -- "^mpirun --oversubscribe $slow_kill -np 2 $mm --set initial.restart=$work/loop.nc --set output.dir=out4")
[ -n "$launcher" ] || fail "no mpirun"
signal "SIGTERM to mpirun" TERM "$launcher" 1 "$(probe_line 15 Terminated)" out4/flat.nc

# 5. the history's test read: a good restart, and the damaged file where
# the continued run finds its history
"$mm" --quiet --set run.steps=2 --set output.restart_interval=2 --set output.dir=out5 "$flat" \
  >log 2>&1 || fail "making the restart"
cp loop.nc out5/flat.nc
timeout -k 5 120 "$mm" --set initial.restart="$work/out5/flat.restart.nc" --set output.dir=out5 \
  "$flat" >log 2>&1 &
job=$!
settle $job "out5/flat.nc"
signal "SIGTERM during the history's test read" TERM $job 143 \
  "$(probe_line 15 Terminated flat.nc)" out5/flat.lock
cmp -s loop.nc out5/flat.nc || fail "the history was changed"
echo "ok: the history unchanged"

# 6. the run's own read at its time limit, no signal: the watchdog's exit 2
t0=$(date +%s)
MINIMODEL_PROBE_HELPER="$true_exe" MINIMODEL_READ_TIMEOUT=2 timeout -k 5 120 \
  "$mm" --set initial.restart="$work/loop.nc" --set output.dir=out6 "$flat" >log 2>&1
rc=$?
judge "the read's time limit" $rc 2 "error (rank 0): .*loop.nc: still not read after 2 s" \
  $(($(date +%s) - t0)) out6

# 7. the continued run's own read of its history, which never ends
# (MINIMODEL_FAULT_READ_HANG; no file found makes libhdf5 loop in that read
# and not in the test read), at its time limit
"$mm" --quiet --set run.steps=2 --set output.restart_interval=2 --set output.dir=out7 "$flat" \
  >log 2>&1 || fail "making the restart"
cp out7/flat.nc history.nc
t0=$(date +%s)
# (5 s, not 2: the restart file is read first, under the same limit, and
# its healthy test read took more than 2 s on a loaded machine)
MINIMODEL_FAULT_READ_HANG=history MINIMODEL_READ_TIMEOUT=5 timeout -k 5 120 \
  "$mm" --set initial.restart="$work/out7/flat.restart.nc" --set output.dir=out7 "$flat" \
  >log 2>&1
rc=$?
judge "the history's own read at its time limit" $rc 2 \
  "error (rank 0): .*out7/flat.nc: still not read after 5 s" $(($(date +%s) - t0)) out7/flat.lock
cmp -s history.nc out7/flat.nc || fail "the history was changed"
echo "ok: the history unchanged"

# 8. the same read, no time limit, SIGTERM. The log is emptied here, not
# only by the redirection of the job: the poll below could read step 7's
# same line before the job's shell truncates the file
: >log
MINIMODEL_FAULT_READ_HANG=history MINIMODEL_READ_TIMEOUT=0 timeout -k 5 120 \
  "$mm" --set initial.restart="$work/out7/flat.restart.nc" --set output.dir=out7 "$flat" \
  >log 2>&1 &
job=$!
# in the read (the injected hang says so), past the start-up
for ((i = 0; i < 600; i++)); do grep -q "injected fault: the read never ends" log && break; sleep 0.1; done
grep -q "injected fault: the read never ends" log || fail "the run did not reach the history's read within 60 s"
settle $job
signal "SIGTERM during the history's own read, MINIMODEL_READ_TIMEOUT=0" TERM $job 143 \
  "stopped by SIGTERM (rank 0) in case flat while reading .*out7/flat.nc: the read had not ended" \
  out7/flat.lock
cmp -s history.nc out7/flat.nc || fail "the history was changed"
echo "ok: the history unchanged"

# 9. two ranks, the history's test read on rank 0 (the damaged file),
# SIGTERM to rank 1 alone
mpirun --oversubscribe -np 2 "$mm" --quiet --set run.steps=2 --set output.restart_interval=2 \
  --set output.dir=out9 "$flat" >log 2>&1 || fail "making the restart"
cp loop.nc out9/flat.nc
timeout -k 5 120 mpirun --oversubscribe $slow_kill -np 2 "$mm" \
  --set initial.restart="$work/out9/flat.restart.nc" --set output.dir=out9 "$flat" >log 2>&1 &
job=$!
settle $job "out9/flat.nc"
ranks=$(pgrep -f -- "^$mm --set initial.restart=$work/out9/flat.restart.nc" | sort -n)
[ "$(echo "$ranks" | wc -l)" = 2 ] || fail "two ranks expected: $ranks"
signal "SIGTERM to rank 1 of 2 during the history's test read" TERM "$(echo "$ranks" | tail -1)" \
  143 "stopped by SIGTERM (rank 1) in case flat while rank 0 was reading .*out9/flat.nc" \
  out9/flat.lock
for _ in $(seq 50); do pgrep -f "minimodel-probe $work/out9/flat.nc" >/dev/null || break; sleep 0.1; done
! pgrep -f "minimodel-probe $work/out9/flat.nc" >/dev/null || fail "a test read of the history is left"
cmp -s loop.nc out9/flat.nc || fail "the history was changed"
echo "ok: the history unchanged"

# 10. two ranks, rank 0's own read of the history never ends (no time
# limit), SIGTERM to rank 1 alone
mpirun --oversubscribe -np 2 "$mm" --quiet --set run.steps=2 --set output.restart_interval=2 \
  --set output.dir=out10 "$flat" >log 2>&1 || fail "making the restart"
cp out10/flat.nc history10.nc
: >log
MINIMODEL_FAULT_READ_HANG=history MINIMODEL_READ_TIMEOUT=0 timeout -k 5 120 \
  mpirun --oversubscribe $slow_kill -np 2 -x MINIMODEL_FAULT_READ_HANG -x MINIMODEL_READ_TIMEOUT "$mm" \
  --set initial.restart="$work/out10/flat.restart.nc" --set output.dir=out10 "$flat" >log 2>&1 &
job=$!
for ((i = 0; i < 600; i++)); do grep -q "injected fault: the read never ends" log && break; sleep 0.1; done
grep -q "injected fault: the read never ends" log || fail "the run did not reach the history's read within 60 s"
settle $job
ranks=$(pgrep -f -- "^$mm --set initial.restart=$work/out10/flat.restart.nc" | sort -n)
[ "$(echo "$ranks" | wc -l)" = 2 ] || fail "two ranks expected: $ranks"
signal "SIGTERM to rank 1 of 2 during rank 0's own read of the history" TERM \
  "$(echo "$ranks" | tail -1)" 143 \
  "stopped by SIGTERM (rank 1) in case flat while rank 0 was reading .*out10/flat.nc" out10/flat.lock
cmp -s history10.nc out10/flat.nc || fail "the history was changed"
echo "ok: the history unchanged"

# 11. the history's test read (the damaged file) at its time limit, no signal
"$mm" --quiet --set run.steps=2 --set output.restart_interval=2 --set output.dir=out11 "$flat" \
  >log 2>&1 || fail "making the restart"
cp loop.nc out11/flat.nc
t0=$(date +%s)
# (5 s, as in 7: the restart file is read first, under the same limit)
MINIMODEL_READ_TIMEOUT=5 timeout -k 5 120 "$mm" --set initial.restart="$work/out11/flat.restart.nc" \
  --set output.dir=out11 "$flat" >log 2>&1
rc=$?
# the read's watchdog (started before the restart file's read: "error (rank
# 0)") or the test read's own limit (started after it: "error:") may end it:
# both are 5 s, and on a loaded machine either comes first
judge "the history's test read at its time limit" $rc 2 \
  "error\( (rank 0)\)\?: .*out11/flat.nc: still not read after 5 s" $(($(date +%s) - t0)) out11/flat.lock
for _ in $(seq 50); do pgrep -f "minimodel-probe $work/out11/flat.nc" >/dev/null || break; sleep 0.1; done
! pgrep -f "minimodel-probe $work/out11/flat.nc" >/dev/null || fail "a test read of the history is left"
cmp -s loop.nc out11/flat.nc || fail "the history was changed"
echo "ok: the history unchanged"

#!/usr/bin/env bash
# file_watch.sh MINIMODEL FAIL_WRITE_SO SOURCE_DIR WORK
# A write that fails inside HDF5 although its room was reserved (a file
# system's I/O error; fail_write.so makes one rank's writes to one file fail
# with ENOSPC beneath MPI-IO and HDF5). On 2 ranks parallel HDF5 1.10 then
# leaves the ranks waiting for each other in different collectives (they
# hung for ever); the rank whose write failed ends the run after
# MINIMODEL_IO_FAIL_WAIT seconds (app/mm_file_watch.h):
#   restart0   a restart's .tmp, the write failing on rank 0: exit 1 within
#              the wait and 30 s, one message naming the file, no .tmp, no
#              MPI-IO lock file, no case lock left, the history readable
#              with its records (steps 0 and 5)
#   restart1   the same on rank 1 (the case's lock, rank 0's, may stay)
#   history0   the history's header on rank 0: exit 1, the message
#   close0     the history's last write, in its close, on rank 0 (a run that
#              fails nothing counts the writes first): exit 1, the message,
#              the history readable with all its records
#   crash0     the crash file's .tmp on rank 0, after a blow-up (a NaN
#              planted after step 7): exit 1, the watch's message with the
#              blow-up's (it said nothing of it), no .tmp, the history's
#              records up to the last good state
#   stop0      the restart written at a stop (output.restart_at_stop,
#              SIGTERM after step 7), its .tmp on rank 0: exit 1, the
#              watch's message with the stop's
#   open0      Open MPI's lock file beside a restart's .tmp cannot be made on
#              rank 0 (MPI_File_open then left both ranks waiting in it):
#              MINIMODEL_OPEN_TIMEOUT (5 s in every run here) ends rank 0: exit 1, one
#              message naming the .tmp, nothing left, the history readable
#   signal     restart0 with no time limit (MINIMODEL_IO_FAIL_WAIT=0), and
#              SIGTERM to the ranks (as a batch system sends it): rank 0
#              stops 0.5 s later with its message, exit 143, nothing left
#              (it hung)
#   signal_mpirun  the same with SIGTERM to mpirun (which sends it to the
#              ranks): the run ends, nothing left (rank 0's message may be
#              lost by mpirun, see there)
#   one_rank   restart0 on 1 rank: the libraries report the failure and the
#              case ends with their message at once, the watch silent
#   settled    on 1 rank, a case that fails so, then a case that runs
#              longer than the wait (a write of its stalls 3 s): the watch
#              of the first case ends with it, and the second runs to its
#              end (exit 1, the first case's)
#   hang0      a write to the history on rank 0 that never returns (a file
#              system that stalls; fail_write.so's FAIL_WRITE_HANG), half way
#              through the run: MINIMODEL_WRITE_TIMEOUT (5 s) ends rank 0:
#              exit 1, one message naming the file, nothing left, the history
#              readable with the records before (it hung)
#   hang1      the same on rank 1 (rank 0 waits for it, in a collective
#              write, watched too, or in another call: the message may come
#              from either rank, naming the history)
#   hang_one   hang0 on 1 rank
#   hang_signal  hang0 with no time limit (MINIMODEL_WRITE_TIMEOUT=0) and
#              SIGTERM to the ranks: rank 0 stops 5 s after it with its
#              line, exit 143, nothing left (it hung)
#   suspended  a write to the history on rank 0 that takes 4 s
#              (FAIL_WRITE_STALL), the limit 3 s, and both ranks stopped
#              (SIGSTOP, as Ctrl-Z or a batch system's suspend) 8 s during
#              it: the time stopped does not count, the run ends well with
#              every record (it was ended as a stalled file system)
#   bad_value  MINIMODEL_IO_FAIL_WAIT=soon, MINIMODEL_OPEN_TIMEOUT=-1,
#              MINIMODEL_WRITE_TIMEOUT=later: exit 2 and the variable named
# Open MPI's own lines (its "error in writev", the job's end) may come too.
set -u
mm="$1"; so="$2"; src="$3"; work="$4"
ini="$src/configs/flat.ini"
wait_s=5
fail() {
  echo "FAIL ($what): $*"
  cat "$work/log" 2>/dev/null
  ls -la "$work/out" 2>&1 # what was left
  exit 1
}
rm -rf "$work"; mkdir -p "$work"
cd "$work" || exit 1
# under ASan, the library preloaded comes before the sanitizer's runtime
asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
# run NP RANK SUFFIX [ARGS...]: sets rc and took; the writes after the first
# $after fail (default 0); where $open_match is set, the making of a file
# whose path holds it fails instead (none of the writes)
after=0
open_match=
nan_step= # a NaN planted after that step (MINIMODEL_FAULT_NAN_STEP); none
signal_step= # SIGTERM raised on rank 0 after that step (MINIMODEL_FAULT_SIGNAL_STEP); none
hang= # 1: the write never returns instead of failing (FAIL_WRITE_HANG)
write_timeout= # MINIMODEL_WRITE_TIMEOUT; unset
stall_suffix= stall_s= # the first write to a file ending so takes that many s; none
run() {
  local np="$1" rank="$2" suffix="$3" t0=$SECONDS
  shift 3
  rm -rf out
  timeout -k 10 300 mpirun --oversubscribe -np "$np" -x MINIMODEL_IO_FAIL_WAIT="$wait_s" \
    -x LD_PRELOAD="$so" -x ASAN_OPTIONS="$asan" -x FAIL_WRITE_SUFFIX="$suffix" \
    -x FAIL_WRITE_RANK="$rank" -x FAIL_WRITE_AFTER="$after" -x FAIL_OPEN_MATCH="$open_match" \
    -x MINIMODEL_OPEN_TIMEOUT=5 -x MINIMODEL_FAULT_NAN_STEP="$nan_step" \
    -x MINIMODEL_FAULT_SIGNAL_STEP="$signal_step" -x FAIL_WRITE_HANG="$hang" \
    -x MINIMODEL_WRITE_TIMEOUT="$write_timeout" -x FAIL_STALL_SUFFIX="$stall_suffix" \
    -x FAIL_STALL_SECONDS="$stall_s" "$mm" --quiet \
    --set output.dir=out "$@" >log 2>&1
  rc=$?
  took=$((SECONDS - t0))
  [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "the run hung (exit $rc after $took s)"
  if [ -n "$open_match" ]; then
    grep -q "^fail_write: rank $rank: open of .*$open_match.* failed" log ||
      fail "no open was made to fail (fail_write.so not loaded?)"
  elif [ "$after" -le 1000000 ]; then
    local verb=failed
    [ -n "$hang" ] && verb=hangs
    grep -q "^fail_write: rank $rank: write $((after + 1)) to .*$suffix $verb" log ||
      fail "no write was made to fail (fail_write.so not loaded?)"
  fi
}
# watched RANK FILE [SAYS]: the watch of RANK ended the run, naming FILE;
# its message goes on with SAYS (an extended regex; by default a failed
# write's)
watched() {
  local says="${3:-a write failed inside the netCDF/HDF5 libraries \(MPI_File_write_at(_all)?: 0 of [0-9]+ items written\), and the ranks had not ended case flat $wait_s s after it: }"
  [ $rc = 1 ] || fail "exit $rc, expected 1"
  [ "$(grep -c '^minimodel: error' log)" = 1 ] || fail "not one error message"
  grep -Eq "^minimodel: error \(rank $1\): [^ ]*/$2: $says.*exit status 1$" log ||
    fail "not the watch's message"
  [ $took -le $((wait_s + 30)) ] || fail "took $took s (the wait: $wait_s s)"
  echo "ok ($what): exit 1 after $took s: $(grep '^minimodel: error' log | cut -c1-120)..."
}
# left_as_flushed: no .tmp, no MPI-IO lock file; the history reads, its
# records those of steps 0 and 5
left_as_flushed() {
  [ ! -e out/flat.restart.nc.tmp ] || fail "the .tmp is left"
  ! ls out | grep -qE -- '-[0-9]+-[0-9]+\.lock$' || fail "an MPI-IO lock is left: $(ls out)"
  local steps
  steps=$(ncdump -v step out/flat.nc 2>&1) || fail "the history does not read: $steps"
  grep -q "step = 0, 5 ;" <<<"$steps" || fail "the history's records: $steps"
  echo "ok ($what): no .tmp, no MPI-IO lock; the history reads, records of steps 0 and 5"
}

what=restart0
run 2 0 flat.restart.nc.tmp --set output.restart_interval=5 --set run.steps=20 "$ini"
watched 0 flat.restart.nc.tmp
left_as_flushed
[ ! -e out/flat.lock ] || fail "the case's lock file is left"

what=restart1
run 2 1 flat.restart.nc.tmp --set output.restart_interval=5 --set run.steps=20 "$ini"
watched 1 flat.restart.nc.tmp
left_as_flushed

what=history0
run 2 0 flat.nc --set run.steps=20 "$ini"
watched 0 flat.nc

what=close0
after=100000000 # none fails: the writes counted
run 2 0 flat.nc --set run.steps=20 "$ini"
[ $rc = 0 ] || fail "the run that fails nothing: exit $rc"
after=$(sed -n 's/^fail_write: rank 0: \([0-9]*\) writes$/\1/p' log)
[ -n "$after" ] && [ "$after" -gt 1 ] || fail "no count of the writes"
after=$((after - 1)) # the last, in the close (the superblock's)
run 2 0 flat.nc --set run.steps=20 "$ini"
watched 0 flat.nc
steps=$(ncdump -v step out/flat.nc 2>&1) || fail "the history does not read: $steps"
grep -q "step = 0, 5, 10, 15, 20 ;" <<<"$steps" || fail "the history's records: $steps"
echo "ok ($what): the history reads, with every record"
after=0

what=crash0
nan_step=7
run 2 0 flat.crash.nc.tmp --set run.steps=20 "$ini"
nan_step=
watched 0 flat.crash.nc.tmp
grep -Eq "; the case was ending after a numerical blow-up at step 10: temp = NaN/Inf at i=[0-9]+ j=[0-9]+ k=[0-9]+ \([0-9]+ non-finite values\) \(its last good state, step 5, for the crash file\); exit status 1$" log ||
  fail "the message does not say what the crash file followed"
[ ! -e out/flat.crash.nc.tmp ] || fail "the .tmp is left"
[ ! -e out/flat.crash.nc ] || fail "a crash file is left"
steps=$(ncdump -v step out/flat.nc 2>&1) || fail "the history does not read: $steps"
grep -q "step = 0, 5 ;" <<<"$steps" || fail "the history's records: $steps"
echo "ok ($what): the blow-up said, no .tmp, the history reads with steps 0 and 5"

what=stop0
signal_step=7
run 2 0 flat.restart.nc.tmp --set run.steps=20 --set output.restart_at_stop=true "$ini"
signal_step=
watched 0 flat.restart.nc.tmp
grep -Eq "; the case was stopping by SIGTERM after step 7; exit status 1$" log ||
  fail "the message does not say the stop"
left_as_flushed

what=open0
open_match=flat.restart.nc.tmp-
run 2 0 flat.restart.nc.tmp --set output.restart_interval=5 --set run.steps=20 "$ini"
open_match=
watched 0 flat.restart.nc.tmp "MPI_File_open has not returned after 5 s: "
left_as_flushed
[ ! -e out/flat.lock ] || fail "the case's lock file is left"

# term_wait LAUNCHER PID...: SIGTERM to the PIDs, then the launcher (run in
# the background) waited for; sets rc and since (seconds from the signal to
# the end), which must be at most 30
term_wait() {
  local launcher=$1 t1
  shift
  kill -TERM "$@"
  t1=$SECONDS
  wait "$launcher"
  rc=$?
  since=$((SECONDS - t1))
  [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "the run hung after SIGTERM (exit $rc)"
  [ $since -le 30 ] || fail "took $since s after SIGTERM (exit $rc)"
}
# signal_run TARGET: the signal case's run, SIGTERM sent to TARGET
# ("ranks": each rank's process, as a batch system's scancel does;
# "mpirun"); sets rc and since (seconds from the signal to the end)
signal_run() {
  rm -rf out
  timeout -k 10 120 mpirun --oversubscribe -np 2 --mca odls_base_sigkill_timeout 5 \
    -x MINIMODEL_IO_FAIL_WAIT=0 -x LD_PRELOAD="$so" -x ASAN_OPTIONS="$asan" \
    -x FAIL_WRITE_SUFFIX=flat.restart.nc.tmp -x FAIL_WRITE_RANK=0 -x FAIL_WRITE_AFTER=0 "$mm" \
    --quiet --set output.dir=out --set output.restart_interval=5 --set run.steps=20 "$ini" \
    >log 2>&1 &
  local launcher=$! t1
  for _ in $(seq 600); do
    grep -q "^fail_write: rank 0: write 1 to .*flat.restart.nc.tmp failed" log && break
    sleep 0.1
  done
  grep -q "^fail_write: rank 0: write 1" log || fail "no write was made to fail"
  # the watch's thread on rank 0 (named mm-file-watch), so that the signal
  # comes after the failure, not before (a stop under way, left its time)
  local launched ranks rank0= watching=
  launched=$(pgrep -P $launcher -x mpirun) || fail "no mpirun under timeout"
  ranks=$(pgrep -P "$launched") || fail "no ranks under mpirun"
  for pid in $ranks; do
    tr '\0' '\n' <"/proc/$pid/environ" | grep -qx OMPI_COMM_WORLD_RANK=0 && rank0=$pid
  done
  [ -n "$rank0" ] || fail "no rank 0 among the processes $ranks"
  for _ in $(seq 300); do
    grep -qx mm-file-watch /proc/"$rank0"/task/*/comm 2>/dev/null && watching=1 && break
    sleep 0.1
  done
  [ -n "$watching" ] || fail "no thread mm-file-watch on rank 0 (pid $rank0) 30 s after the failure"
  sleep 1 # the ranks waiting for each other
  if [ "$1" = ranks ]; then
    term_wait $launcher $ranks
  else
    # mpirun itself, not timeout(1): timeout passes a SIGTERM on to its child
    # and then to its whole process group, mpirun's included, and Open MPI's
    # mpirun takes a second SIGTERM during its stop for "kill at once" (exit
    # 1 at once, the ranks killed: 3 of 12 runs under ASan left the .tmp)
    term_wait $launcher $launched
  fi
}
stop_line="^minimodel: stopped by SIGTERM \(rank 0\) in case flat while the ranks waited for each other after a write that failed inside the netCDF/HDF5 libraries \([^ ]*/flat.restart.nc.tmp: .*exit status 143$"

what=signal
signal_run ranks
[ $rc = 143 ] || fail "exit $rc, expected 143 (rank 0's, passed on by mpirun)"
grep -Eq "$stop_line" log || fail "not the stop's message (exit $rc, $since s after SIGTERM)"
left_as_flushed
[ ! -e out/flat.lock ] || fail "the case's lock file is left"
echo "ok ($what): exit $rc, $since s after SIGTERM to the ranks"

# SIGTERM to mpirun: Open MPI 4.1 sends the ranks SIGCONT, SIGTERM 5 s
# later (odls_base_sigkill_timeout, set above) and SIGKILL 5 s after that
# (strace shows it), and reads
# what they wrote after the SIGKILL, so that rank 0's line may be lost: the
# watch's end is told by the .tmp it removed, which a SIGKILL would leave
what=signal_mpirun
signal_run mpirun
left_as_flushed
[ ! -e out/flat.lock ] || fail "the case's lock file is left"
said=$(grep -Ec "$stop_line" log)
echo "ok ($what): exit $rc (mpirun's), $since s after SIGTERM to mpirun, rank 0's line printed $said time(s)"

# the hang cases: the history's writes on a rank counted in a run that
# hangs nothing, and the one half way made to hang
hang_at() { # RANK: sets after, the writes to the history before the one that hangs
  after=100000000
  run 2 "$1" flat.nc --set run.steps=20 "$ini"
  [ $rc = 0 ] || fail "the run that hangs nothing: exit $rc"
  after=$(sed -n "s/^fail_write: rank $1: \([0-9]*\) writes$/\1/p" log)
  [ -n "$after" ] && [ "$after" -gt 10 ] || fail "no count of the writes"
  after=$((after / 2))
}
# the history reads, its records those of a run's first steps (0, 5, ...)
history_prefix() {
  local steps
  steps=$(ncdump -v step out/flat.nc 2>&1) || fail "the history does not read: $steps"
  steps=$(sed -n '/^data:/,$p' <<<"$steps" | grep -o ' step = .*;')
  grep -Eqx " step = 0(, 5(, 10(, 15)?)?)?(, _)? ;" <<<"$steps" || fail "the history's records:$steps"
  [ ! -e out/flat.restart.nc.tmp ] || fail "the .tmp is left"
  ! ls out | grep -qE -- '-[0-9]+-[0-9]+\.lock$' || fail "an MPI-IO lock is left: $(ls out)"
  echo "ok ($what): nothing left; the history reads,$steps"
}
hang_says="MPI_File_write_at(_all)? has not returned after 5 s: the file system has stalled, or the ranks are waiting for each other inside MPI-IO; the run ends here, its files as their last flush left them \(MINIMODEL_WRITE_TIMEOUT sets the limit in seconds\); "

# hang_case NP RANK SAYS: the history's write on RANK of NP ranks never
# returns, half way, with a limit of 5 s: the watch's message from rank
# SAYS (a regex), nothing left, the history a prefix of the run's
hang_case() {
  hang_at "$2"
  hang=1 write_timeout=5
  run "$1" "$2" flat.nc --set run.steps=20 "$ini"
  hang= write_timeout=
  watched "$3" flat.nc "$hang_says"
  history_prefix
}
what=hang0
hang_case 2 0 0
[ ! -e out/flat.lock ] || fail "the case's lock file is left"
what=hang1
hang_case 2 1 '[01]'
what=hang_one
hang_case 1 0 0
[ ! -e out/flat.lock ] || fail "the case's lock file is left"

# background_run VERB NAME=VALUE...: a run of 2 ranks in the background
# whose history's write $after + 1 on rank 0 fail_write.so makes VERB
# (hangs, stalls) by the variables given; sets launcher (timeout's pid) and
# ranks (the ranks' pids) once that write has begun
background_run() {
  local verb=$1 line vars=()
  shift
  for v in "$@"; do vars+=(-x "$v"); done
  rm -rf out
  timeout -k 10 120 mpirun --oversubscribe -np 2 --mca odls_base_sigkill_timeout 5 \
    -x LD_PRELOAD="$so" -x ASAN_OPTIONS="$asan" -x FAIL_WRITE_SUFFIX=flat.nc -x FAIL_WRITE_RANK=0 \
    -x FAIL_WRITE_AFTER="$after" "${vars[@]}" "$mm" --quiet \
    --set output.dir=out --set run.steps=20 "$ini" >log 2>&1 &
  launcher=$!
  line="^fail_write: rank 0: write $((after + 1)) to .*flat.nc $verb"
  for _ in $(seq 600); do
    grep -q "$line" log && break
    sleep 0.1
  done
  grep -q "$line" log || fail "no write $verb"
  launched=$(pgrep -P $launcher -x mpirun) || fail "no mpirun under timeout"
  ranks=$(pgrep -P "$launched") || fail "no ranks under mpirun"
}

what=hang_signal
hang_at 0
background_run hangs FAIL_WRITE_HANG=1 MINIMODEL_WRITE_TIMEOUT=0
sleep 1
term_wait $launcher $ranks
[ $rc = 143 ] || fail "exit $rc, expected 143"
grep -Eq "^minimodel: stopped by SIGTERM \(rank 0\) while MPI_File_write_at(_all)? of [^ ]*/flat.nc had not returned 5 s after the signal; exit status 143$" log ||
  fail "not the stop's line"
history_prefix
[ ! -e out/flat.lock ] || fail "the case's lock file is left"
echo "ok ($what): exit $rc, $since s after SIGTERM to the ranks"

what=suspended
background_run stalls FAIL_WRITE_STALL=4 MINIMODEL_WRITE_TIMEOUT=3
kill -STOP $ranks
sleep 8
kill -CONT $ranks
wait $launcher
rc=$?
[ $rc = 0 ] || fail "exit $rc after the ranks were stopped 8 s, expected 0"
grep -q "^fail_write: rank 0: write $((after + 1)) to .*flat.nc returns" log || fail "the write did not return"
! grep -q '^minimodel: error' log || fail "an error message"
steps=$(ncdump -v step out/flat.nc 2>&1) || fail "the history does not read: $steps"
grep -q "step = 0, 5, 10, 15, 20 ;" <<<"$steps" || fail "the history's records: $steps"
echo "ok ($what): exit 0 after 8 s stopped during a 4 s write (limit 3 s), every record"
after=0

what=one_rank
run 1 0 flat.restart.nc.tmp --set output.restart_interval=5 --set run.steps=20 "$ini"
[ $rc = 1 ] || fail "exit $rc, expected 1"
grep -q "^minimodel: error: out/flat.restart.nc.tmp: cannot write the header: NetCDF: HDF error$" log ||
  fail "not the libraries' message"
[ "$(grep -c '^minimodel: error' log)" = 1 ] || fail "not one error message"
[ ! -e out/flat.restart.nc.tmp ] || fail "the .tmp is left"
echo "ok ($what): exit 1 after $took s, the libraries' message"

what=settled
wait_s=1
printf '[run]\nname = flat\nsteps = 20\n[output]\nrestart_interval = 5\n' >first.ini
# the second case lasts longer than twice the wait whatever the disk's speed:
# the first write to its history returns 3 s after it began (fail_write.so;
# 6000 records took 3.5 s on one machine and 300 s, cut off, on another)
printf '[run]\nname = second\nsteps = 20\n[grid]\nnx = 8\nny = 6\nnz = 2\n[output]\ninterval = 1\n' \
  >second.ini
stall_suffix=second.nc stall_s=3
run 1 0 flat.restart.nc.tmp first.ini second.ini
stall_suffix=
grep -q "^fail_write: rank 0: write 1 to .*/second.nc returns" log || fail "no write to second.nc stalled"
[ $rc = 1 ] || fail "exit $rc, expected 1 (the first case's)"
! grep -q "had not ended" log || fail "the watch of the first case ended the second"
grep -Eq '^  first.ini +FAILED \(exit 1\)$' log || fail "first.ini not listed as failed"
grep -Eq '^  second.ini +ok +20 steps ' log || fail "second.ini did not run to its end"
# the stall (in the making of its history, before its steps) outlasted twice the wait
[ "$took" -ge $stall_s ] && [ $stall_s -gt $((2 * wait_s)) ] || fail "the run took $took s: nothing tested"
[ -f out/second.timing.json ] || fail "second.ini wrote no timing file"
echo "ok ($what): the second case, $stall_s s in a write, ran its 20 steps to the end (the wait $wait_s s)"
stall_s=

what=bad_value
for setting in MINIMODEL_IO_FAIL_WAIT=soon MINIMODEL_OPEN_TIMEOUT=-1 MINIMODEL_WRITE_TIMEOUT=later; do
  env "$setting" timeout -k 5 60 "$mm" --quiet --set output.dir=out "$ini" >log 2>&1
  rc=$?
  [ $rc = 2 ] || fail "$setting: exit $rc, expected 2"
  grep -q "^minimodel: error: ${setting%%=*} = ${setting#*=}: must be a number of seconds" log ||
    fail "$setting: not the message"
  echo "ok ($what): $setting: exit 2, $(head -1 log)"
done

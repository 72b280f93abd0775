#!/usr/bin/env bash
# singleton_limit.sh MINIMODEL SOURCE_DIR WORK singleton|mpirun
# A file-size limit of 200 KiB, as a user tries a full disk, where the tests
# of write_fail.sh keep it out of the way of MPI's own files:
#   singleton  on minimodel started without mpirun: `ulimit -f 200;
#              minimodel flat.ini`. MPI starts (the singleton's PMIx server
#              keeps its data in memory, not in a shared-memory file of
#              several MB that the limit refuses)
#   mpirun     on each of 2 ranks under mpirun, with Open MPI's shared-memory
#              transport (vader) left on: its files meet the limit in
#              MPI_Init, with SIGXFSZ ignored from before it
# Either way the history's write is what fails: exit 1 by no signal, one
# message of minimodel's naming the file and the error, and in the
# singleton nothing of PMIx's or MPI_Init's.
#   timing     a singleton under a limit of 1300 KiB that the history (250
#              KiB, no records but the first and the last) fits in and the
#              timing file (25000 steps, one line each: 1.6 MB) does not:
#              exit 1, one message that names the timing file and the
#              reason (File too large, not a guess at a full disk), no
#              `.tmp` and no timing file left, the history in place
#   zero       a singleton under a limit of 0 (`ulimit -f 0`, SIGXFSZ
#              ignored): the history is made, and MPI-IO's lock file beside
#              it cannot be written: exit 1, one message that names the
#              history and the limit (it said "Permission denied"), no
#              history left, nothing of Open MPI's; and with standard error
#              a file (which the limit leaves empty): exit 1, and no
#              daemon of Open MPI's left behind (the singleton's orted,
#              whose message that it passed SIGXFSZ on raised SIGXFSZ
#              again, spun for ever after the run)
set -u
mm="$1"; src="$2"; work="$3"; mode="$4"
rm -rf "$work"
mkdir -p "$work"
args=(--quiet --set output.dir="$work/out" --set run.steps=20 --set output.interval=1
      "$src/configs/flat.ini")
if [ "$mode" = timing ]; then
  (ulimit -f 1300 && exec "$mm" --quiet --set output.dir="$work/out" --set run.steps=25000 \
    --set output.interval=0 --set output.timing_stride=1 "$src/configs/flat.ini") >"$work/log" 2>&1
  rc=$?
  fail() { echo "FAIL ($mode): $*"; cat "$work/log"; exit 1; }
  [ $rc -eq 1 ] || fail "exit $rc, expected 1"
  [ "$(grep -c "^minimodel: error" "$work/log")" -eq 1 ] || fail "not one error message"
  grep -qE "^minimodel: error: .*/flat\.timing\.json\.tmp: write failed: File too large\$" \
    "$work/log" || fail "the message does not name the timing file and the reason"
  [ ! -e "$work/out/flat.timing.json.tmp" ] && [ ! -e "$work/out/flat.timing.json" ] ||
    fail "a timing file or its .tmp is left"
  [ -s "$work/out/flat.nc" ] || fail "no history"
  echo "ok ($mode): exit 1: $(grep "^minimodel: error" "$work/log")"
  exit 0
elif [ "$mode" = zero ]; then
  # through a pipe: the log itself is no file of the limited process
  (trap '' XFSZ && ulimit -f 0 && exec "$mm" "${args[@]}") 2>&1 | cat >"$work/log"
  rc=${PIPESTATUS[0]}
  fail() { echo "FAIL ($mode): $*"; cat "$work/log"; exit 1; }
  [ $rc -eq 1 ] || fail "exit $rc, expected 1"
  [ "$(grep -c "^minimodel: error" "$work/log")" -eq 1 ] || fail "not one error message"
  grep -qE "^minimodel: error: .*/flat\.nc: cannot create: File too large \(file-size limit 0 bytes\)\$" \
    "$work/log" || fail "the message does not name the history and the limit"
  [ ! -e "$work/out/flat.nc" ] || fail "the history is left"
  ! grep -q "Forwarding signal" "$work/log" || fail "Open MPI's daemon passed SIGXFSZ on"
  echo "ok ($mode): exit 1: $(grep "^minimodel: error" "$work/log")"
  # standard error a file: what the run and its processes inherit is marked
  mark="MM_SINGLETON_LIMIT=$$"
  (trap '' XFSZ && ulimit -f 0 && export "$mark" && exec "$mm" "${args[@]}") 2>"$work/log2"
  rc=$?
  [ $rc -eq 1 ] || fail "standard error a file: exit $rc, expected 1"
  sleep 2
  for pid in $(pgrep -x orted); do
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "$mark"; then
      kill -9 "$pid"
      fail "standard error a file: a daemon of Open MPI's (pid $pid) is left running"
    fi
  done
  echo "ok ($mode): standard error a file: exit 1, no process left"
  exit 0
elif [ "$mode" = singleton ]; then
  (ulimit -f 200 && exec "$mm" "${args[@]}") >"$work/log" 2>&1
else
  timeout -k 10 120 mpirun --oversubscribe -np 2 bash -c 'ulimit -f 200 && exec "$@"' -- \
    "$mm" "${args[@]}" >"$work/log" 2>&1
fi
rc=$?
fail() { echo "FAIL ($mode): $*"; cat "$work/log"; exit 1; }
[ $rc -eq 1 ] || fail "exit $rc, expected 1"
! grep -qiE "signal|core dumped" "$work/log" || fail "a rank ended by a signal"
if [ "$mode" = singleton ]; then
  ! grep -qE "PMIX|MPI_Init|OPAL|An error occurred" "$work/log" ||
    fail "MPI did not start under the limit"
fi
[ "$(grep -c "^minimodel: error" "$work/log")" -eq 1 ] || fail "not one error message"
grep -qE "^minimodel: error: .*/flat\.nc: cannot reserve [0-9.]+ MiB for the next write: File too large" \
  "$work/log" || fail "the message does not name the history and the limit"
echo "ok ($mode): exit 1: $(grep "^minimodel: error" "$work/log")"

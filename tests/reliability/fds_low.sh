#!/usr/bin/env bash
# fds_low.sh MINIMODEL SOURCE_DIR WORK
# An open-file limit on each of 2 ranks (ulimit -n 19) a few descriptors
# short of what opening the history through MPI-IO and HDF5 takes: exit 1
# within seconds, one message naming the file and the descriptors free.
# One rank failed inside MPI-IO's collective open and the job hung.
set -u
mm="$1"; src="$2"; work="$3"
rm -rf "$work"
mkdir -p "$work"
timeout -k 10 120 mpirun --oversubscribe -np 2 bash -c 'ulimit -n 19 && exec "$@"' -- \
  "$mm" --quiet --set output.dir="$work/out" --set run.steps=20 --set output.interval=5 \
  "$src/configs/flat.ini" >"$work/log" 2>&1
rc=$?
fail() { echo "FAIL: $*"; cat "$work/log"; exit 1; }
[ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "the job hung (exit $rc)"
# where MPI itself needs more descriptors than that to start (another MPI,
# more inherited), minimodel's check is not reached: nothing to test here
if ! grep -q "^minimodel: error" "$work/log" && grep -qiE "PMIX|MPI_Init|ORTE|OPAL" "$work/log"; then
  echo "skipped: MPI did not start under ulimit -n 19 here"
  exit 77
fi
[ $rc -eq 1 ] || fail "exit $rc, expected 1"
[ "$(grep -c "^minimodel: error" "$work/log")" -eq 1 ] || fail "not one error message"
grep -qE "^minimodel: error: .*/flat\.nc: cannot create: rank [01] has [0-9]+ file descriptors? free \(ulimit -n\)" \
  "$work/log" || fail "the message does not name the history and the descriptors"
echo "ok: exit 1: $(grep "^minimodel: error" "$work/log")"

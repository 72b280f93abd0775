#!/usr/bin/env bash
# kill_in_drop.sh MINIMODEL PYTHON SOURCE_DIR WORK FAIL_WRITE_SO
# A continuation removes the records after its restart step from the
# history (a run that went further wrote them); HDF5 cuts the file to its
# new end and then rewrites the superblock. A run killed between the two
# (fail_write.so's FAIL_TRUNCATE_KILL: SIGKILL right after the cut) left a
# file shorter than its superblock says, which nothing reads, and the next
# continuation refused it ("truncated"): every record was lost. The removal
# now writes a journal (<history>.drop) first; the next continuation
# lengthens the cut file back, and ends with the history of a straight run.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"; so="$5"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
rm -rf "$work"; mkdir -p "$work"
cd "$work" || exit 1
run() { # STEPS ARGS...
  local steps="$1"; shift
  timeout -k 10 120 "$mm" --quiet --set run.name=long --set run.steps="$steps" \
    --set output.interval=20 --set output.restart_interval=100 --set output.dir=out "$@" \
    "$src/configs/default.ini" >"$work/log" 2>&1
}
run 100 || fail "the run to step 100"
cp out/long.restart.nc r100.nc
run 300 --set initial.restart=out/long.restart.nc || fail "the run to step 300"
cp out/long.nc straight.nc
# the continuation from step 100 removes the records after it; killed
# right after HDF5's cut of the file
# (an AddressSanitizer build wants its runtime first among the libraries:
# that check is off while the fault library is preloaded, as in file_watch.sh)
asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
LD_PRELOAD="$so" ASAN_OPTIONS="$asan" FAIL_TRUNCATE_KILL=out/long.nc run 300 \
  --set initial.restart=r100.nc
rc=$?
[ $rc = 137 ] || fail "the continuation killed in the removal: exit $rc, expected 137 (SIGKILL)"
[ -f out/long.nc.drop ] || fail "no journal of the removal was left"
if ncdump -h out/long.nc >/dev/null 2>&1; then fail "the kill did not leave the file cut short"; fi
echo "ok: killed in the removal, the history cut short and the journal left"
run 300 --set initial.restart=r100.nc || fail "the continuation after the kill"
[ ! -e out/long.nc.drop ] || fail "the journal was left after the continuation"
"$py" "$src/scripts/compare.py" --quiet straight.nc out/long.nc >"$work/log" 2>&1 ||
  fail "the continued history differs from the straight run's"
echo "ok: continued after the kill, the history of the straight run"

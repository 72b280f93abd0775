#!/usr/bin/env bash
# locked_input.sh MINIMODEL SOURCE_DIR WORK
# An input that another process has open for writing holds HDF5's file lock
# (an exclusive flock(2); here flock(1) takes it, as a run writing the file
# or a program appending to it does): a run continued from a restart, whose
# history is so held, and a run whose initial.file is so held, are refused
# with exit 2 and a message that says so (it was netCDF's "HDF error", and
# for the history "unreadable or damaged"), before any step, the history
# left as it was; once the lock is released the same run continues.
set -u
mm="$1"; src="$2"; work="$3"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
command -v flock >/dev/null || { echo "needs flock(1): skipped"; exit 77; }
# HDF5_USE_FILE_LOCKING=FALSE (usual on Lustre) turns HDF5's lock off: the
# run then reads the file, which is what it asks for
unset HDF5_USE_FILE_LOCKING
rm -rf "$work"; mkdir -p "$work" || exit 1
cd "$work" || exit 1
ini="$src/configs/flat.ini"
common=(--quiet --set output.dir="$work/out" --set run.name=lk --set output.interval=2
        --set output.restart_interval=2)
"$mm" "${common[@]}" --set run.steps=2 "$ini" >log 2>&1 || fail "the run to step 2"
cp out/lk.nc before.nc
want="cannot open: another process has it open for writing"
# hold FILE's exclusive lock until "$work/release" appears (at most 60 s)
hold() {
  rm -f "$work/release" "$work/held"
  flock -x "$1" sh -c 'touch "$1/held"; i=0; while [ ! -e "$1/release" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done' sh "$work" &
  holder=$!
  for _ in $(seq 100); do [ -e "$work/held" ] && return 0; sleep 0.1; done
  fail "flock did not take the lock of $1"
}
release() { touch "$work/release"; wait "$holder"; }
holder=
trap '[ -n "$holder" ] && touch "$work/release"' EXIT

hold out/lk.nc
timeout -k 5 60 "$mm" "${common[@]}" --set run.steps=4 --set initial.restart=out/lk.restart.nc \
  "$ini" >log 2>&1
rc=$?
release
[ $rc = 2 ] || fail "the history held: exit $rc, expected 2"
grep -q "error: .*out/lk.nc: $want" log || fail "the history held: no message naming the lock"
cmp -s out/lk.nc before.nc || fail "the history held: it was changed"
echo "ok: the history held: $(grep -o 'error: .*' log)"

hold out/lk.restart.nc
timeout -k 5 60 "$mm" --quiet --set output.dir="$work/other" --set run.steps=2 \
  --set initial.file=out/lk.restart.nc "$ini" >log 2>&1
rc=$?
release
[ $rc = 2 ] || fail "initial.file held: exit $rc, expected 2"
grep -q "out/lk.restart.nc: $want" log || fail "initial.file held: no message naming the lock"
[ ! -e other/flat.nc ] || fail "initial.file held: a history was written"
echo "ok: initial.file held: $(grep -o 'error: .*' log)"

# a directory that is locked (`flock DIR command`) is not a held file
mkdir dir.nc
hold dir.nc
timeout -k 5 60 "$mm" --quiet --set output.dir="$work/other" --set run.steps=2 \
  --set initial.file=dir.nc "$ini" >log 2>&1
rc=$?
release
[ $rc = 2 ] || fail "a locked directory: exit $rc, expected 2"
! grep -q "$want" log || fail "a locked directory taken for a held file"
echo "ok: a locked directory: $(grep -o 'error: .*' log)"

# released: the same continuation runs, to step 4
timeout -k 5 60 "$mm" "${common[@]}" --set run.steps=4 --set initial.restart=out/lk.restart.nc \
  "$ini" >log 2>&1 || fail "released: exit $?"
ncdump -v step out/lk.nc | sed -n '/^ step = /,/;/p' | grep -q "4 ;" ||
  fail "released: the history has no record of step 4"
echo "ok: released, the run continues to step 4"

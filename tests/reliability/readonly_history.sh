#!/usr/bin/env bash
# readonly_history.sh MINIMODEL SOURCE_DIR WORK
# A run continued from a restart by a user who may not write the history of
# its case (its mode 444, another user's file): refused with exit 2 and the
# file system's reason ("Permission denied"), not netCDF's "HDF error" at
# exit 1, before any step, and the history left as it was: both where
# records after the restart step would be removed and where none would.
# Then an output.dir to be made in a folder that user may not write: exit 2
# before any case, naming the folder and the reason (it was exit 1 when its
# case ran, after the cases before it had run).
# Runs as the user nobody (setpriv); needs root, skipped (77) otherwise.
set -u
mm="$1"; src="$2"; work="$3"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  echo "needs root and setpriv: skipped"; exit 77
fi
rm -rf "$work"; mkdir -p "$work/out" || exit 1
chmod 755 "$work"; chmod 777 "$work/out"
cd "$work" || exit 1
ini="$src/configs/flat.ini"
common=(--quiet --set output.dir="$work/out" --set run.name=ro --set output.interval=4
        --set output.restart_interval=4)
"$mm" "${common[@]}" --set run.steps=4 "$ini" >log 2>&1 || fail "the run to step 4"
cp out/ro.restart.nc r4.nc
"$mm" "${common[@]}" --set run.steps=8 "$ini" >log 2>&1 || fail "the run to step 8"
cp out/ro.restart.nc r8.nc
chmod 444 out/ro.nc r4.nc r8.nc
cp out/ro.nc before.nc
as_nobody() {
  setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$work/out" TMPDIR="$work/out" \
    OMP_NUM_THREADS=1 "$@"
}
for from in 4 8; do
  as_nobody "$mm" "${common[@]}" --set run.steps=12 --set initial.restart="$work/r$from.nc" \
    "$ini" >log 2>&1
  rc=$?
  [ $rc = 2 ] || fail "from step $from: exit $rc, expected 2"
  grep -q "error: .*out/ro.nc: cannot append to it: Permission denied" log ||
    fail "from step $from: no message naming the reason"
  cmp -s out/ro.nc before.nc || fail "from step $from: the history was changed"
  echo "ok: continued from step $from: $(grep -o 'error: .*' log)"
done
mkdir locked && chmod 755 locked # root's
printf '[run]\nname = first\nsteps = 2\n[output]\ndir = %s\n' "$work/out" >first.ini
printf '[run]\nname = second\nsteps = 2\n[output]\ndir = %s\n' "$work/locked/sub" >second.ini
as_nobody "$mm" --quiet first.ini second.ini >log 2>&1
rc=$?
[ $rc = 2 ] || fail "output.dir in a folder not writable: exit $rc, expected 2"
grep -q "^minimodel: error: second.ini:5: output.dir = $work/locked/sub: cannot be created in '$work/locked': Permission denied$" log ||
  fail "output.dir in a folder not writable: not the message"
[ ! -e out/first.nc ] && [ ! -e locked/sub ] || fail "output.dir in a folder not writable: a case ran"
echo "ok: $(grep -o 'error: .*' log)"
echo "ok"

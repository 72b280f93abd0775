#!/usr/bin/env bash
# lock_removed.sh MINIMODEL SOURCE_DIR WORK
# The lock file of a running case removed (a user tidying "stale" locks) and
# a new one made at its name, as the same case started again would: the
# first run stops before its next record, exit 1, one message naming the
# lock, and leaves the new lock file where it is (it removes only its own);
# the case then runs again and its history is whole. The first run went on
# and ended "ok" beside the second, the history unreadable, and removed the
# second's lock file at its end.
set -u
mm="$1"; src="$2"; work="$3"
rm -rf "$work"
mkdir -p "$work"
out="$work/out"
fail() { echo "FAIL: $*"; cat "$work"/*.log; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/long_run.sh"
long_run "$mm" "$src" "$out" "$work/first.log"
first=$pid
rm "$out/gyre_bowl.lock"
echo "pid 1 on host another" >"$out/gyre_bowl.lock"
wait $first
rc=$?
[ $rc -eq 1 ] || fail "the first run: exit $rc, expected 1"
grep -qE "^minimodel: error: .*gyre_bowl\.lock: the lock file was removed or replaced while this run held it" \
  "$work/first.log" || fail "the first run does not name the lost lock"
[ "$(cat "$out/gyre_bowl.lock" 2>/dev/null)" = "pid 1 on host another" ] ||
  fail "the first run removed or changed the lock file it did not make"
timeout -k 10 300 "$mm" --quiet --set output.dir="$out" --set run.steps=3000 \
  --set output.interval=100 --set output.restart_interval=0 \
  "$src/configs/gyre_bowl.ini" >"$work/second.log" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "the case again: exit $rc, expected 0"
[ ! -e "$out/gyre_bowl.lock" ] || fail "a lock file left"
n=$(ncdump -h "$out/gyre_bowl.nc" | sed -n 's/.*time = UNLIMITED ; \/\/ (\([0-9]*\) currently).*/\1/p')
[ "$n" = 31 ] || fail "the history holds '$n' records, expected 31"
echo "ok: the first run stopped (exit 1), left the other lock; the case again: $n records"

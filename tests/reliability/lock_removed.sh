#!/usr/bin/env bash
# lock_removed.sh MINIMODEL SOURCE_DIR WORK
# The lock file of a running case removed (a user tidying "stale" locks),
# and the same case started again: the second run takes the outputs (it
# cannot know); the first stops before its next record, exit 1, one message
# naming the lock, and writes nothing more, so the second run's history is
# whole and reads; the first does not remove the second's lock. Both went
# on and ended "ok", the history unreadable, and the first removed the
# second's lock file at its end.
set -u
mm="$1"; src="$2"; work="$3"
rm -rf "$work"
mkdir -p "$work"
out="$work/out"
fail() { echo "FAIL: $*"; echo "-- first:"; cat "$work/first.log"; echo "-- second:"; cat "$work/second.log"; exit 1; }
timeout -k 10 300 "$mm" --quiet --set output.dir="$out" --set run.steps=1000000 \
  --set output.interval=1000 --set output.restart_interval=0 \
  "$src/configs/gyre_bowl.ini" >"$work/first.log" 2>&1 &
first=$!
for ((i = 0; i < 3000; i++)); do
  [ "$(stat -c %s "$out/gyre_bowl.nc" 2>/dev/null || echo 0)" -gt 100000 ] && break
  kill -0 $first 2>/dev/null || fail "the first run ended first"
  sleep 0.02
done
rm "$out/gyre_bowl.lock"
timeout -k 10 300 "$mm" --quiet --set output.dir="$out" --set run.steps=30000 \
  --set output.interval=1000 --set output.restart_interval=0 \
  "$src/configs/gyre_bowl.ini" >"$work/second.log" 2>&1
second=$?
wait $first
first_rc=$?
[ $first_rc -eq 1 ] || fail "the first run: exit $first_rc, expected 1"
grep -qE "^minimodel: error: .*gyre_bowl\.lock: the lock file was removed or replaced while this run held it" \
  "$work/first.log" || fail "the first run does not name the lost lock"
[ $second -eq 0 ] || fail "the second run: exit $second, expected 0"
[ ! -e "$out/gyre_bowl.lock" ] || fail "a lock file left"
ncdump -h "$out/gyre_bowl.nc" >/dev/null 2>&1 || fail "the history does not read"
n=$(ncdump -h "$out/gyre_bowl.nc" | sed -n 's/.*time = UNLIMITED ; \/\/ (\([0-9]*\) currently).*/\1/p')
[ "$n" -eq 31 ] || fail "the history holds $n records, expected the second run's 31"
echo "ok: the first run stopped (exit 1), the second's history whole ($n records)"

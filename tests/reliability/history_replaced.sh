#!/usr/bin/env bash
# history_replaced.sh MINIMODEL SOURCE_DIR WORK
# Another file moved to the history's name while a run writes it (a copy of
# it, as a user or a tool that "tidies" outputs does): the next record is
# refused, exit 1, one message naming the file, and the file at the name is
# left as it is. The records went on into the file the libraries held open
# (gone from the directory), while each reservation grew the new one.
set -u
mm="$1"; src="$2"; work="$3"
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL ($how): $*"; cat "$work/log"; exit 1; }
for how in replaced; do
  out="$work/$how"
  timeout -k 10 300 "$mm" --quiet --set output.dir="$out" --set run.steps=1000000 \
    --set output.interval=1000 --set output.restart_interval=0 \
    "$src/configs/gyre_bowl.ini" >"$work/log" 2>&1 &
  pid=$!
  # until the history holds more than 100000 bytes (a few records)
  for ((i = 0; i < 3000; i++)); do
    [ "$(stat -c %s "$out/gyre_bowl.nc" 2>/dev/null || echo 0)" -gt 100000 ] && break
    kill -0 $pid 2>/dev/null || fail "the run ended first"
    sleep 0.02
  done
  cp "$out/gyre_bowl.nc" "$out/other.nc" && mv "$out/other.nc" "$out/gyre_bowl.nc"
  size=$(stat -c %s "$out/gyre_bowl.nc")
  want="gyre_bowl\.nc: another file than the one this run writes is now at this path"
  wait $pid
  rc=$?
  [ $rc -eq 1 ] || fail "exit $rc, expected 1"
  [ "$(grep -c "^minimodel: error" "$work/log")" -eq 1 ] || fail "not one error message"
  grep -qE "^minimodel: error: .*$want" "$work/log" || fail "the message does not match /$want/"
  [ "$(stat -c %s "$out/gyre_bowl.nc")" = "$size" ] || fail "the file at the name was changed"
  echo "ok ($how): exit 1: $(grep "^minimodel: error" "$work/log")"
done

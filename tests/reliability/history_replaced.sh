#!/usr/bin/env bash
# history_replaced.sh MINIMODEL SOURCE_DIR WORK
# Another file moved to the history's name while a run writes it (a copy of
# it, as a user or a tool that "tidies" outputs does): the next record is
# refused, exit 1, one message naming the file, and the file at the name is
# left as it is, also by the cut of reserved room at the close. The records
# went on into the file the libraries held open (gone from the directory),
# while each reservation grew the new one. A FIFO moved to the name: the
# same, at once.
set -u
mm="$1"; src="$2"; work="$3"
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; cat "$work/log"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/long_run.sh"
out="$work/out"
long_run "$mm" "$src" "$out" "$work/log"
# the copy has room past the end its superblock records, as one taken while
# a record is written has (reserved, not yet cut at the flush): the run's
# close must not cut it
cp "$out/gyre_bowl.nc" "$out/other.nc" && truncate -s +65536 "$out/other.nc" &&
  mv "$out/other.nc" "$out/gyre_bowl.nc" || fail "the copy could not be made"
size=$(stat -c %s "$out/gyre_bowl.nc")
want="gyre_bowl\.nc: another file than the one this run writes is now at this path"
wait $pid
rc=$?
[ $rc -eq 1 ] || fail "exit $rc, expected 1"
[ "$(grep -c "^minimodel: error" "$work/log")" -eq 1 ] || fail "not one error message"
grep -qE "^minimodel: error: .*$want" "$work/log" || fail "the message does not match /$want/"
[ "$(stat -c %s "$out/gyre_bowl.nc")" = "$size" ] || fail "the file at the name was changed"
echo "ok: exit 1: $(grep "^minimodel: error" "$work/log")"

# A FIFO moved to the history's name: refused the same way, at once (the
# next reservation's open, and the close's checks, waited for a reader that
# never comes: the run hung)
work2="$work/fifo"
mkdir -p "$work2"
out="$work2/out"
long_run "$mm" "$src" "$out" "$work2/log"
mkfifo "$work2/other" && mv "$work2/other" "$out/gyre_bowl.nc" || fail "the FIFO could not be made"
wait $pid
rc=$?
[ $rc -ne 124 ] && [ $rc -ne 137 ] || { cat "$work2/log"; fail "a FIFO at the name: the run hung"; }
[ $rc -eq 1 ] || { cat "$work2/log"; fail "a FIFO at the name: exit $rc, expected 1"; }
grep -qE "^minimodel: error: .*$want" "$work2/log" ||
  { cat "$work2/log"; fail "a FIFO at the name: the message does not match /$want/"; }
[ -p "$out/gyre_bowl.nc" ] || fail "a FIFO at the name: it was replaced"
echo "ok: a FIFO at the name: exit 1: $(grep "^minimodel: error" "$work2/log")"

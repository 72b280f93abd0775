#!/usr/bin/env bash
# summary_utf8.sh MINIMODEL SOURCE_DIR WORK: the summary of several cases
# pads a case's name to its column by characters, not bytes: a name in
# UTF-8 (ääää.ini, 12 bytes, 8 characters) and one in ASCII of as many
# characters (aaaa.ini) have their figures in the same column (the UTF-8
# name's stood 4 columns to the left).
set -u
mm="$1"; src="$2"; work="$3"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
rm -rf "$work"; mkdir -p "$work"
cd "$work" || exit 1
# (another run.name: two cases may not write one file)
cp "$src/configs/flat.ini" ./ääää.ini &&
  printf '[run]\nname = other\n' | cat - "$src/configs/flat.ini" | grep -v '^name = flat' >aaaa.ini ||
  fail "cannot make the configurations"
timeout -k 10 120 "$mm" --set run.steps=1 --set output.dir="$work/out" ./ääää.ini ./aaaa.ini \
  >"$work/log" 2>&1 || fail "the run (exit $?)"
# the character where " ok " starts on each case's line (python's str
# counts characters)
a=$(python3 -c 'import sys; l=[x for x in open(sys.argv[1], encoding="utf-8") if "./ääää.ini" in x]; print(l[-1].index(" ok "))' "$work/log")
b=$(python3 -c 'import sys; l=[x for x in open(sys.argv[1], encoding="utf-8") if "./aaaa.ini" in x]; print(l[-1].index(" ok "))' "$work/log")
[ -n "$a" ] && [ "$a" = "$b" ] || fail "the figures of ./ääää.ini start at character $a, of ./aaaa.ini at $b"
echo "ok: both cases' figures start at character $a"

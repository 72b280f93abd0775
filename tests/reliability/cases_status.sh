#!/usr/bin/env bash
# cases_status.sh MINIMODEL WORK
# With several cases, a case that fails does not stop the cases after it,
# and the exit status is the first failing case's (README, "Exit status"):
# a case that blows up (exit 1; MINIMODEL_FAULT_NAN_STEP) and one whose
# outputs another run holds locked (exit 2; this script holds the lock with
# flock(1)), in both orders: exit 1, then exit 2; the summary lists each
# case's status, and the case after the failed one ran (its crash file).
set -u
mm="$1"; work="$2"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
command -v flock >/dev/null || fail "no flock(1) (util-linux)"
rm -rf "$work"; mkdir -p "$work/out"
cd "$work" || exit 1
for name in blows locked; do
  printf '[run]\nname = %s\nsteps = 4\n[grid]\nnx = 12\nny = 10\nnz = 4\n[output]\ndir = out\n' \
    "$name" >"$name.ini"
done
exec 9>out/locked.lock # this script holds the lock, as another run would
flock -n 9 || fail "flock(1) did not take the lock"
# order CASES... WANT: the run of CASES exits WANT
order() {
  local want="${*: -1}" cases=("${@:1:$#-1}")
  rm -f out/blows.crash.nc
  MINIMODEL_FAULT_NAN_STEP=1 timeout -k 5 120 "$mm" --quiet "${cases[@]}" >log 2>&1 9>&-
  local rc=$?
  [ $rc = "$want" ] || fail "${cases[*]}: exit $rc, expected $want (the first failing case's)"
  grep -Eq '^  blows.ini +FAILED \(exit 1\)$' log || fail "${cases[*]}: blows.ini not listed with exit 1"
  grep -Eq '^  locked.ini +FAILED \(exit 2\)$' log || fail "${cases[*]}: locked.ini not listed with exit 2"
  [ -f out/blows.crash.nc ] || fail "${cases[*]}: blows.ini did not run (no crash file)"
  echo "ok: ${cases[*]}: exit $want"
}
order blows.ini locked.ini 1
order locked.ini blows.ini 2

#!/usr/bin/env bash
# run_paths.sh MINIMODEL SOURCE_DIR WORK: scripts/run takes its files and
# output.dir from the directory it is run in, as minimodel does (it changed
# to the repository first: a file of the user's was not found, and
# `scripts/run configs/default.ini` run elsewhere ran the repository's file
# of that name, not the user's), passes minimodel's options on, and names
# each case's outputs whole, blanks included (an output.dir with a blank
# was cut at it), also where the configuration fixes the decomposition. The set-up and build are left out (MINIMODEL_RUN_PROGRAM).
set -u
mm="$1"; src="$2"; work="$3"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
rm -rf "$work"; mkdir -p "$work/configs"
# the user's configs/default.ini, another case than the repository's
sed 's/^name = .*/name = users_own/' "$src/configs/flat.ini" >"$work/configs/default.ini"
grep -q "^name = users_own" "$work/configs/default.ini" || fail "making the user's file"
(cd "$work" && MINIMODEL_RUN_PROGRAM="$mm" MINIMODEL_RANKS=2 timeout -k 5 120 \
  "$src/scripts/run" --quiet --set run.steps=2 --set "output.dir=out dir" configs/default.ini) \
  >"$work/log" 2>&1 || fail "exit $?"
[ -f "$work/out dir/users_own.nc" ] || fail "the user's case did not write out dir/users_own.nc"
[ ! -e "$work/out dir/default.nc" ] || fail "the repository's configs/default.ini was run"
grep -qxF "output of users_own: out dir/users_own.nc (history), out dir/users_own.timing.json (timings)" \
  "$work/log" || fail "the outputs' line"
echo "ok: the user's configs/default.ini ran, from the directory scripts/run was run in"
# no argument: the repository's configs/default.ini, its output.dir
# (output) in the directory it is run in
(cd "$work" && MINIMODEL_RUN_PROGRAM="$mm" timeout -k 5 120 "$src/scripts/run") >"$work/log" 2>&1 ||
  fail "no file: exit $?"
[ -f "$work/output/default.nc" ] || fail "no file: no output/default.nc"
grep -qxF "output of default: output/default.nc (history), output/default.timing.json (timings)" \
  "$work/log" || fail "no file: the outputs' line"
echo "ok: with no file, configs/default.ini of the repository"
# a decomposition the configuration fixes (grid.ranks_x = 2 on 2 ranks):
# the outputs named (the naming's one process refused it: no line)
(cd "$work" && MINIMODEL_RUN_PROGRAM="$mm" MINIMODEL_RANKS=2 timeout -k 5 120 \
  "$src/scripts/run" --quiet --set run.steps=2 --set grid.ranks_x=2 --set output.dir=fixed \
  "$src/configs/flat.ini") >"$work/log" 2>&1 || fail "grid.ranks_x = 2: exit $?"
grep -qxF "output of flat: fixed/flat.nc (history), fixed/flat.timing.json (timings)" \
  "$work/log" || fail "grid.ranks_x = 2: the outputs' line"
echo "ok: a decomposition the configuration fixes, its outputs named"
# standard output closed (a job whose output nobody reads): the runs' status
# stands, and nothing is said on standard error (awk's "write failure" of
# the outputs' line was)
(cd "$work" && MINIMODEL_RUN_PROGRAM="$mm" timeout -k 5 120 \
  "$src/scripts/run" --set run.steps=2 --set output.dir=closed "$src/configs/flat.ini" >&-) \
  2>"$work/log" || fail "standard output closed: exit $?"
[ -f "$work/closed/flat.nc" ] || fail "standard output closed: no closed/flat.nc"
[ ! -s "$work/log" ] || fail "standard output closed: a message on standard error"
echo "ok: with standard output closed, exit 0 and nothing on standard error"

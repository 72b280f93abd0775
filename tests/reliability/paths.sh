#!/usr/bin/env bash
# paths.sh MINIMODEL PYTHON SOURCE_DIR WORK
# Paths with spaces, '..' and non-ASCII letters work end to end, from the
# configuration file and from --set: output.dir, initial.restart and
# initial.file; the result is the same as in a plain directory.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
run() { timeout -k 10 120 mpirun --oversubscribe -np 2 "$mm" --quiet "$@" >"$work/log" 2>&1; }
cmp_nc() { "$py" "$src/scripts/compare.py" --quiet "$@"; }
rm -rf "$work"; mkdir -p "$work/a dir/sub dir" "$work/plain"
odd="$work/a dir/sub dir/../températures et sel"   # created by the run (its parent exists)
ini="$work/a dir/case with spaces.ini"
{ cat "$src/configs/gyre_bowl.ini"; printf '\n'; } | sed '/^\[output\]/,$d' > "$ini"
printf '[output]\ndir = %s\ninterval = 0\nrestart_interval = 6\n' "$odd" >> "$ini"
# 12 steps with a restart at 6, in the odd directory (set in the file)
run --set run.steps=12 --set run.name=odd "$ini" || fail "run with output.dir = '$odd'"
[ -f "$work/a dir/températures et sel/odd.nc" ] || fail "history not in '$work/a dir/températures et sel'"
[ -f "$odd/odd.restart.nc" ] || fail "no restart file in '$odd'"
# the same in a plain directory
run --set run.steps=12 --set run.name=plain --set output.dir="$work/plain" "$ini" || fail "plain run"
cmp_nc "$work/plain/plain.nc" "$odd/odd.nc" || fail "the odd directory changed the result"
# continue 12 -> 18 from the restart at step 12 through the odd path (--set)
# (no record of the starting state: the continued run's history starts at 12)
run --set run.steps=18 --set run.name=cont --set output.initial_record=false \
  --set initial.restart="$odd/odd.restart.nc" "$ini" ||
  fail "continuing from '$odd/odd.restart.nc'"
run --set run.steps=18 --set run.name=plain18 --set output.initial_record=false \
  --set output.dir="$work/plain" "$ini" || fail "plain 18"
cmp_nc "$work/plain/plain18.nc" "$odd/cont.nc" || fail "continued run differs"
# the restart file as initial state, through the odd path
run --set run.steps=0 --set run.name=init --set initial.file="$odd/odd.restart.nc" "$ini" ||
  fail "initial.file = '$odd/odd.restart.nc'"
"$py" - "$work/plain/plain.nc" "$odd/init.nc" <<'EOF' || fail "initial state differs"
import sys
import netCDF4
import numpy as np
with netCDF4.Dataset(sys.argv[1]) as a, netCDF4.Dataset(sys.argv[2]) as b:
    for v in ("temp", "salt"):  # the last record of the 12 steps, the one record of init
        assert np.ma.allequal(a[v][-1], b[v][0]) and len(b[v]) == 1, v
EOF
# a configuration file whose name holds a newline and a tab: the summary
# keeps one line per case, and the history attribute one line per run
nl="$work/two"$'\n'"lines"$'\t'"tab.ini"
cp "$ini" "$nl"
timeout -k 10 120 "$mm" --quiet --set run.steps=2 --set run.name=nl --set output.dir="$work/plain" \
  "$nl" >"$work/log" 2>&1 || fail "a file name with a newline"
grep -qF "  $work/two\nlines\ttab.ini " "$work/log" || fail "the summary line of a name with a newline"
"$py" - "$work/plain/nl.nc" <<'EOF' || fail "the history attribute of a name with a newline"
import sys

import netCDF4

with netCDF4.Dataset(sys.argv[1]) as d:
    assert "\n" not in d.history and "two\\nlines\\ttab.ini" in d.history, repr(d.history)
EOF
echo "ok: spaces, '..', non-ASCII and control characters in paths work end to end"

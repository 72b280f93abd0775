#!/usr/bin/env bash
# range.sh MINIMODEL PYTHON SOURCE_DIR WORK
# The blow-up check also stops a finite state that leaves the physically
# possible range (docs/physics.md: T in [-10, 110] degC, S in [-1, 100] g/kg):
#   - a surface heat flux that heats the top cells past 110 degC stops every
#     rank with exit 1, a message naming the step, the variable, the value
#     and the cell, and <name>.crash.nc holding the last good state, bit for
#     bit the state of a clean run stopped at that step; the same on the
#     emulated GPU device (solver.backend = emulated), whose check runs on
#     the device's diagnostics, with the same crash file;
#   - the same heat flux for fewer steps passes and writes no crash file;
#   - initial.file or initial.restart with a wet value outside the range is
#     refused with exit 2 naming the file, the variable, the value and the
#     cell, before anything is written.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
ini="$src/configs/flat.ini"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
run() { timeout -k 10 60 mpirun --oversubscribe -np 2 "$mm" --quiet "$@" "$ini" >"$work/log" 2>&1; }
step_of() { ncdump -h "$1" | sed -n 's/^[[:space:]]*:step = \([0-9]*\)LL ;/\1/p'; }
rm -rf "$work"; mkdir -p "$work/empty"
# flat.ini: 24 x 18 columns, all wet; ranks 1 x 2, so rank 1 holds rows j = 9..17.
# 1e5 W/m2 into a 10 m top layer: about 4 degC per step, past 110 degC
# between steps 20 and 30 (the check runs every 10 steps).
common=(--set output.dir="$work" --set grid.ranks_x=1 --set grid.ranks_y=2
        --set forcing.heat_flux=1e5 --set grid.dz_surface=10 --set output.interval=0)

for backend in cpu emulated; do
  name=heat_$backend
  run "${common[@]}" --set solver.backend=$backend --set run.name=$name --set run.steps=100
  rc=$?
  [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "$name: the run hung (exit $rc)"
  [ $rc -eq 1 ] || fail "$name: exit $rc, expected 1"
  grep -qE "numerical blow-up at step 30: temp = 1[0-9.]+ degC at i=0 j=0 k=0, outside the physically possible range \[-10, 110\] degC \([0-9]+ values outside\); last good state \(step 20\) written to $work/$name.crash.nc" "$work/log" ||
    fail "$name: the message does not name step 30, temp, its value, the cell and the crash file"
  [ -f "$work/$name.crash.nc" ] || fail "$name: no crash file"
  [ "$(step_of "$work/$name.crash.nc")" = 20 ] || fail "$name: crash file step is not 20"
  echo "ok: $name: stopped at step 30, crash file of step 20"
done
# the crash file is the state of step 20, on the CPU and on the device
run "${common[@]}" --set run.name=ref20 --set run.steps=20 --set output.restart_interval=20 ||
  fail "reference run of 20 steps"
[ ! -e "$work/ref20.crash.nc" ] || fail "a crash file written by a clean run"
for backend in cpu emulated; do
  "$py" "$src/scripts/compare.py" --quiet "$work/heat_$backend.crash.nc" "$work/ref20.restart.nc" ||
    fail "heat_$backend: the crash file is not the state of step 20"
done
"$py" - "$work/ref20.restart.nc" <<'EOF' || fail "the state of step 20"
import sys, netCDF4
with netCDF4.Dataset(sys.argv[1]) as d:
    t = d["temp"][:]
assert 100.0 < t.max() <= 110.0, f"max temp of step 20 {t.max()!r}: not a state near the bound"
print(f"ok: crash files = the state of step 20 (max temp {t.max():.6g} degC)")
EOF

# input files outside the range: refused before anything is written
"$py" - "$work" <<'EOF' || fail "writing the input files"
import sys, netCDF4, numpy as np
work = sys.argv[1]
def initial(name, var, value):
    with netCDF4.Dataset(f"{work}/{name}", "w") as d:
        for dim, n in (("z", 12), ("y", 18), ("x", 24)):
            d.createDimension(dim, n)
        for v, base in (("temp", 10.0), ("salt", 35.0)):
            a = np.full((12, 18, 24), base)
            if v == var:
                a[3, 12, 5] = value  # on rank 1 (rows 9..17)
            d.createVariable(v, "f8", ("z", "y", "x"))[:] = a
initial("hot.nc", "temp", 150.0)
initial("fresh.nc", "salt", -5.0)
EOF
empty=(--set output.dir="$work/empty" --set grid.ranks_x=1 --set grid.ranks_y=2)
run "${empty[@]}" --set initial.file="$work/hot.nc"
rc=$?
[ $rc -eq 2 ] || fail "hot.nc: exit $rc, expected 2"
grep -qE "initial.file = $work/hot.nc: temp = 150 degC at i=5 j=12 k=3, outside the physically possible range \[-10, 110\] degC \(1 values outside\)" "$work/log" ||
  fail "hot.nc: message"
run "${empty[@]}" --set initial.file="$work/fresh.nc"
rc=$?
[ $rc -eq 2 ] || fail "fresh.nc: exit $rc, expected 2"
grep -qE "initial.file = $work/fresh.nc: salt = -5 g/kg at i=5 j=12 k=3, outside the physically possible range \[-1, 100\] g/kg \(1 values outside\)" "$work/log" ||
  fail "fresh.nc: message"
# a restart file with one value changed, and its checksums made again
# (checksums.py --write), so that the range check is what refuses it
cp "$work/ref20.restart.nc" "$work/hot.restart.nc"
"$py" -c "
import sys, netCDF4
with netCDF4.Dataset(sys.argv[1], 'a') as d:
    d['temp'][0, 10, 7] = 1e6
" "$work/hot.restart.nc" &&
  "$py" "$src/tests/reliability/checksums.py" "$work/hot.restart.nc" --write >/dev/null ||
  fail "changing the restart file"
run "${empty[@]}" --set forcing.heat_flux=1e5 --set grid.dz_surface=10 --set output.interval=0 \
  --set run.name=ref20 --set run.steps=40 --set initial.restart="$work/hot.restart.nc"
rc=$?
[ $rc -eq 2 ] || fail "hot.restart.nc: exit $rc, expected 2"
grep -qE "initial.restart = $work/hot.restart.nc: temp = 1e\+06 degC at i=7 j=10 k=0, outside the physically possible range" "$work/log" ||
  fail "hot.restart.nc: message"
[ -z "$(ls -A "$work/empty")" ] || fail "a refused input wrote $(ls "$work/empty")"
echo "ok: input files outside the range refused, nothing written"
echo "ok"

#!/usr/bin/env bash
# stability.sh MINIMODEL PYTHON SOURCE_DIR WORK
# The stability check of the explicit step (docs/physics.md, "Stability of
# the explicit part") takes advection and diffusion together:
#   - gyre_bowl with run.dt = 4000 and kappa_h = 23750, whose advective and
#     diffusive numbers each pass alone and which grows to 1e19, is refused
#     with exit 2, a message, and a dt to use; scripts/reference.py refuses it
#     too and suggests the same dt;
#   - the suggested dt runs (2 ranks, 300 steps) and the temperature never
#     leaves the range of the initial state (maximum principle);
#   - the next 6-digit decimal above the suggestion is refused: the
#     suggestion is the limit to 6 digits;
#   - for several flow speeds the suggested dt passes the check (at 1.1 and
#     2.3 the limit printed to 4 digits would round up, and be refused);
#   - on a grid of cells 1e-150 m wide, where the square of the transports is
#     beyond the doubles, superbee's limit is the same as the reference's and
#     its suggested dt passes (every dt was refused with "inf times the
#     largest stable time step; use run.dt <= 0 s");
#   - a limit below the smallest double (dx = 1e-300 m): no dt passes, and
#     none is suggested; a subnormal limit (1e-155 m): "more than 1.7977e+308
#     times", and the suggestion passes; the reference says the same;
#   - the reference refuses a step's heating of the top level over the whole
#     range of temperature, as the model does.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
gyre="$src/configs/gyre_bowl.ini"
adv="$src/tests/app/bad/unstable_adv.ini"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
mmrun() { timeout -k 10 120 "$mm" "$@" >"$work/log" 2>&1; }
suggested() { sed -n 's/.*use run.dt <= \([0-9.e+-]*\) s.*/\1/p' "$work/log" | head -1; }
rm -rf "$work"; mkdir -p "$work"
# the example's keys but run.dt (a key may be given once)
example=(--set physics.kappa_h=23750 --set run.steps=300 --set output.dir="$work"
         --set output.interval=30)

# the example: refused before anything is written
mmrun "${example[@]}" --set run.dt=4000 "$gyre"
rc=$?
[ $rc -eq 2 ] || fail "example: exit $rc, expected 2 (refused)"
grep -qE "run.dt = 4000 s breaks the advective \+ diffusive stability limit of the explicit horizontal step \(superbee advection, kappa_h = 23750 m2/s; the limit is set at cell i=[0-9]+ j=[0-9]+ k=[0-9]+\): it is [0-9.]+ times the largest stable time step; use run.dt <= [0-9.]+ s" "$work/log" ||
  fail "example: message"
[ ! -e "$work/gyre_bowl.nc" ] || fail "example: a refused run wrote its history"
dt=$(suggested)
[ -n "$dt" ] || fail "example: no dt suggested"
echo "ok: example refused, suggested run.dt = $dt"

# the reference refuses it with the same suggestion
"$py" "$src/scripts/reference.py" "$gyre" --set run.dt=4000 --set physics.kappa_h=23750 \
  --output "$work/ref.nc" --quiet >"$work/log" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "reference: exit $rc, expected 2"
[ "$(suggested)" = "$dt" ] || fail "reference suggests $(suggested), the model $dt"
echo "ok: reference refuses it and suggests the same dt"

# the suggested dt runs, and the maximum principle holds
mmrun --quiet --set physics.kappa_h=23750 --set output.dir="$work" --set run.dt="$dt" \
  --set run.name=start --set run.steps=0 "$gyre" ||
  fail "initial state: exit $?"
timeout -k 10 300 mpirun --oversubscribe -np 2 "$mm" --quiet "${example[@]}" --set run.dt="$dt" \
  "$gyre" >"$work/log" 2>&1 || fail "the suggested run.dt = $dt: exit $?"
"$py" - "$work/start.nc" "$work/gyre_bowl.nc" <<'EOF' || fail "maximum principle"
import sys, netCDF4
with netCDF4.Dataset(sys.argv[1]) as d:
    lo, hi = float(d["temp_min"][0]), float(d["temp_max"][0])
with netCDF4.Dataset(sys.argv[2]) as d:
    steps = list(d["step"][:])
    tmin, tmax = d["temp_min"][:], d["temp_max"][:]
assert steps[-1] == 300, f"ran to step {steps[-1]}"
eps = 1e-12 * (hi - lo)
for s, a, b in zip(steps, tmin, tmax):
    assert a >= lo - eps and b <= hi + eps, f"step {s}: T in [{a!r}, {b!r}] leaves [{lo!r}, {hi!r}]"
print(f"ok: {len(steps)} records within the initial range [{lo:.6g}, {hi:.6g}]")
EOF

# the next 6-digit decimal is beyond the limit
above=$("$py" -c "import math, sys; x = float(sys.argv[1]); print(f'{x + 10.0 ** (math.floor(math.log10(x)) - 5):.6g}')" "$dt")
mmrun --dry-run "${example[@]}" --set run.dt="$above" "$gyre"
rc=$?
[ $rc -eq 2 ] || fail "run.dt = $above (above the suggestion $dt): exit $rc, expected 2"
echo "ok: run.dt = $above refused"

# the suggestion passes, also where the limit rounded to nearest would not
for speed in 0.7 1.1 1.3 2.3; do
  mmrun --dry-run --set physics.flow_speed=$speed "$adv"
  [ $? -eq 2 ] || fail "flow_speed $speed: not refused"
  s=$(suggested)
  [ -n "$s" ] || fail "flow_speed $speed: no dt suggested"
  mmrun --dry-run --set physics.flow_speed=$speed --set run.dt="$s" "$adv" ||
    fail "flow_speed $speed: the suggested run.dt = $s is refused"
  echo "ok: flow_speed $speed: the suggested run.dt = $s passes"
done
# transports whose square is beyond the doubles (grid.dx = 1e-150 m)
tiny=(--set grid.dx=1e-150 --set physics.kappa_h=100)
mmrun --dry-run "${tiny[@]}" --set run.dt=1e-290 "$adv"
[ $? -eq 2 ] || fail "dx = 1e-150: not refused"
s=$(suggested)
grep -q "inf times" "$work/log" && fail "dx = 1e-150: the limit overflowed"
[ "$s" = "5e-303" ] || fail "dx = 1e-150: suggested run.dt = '$s', expected 5e-303 (the reference's)"
"$py" "$src/scripts/reference.py" "${tiny[@]}" --set run.dt=1e-290 --output "$work/tiny.nc" "$adv" \
  >"$work/log" 2>&1
[ $? -eq 2 ] && [ "$(suggested)" = "$s" ] || fail "dx = 1e-150: the reference suggests '$(suggested)'"
mmrun --dry-run "${tiny[@]}" --set run.dt="$s" "$adv" || fail "dx = 1e-150: run.dt = $s is refused"
echo "ok: dx = 1e-150: the suggested run.dt = $s passes, as the reference's"
# a limit below the smallest positive double (grid.dx = 1e-300 m, flat.ini: diffusion alone): no run.dt
# passes, and none is suggested (it said "use run.dt <= 0 s", outside the
# key's range; the reference stopped with a Python traceback)
mmrun --dry-run --set grid.dx=1e-300 "$src/configs/flat.ini"
[ $? -eq 2 ] || fail "dx = 1e-300: not refused"
grep -q "no time step passes on this grid (the largest stable one is below the smallest double): make the cells larger (grid.dx = 1e-300 m, grid.dy = [0-9.e+]* m) or kappa_h smaller" \
  "$work/log" || fail "dx = 1e-300: message"
grep -q "use run.dt" "$work/log" && fail "dx = 1e-300: a run.dt suggested"
"$py" "$src/scripts/reference.py" --set grid.dx=1e-300 --output "$work/tiny.nc" "$src/configs/flat.ini" \
  >"$work/log" 2>&1
[ $? -eq 2 ] && grep -q "no time step passes on this grid" "$work/log" ||
  fail "dx = 1e-300: the reference"
echo "ok: dx = 1e-300: no run.dt passes, none suggested; the reference says the same"
# a limit among the subnormal doubles (grid.dx = 1e-155 m): the ratio beyond
# the doubles is said as such, not "inf times"; the suggestion passes
mmrun --dry-run --set grid.dx=1e-155 "$src/configs/flat.ini"
[ $? -eq 2 ] || fail "dx = 1e-155: not refused"
s=$(suggested)
grep -q "it is more than 1.7977e+308 times the largest stable time step" "$work/log" ||
  fail "dx = 1e-155: the ratio"
"$py" "$src/scripts/reference.py" --set grid.dx=1e-155 --output "$work/tiny.nc" "$src/configs/flat.ini" \
  >"$work/log" 2>&1
[ $? -eq 2 ] && [ "$(suggested)" = "$s" ] || fail "dx = 1e-155: the reference suggests '$(suggested)'"
mmrun --dry-run --set grid.dx=1e-155 --set run.dt="$s" "$src/configs/flat.ini" ||
  fail "dx = 1e-155: run.dt = $s is refused"
echo "ok: dx = 1e-155: the suggested run.dt = $s passes, as the reference's"
# cells whose area is below the doubles: run.dt / (dx dy) is not finite,
# said by the reference as by the model (it went on to "inf times")
"$py" "$src/scripts/reference.py" --set grid.dx=1e-160 --set grid.dy=1e-160 \
  --output "$work/tiny.nc" "$src/configs/flat.ini" >"$work/log" 2>&1
[ $? -eq 2 ] && grep -q "run.dt / (dx dy) = inf s/m2 is not a finite number" "$work/log" ||
  fail "dx = dy = 1e-160: the reference"
echo "ok: dx = dy = 1e-160: the reference refuses run.dt / (dx dy) = inf"
# and before its flow is built (which divided by the cells' sizes and said
# "the prescribed flow is not divergence-free"), as the model does
"$py" "$src/scripts/reference.py" --set grid.dx=5e-324 --set grid.dy=5e-324 \
  --output "$work/tiny.nc" "$src/configs/flat.ini" >"$work/log" 2>&1
[ $? -eq 2 ] && grep -q "run.dt / (dx dy) = inf s/m2 is not a finite number" "$work/log" ||
  fail "dx = dy = 5e-324: the reference"
echo "ok: dx = dy = 5e-324: the reference refuses run.dt / (dx dy) = inf before the flow"
# transports whose square is beyond the doubles: the reference's message
# alone, without NumPy's overflow warnings
"$py" "$src/scripts/reference.py" --set grid.dx=1e-155 --output "$work/tiny.nc" "$gyre" \
  >"$work/log" 2>&1
[ $? -eq 2 ] && ! grep -q "Warning" "$work/log" && [ "$(wc -l <"$work/log")" -eq 1 ] ||
  fail "dx = 1e-155, gyre: the reference's output is not its one line"
echo "ok: dx = 1e-155, gyre: the reference says one line"
# the heating of one step more than the whole range of temperature: refused
# by the reference as by the model (cfg.heat_per_step_range)
"$py" "$src/scripts/reference.py" --set grid.dz_surface=0.1 --set forcing.heat_flux=27500 \
  --output "$work/tiny.nc" "$src/configs/flat.ini" >"$work/log" 2>&1
[ $? -eq 2 ] && grep -q "heats the top level (0.1 m thick, physics.rho0 = 1025, physics.cp = 3992) by 121 degC a step of run.dt = 1800 s, more than the whole range" "$work/log" ||
  fail "heat_flux = 27500 on a top level of 0.1 m: the reference"
echo "ok: a step's heating over the range: the reference refuses it"
echo "ok"

#!/usr/bin/env bash
# provenance.sh MINIMODEL PYTHON SOURCE_DIR WORK: what a case leaves beside
# its output says how to run it again, and a continuation is judged by the
# keys that determine its solution.
#   - <name>.resolved.ini holds every key (as many as --config-reference
#     lists); running it, on another rank count and into another output.dir,
#     gives the same history, records and bits;
#   - the history's `history` attribute holds the command line, quoted so
#     that a shell reads back the same words (a blank, a quote, a newline);
#   - a restart refused for another configuration names every key that
#     differs, with both values;
#   - a continuation with other initial.* keys (which a restart replaces) is
#     not refused.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
run() { local np="$1"; shift; timeout -k 10 120 mpirun --oversubscribe -np "$np" "$mm" --quiet "$@" >"$work/log" 2>&1; }
"$src/tests/fresh.sh" "$work" -- mkdir -p "$work" || exit 1  # no earlier run's files
gyre="$src/configs/gyre_bowl.ini"

run 2 --set output.dir="$work/a" --set physics.kappa_h=30 --set run.steps=12 \
  --set output.restart_interval=6 "$gyre" || fail "first run"
ini="$work/a/gyre_bowl.resolved.ini"
[ -f "$ini" ] || fail "no resolved.ini"
keys=$(grep -cE '^[a-z_0-9]+ = ' "$ini")
want=$("$mm" --config-reference | grep -cE '^\| `[a-z_0-9]+` \|')
[ "$keys" = "$want" ] || fail "resolved.ini holds $keys keys, the configuration has $want"
grep -q '^kappa_h = 30$' "$ini" || fail "resolved.ini lacks the --set value kappa_h = 30"
run 3 --set output.dir="$work/b" "$ini" || fail "the run of resolved.ini"
"$py" "$src/scripts/compare.py" --quiet "$work/a/gyre_bowl.nc" "$work/b/gyre_bowl.nc" ||
  fail "resolved.ini does not reproduce the case"
echo "ok: resolved.ini ($keys keys) reproduces the case on another rank count"
ncdump -h "$work/a/gyre_bowl.nc" | grep -q ':history = ".*: created by minimodel .*: .*--set physics.kappa_h=30' ||
  fail "the history attribute lacks the command line"
echo "ok: the command line is in the history attribute"
# words with a blank, a quote and a newline read back by bash as they were
# given (they were joined with blanks: the date and time two words)
odd="$work/it's here" ini_odd="$work/it's here/f"$'\n'"l.ini" # (output.dir refuses a newline)
mkdir -p "$odd" && cp "$src/configs/flat.ini" "$ini_odd" || fail "cannot make $ini_odd"
run 1 --set output.dir="$odd" --set "run.start_date=2001-02-28 06:00:00" --set run.steps=2 \
  --set grid.nx=8 --set grid.ny=8 "$ini_odd" || fail "the run with odd words"
"$py" -c 'import sys, netCDF4
with netCDF4.Dataset(sys.argv[1]) as d: print(d.history.split(": ", 2)[2])' "$odd/flat.nc" \
  >"$work/command" || fail "cannot read the history attribute"
[ "$(wc -l <"$work/command")" = 1 ] || fail "the command is not one line: $(cat "$work/command")"
eval "words=($(cat "$work/command"))"
want=("$mm" --quiet --set output.dir="$odd" --set "run.start_date=2001-02-28 06:00:00" --set \
  run.steps=2 --set grid.nx=8 --set grid.ny=8 "$ini_odd")
[ "${#words[@]}" = "${#want[@]}" ] || fail "${#words[@]} words read back, ${#want[@]} given: $(cat "$work/command")"
for i in "${!want[@]}"; do
  [ "${words[$i]}" = "${want[$i]}" ] || fail "word $i read back as '${words[$i]}', given '${want[$i]}'"
done
echo "ok: the command line reads back in a shell: $(cat "$work/command")"
# a file name in Latin-1 (a byte of no UTF-8 character) is written as \xNN in
# $'...': it was written raw, and read back as U+FFFD
ini_latin="$work/fl"$'\xe9'"t.ini"
cp "$src/configs/flat.ini" "$ini_latin" || fail "cannot make $ini_latin"
run 1 --set output.dir="$work/latin" --set run.steps=1 --set grid.nx=8 --set grid.ny=8 \
  "$ini_latin" || fail "the run with a Latin-1 file name"
"$py" -c 'import sys, netCDF4
with netCDF4.Dataset(sys.argv[1]) as d: print(d.history.split(": ", 2)[2])' "$work/latin/flat.nc" \
  >"$work/command" || fail "cannot read the history attribute"
grep -qF "\$'$work/fl\\xe9t.ini'" "$work/command" ||
  fail "the Latin-1 byte is not written as \\xe9 in \$'...': $(cat "$work/command")"
eval "words=($(cat "$work/command"))"
[ "${words[${#words[@]}-1]}" = "$ini_latin" ] || fail "the Latin-1 file name does not read back"
echo "ok: a byte of no UTF-8 character is written as \\xNN and reads back"
# a program's name with an '=' is quoted: pasted as a command, bash would
# take it for an assignment
mkdir -p "$work/x=y" && cp "$mm" "$work/x=y/minimodel" || fail "cannot copy the program"
timeout -k 10 120 "$work/x=y/minimodel" --quiet --set output.dir="$work/eq" --set run.steps=1 \
  --set grid.nx=8 --set grid.ny=8 "$src/configs/flat.ini" >"$work/log" 2>&1 || fail "the run as x=y/minimodel"
"$py" -c 'import sys, netCDF4
with netCDF4.Dataset(sys.argv[1]) as d: print(d.history.split(": ", 2)[2])' "$work/eq/flat.nc" \
  >"$work/command" || fail "cannot read the history attribute"
grep -qF "'$work/x=y/minimodel' --quiet" "$work/command" ||
  fail "the program's name with an '=' is not quoted: $(cat "$work/command")"
echo "ok: a program's name with an '=' is quoted"

# another configuration: every differing key named, with both values
run 1 --set output.dir="$work/c" --set physics.kappa_h=40 --set grid.dz_surface=100 \
  --set run.steps=12 --set initial.restart="$work/a/gyre_bowl.restart.nc" "$gyre"
rc=$?
[ $rc -eq 2 ] || fail "another configuration: exit $rc, expected 2"
grep -qE "written for another configuration \(config_hash [0-9a-f]+, this configuration [0-9a-f]+\): grid.dz_surface = 0 there, 100 here; physics.kappa_h = 30 there, 40 here" "$work/log" ||
  fail "the refusal does not name the keys"
echo "ok: $(grep -o 'grid.dz_surface.*' "$work/log")"

# other initial.* keys: continued, and the same as the straight run
run 2 --set output.dir="$work/d" --set physics.kappa_h=30 --set run.steps=12 \
  --set output.restart_interval=6 --set initial.pattern=step --set initial.t_surface=25 \
  --set initial.restart="$work/a/gyre_bowl.restart.nc" "$gyre" ||
  fail "a continuation with other initial.* keys was refused"
echo "ok: other initial.* keys do not stop a continuation"
echo "ok"

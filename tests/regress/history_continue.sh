#!/usr/bin/env bash
# history_continue.sh MINIMODEL PYTHON SOURCE_DIR WORK
# A run continued from a restart appends to the history of its case:
#  - 2N steps straight and N + N continued give the same history file,
#    records and bits; so does N/3 + N/3 + 4N/3 (continued twice);
#  - continued from a restart before the end of a run that went further: its
#    records after the restart step are replaced, also where the continued
#    run ends before them;
#  - continued at its last step: that record is written once more, not twice;
#  - without a history in output.dir, one starts at the restart step;
#  - a fresh run with output.initial_record = false has no record of step 0,
#    and one of 0 steps has that record alone, whatever the key.
# A history attribute of one NC_STRING (netCDF4-python's non-ASCII text) is
# continued. A history that does not fit (another configuration or grid,
# another run.start_date or run.calendar, records missing before the
# restart step, one that starts after it, a history attribute that is not
# text, a damaged file) is
# refused with exit 2 before any step, and left unchanged, with the resolved
# configuration of the run that wrote it.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
ini="$src/configs/gyre_bowl.ini"
source "$(dirname "${BASH_SOURCE[0]}")/../set_once.sh"
# a later --set of a key overrides the common one
run() {
  local -a args
  mapfile -d '' args < <(set_once "$@")
  timeout -k 10 120 mpirun --oversubscribe -np 2 "$mm" --quiet "${args[@]}" "$ini" >"$work/log" 2>&1
}
cmp_nc() { "$py" "$src/scripts/compare.py" --quiet "$@"; }
fail() { echo "FAIL: $*"; cat "$work/log"; exit 1; }
# records FILE REFERENCE: the steps of FILE's records, each equal to the
# record of the same step in REFERENCE, bit for bit (compare.py --records-of-b)
records() {
  cmp_nc --records-of-b "$2" "$1" || { echo "records of $1 differ from $2"; return 1; }
  "$py" -c 'import sys, netCDF4
with netCDF4.Dataset(sys.argv[1]) as d: print(" ".join(str(int(s)) for s in d["step"][:]))' "$1"
}
"$src/tests/fresh.sh" "$work" -- mkdir -p "$work/new" || exit 1  # no earlier run's files
common=(--set output.dir="$work" --set output.interval=4)

run "${common[@]}" --set run.name=straight --set run.steps=24 || fail "straight run"

# N + N: 12 steps, then continued to 24 from the restart of step 12
run "${common[@]}" --set run.name=cont --set run.steps=12 --set output.restart_interval=12 ||
  fail "first half"
cp "$work/cont.restart.nc" "$work/half.restart.nc"
run "${common[@]}" --set run.name=cont --set run.steps=24 \
  --set initial.restart="$work/half.restart.nc" || fail "second half"
cmp_nc "$work/straight.nc" "$work/cont.nc" || fail "N + N steps: the history differs from 2N straight"
echo "ok: 12 + 12 steps: the history equals that of 24 steps, records and bits"

# continued twice: 8, 16, 24
run "${common[@]}" --set run.name=twice --set run.steps=8 --set output.restart_interval=8 ||
  fail "twice: first run"
cp "$work/twice.restart.nc" "$work/eight.restart.nc"
for n in 16 24; do
  run "${common[@]}" --set run.name=twice --set run.steps=$n --set output.restart_interval=8 \
    --set initial.restart="$work/twice.restart.nc" || fail "twice: continued to $n"
done
cmp_nc "$work/straight.nc" "$work/twice.nc" || fail "8 + 8 + 8 steps: the history differs"
echo "ok: 8 + 8 + 8 steps: the same history"

# a run that went further (20 steps, restart at 12): continued from step 12
run "${common[@]}" --set run.name=further --set run.steps=20 --set output.restart_interval=12 ||
  fail "further: first run"
run "${common[@]}" --set run.name=further --set run.steps=24 \
  --set initial.restart="$work/further.restart.nc" || fail "further: continued"
cmp_nc "$work/straight.nc" "$work/further.nc" || fail "further: records 16, 20 not replaced"
# ... and continued from step 12 once more, to 16 only: records 20, 24 go
run "${common[@]}" --set run.name=further --set run.steps=16 \
  --set initial.restart="$work/half.restart.nc" || fail "further: continued to 16"
steps=$(records "$work/further.nc" "$work/straight.nc") || fail "further: $steps"
[ "$steps" = "0 4 8 12 16" ] || fail "further: records of steps $steps, expected 0 4 8 12 16"
echo "ok: a run that went further: its later records replaced or removed"

# continued at its last step: the record of step 24 once
run "${common[@]}" --set run.name=cont --set run.steps=24 \
  --set initial.restart="$work/cont.restart.nc" || fail "continued at the last step"
cmp_nc "$work/straight.nc" "$work/cont.nc" || fail "continued at the last step: history differs"
echo "ok: continued at its last step: the same history"

# a new output.dir: a history that starts at the restart step
run "${common[@]}" --set output.dir="$work/new" --set run.name=fresh --set run.steps=20 \
  --set output.restart_interval=20 --set initial.restart="$work/half.restart.nc" ||
  fail "new output.dir"
steps=$(records "$work/new/fresh.nc" "$work/straight.nc") || fail "new output.dir: $steps"
[ "$steps" = "12 16 20" ] || fail "new output.dir: records of steps $steps, expected 12 16 20"
run "${common[@]}" --set output.dir="$work/new" --set run.name=fresh --set run.steps=24 \
  --set initial.restart="$work/new/fresh.restart.nc" || fail "new output.dir: continued"
steps=$(records "$work/new/fresh.nc" "$work/straight.nc") || fail "new output.dir: $steps"
[ "$steps" = "12 16 20 24" ] || fail "new output.dir: records of steps $steps, expected 12 16 20 24"
# output.initial_record = false: no record of the restart step
run "${common[@]}" --set output.dir="$work/new0" --set run.name=fresh --set run.steps=20 \
  --set output.initial_record=false --set initial.restart="$work/half.restart.nc" ||
  fail "new output.dir, output.initial_record = false"
steps=$(records "$work/new0/fresh.nc" "$work/straight.nc") || fail "initial_record = false: $steps"
[ "$steps" = "16 20" ] || fail "initial_record = false: records of steps $steps, expected 16 20"
echo "ok: a new output.dir: the history starts at the restart step (its first record), and is continued"
# a fresh run: output.initial_record = false leaves out step 0; a run of 0
# steps writes the initial state as its one record, whatever the key
run "${common[@]}" --set output.dir="$work/norec" --set run.name=straight --set run.steps=24 \
  --set output.initial_record=false || fail "a fresh run, output.initial_record = false"
steps=$(records "$work/norec/straight.nc" "$work/straight.nc") || fail "no initial record: $steps"
[ "$steps" = "4 8 12 16 20 24" ] || fail "no initial record: records of steps $steps"
for rec in true false; do
  run "${common[@]}" --set output.dir="$work/zero_$rec" --set run.name=zero --set run.steps=0 \
    --set output.initial_record=$rec || fail "0 steps, output.initial_record = $rec"
  steps=$(records "$work/zero_$rec/zero.nc" "$work/straight.nc") || fail "0 steps: $steps"
  [ "$steps" = "0" ] || fail "0 steps, output.initial_record = $rec: records of steps $steps"
done
echo "ok: output.initial_record = false leaves out step 0, but not of a run of 0 steps"

# refused with exit 2, left unchanged, nothing computed (no restart file
# written, though one is due after every step)
refused() { # NAME REGEX RESTART [ARGS...]: continuing NAME's history is refused
  local name="$1" regex="$2" restart="$3" dir="$work"
  shift 3
  [[ "$*" == *output.dir=* ]] && dir="$work/new"
  cp "$dir/$name.nc" "$work/before.nc"
  local restart_before resolved_before
  restart_before=$(cksum "$dir/$name.restart.nc" 2>&1)
  resolved_before=$(cksum "$dir/$name.resolved.ini" 2>&1)
  run "${common[@]}" --set run.name="$name" --set run.steps=24 --set output.restart_interval=1 \
    --set initial.restart="$restart" "$@"
  local rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc, expected 2"
  grep -qE "error: .*$name.nc: $regex" "$work/log" || fail "$name: no message /$regex/"
  cmp -s "$dir/$name.nc" "$work/before.nc" || fail "$name: the history was changed"
  [ "$(cksum "$dir/$name.restart.nc" 2>&1)" = "$restart_before" ] || fail "$name: steps were computed"
  [ "$(cksum "$dir/$name.resolved.ini" 2>&1)" = "$resolved_before" ] ||
    fail "$name: the resolved configuration of the run that wrote the history was replaced"
  echo "ok: $name: refused with exit 2: $(grep -o "error: .*" "$work/log")"
}
run "${common[@]}" --set run.name=other --set run.steps=12 --set physics.kappa_h=40 ||
  fail "other configuration"
refused other "the history of another configuration" "$work/half.restart.nc"
run "${common[@]}" --set run.name=grid --set run.steps=12 --set grid.nz=11 || fail "other grid"
refused grid "the history of another grid" "$work/half.restart.nc"
# another run.start_date or run.calendar (not in config_hash: they do not
# change the solution) would append records read at other dates; the same
# date written without its time (00:00:00) continues
run "${common[@]}" --set run.name=dated --set run.steps=12 --set "run.start_date=2001-02-03" ||
  fail "dated run"
refused dated "time has units = 'seconds since 2001-02-03', this run 'seconds since 1999-06-01' \\(run.start_date = 1999-06-01\\)" \
  "$work/half.restart.nc" --set "run.start_date=1999-06-01"
refused dated "time has calendar = 'standard', this run '360_day' \\(run.calendar = 360_day\\)" \
  "$work/half.restart.nc" --set "run.start_date=2001-02-03" --set run.calendar=360_day
run "${common[@]}" --set run.name=dated --set run.steps=16 --set "run.start_date=2001-02-03 00:00:00" \
  --set initial.restart="$work/half.restart.nc" || fail "dated: the same date with its time"
# a history without time:calendar (an older version's) is on CF's default,
# the standard calendar
"$py" -c 'import sys, netCDF4
with netCDF4.Dataset(sys.argv[1], "a") as d: d["time"].delncattr("calendar")' "$work/dated.nc" ||
  fail "dated: cannot remove the calendar"
run "${common[@]}" --set run.name=dated --set run.steps=20 --set "run.start_date=2001-02-03" \
  --set initial.restart="$work/half.restart.nc" || fail "dated: a history without a calendar"
run "${common[@]}" --set run.name=short --set run.steps=8 || fail "short run"
refused short "holds the records up to step 8, .* the record of step 12 is missing" \
  "$work/half.restart.nc"
refused fresh "starts at step 12, after the restart step 8" "$work/eight.restart.nc" \
  --set output.dir="$work/new"
run "${common[@]}" --set run.name=negstart --set run.steps=12 || fail "negstart run"
"$py" -c 'import sys, netCDF4
with netCDF4.Dataset(sys.argv[1], "a") as d: d.start_step = -5' "$work/negstart.nc" ||
  fail "negstart: cannot set start_step"
refused negstart "attribute start_step = -5 is negative" "$work/half.restart.nc"
# a history attribute of a number: refused before the records after the
# restart step are removed (the run went to step 20)
run "${common[@]}" --set run.name=numhist --set run.steps=20 || fail "numhist run"
"$py" -c 'import sys, netCDF4
with netCDF4.Dataset(sys.argv[1], "a") as d: d.setncattr("history", [1, 2])' "$work/numhist.nc" ||
  fail "numhist: cannot set history"
refused numhist "attribute history is not a text" "$work/half.restart.nc"
# ... but one NC_STRING, as netCDF4-python writes non-ASCII text, is
# continued, its text kept and the run's line added, the records after the
# restart step replaced (it ended with exit 1 and those records removed)
run "${common[@]}" --set run.name=strhist --set run.steps=20 || fail "strhist run"
"$py" -c 'import sys, netCDF4
with netCDF4.Dataset(sys.argv[1], "a") as d: d.history = d.history + "\nchecked by Zoë"' \
  "$work/strhist.nc" || fail "strhist: cannot set history"
ncdump -h "$work/strhist.nc" | grep -q 'string :history' || fail "strhist: history is not NC_STRING"
run "${common[@]}" --set run.name=strhist --set run.steps=24 \
  --set initial.restart="$work/half.restart.nc" || fail "strhist: continued"
cmp_nc "$work/straight.nc" "$work/strhist.nc" || fail "strhist: records differ from 24 steps straight"
"$py" -c 'import sys, netCDF4
with netCDF4.Dataset(sys.argv[1]) as d: h = d.history.split("\n")
assert len(h) == 3 and h[1] == "checked by Zoë" and "continued from step 12 by" in h[2], h' \
  "$work/strhist.nc" || fail "strhist: the history attribute"
echo "ok: a history attribute of one NC_STRING: continued, its text kept, a line added"
# ... and one of NC_CHAR with a NUL inside: its bytes kept whole (the text
# after the NUL was lost)
run "${common[@]}" --set run.name=nulhist --set run.steps=20 || fail "nulhist run"
"$py" -c 'import sys, netCDF4
with netCDF4.Dataset(sys.argv[1], "a") as d: d.setncattr("history", b"before\x00after")' \
  "$work/nulhist.nc" || fail "nulhist: cannot set history"
run "${common[@]}" --set run.name=nulhist --set run.steps=24 \
  --set initial.restart="$work/half.restart.nc" || fail "nulhist: continued"
ncdump -h "$work/nulhist.nc" | grep -q ':history = "before\\000after\\n.*continued from step 12 by' ||
  fail "nulhist: the history attribute: $(ncdump -h "$work/nulhist.nc" | grep :history)"
echo "ok: a history attribute with a NUL inside: its bytes kept, a line added"
# every text attribute as NC_STRING (setncattr_string, as a tool may write
# every text): read as text (time's units were "(none)", config_hash "not a
# string")
run "${common[@]}" --set run.name=strtime --set run.steps=20 || fail "strtime run"
"$py" -c 'import sys, netCDF4
with netCDF4.Dataset(sys.argv[1], "a") as d:
    for o in [d] + list(d.variables.values()):
        for a in o.ncattrs():
            if isinstance(o.getncattr(a), str): o.setncattr_string(a, o.getncattr(a))' \
  "$work/strtime.nc" || fail "strtime: cannot set the attributes"
for a in 'string time:units' 'string :config_hash' 'string time:calendar'; do
  ncdump -h "$work/strtime.nc" | grep -q "$a" || fail "strtime: not NC_STRING: $a"
done
run "${common[@]}" --set run.name=strtime --set run.steps=24 \
  --set initial.restart="$work/half.restart.nc" || fail "strtime: continued"
cmp_nc "$work/straight.nc" "$work/strtime.nc" || fail "strtime: records differ from 24 steps straight"
echo "ok: every text attribute of NC_STRING: continued"
# another initial state (initial.* is not in config_hash): the history's
# record of the restart step is not the restart's state
run "${common[@]}" --set run.name=inits --set run.steps=20 --set initial.t_surface=25 ||
  fail "inits run"
refused inits "its record of step 12 has heat_content = .*the restart is of another run" \
  "$work/half.restart.nc"
head -c 100000 "$work/straight.nc" >"$work/damaged.nc"
refused damaged "truncated" "$work/half.restart.nc"
# a continuation that cannot write (a file-size limit below the history and
# its reservation, SIGXFSZ ignored) ends with exit 1 before it removes the
# records after the restart step: the history of 20 steps is left whole
run "${common[@]}" --set run.name=limited --set run.steps=20 || fail "limited run"
cp "$work/limited.nc" "$work/before.nc"
blocks=$(( $(stat -c %s "$work/limited.nc") / 1024 + 64 ))
mapfile -d '' args < <(set_once "${common[@]}" --set run.name=limited --set run.steps=24 \
  --set initial.restart="$work/half.restart.nc")
timeout -k 10 120 mpirun --oversubscribe -np 2 bash -c 'trap "" XFSZ; ulimit -f "$1"; shift
  exec "$@"' limit "$blocks" "$mm" --quiet "${args[@]}" "$ini" >"$work/log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "limited: exit $rc, expected 1"
grep -q "limited.nc: cannot reserve" "$work/log" || fail "limited: no message about the reservation"
cmp -s "$work/limited.nc" "$work/before.nc" || fail "limited: the history was changed"
echo "ok: limited: $(grep -o "error: .*" "$work/log")"
echo "ok"

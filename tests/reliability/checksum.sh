#!/usr/bin/env bash
# checksum.sh MINIMODEL PYTHON SOURCE_DIR WORK
# Restart files carry two checksums per field (io/restart.c: the attribute
# `checksum`, the sum modulo 2^64 of the bit patterns of the stored values,
# and `checksum_ordered`, the sum of each bit pattern times a weight of its
# place; 16 hexadecimal digits each):
#   - written on 3 ranks, each field's checksums equal those NumPy computes
#     from the file (checksums.py: an independent sum of the same bits), and
#     the same file written on 1 rank has the same checksums;
#   - a restart with one value of salt changed by one unit in the last
#     place, its checksums not, is refused with exit 2 naming the file, the
#     field and both checksums, before anything is written; so is one with
#     two values of temp swapped, and one with two values negated (the
#     plain sum unchanged: they were run from), one whose kmt checksum is
#     changed, and
#     one whose checksum is not 16 hexadecimal digits;
#   - a restart without checksums (written before them), or with the plain
#     one alone, is read as it is, and continues to the bits of the run from
#     the file with them.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
ini="$src/configs/gyre_bowl.ini"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
run() {
  local np="$1"; shift
  timeout -k 10 120 mpirun --oversubscribe -np "$np" "$mm" --quiet --set run.name=ck "$@" "$ini" \
    >"$work/log" 2>&1
}
rm -rf "$work"; mkdir -p "$work/empty"
common=(--set output.interval=0 --set output.restart_interval=4)
run 3 "${common[@]}" --set run.steps=4 --set grid.ranks_x=3 --set grid.ranks_y=1 \
  --set output.dir="$work/np3" || fail "the 3-rank run"
run 1 "${common[@]}" --set run.steps=4 --set output.dir="$work/np1" || fail "the 1-rank run"
restart="$work/np3/ck.restart.nc"
for f in "$restart" "$work/np1/ck.restart.nc"; do
  "$py" "$src/tests/reliability/checksums.py" "$f" >"$work/sums.${f//\//_}" ||
    fail "$f: the checksums are not NumPy's sums"
done
cmp -s "$work/sums.${restart//\//_}" "$work/sums.${work//\//_}_np1_ck.restart.nc" ||
  fail "3 ranks $(cat "$work/sums.${restart//\//_}") against 1 rank"
cat "$work/sums.${restart//\//_}"
echo "ok: the checksums are NumPy's sums of the stored bits, the same on 1 and 3 ranks"

# the continuation from the good file, for the bits of the one without checksums
cont=(--set run.steps=8 --set output.interval=4 --set grid.ranks_x=2 --set grid.ranks_y=1)
run 2 "${cont[@]}" --set output.dir="$work/good" --set initial.restart="$restart" ||
  fail "continuing from the good file"

# altered copies: one ulp of salt; kmt's checksum; a checksum of the wrong form
"$py" - "$restart" "$work" <<'PY' || fail "making the altered files"
import shutil, sys, netCDF4, numpy as np
src, work = sys.argv[1], sys.argv[2]
def copy(name):
    shutil.copy(src, f"{work}/{name}.restart.nc")
    return netCDF4.Dataset(f"{work}/{name}.restart.nc", "a")
with copy("ulp") as d:
    d.set_auto_mask(False)
    s = d["salt"][3, 5, 7]
    d["salt"][3, 5, 7] = np.nextafter(s, np.inf)
with copy("swap") as d:  # two wet values of temp, far apart
    d.set_auto_mask(False)
    t = d["temp"][:]
    a, b = (0, 10, 10), (1, 12, 12)
    assert t[a] != t[b] and d["kmt"][10, 10] > 0 and d["kmt"][12, 12] > 1
    t[a], t[b] = t[b], t[a]
    d["temp"][:] = t
with copy("negate") as d:  # two wet values of temp negated: each adds 2^63 to its bits
    d.set_auto_mask(False)
    t = d["temp"][:]
    t[0, 10, 10], t[1, 12, 12] = -t[0, 10, 10], -t[1, 12, 12]
    d["temp"][:] = t
with copy("ordered_only") as d:  # no plain sum, one value changed: no word of a swap
    d.set_auto_mask(False)
    for v in ("temp", "salt", "kmt"):
        d[v].delncattr("checksum")
    d["salt"][3, 5, 7] = d["salt"][3, 5, 7] + 1.0
with copy("kmtsum") as d:
    d["kmt"].checksum = "0000000000000001"
with copy("form") as d:
    d["temp"].checksum = "not a checksum!!"
with copy("old") as d:
    for v in ("temp", "salt", "kmt"):
        d[v].delncattr("checksum")
        d[v].delncattr("checksum_ordered")
with copy("plain") as d:
    for v in ("temp", "salt", "kmt"):
        d[v].delncattr("checksum_ordered")
PY
for name in ulp swap negate ordered_only kmtsum form; do
  f="$work/$name.restart.nc"
  run 2 "${cont[@]}" --set output.dir="$work/empty" --set initial.restart="$f"
  rc=$?
  [ $rc -eq 2 ] || fail "$name: exit $rc, expected 2"
  case $name in
    ulp) want="$f: salt does not match its checksum \(the file says [0-9a-f]{16}, its values give [0-9a-f]{16}\): the file was damaged or changed after it was written" ;;
    swap|negate) want="$f: temp does not match its checksum_ordered \(the file says [0-9a-f]{16}, its values give [0-9a-f]{16}\): the file was damaged or changed after it was written \(values moved, swapped or negated in pairs: their sum is as written\)" ;;
    ordered_only) want="$f: salt does not match its checksum_ordered \(the file says [0-9a-f]{16}, its values give [0-9a-f]{16}\): the file was damaged or changed after it was written$" ;;
    kmtsum) want="$f: kmt does not match its checksum \(the file says 0000000000000001, its values give [0-9a-f]{16}\)" ;;
    form) want="$f: temp's attribute checksum is not 16 hexadecimal digits" ;;
  esac
  grep -qE "$want" "$work/log" || fail "$name: the message"
  echo "ok: $name refused"
done
[ -z "$(ls -A "$work/empty")" ] || fail "a refused restart wrote $(ls "$work/empty")"

for name in old plain; do
  run 2 "${cont[@]}" --set output.dir="$work/$name" --set initial.restart="$work/$name.restart.nc" ||
    fail "$name: a restart without (ordered) checksums was refused"
  "$py" "$src/scripts/compare.py" --quiet "$work/$name/ck.nc" "$work/good/ck.nc" ||
    fail "$name: the run from the file is not the run from the file with its checksums"
done
echo "ok: a restart without checksums, or with the plain ones alone, is read as it is"
echo "ok"

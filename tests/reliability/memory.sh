#!/usr/bin/env bash
# memory.sh MINIMODEL SOURCE_DIR WORK
# --dry-run reports the memory per rank, and that estimate is the one the
# check before allocation uses: MINIMODEL_MEMORY_LIMIT 2 % below it is
# refused (exit 2, with the numbers), 2 % above it is accepted; a real run
# over the limit stops before it writes anything.
set -u
mm="$1"; src="$2"; work="$3"
ini="$src/configs/default.ini"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
rm -rf "$work"; mkdir -p "$work"
for np in 1 2; do
  mpi=(timeout -k 10 60 mpirun --oversubscribe -np "$np" "$mm")
  "${mpi[@]}" --dry-run "$ini" >"$work/log" 2>&1 || fail "np$np: dry run"
  mb=$(sed -n 's/^# memory per rank: about \([0-9.]*\) MB.*/\1/p' "$work/log")
  [ -n "$mb" ] || fail "np$np: the dry run does not report the memory per rank"
  below=$(awk -v m="$mb" 'BEGIN { printf "%.0f", m * 1e6 * 0.98 }')
  above=$(awk -v m="$mb" 'BEGIN { printf "%.0f", m * 1e6 * 1.02 }')
  MINIMODEL_MEMORY_LIMIT=$below "${mpi[@]}" --dry-run "$ini" >"$work/log" 2>&1
  rc=$?; [ $rc -eq 2 ] || fail "np$np: limit $below B (estimate $mb MB): exit $rc, expected 2"
  grep -qE "grid 64 x 48 x 20 on $np ranks? needs about [0-9.e+-]+ GB per rank but [0-9.e+-]+ GB are available" "$work/log" ||
    fail "np$np: the refusal does not give the numbers"
  MINIMODEL_MEMORY_LIMIT=$above "${mpi[@]}" --dry-run "$ini" >"$work/log" 2>&1 ||
    fail "np$np: limit $above B (estimate $mb MB) refused"
  # a real run over the limit: refused before the model is allocated or anything written
  MINIMODEL_MEMORY_LIMIT=$below "${mpi[@]}" --quiet --set output.dir="$work/out$np" "$ini" \
    >"$work/log" 2>&1
  rc=$?; [ $rc -eq 2 ] || fail "np$np: run over the limit: exit $rc, expected 2"
  [ ! -e "$work/out$np" ] || fail "np$np: the refused run wrote output"
  echo "ok: np$np: estimate $mb MB per rank; refused below it, accepted above"
done

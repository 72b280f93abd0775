#!/usr/bin/env bash
# thread_fail.sh MINIMODEL SOURCE_DIR WORK
# A rank whose OpenMP threads cannot be made (OMP_STACKSIZE larger than the
# machine gives) beside a rank whose threads can, under mpirun -np 2: the
# OpenMP runtime ends that rank (libgomp: "Thread creation failed", exit 1).
# The threads are made before any file is: the job ends with a non-zero
# status and no file is left in output.dir. Made in the step's first
# parallel region, with the history open, they left HDF5's exit handler
# closing the file collectively while the other rank waited for ever.
set -u
mm="$1"; src="$2"; work="$3"
rm -rf "$work"
mkdir -p "$work/out"
args=(--quiet --set output.dir="$work/out" --set run.steps=20 "$src/configs/flat.ini")
OMP_NUM_THREADS=2 timeout -k 10 120 mpirun --oversubscribe -np 1 "$mm" "${args[@]}" : \
  -np 1 env OMP_STACKSIZE=100G "$mm" "${args[@]}" >"$work/log" 2>&1
rc=$?
fail() { echo "FAIL: $*"; cat "$work/log"; ls -la "$work/out"; exit 1; }
[ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "the job hung (exit $rc)"
[ $rc -ne 0 ] || fail "exit 0 with a rank that could not make its threads"
grep -q "Thread creation failed" "$work/log" ||
  { echo "skipped: the threads were made here (OMP_STACKSIZE=100G given)"; exit 77; }
[ -z "$(ls -A "$work/out")" ] || fail "files left in output.dir: $(ls "$work/out")"
echo "ok: exit $rc, no file made"

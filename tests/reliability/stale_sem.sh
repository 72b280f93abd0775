#!/usr/bin/env bash
# stale_sem.sh MINIMODEL PYTHON SOURCE_DIR WORK: a run killed while writing
# (kill -9, a node lost) can leave Open MPI's MPI-IO semaphore of the file
# it wrote taken (/dev/shm/sem.OMPIO_<base name>). A later run that writes a
# file of that name, in any directory, must not wait on it forever: it ends
# as a run without the semaphore does, with its restart file written.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
name="stale_sem_$$"
sem="/OMPIO_$name.restart.nc.tmp"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
rm -rf "$work"
mkdir -p "$work"
# the semaphore as a killed holder leaves it: created, at 0
"$py" - "$sem" <<'PY' || { echo "skipped: no POSIX named semaphores here"; exit 77; }
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.sem_open.restype = ctypes.c_void_p
libc.sem_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_uint]
s = libc.sem_open(sys.argv[1].encode(), os.O_CREAT, 0o644, 0)
if s is None or s == ctypes.c_void_p(-1).value:
    sys.exit("sem_open: " + os.strerror(ctypes.get_errno()))
PY
trap 'rm -f "/dev/shm/sem.${sem#/}"' EXIT
timeout -k 10 60 mpirun --oversubscribe -np 2 "$mm" --quiet --set output.dir="$work" \
  --set run.name="$name" --set run.steps=8 --set output.restart_interval=4 \
  "$src/configs/flat.ini" >"$work/log" 2>&1
rc=$?
[ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "the run hung on the semaphore left taken (exit $rc)"
[ $rc -eq 0 ] || fail "exit $rc"
step=$(ncdump -h "$work/$name.restart.nc" | sed -n 's/^[[:space:]]*:step = \([0-9]*\)LL ;/\1/p')
[ "$step" = 8 ] || fail "the restart file is of step '$step', not 8"
echo "ok: a run past a semaphore left taken ends (exit 0), its restart file of step 8 written"

#!/usr/bin/env bash
# write_fail.sh MINIMODEL PYTHON SOURCE_DIR WORK RANKS CASE
# A write that fails part-way: a disk that fills, a quota or a file-size
# limit, reproduced with a file-size limit on every rank (ulimit -f, SIGXFSZ
# at its default action: minimodel ignores it, so that a write past the
# limit fails with EFBIG instead of killing the rank; Open MPI's shared
# memory kept out with --mca btl self,tcp). Every rank ends with exit 1 within
# seconds, by no signal, with one message that names the file and the error;
# the history keeps every record completed before, readable, each equal to
# that of a run without the limit; the restart file in place is the last
# complete one. The file sizes are those of histories without the record of
# the initial state (output.initial_record = false).
#   history     the history does not fit (flat.ini, a record and a restart
#               every 5 steps, 1.7 MiB in all): the next record is refused
#               when its room is reserved
#   restart     the restart file does not fit (2 MiB), the history does
#               (default.ini with 40 levels, no records before the end); the
#               restart file of an earlier run stays in place
#   in_library  as history, without reserving room first
#               (MINIMODEL_FAULT_NO_RESERVE): the write fails inside HDF5
#   in_library_restart  as restart, inside HDF5; on 2 ranks HDF5 1.10 leaves
#               the ranks waiting for each other when its own flush fails on
#               one (they hung): the rank that failed ends the run 5 s after
#               the failure (MINIMODEL_IO_FAIL_WAIT, app/mm_file_watch.h),
#               and its message is the one (docs/reliability.md)
#   disk_full   as history, on a file system that fills up (a tmpfs of
#               1400 KiB mounted for the test, no file-size limit): the next
#               write is refused when the free space is checked; exit 77
#               (skipped) where no tmpfs can be mounted (not root, or a
#               container that forbids it)
# A hang is a failure (timeout); "within seconds": at most 20 s more than a
# run without the limit that goes further.
set -u
mm="$1"; py="$2"; src="$3"; work="$4/$6.np$5"; np="$5"; case="$6"
fail() { echo "FAIL ($case, $np ranks): $*"; cat "$work/log" 2>/dev/null; exit 1; }
mpi=(mpirun --oversubscribe -np "$np" --mca btl self,tcp)
# unlimited ARGS...: a run without a file-size limit; sets usual (s), the
# time of the longest, to judge "within seconds" on a loaded machine
usual=0
source "$(dirname "${BASH_SOURCE[0]}")/../set_once.sh"
# a later --set of a key overrides the common one
unlimited() {
  local t0=$SECONDS
  local -a args
  mapfile -d '' args < <(set_once "$@")
  timeout -k 10 300 "${mpi[@]}" "$mm" --quiet "${args[@]}" >"$work/log" 2>&1 || return 1
  [ $((SECONDS - t0)) -le $usual ] || usual=$((SECONDS - t0))
}
# limited KIB ARGS...: every rank under a file-size limit of KIB KiB; sets rc, took
limited() {
  local kib="$1" t0=$SECONDS
  shift
  local -a args
  mapfile -d '' args < <(set_once "$@")
  # SIGXFSZ set to its default action in each rank (a shell cannot undo an
  # ignore it inherited; Python can), so that minimodel's own ignore is tested
  timeout -k 10 $((usual + 120)) "${mpi[@]}" "$py" -c '
import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
plant = os.environ.get("PLANT_MPI_LOCK")  # a lock of another job, with the pid of this rank
if plant:
    open(plant + "-1-" + str(os.getpid()) + ".lock", "w").close()
if sys.argv[1] != "unlimited":
    limit = int(sys.argv[1]) * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
os.execv(sys.argv[2], sys.argv[2:])' "$kib" "$mm" --quiet "${args[@]}" >"$work/log" 2>&1
  rc=$?
  took=$((SECONDS - t0))
}
# ended FILE REASON: the limited run (which fails before the steps of the
# run without limit are done) ended as promised, within seconds of that
# run's time; its message names FILE and REASON (extended regexes)
ended() {
  [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "the run hung (exit $rc after $took s)"
  ! grep -qiE "signal|core dumped" "$work/log" || fail "a rank ended by a signal (exit $rc)"
  [ $rc -eq 1 ] || fail "exit $rc, expected 1"
  [ $took -le $((usual + 20)) ] || fail "took $took s, the run without limit $usual s"
  local n
  n=$(grep -c "^minimodel: error" "$work/log")
  [ "$n" -eq 1 ] || fail "$n error messages, expected 1"
  grep -qE "^minimodel: error( \(rank [0-9]+\))?: .*$1: .*$2" "$work/log" ||
    fail "the message does not name $1 and $2"
  echo "ok: exit 1 after $took s: $(grep "^minimodel: error" "$work/log")"
}
# no_mpi_lock DIR: no lock file of Open MPI's MPI-IO (<file>-<job>-<pid>.lock)
# left beside the files, though the run ended without closing a file that
# failed inside HDF5 (it was left); those of another job (job 1, planted
# with the ranks' pids by `limited` where PLANT_MPI_LOCK names the file)
# left as they were
no_mpi_lock() {
  local left planted
  left=$(ls "$1" | grep -E -- '-[0-9]+-[0-9]+\.lock$' | grep -vE -- '-1-[0-9]+\.lock$')
  [ -z "$left" ] || fail "left beside the outputs: $left"
  planted=$(ls "$1" | grep -cE -- '-1-[0-9]+\.lock$')
  [ -z "${PLANT_MPI_LOCK:-}" ] || [ "$planted" = "$np" ] ||
    fail "$planted of the $np locks of another job left (removed with the run's own)"
}
step_of() { ncdump -h "$1" | sed -n 's/^[[:space:]]*:step = \([0-9]*\)LL ;/\1/p'; }
# records FILE REFERENCE: FILE reads; its records are the first ones of
# REFERENCE, bit for bit; prints their steps
records() {
  "$py" - "$1" "$2" <<'EOF'
import sys

import netCDF4
import numpy as np

path, ref = sys.argv[1], sys.argv[2]
with netCDF4.Dataset(path) as a, netCDF4.Dataset(ref) as b:
    a.set_auto_mask(False)
    b.set_auto_mask(False)
    steps = [int(s) for s in a["step"][:]]
    if steps != [int(s) for s in b["step"][: len(steps)]]:
        sys.exit(f"{path}: records of steps {steps}, not the first ones of {ref}")
    for name, v in a.variables.items():
        x = np.asarray(v[:])
        y = np.asarray(b[name][:])
        if "time" in v.dimensions:
            y = y[: len(steps)]
        if x.shape != y.shape or x.tobytes() != y.tobytes():
            sys.exit(f"{path}: {name} differs from {ref}")
print(" ".join(str(s) for s in steps))
EOF
}
umount "$work/disk" 2>/dev/null # left mounted by a run that was killed
rm -rf "$work"
mkdir -p "$work/ref"

case "$case" in
history | in_library | disk_full)
  ini="$src/configs/flat.ini"
  out="$work" # where the case writes
  if [ "$case" = disk_full ]; then
    out="$work/disk"
    mkdir -p "$out"
    if ! mount -t tmpfs -o size=1400k tmpfs "$out" 2>/dev/null; then
      echo "skipped: no tmpfs can be mounted here"
      exit 77
    fi
    trap 'umount "$out"' EXIT
  fi
  set_=(--set output.dir="$out" --set output.initial_record=false --set run.steps=100
        --set output.interval=5 --set output.restart_interval=5)
  unlimited "${set_[@]}" --set output.dir="$work/ref" --set run.name=straight "$ini" ||
    fail "the run without a limit"
  if [ "$case" = disk_full ]; then
    limited unlimited "${set_[@]}" --set run.name=flat "$ini"
    ended "$out/flat(\.restart)?\.nc(\.tmp)?" "not enough space on the file system of '$out'"
  elif [ "$case" = history ]; then
    # a record takes 83 KiB; its room is reserved with 1 MiB for HDF5's metadata
    limited 1400 "${set_[@]}" --set run.name=flat "$ini"
    ended "$work/flat.nc" "cannot reserve [0-9.]+ MiB for the next write: File too large"
  else
    export PLANT_MPI_LOCK="$out/flat.nc"
    MINIMODEL_FAULT_NO_RESERVE=1 limited 200 "${set_[@]}" --set run.name=flat "$ini"
    ended "$work/flat.nc" "NetCDF: HDF error \(file-size limit [0-9]+ bytes, the file has [0-9]+\)"
  fi
  steps=$(records "$out/flat.nc" "$work/ref/straight.nc") || fail "history: $steps"
  last=${steps##* }
  [ -n "$steps" ] && [ "$last" -lt 100 ] || fail "history: records of steps '$steps'"
  echo "ok: the history holds the records of steps $steps, readable, bit for bit"
  no_mpi_lock "$out"
  # the restart file in place: complete, the state of a run of as many steps,
  # of the last record's step (of an earlier one on a full disk, where the
  # record was written and the restart file of its step was not)
  rstep=$(step_of "$out/flat.restart.nc")
  if [ "$case" = disk_full ]; then
    [ -n "$rstep" ] && [ "$rstep" -le "$last" ] ||
      fail "the restart file is of step '$rstep', the history's last record $last"
  else
    [ "$rstep" = "$last" ] || fail "the restart file is not of step $last"
  fi
  [ ! -e "$out/flat.restart.nc.tmp" ] || fail "a .tmp restart file is left"
  unlimited "${set_[@]}" --set output.dir="$work/ref" --set run.name="ref$rstep" \
    --set run.steps="$rstep" "$ini" || fail "the run of $rstep steps"
  "$py" "$src/scripts/compare.py" --quiet "$out/flat.restart.nc" "$work/ref/ref$rstep.restart.nc" ||
    fail "the restart file in place is not the state of step $rstep"
  echo "ok: the restart file in place is the complete one of step $rstep"
  ;;
restart | in_library_restart)
  ini="$src/configs/default.ini"
  set_=(--set output.dir="$work" --set output.initial_record=false --set run.name=case
        --set output.interval=0 --set grid.nz=40)
  # an earlier run left the restart file of step 10
  unlimited "${set_[@]}" --set run.steps=10 --set output.restart_interval=10 "$ini" ||
    fail "the earlier run"
  cp "$work/case.restart.nc" "$work/ref/earlier.restart.nc"
  # a restart file takes 1.9 MiB, the history's header 12 KiB
  if [ "$case" = restart ]; then
    limited 1500 "${set_[@]}" --set run.steps=20 --set output.restart_interval=5 "$ini"
    ended "$work/case.restart.nc.tmp" "cannot reserve [0-9.]+ MiB for the next write: File too large"
  else
    MINIMODEL_FAULT_NO_RESERVE=1 MINIMODEL_IO_FAIL_WAIT=5 limited 900 "${set_[@]}" \
      --set run.steps=20 --set output.restart_interval=5 "$ini"
    ended "$work/case.restart.nc.tmp" "(NetCDF: HDF error \(file-size limit [0-9]+ bytes, the file has [0-9]+\)|a write failed inside the netCDF/HDF5 libraries \(MPI_File_write_at(_all)?: 0 of [0-9]+ items written\), and the ranks had not ended case case 5 s after it)"
  fi
  cmp -s "$work/case.restart.nc" "$work/ref/earlier.restart.nc" ||
    fail "the restart file in place is not the complete one of the earlier run"
  [ ! -e "$work/case.restart.nc.tmp" ] || fail "a .tmp restart file is left"
  echo "ok: the restart file in place is the earlier one, unchanged; no .tmp left"
  no_mpi_lock "$work"
  steps=$(ncdump -v step "$work/case.nc" 2>&1) || fail "the history does not read: $steps"
  echo "ok: the history reads (no record was due)"
  ;;
*) fail "no such case" ;;
esac
echo "ok"

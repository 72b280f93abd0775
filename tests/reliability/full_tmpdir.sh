#!/usr/bin/env bash
# full_tmpdir.sh MINIMODEL PYTHON SOURCE_DIR WORK
# A run started without mpirun (a singleton) whose temporary directory
# (TMPDIR, or orte_tmpdir_base in Open MPI's parameter file: where Open MPI
# keeps its session files and PMIx its data store) is full: MPI starts
# (the data store kept in memory, PMIX_MCA_gds = hash) and the run ends
# well, with the bits of a run with room there. It failed in MPI_Init with
# PMIx's OUT-OF-RESOURCE errors. Skipped (77) where no tmpfs can be mounted
# (not root, or a container without the right).
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
umount "$work/tmp" 2>/dev/null # left mounted by a run that was killed
rm -rf "$work"; mkdir -p "$work/tmp"
if ! mount -t tmpfs -o size=64k tmpfs "$work/tmp" 2>/dev/null; then
  echo "skipped: no tmpfs can be mounted here"
  exit 77
fi
trap 'umount "$work/tmp"' EXIT
dd if=/dev/zero of="$work/tmp/fill" bs=4k count=64 2>/dev/null
[ "$(df --output=avail -B1 "$work/tmp" | tail -1 | tr -d ' ')" = 0 ] || fail "the tmpfs is not full"
args=(--quiet --set run.steps=5 --set output.dir="$work" "$src/configs/flat.ini")
env -u PMIX_MCA_gds TMPDIR="$work/tmp" timeout -k 5 60 "$mm" --set run.name=full "${args[@]}" \
  >"$work/log" 2>&1 || fail "exit $? with a full TMPDIR"
grep -q "PMIX ERROR" "$work/log" && fail "PMIx's errors"
timeout -k 5 60 "$mm" --set run.name=room "${args[@]}" >"$work/log" 2>&1 || fail "the run with room"
"$py" "$src/scripts/compare.py" --quiet "$work/full.nc" "$work/room.nc" ||
  fail "the history differs from that of a run with room in TMPDIR"
echo "ok: a singleton with a full TMPDIR ran, the bits of one with room"
# the same directory named in Open MPI's parameter file, not the environment
mkdir -p "$work/home/.openmpi"
echo "orte_tmpdir_base = $work/tmp" >"$work/home/.openmpi/mca-params.conf"
env -u PMIX_MCA_gds -u TMPDIR -u TEMP -u TMP -u OMPI_MCA_orte_tmpdir_base HOME="$work/home" \
  timeout -k 5 60 "$mm" --set run.name=file "${args[@]}" >"$work/log" 2>&1 ||
  fail "exit $? with orte_tmpdir_base, in the parameter file, full"
"$py" "$src/scripts/compare.py" --quiet "$work/file.nc" "$work/room.nc" ||
  fail "the history differs from that of a run with room in orte_tmpdir_base"
echo "ok: a singleton with a full orte_tmpdir_base (parameter file) ran"

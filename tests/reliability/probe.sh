#!/usr/bin/env bash
# probe.sh MINIMODEL MINIMODEL_PROBE SOURCE_DIR WORK PYTHON
# The test read of an input file's metadata (io/probe.c) runs in the helper
# program minimodel-probe, started afresh (posix_spawn), not in a forked copy
# of a run whose other threads may hold locks; without a helper that starts,
# a forked copy does it, and a damaged file is refused either way.
#   - minimodel-probe alone: exit 0 on a good file, 3 on a file netCDF
#     refuses, 4 for bad arguments, a crash on a file that crashes libhdf5;
#   - a classic file with a variable of more dimensions than netCDF's
#     NC_MAX_VAR_DIMS (1024), which the library reads: refused by the
#     helper (exit 3; it overwrote its own stack, exit 139), and by the run
#     with what is wrong (exit 2);
#   - a run starts the helper with (file, its pid, the time limit);
#   - a helper that is missing, or that cannot start (exit 127, as when its
#     loader fails), leaves the fork: the crashing file is still refused
#     with exit 2, and a good one runs;
#   - a helper that crashes refuses the file, one ended by a signal that
#     someone sent (SIGINT) does not, one ended by its own limit (SIGALRM)
#     gives the time limit's message.
set -u
mm="$1"; helper="$2"; src="$3"; work="$4"; py="$5"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
run() { timeout -k 5 120 mpirun --oversubscribe -np 2 "$mm" --quiet "$@" >"$work/log" 2>&1; }
rm -rf "$work"; mkdir -p "$work"
cd "$work" || exit 1
crash="$src/fuzz/regress/restart/hdf5_global_heap_crash.nc"
flat="$src/configs/flat.ini"

# a good restart file (12 x 10 x 4, step 2)
small=(--set grid.nx=12 --set grid.ny=10 --set grid.nz=4 --set output.restart_interval=2)
run "${small[@]}" --set run.steps=2 --set run.name=input --set output.dir=in "$flat" ||
  fail "making the input file"
good="$work/in/input.restart.nc"
[ -f "$good" ] || fail "no restart file written"

# the helper alone
"$helper" "$good"; rc=$?
[ $rc = 0 ] || fail "minimodel-probe on a good file: exit $rc, expected 0"
printf 'not netcdf\n' >garbage.nc
"$helper" garbage.nc; rc=$?
[ $rc = 3 ] || fail "minimodel-probe on a garbage file: exit $rc, expected 3"
"$helper" >/dev/null 2>&1; rc=$?
[ $rc = 4 ] || fail "minimodel-probe without a file: exit $rc, expected 4"
"$helper" "$good" 1 x >/dev/null 2>&1; rc=$?
[ $rc = 4 ] || fail "minimodel-probe with a bad limit: exit $rc, expected 4"
# a pid beyond pid_t (4294967296 was pid 0, whose kill(0, 0) succeeds: the
# check that the caller lives was skipped), named
"$helper" "$good" 4294967296 5 2>probe_err; rc=$?
[ $rc = 4 ] && grep -q "PARENT_PID = 4294967296: not a process id" probe_err ||
  fail "minimodel-probe with a pid beyond pid_t: exit $rc, $(cat probe_err)"
timeout -k 5 60 "$helper" "$crash" 2>/dev/null; rc=$?
# a signal; under a sanitizer, its report on the libraries' overlapping copy
# ends the helper first, with exit status 1
case $rc in
  0 | 3 | 4 | 124 | 137) fail "minimodel-probe on a file that crashes libhdf5: exit $rc, expected a crash" ;;
esac
echo "ok: minimodel-probe alone (0 good, 3 refused, 4 usage, exit $rc on a crash)"

# a variable of 1100 dimensions (each the one dimension x, of length 1), in
# the classic format (CDF-1), written byte by byte
"$py" - many_dims.nc <<'EOF'
import struct, sys
def name(s):
    b = s.encode()
    return struct.pack(">i", len(b)) + b + b"\0" * (-len(b) % 4)
nd = 1100
head = b"CDF\x01" + struct.pack(">i", 0)
head += struct.pack(">ii", 0x0A, 1) + name("x") + struct.pack(">i", 1)  # dimensions
head += struct.pack(">ii", 0, 0)  # no global attributes
var = name("temp") + struct.pack(">i", nd) + struct.pack(">%di" % nd, *[0] * nd)
var += struct.pack(">ii", 0, 0) + struct.pack(">ii", 1, 4)  # no attributes; byte, 4 bytes
head += struct.pack(">ii", 0x0B, 1)
var += struct.pack(">i", len(head) + len(var) + 4)  # where its data begins
open(sys.argv[1], "wb").write(head + var + b"\0" * 8)
EOF
"$helper" many_dims.nc; rc=$?
[ $rc = 3 ] || fail "minimodel-probe on a variable of 1100 dimensions: exit $rc, expected 3"
run --set initial.file="$work/many_dims.nc" --set output.dir=out_dims "$flat"; rc=$?
[ $rc = 2 ] || fail "initial.file with a variable of 1100 dimensions: exit $rc, expected 2"
grep -q "many_dims.nc: temp has 1100 dimensions, more than netCDF's limit of 1024; expected (z, y, x)" log ||
  fail "initial.file with a variable of 1100 dimensions: not the message"
echo "ok: a variable of more dimensions than NC_MAX_VAR_DIMS refused (the helper: exit 3)"

# a run starts the helper: a stand-in records its arguments, then reads
cat >recorder.sh <<EOF
#!/bin/sh
printf '%s\n' "\$@" >"$work/probe_args"
exec "$helper" "\$@"
EOF
chmod +x recorder.sh
restart=(--set initial.restart="$good" --set run.steps=4 --set run.name=cont)
MINIMODEL_PROBE_HELPER="$work/recorder.sh" run "${small[@]}" "${restart[@]}" --set output.dir=out "$flat" ||
  fail "a run with the recording helper"
[ -f probe_args ] || fail "the run did not start the helper"
mapfile -t args <probe_args
[ ${#args[@]} = 3 ] || fail "helper arguments: ${args[*]}, expected FILE PID LIMIT"
[ "${args[0]}" = "$good" ] || fail "helper file argument: ${args[0]}, expected $good"
[[ ${args[1]} =~ ^[0-9]+$ ]] || fail "helper parent argument: ${args[1]}"
[[ ${args[2]} =~ ^600(\.[0-9]+)?$ ]] ||
  fail "helper limit: ${args[2]}, expected 600 s and a little (the default for a small file)"
echo "ok: the run starts the helper with (file, pid, limit)"

# no helper that starts: a forked copy reads, and still refuses the crash
printf '#!/bin/sh\nexit 127\n' >broken.sh
chmod +x broken.sh
for h in "$work/missing-probe" "$work/broken.sh"; do
  rm -rf out
  MINIMODEL_PROBE_HELPER="$h" run "${small[@]}" "${restart[@]}" --set output.dir=out "$flat" ||
    fail "a good restart with MINIMODEL_PROBE_HELPER=$h"
  [ -f out/cont.nc ] || fail "MINIMODEL_PROBE_HELPER=$h: no output"
  MINIMODEL_PROBE_HELPER="$h" MINIMODEL_READ_TIMEOUT=60 \
    run --set initial.restart="$crash" --set output.dir=out2 "$flat"
  rc=$?
  [ $rc = 2 ] || fail "MINIMODEL_PROBE_HELPER=$h: the crashing file gave exit $rc, expected 2"
  grep -q "damaged file: the netCDF/HDF5 libraries crash" log ||
    fail "MINIMODEL_PROBE_HELPER=$h: no 'damaged file' message"
  echo "ok: without a helper that starts ($h), a forked copy reads and refuses the crash"
done
# a helper that fails otherwise is the test read's answer: refused
printf '#!/bin/sh\nkill -SEGV $$\n' >crashing.sh
chmod +x crashing.sh
MINIMODEL_PROBE_HELPER="$work/crashing.sh" run "${small[@]}" "${restart[@]}" --set output.dir=out3 "$flat"
rc=$?
[ $rc = 2 ] || fail "a helper that dies with SIGSEGV: exit $rc, expected 2"
grep -q "input.restart.nc: damaged file: .*(signal 11 in a test read by .*crashing.sh)" log ||
  fail "a helper that dies with SIGSEGV: message"
# the helper ended by a signal someone sent is no judgement: the run goes
# on; its own time limit (SIGALRM) is the limit's message
printf '#!/bin/sh\nkill -INT $$\n' >interrupted.sh
chmod +x interrupted.sh
MINIMODEL_PROBE_HELPER="$work/interrupted.sh" run "${small[@]}" "${restart[@]}" --set output.dir=out4 "$flat" ||
  fail "a helper ended by SIGINT: the run did not go on"
[ -f out4/cont.nc ] || fail "a helper ended by SIGINT: no output"
printf '#!/bin/sh\nkill -ALRM $$\n' >alarmed.sh
chmod +x alarmed.sh
MINIMODEL_PROBE_HELPER="$work/alarmed.sh" run "${small[@]}" "${restart[@]}" --set output.dir=out5 "$flat"
rc=$?
[ $rc = 2 ] || fail "a helper ended by its own limit (SIGALRM): exit $rc, expected 2"
grep -q "input.restart.nc: still not read after" log || fail "a helper ended by SIGALRM: message"
echo "ok: a helper ended by SIGINT is no judgement, by SIGALRM the limit's message"

# a stop signal to the run's process group during the test read does not
# reach the helper (a group of its own): the file is still judged, and the
# run never reads it itself (before: SIGSEGV in libhdf5)
printf '#!/bin/sh\necho $PPID >"%s/slow_started"\nsleep 3\nexec "%s" "$@"\n' "$work" "$helper" >slow.sh
chmod +x slow.sh
rm -f slow_started
MINIMODEL_PROBE_HELPER="$work/slow.sh" MINIMODEL_READ_TIMEOUT=60 \
  run --set initial.restart="$crash" --set output.dir=out6 "$flat" &
job=$!
for _ in $(seq 1200); do [ -s slow_started ] && break; sleep 0.05; done
[ -s slow_started ] || fail "the slow helper did not start"
rank0=$(cat slow_started)
group=$(ps -o pgid= -p "$rank0" | tr -d ' ')
[ -n "$group" ] || fail "no process group for rank 0 ($rank0)"
kill -TERM -- "-$group" 2>/dev/null
wait $job
rc=$?
case $rc in
  1 | 2 | 143) ;;
  *) fail "SIGTERM to rank 0's process group during the test read: exit $rc, expected 1, 2 or 143" ;;
esac
# (a sanitizer build's helper prints its own report, from probe_walk.c; a
# report of the run's own read names the readers' files)
! grep -qE "Segmentation fault|io/(restart|initial|history|nc_util)\.c:[0-9]" log ||
  fail "SIGTERM during the test read: the run read the damaged file itself"
echo "ok: SIGTERM to rank 0's group during the test read: exit $rc, the file not read by the run"

# MINIMODEL_READ_TIMEOUT=inf is no limit, not a hang
MINIMODEL_READ_TIMEOUT=inf run "${small[@]}" "${restart[@]}" --set output.dir=out7 "$flat" ||
  fail "MINIMODEL_READ_TIMEOUT=inf: the run failed or hung"

# a wrapper that runs the helper as its own child (no exec): the helper's
# parent is then the wrapper, and the check still runs and refuses
printf '#!/bin/sh\n"%s" "$@"\nexit $?\n' "$helper" >wrapper.sh
chmod +x wrapper.sh
MINIMODEL_PROBE_HELPER="$work/wrapper.sh" MINIMODEL_READ_TIMEOUT=60 \
  run --set initial.restart="$crash" --set output.dir=out8 "$flat"
rc=$?
[ $rc = 2 ] || fail "a wrapper around the helper: the crashing file gave exit $rc, expected 2"
echo "ok"

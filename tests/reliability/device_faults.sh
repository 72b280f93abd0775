#!/usr/bin/env bash
# device_faults.sh NP MINIMODEL SOURCE_DIR WORK
# A device error anywhere in the GPU step ends the run cleanly. On the
# emulated device (solver.backend = emulated), MINIMODEL_FAULT_DEVICE_OP=N
# makes the N-th call of a fallible device operation fail on rank
# NP - 1 (model/mm_device_emulated.c), as a CUDA error would; N goes
# 1, 2, 3, ... until a run no longer reaches it. Every run that does must:
#   - exit 1 (not a signal, not a hang: each run is under `timeout`), on
#     every rank, with a message naming the operation and the call;
#   - leave its history readable (ncdump), and no lock file;
#   - give no sanitizer report (the ASan suite runs this too, with leak
#     checks: a graph captured up to a failed operation must be freed).
# The calls cover the set-up (allocations, uploads, the graph capture), the
# steps (kernels, strip copies, events, graph launches), diagnostics, the
# history records and a restart; the test checks that every kind of
# operation failed once, so that it cannot pass by reaching none of them.
# On 2 ranks every 3rd call (and the first 12) is tried, to bound the time,
# and the kinds checked are those of the set-up, the halo and the steps. On
# 1 rank the step has its mixing kernel (MINIMODEL_CUDA_KAPPA_IN_SOLVE=0),
# on 2 ranks the solve builds kappa_w itself (the default).
set -u
np="$1"; mm="$2"; src="$3"; work="$4"
ini="$src/configs/flat.ini"
fail() { echo "FAIL: $*"; cat "$work/log" 2>/dev/null; exit 1; }
rm -rf "$work"; mkdir -p "$work"
# 4 steps: records at 0, 2, 4, a restart at 4; periodic in x, so that the
# halo strips cross (on 1 rank too) and the frame kernels run
args=(--quiet --set solver.backend=emulated --set run.steps=4 --set output.interval=2
      --set output.restart_interval=4 --set grid.periodic_x=true --set run.name=dev
      --set grid.ranks_x=1 --set grid.ranks_y="$np")
if [ "$np" -gt 1 ]; then
  # each rank's own exit status, in $work/status.RANK; mpirun waits for
  # every rank (by default it ends the job when the first exits non-zero,
  # before the others have recorded theirs)
  export OMPI_MCA_orte_abort_on_non_zero_status=0
  launch=(mpirun --oversubscribe -np "$np" bash -c \
    '"$@"; rc=$?; echo $rc >"$0/status.$OMPI_COMM_WORLD_RANK"; exit $rc' "$work" "$mm")
  stride=3
else
  launch=("$mm")
  stride=1
  export MINIMODEL_CUDA_KAPPA_IN_SOLVE=0 # so that the mixing kernel runs, and fails once
fi
# the operations that must have failed once: all of them with every call
# tried; on 2 ranks (every 3rd call) those of the set-up, the halo and a step
want="alloc copy copy_2d record launch synchronize"
[ "$stride" -eq 1 ] &&
  want="$want alloc_host register_host horizontal_kernel horizontal_tiles_kernel mixing_kernel diagnostics_kernel solve wait capture_begin capture_end"
seen=" "
n=1
tried=0
while :; do
  out="$work/o$n"
  rm -f "$work"/status.*
  MINIMODEL_FAULT_RANK=$((np - 1)) MINIMODEL_FAULT_DEVICE_OP=$n \
    timeout -k 10 60 "${launch[@]}" "${args[@]}" --set output.dir="$out" "$ini" >"$work/log" 2>&1
  rc=$?
  [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "call $n: the run hung (exit $rc)"
  ! grep -qE "Sanitizer|runtime error:" "$work/log" || fail "call $n: a sanitizer report"
  if [ "$np" -gt 1 ]; then # the ranks' own statuses, all the same (mpirun's is 0 here)
    rc=$(cat "$work/status.0" 2>/dev/null)
    for ((r = 0; r < np; r++)); do
      [ -n "$rc" ] && [ "$(cat "$work/status.$r" 2>/dev/null)" = "$rc" ] ||
        fail "call $n: rank $r ended with '$(cat "$work/status.$r" 2>/dev/null)', rank 0 with '$rc'"
    done
  fi
  if [ "$rc" -eq 0 ]; then
    [ $tried -gt 0 ] || fail "the first call did not fail: the fault is not injected"
    grep -q "injected fault" "$work/log" && fail "call $n: exit 0 after an injected fault"
    break
  fi
  [ "$rc" -eq 1 ] || fail "call $n: exit $rc, expected 1"
  line=$(grep -oE "emulated device: [a-z_ 2]+ failed \(call $n\) \[injected fault\]" "$work/log" | head -1)
  [ -n "$line" ] || fail "call $n: no message naming the failed operation and call $n"
  op=$(sed -E 's/^emulated device: (.*) failed .*/\1/; s/ /_/g' <<<"$line")
  case "$seen" in *" $op "*) ;; *) seen="$seen$op " ;; esac
  if [ -e "$out/dev.nc" ]; then
    ncdump -h "$out/dev.nc" >/dev/null 2>&1 || fail "call $n ($op): the history is not readable"
  fi
  [ ! -e "$out/dev.lock" ] || fail "call $n ($op): the lock file is left"
  rm -rf "$out"
  tried=$((tried + 1))
  [ $n -lt 5000 ] || fail "more than 5000 device calls in a run of 4 steps"
  if [ $n -lt 12 ]; then n=$((n + 1)); else n=$((n + stride)); fi
done
missing=""
for w in $want; do
  case "$seen" in *" $w "*) ;; *) missing="$missing $w" ;; esac
done
[ -z "$missing" ] || fail "no call of these operations failed:$missing (failed:$seen)"
echo "ok: $tried runs with a device error, each ended with exit 1; the first run past them ($n calls) ends with 0; operations failed:$seen"

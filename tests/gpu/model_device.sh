#!/usr/bin/env bash
# model_device.sh MINIMODEL PYTHON SOURCE_DIR WORK CONFIG BACKEND [--set KEY=VALUE ...]
# The whole model's GPU step (solver.backend = BACKEND: cuda, or emulated)
# on a regression config, every result compared bit for bit with the CPU
# step (scripts/compare.py without tolerance):
#   - on 1, 2, 3 and 4 ranks, against the CPU on 1 rank;
#   - kernels queued one by one (MINIMODEL_CUDA_GRAPH=0) instead of graphs;
#   - kappa_w built inside the solve (the default; the timing file must say
#     so) and by a mixing kernel of its own (MINIMODEL_CUDA_KAPPA_IN_SOLVE=0),
#     and on the emulated device by a solver that cannot build it
#     (solver.tdma = reference);
#   - the halo through host strips (MINIMODEL_CUDA_AWARE_MPI=0) and through
#     device memory where MPI takes it (=1: always on the emulated device);
#   - emulated only: the kernels' threads in reverse order
#     (MINIMODEL_EMULATED_THREADS=reverse), which a race would change;
#   - a run continued from a restart against a straight one;
#   - a NaN planted after step 3 (MINIMODEL_FAULT_NAN_STEP): exit 1, the same
#     blow-up message as on the CPU, and the same crash file;
#   - cuda only, where MINIMODEL_TEST_STALE_ERROR names libstale_error.so: a
#     stale CUDA error left after each MPI_Waitall and MPI_Allreduce (as a
#     CUDA-aware MPI's pointer query may) is not taken for the step's own,
#     with graphs and without.
# Extra --set arguments apply to every run (another grid, periodicity...).
# Exit 77 (skipped) when BACKEND = cuda and there is no usable CUDA device
# or no CUDA build.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"; cfg="$5"; backend="$6"; shift 6
extra=("$@")
ini="$src/configs/$cfg.ini"
mpi_opts=() # options of mpirun for the next runs
run() {
  local np="$1"; shift
  timeout -k 10 300 mpirun --oversubscribe -np "$np" "${mpi_opts[@]}" "$mm" --quiet "${extra[@]}" \
    "$@" "$ini" >"$work/log" 2>&1
}
same() { "$py" "$src/scripts/compare.py" --quiet "$@"; }
fail() { echo "FAIL ($cfg, $backend): $*"; cat "$work/log"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
dev=(--set solver.backend="$backend" --set solver.tdma=auto)
name=$(sed -n 's/^name *= *\([^ ]*\).*/\1/p' "$ini" | head -1)

run 1 "${dev[@]}" --set output.dir="$work/dev1"
rc=$?
if [ "$backend" = cuda ] && [ $rc -eq 2 ] && grep -q "no usable device" "$work/log"; then
  echo "SKIP: no CUDA device"; cat "$work/log"; exit 77
fi
[ $rc -eq 0 ] || fail "run on 1 rank: exit $rc"
grep -q "\"backend\": \"$backend\"" "$work/dev1/$name.timing.json" || fail "timing file: backend"
grep -q '"device"' "$work/dev1/$name.timing.json" || fail "timing file names no device"
run 1 --set output.dir="$work/cpu1" || fail "CPU run"
same "$work/dev1/$name.nc" "$work/cpu1/$name.nc" || fail "1 rank: not the CPU's bits"

for np in 2 3 4; do
  run "$np" "${dev[@]}" --set output.dir="$work/dev$np" || fail "run on $np ranks"
  same "$work/dev$np/$name.nc" "$work/cpu1/$name.nc" || fail "$np ranks: not the CPU's bits"
done

grep -Eq '"graph_launches": [1-9]' "$work/dev1/$name.timing.json" ||
  fail "with graphs (the default): no graph launched"
grep -q '"kappa_in_solve": true' "$work/dev1/$name.timing.json" ||
  fail "kappa_w is not built inside the solve (timing file: kappa_in_solve)"
MINIMODEL_CUDA_KAPPA_IN_SOLVE=0 run 2 "${dev[@]}" --set output.dir="$work/mixkernel" ||
  fail "MINIMODEL_CUDA_KAPPA_IN_SOLVE=0"
grep -q '"kappa_in_solve": false' "$work/mixkernel/$name.timing.json" ||
  fail "MINIMODEL_CUDA_KAPPA_IN_SOLVE=0: kappa_w still built inside the solve"
same "$work/mixkernel/$name.nc" "$work/cpu1/$name.nc" || fail "mixing kernel: not the CPU's bits"
if [ "$backend" = emulated ]; then
  run 2 --set solver.backend=emulated --set solver.tdma=reference \
    --set output.dir="$work/reference" || fail "solver.tdma = reference"
  grep -q '"kappa_in_solve": false' "$work/reference/$name.timing.json" ||
    fail "solver.tdma = reference: kappa_w built inside a solve that cannot"
  same "$work/reference/$name.nc" "$work/cpu1/$name.nc" ||
    fail "solver.tdma = reference: not the CPU's bits"
fi
MINIMODEL_CUDA_GRAPH=0 run 2 "${dev[@]}" --set output.dir="$work/nograph" || fail "without graphs"
grep -q '"graph_launches": 0' "$work/nograph/$name.timing.json" ||
  fail "MINIMODEL_CUDA_GRAPH=0: graphs were launched"
same "$work/nograph/$name.nc" "$work/cpu1/$name.nc" || fail "kernels one by one: not the CPU's bits"
for aware in 0 1; do
  MINIMODEL_CUDA_AWARE_MPI=$aware run 2 "${dev[@]}" --set output.dir="$work/aware$aware" ||
    fail "MINIMODEL_CUDA_AWARE_MPI=$aware"
  if [ "$backend" = emulated ]; then
    want="pinned host strips"; [ $aware = 1 ] && want="CUDA-aware MPI"
    grep -q "\"halo_path\": \"$want\"" "$work/aware$aware/$name.timing.json" ||
      fail "MINIMODEL_CUDA_AWARE_MPI=$aware: the halo did not go through $want"
  fi
  same "$work/aware$aware/$name.nc" "$work/cpu1/$name.nc" ||
    fail "MINIMODEL_CUDA_AWARE_MPI=$aware: not the CPU's bits"
done
if [ "$backend" = cuda ] && [ -n "${MINIMODEL_TEST_STALE_ERROR:-}" ]; then
  for graph in 1 0; do
    rm -f "$work/planted"
    mpi_opts=(-x LD_PRELOAD="$MINIMODEL_TEST_STALE_ERROR" -x MINIMODEL_STALE_COUNT="$work/planted")
    MINIMODEL_CUDA_GRAPH=$graph run 2 "${dev[@]}" --set output.dir="$work/stale$graph" ||
      fail "a stale CUDA error left by MPI (MINIMODEL_CUDA_GRAPH=$graph) stopped the run"
    mpi_opts=()
    grep -q "planted [1-9]" "$work/planted" 2>/dev/null ||
      fail "libstale_error.so planted no error (MINIMODEL_CUDA_GRAPH=$graph)"
    same "$work/stale$graph/$name.nc" "$work/cpu1/$name.nc" ||
      fail "a stale CUDA error left by MPI (MINIMODEL_CUDA_GRAPH=$graph): not the CPU's bits"
  done
fi
if [ "$backend" = emulated ]; then
  MINIMODEL_EMULATED_THREADS=reverse run 3 "${dev[@]}" --set output.dir="$work/reverse" ||
    fail "threads in reverse order"
  grep -q '"device": "emulated device (host, threads reversed)"' "$work/reverse/$name.timing.json" ||
    fail "MINIMODEL_EMULATED_THREADS=reverse: the threads did not run in reverse"
  same "$work/reverse/$name.nc" "$work/cpu1/$name.nc" || fail "threads in reverse: other bits"
fi

steps=$(sed -n 's/^steps *= *\([0-9]*\).*/\1/p' "$ini" | head -1)
half=$((steps / 2))
rs=(--set output.dir="$work/rs" --set output.interval=0)
run 2 "${dev[@]}" "${rs[@]}" --set run.name=straight --set output.restart_interval="$steps" ||
  fail "straight run"
run 2 "${dev[@]}" "${rs[@]}" --set run.name=half --set run.steps="$half" \
  --set output.restart_interval="$half" || fail "half run"
run 2 "${dev[@]}" "${rs[@]}" --set run.name=cont --set initial.restart="$work/rs/half.restart.nc" \
  --set output.restart_interval="$steps" || fail "continued run"
"$src/tests/steps_run.sh" "$work/rs/cont.timing.json" $((steps - half)) ||
  fail "the continued run did not continue from step $half"
same "$work/rs/straight.restart.nc" "$work/rs/cont.restart.nc" || fail "restart: other bits"

# a planted NaN: caught as on the CPU, the same message and crash file
for where in cpu dev; do
  args=(--set output.dir="$work/nan-$where" --set run.name=nan)
  [ $where = dev ] && args+=("${dev[@]}")
  MINIMODEL_FAULT_NAN_STEP=3 MINIMODEL_FAULT_RANK=1 run 2 "${args[@]}"
  rc=$?
  [ $rc -eq 1 ] || fail "NaN ($where): exit $rc, expected 1"
  grep -o "numerical blow-up at step [0-9]*: [a-z]* = NaN/Inf at i=[0-9]* j=[0-9]* k=[0-9]*" \
    "$work/log" >"$work/nan-$where.msg" || fail "NaN ($where): not reported as a blow-up"
  [ -f "$work/nan-$where/nan.crash.nc" ] || fail "NaN ($where): no crash file"
done
cmp -s "$work/nan-cpu.msg" "$work/nan-dev.msg" ||
  fail "NaN: '$(cat "$work/nan-dev.msg")', on the CPU '$(cat "$work/nan-cpu.msg")'"
same "$work/nan-dev/nan.crash.nc" "$work/nan-cpu/nan.crash.nc" || fail "NaN: other crash file"
echo "PASS ($cfg, $backend): the CPU's bits"

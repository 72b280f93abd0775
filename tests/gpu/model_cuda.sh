#!/usr/bin/env bash
# model_cuda.sh MINIMODEL PYTHON SOURCE_DIR WORK CONFIG
# The whole model on the GPU (solver.backend = cuda), on a regression config:
#   - GPU against CPU within 1e-12 relative (expected: the same bits);
#   - GPU on 4 ranks against GPU on 1 rank, bit for bit;
#   - kernels launched one by one (MINIMODEL_CUDA_GRAPH=0) against the CUDA
#     graph, and the halo through host strips against CUDA-aware MPI where
#     the MPI library has it, bit for bit;
#   - a GPU run continued from a restart equals a straight one, bit for bit;
#   - a NaN planted on the GPU is caught, exit 1, with the crash file.
# Exit 77 (skipped) when there is no usable CUDA device or no CUDA build.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"; cfg="$5"
ini="$src/configs/$cfg.ini"
run() { local np="$1"; shift; mpirun --oversubscribe -np "$np" "$mm" --quiet "$@" "$ini" >"$work/log" 2>&1; }
cmp_nc() { "$py" "$src/scripts/compare.py" --quiet "$@"; }
fail() { echo "FAIL ($cfg): $*"; cat "$work/log"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
gpu=(--set solver.backend=cuda --set solver.tdma=auto)

run 1 "${gpu[@]}" --set output.dir="$work/gpu1"
rc=$?
if [ $rc -eq 2 ] && grep -q "no usable device\|built without CUDA" "$work/log"; then
  echo "SKIP: no CUDA device"; cat "$work/log"; exit 77
fi
[ $rc -eq 0 ] || fail "GPU run on 1 rank: exit $rc"
grep -q '"device"' "$work/gpu1/$cfg.timing.json" || fail "timing file names no device"
run 1 --set output.dir="$work/cpu1" || fail "CPU run"
cmp_nc --rtol 1e-12 "$work/gpu1/$cfg.nc" "$work/cpu1/$cfg.nc" || fail "GPU differs from CPU beyond 1e-12"
if cmp_nc "$work/gpu1/$cfg.nc" "$work/cpu1/$cfg.nc"; then
  echo "GPU and CPU agree bit for bit"
else
  echo "GPU and CPU agree within 1e-12 (not bit for bit)"
fi

run 4 "${gpu[@]}" --set output.dir="$work/gpu4" || fail "GPU run on 4 ranks"
cmp_nc "$work/gpu4/$cfg.nc" "$work/gpu1/$cfg.nc" || fail "GPU 4 ranks differ from 1 rank"

MINIMODEL_CUDA_GRAPH=0 run 2 "${gpu[@]}" --set output.dir="$work/nograph" || fail "run without graph"
cmp_nc "$work/nograph/$cfg.nc" "$work/gpu1/$cfg.nc" || fail "kernels one by one differ from the graph"
MINIMODEL_CUDA_AWARE_MPI=0 run 2 "${gpu[@]}" --set output.dir="$work/staged" || fail "staged halo run"
cmp_nc "$work/staged/$cfg.nc" "$work/gpu1/$cfg.nc" || fail "halo through host strips differs"

steps=$(sed -n 's/^steps *= *\([0-9]*\).*/\1/p' "$ini" | head -1)
half=$((steps / 2))
common=(--set output.dir="$work/rs" --set output.interval=0)
run 2 "${gpu[@]}" "${common[@]}" --set run.name=straight --set output.restart_interval="$steps" || fail "straight run"
run 2 "${gpu[@]}" "${common[@]}" --set run.name=half --set run.steps="$half" \
  --set output.restart_interval="$half" || fail "half run"
run 2 "${gpu[@]}" "${common[@]}" --set run.name=cont --set initial.restart="$work/rs/half.restart.nc" \
  --set output.restart_interval="$steps" || fail "continued run"
cmp_nc "$work/rs/straight.restart.nc" "$work/rs/cont.restart.nc" || fail "restart on the GPU differs"

MINIMODEL_FAULT_NAN_STEP=3 run 2 "${gpu[@]}" --set output.dir="$work/nan" --set run.name=nan
rc=$?
[ $rc -eq 1 ] || fail "NaN on the GPU: exit $rc, expected 1"
grep -q "blow-up" "$work/log" || fail "NaN on the GPU not reported as a blow-up"
[ -f "$work/nan/nan.crash.nc" ] || fail "no crash file after the NaN"
echo "PASS ($cfg)"

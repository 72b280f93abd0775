#!/usr/bin/env bash
# tiles.sh MINIMODEL PYTHON SOURCE_DIR WORK
# The GPU step's horizontal kernel in tiles (mm_gpu_kernels.h, the default
# for the block interior; MINIMODEL_CUDA_TILES=0 turns it off) on the
# emulated device gives the CPU's bits on a grid whose block interiors span
# several tiles along every axis: nz = 40 levels (a tile of 32 and one of
# 8), columns that fill no whole number of tiles, and marches of 32 rows
# and a shorter one; a gyre over a bowl (wet and dry faces at every depth),
# superbee and upwind advection, on 1 and 3 ranks. The regression configs
# of model.emulated.* are smaller than one tile along levels and rows.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"
ini="$src/configs/gyre_bowl.ini"
grid=(--set grid.nx=45 --set grid.ny=78 --set grid.nz=40 --set run.steps=4 --set run.dt=1800
      --set output.interval=2 --set run.name=tiles)
run() {
  local np="$1"; shift
  timeout -k 10 300 mpirun --oversubscribe -np "$np" "$mm" --quiet "${grid[@]}" "$@" "$ini" \
    >"$work/log" 2>&1
}
same() { "$py" "$src/scripts/compare.py" --quiet "$@"; }
fail() { echo "FAIL: $*"; cat "$work/log"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
for adv in superbee upwind; do
  run 1 --set physics.advection=$adv --set output.dir="$work/cpu-$adv" || fail "CPU ($adv)"
  for np in 1 3; do
    for tiles in 1 0; do
      out="$work/emu-$adv-$np-$tiles"
      MINIMODEL_CUDA_TILES=$tiles run "$np" --set physics.advection=$adv \
        --set solver.backend=emulated --set output.dir="$out" ||
        fail "emulated device, $np ranks, MINIMODEL_CUDA_TILES=$tiles ($adv)"
      same "$out/tiles.nc" "$work/cpu-$adv/tiles.nc" ||
        fail "$adv, $np ranks, MINIMODEL_CUDA_TILES=$tiles: not the CPU's bits"
    done
  done
  echo "ok: $adv: the CPU's bits with and without tiles, on 1 and 3 ranks"
done

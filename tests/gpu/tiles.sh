#!/usr/bin/env bash
# tiles.sh MINIMODEL PYTHON SOURCE_DIR WORK BACKEND
# The GPU step's horizontal kernel in tiles (mm_gpu_kernels.h, the default
# for the block interior; MINIMODEL_CUDA_TILES=0 turns it off) on device
# BACKEND (emulated or cuda) gives the CPU's bits on grids whose block
# interiors span several tiles along every axis, which the regression
# configs of model_device.sh do not (their nz and interiors are smaller than
# one tile):
#   - 45 x 78 x 35: a level tile of 18 and one of 17 (tiles of 18 levels x
#     14 columns: 4 threads of a block without a cell), columns that fill
#     no whole number of tiles, on 1 rank and on 3 ranks split along x (11
#     columns by marches of 32, 32 and 10 rows);
#   - 9 x 38 x 64: two whole level tiles of 32 (x 8 columns), an interior 5
#     columns wide (less than a tile), marches of 32 and 2 rows;
#   - 100 x 20 x 6: one level tile of 6 x 42 columns, the interior two
#     tiles wide, the second one partly;
# a gyre over a bowl (wet and dry faces at every depth), superbee and upwind
# advection; with and without tiles (the timing file's horizontal_tiles must
# say which); tiles of a set depth (MINIMODEL_CUDA_TILE_LEVELS: 32, so 45 x
# 78 x 35 has a tile of 3 levels, and 7, which gives tiles of 7 x 36 and
# 4 threads without a cell); each face computed once
# (MINIMODEL_CUDA_TILE_FACES=1, the timing file's horizontal_tile_faces_once
# must say so) on every grid, and on the emulated device also the threads in
# reverse order (the blocks too), both ways; the kernel compiled for 4
# blocks per SM (MINIMODEL_CUDA_TILE_MIN_BLOCKS=4, the timing file's
# horizontal_tile_min_blocks, 3 by default), both ways, on 3 ranks.
# Exit 77 (skipped) when BACKEND = cuda and there is no usable device.
set -u
mm="$1"; py="$2"; src="$3"; work="$4"; backend="$5"
ini="$src/configs/gyre_bowl.ini"
common=(--set run.steps=4 --set run.dt=1800 --set output.interval=2 --set run.name=tiles)
run() {
  local np="$1"; shift
  timeout -k 10 300 mpirun --oversubscribe -np "$np" "$mm" --quiet "${common[@]}" "$@" "$ini" \
    >"$work/log" 2>&1
}
same() { "$py" "$src/scripts/compare.py" --quiet "$@"; }
fail() { echo "FAIL: $*"; cat "$work/log"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
dev=(--set solver.backend="$backend" --set solver.tdma=auto)
n=0
check() { # NAME NP TILES GRID-ARGS...: a run on the device against $work/cpu
  # (SHAPE="LEVELS COLUMNS": the tiles' shape the timing file must give)
  local name="$1" np="$2" tiles="$3"; shift 3
  local out="$work/$name"
  MINIMODEL_CUDA_TILES=$tiles run "$np" "${dev[@]}" "$@" --set output.dir="$out"
  local rc=$?
  if [ "$backend" = cuda ] && [ $rc -eq 2 ] && grep -q "no usable device" "$work/log"; then
    echo "SKIP: no CUDA device"; cat "$work/log"; exit 77
  fi
  [ $rc -eq 0 ] || fail "$name: exit $rc"
  local want=true
  [ "$tiles" = 0 ] && want=false
  grep -q "\"horizontal_tiles\": $want" "$out/tiles.timing.json" ||
    fail "$name: the timing file does not say horizontal_tiles $want"
  local once=false
  [ "${MINIMODEL_CUDA_TILE_FACES:-0}" = 1 ] && once=true
  if [ "$tiles" = 1 ] && ! grep -q "\"horizontal_tile_faces_once\": $once" "$out/tiles.timing.json"; then
    fail "$name: the timing file does not say horizontal_tile_faces_once $once"
  fi
  local min_blocks=${MINIMODEL_CUDA_TILE_MIN_BLOCKS:-3}
  if [ "$tiles" = 1 ] &&
    ! grep -q "\"horizontal_tile_min_blocks\": $min_blocks\b" "$out/tiles.timing.json"; then
    fail "$name: the timing file does not say horizontal_tile_min_blocks $min_blocks"
  fi
  if [ -n "${SHAPE:-}" ]; then
    local levels=${SHAPE% *} columns=${SHAPE#* }
    grep -q "\"horizontal_tile_levels\": $levels," "$out/tiles.timing.json" &&
      grep -q "\"horizontal_tile_columns\": $columns\b" "$out/tiles.timing.json" ||
      fail "$name: the timing file does not give tiles of $levels x $columns"
  fi
  same "$out/tiles.nc" "$work/cpu/tiles.nc" || fail "$name: not the CPU's bits"
  n=$((n + 1))
}
for adv in superbee upwind; do
  big=(--set grid.nx=45 --set grid.ny=78 --set grid.nz=35 --set physics.advection=$adv)
  run 1 "${big[@]}" --set output.dir="$work/cpu" || fail "CPU ($adv)"
  for tiles in 1 0; do
    shape=
    [ "$tiles" = 1 ] && shape="18 14"
    SHAPE="$shape" check "big-$adv-1-$tiles" 1 $tiles "${big[@]}"
    check "big-$adv-3-$tiles" 3 $tiles "${big[@]}" --set grid.ranks_x=3 --set grid.ranks_y=1
  done
  MINIMODEL_CUDA_TILE_FACES=1 check "big-$adv-1-faces1" 1 1 "${big[@]}"
  MINIMODEL_CUDA_TILE_FACES=1 check "big-$adv-3-faces1" 3 1 "${big[@]}" --set grid.ranks_x=3 \
    --set grid.ranks_y=1
  SHAPE="32 8" MINIMODEL_CUDA_TILE_LEVELS=32 check "big-$adv-levels32" 1 1 "${big[@]}"
  for faces in 0 1; do
    MINIMODEL_CUDA_TILE_MIN_BLOCKS=4 MINIMODEL_CUDA_TILE_FACES=$faces \
      check "big-$adv-3-minblocks4-faces$faces" 3 1 "${big[@]}" --set grid.ranks_x=3 \
      --set grid.ranks_y=1
  done
  SHAPE="32 8" MINIMODEL_CUDA_TILE_LEVELS=32 MINIMODEL_CUDA_TILE_FACES=1 \
    check "big-$adv-levels32-faces1" 1 1 "${big[@]}"
  if [ "$backend" = emulated ]; then
    MINIMODEL_EMULATED_THREADS=reverse check "big-$adv-reverse" 2 1 "${big[@]}"
    MINIMODEL_EMULATED_THREADS=reverse MINIMODEL_CUDA_TILE_FACES=1 \
      check "big-$adv-reverse-faces1" 2 1 "${big[@]}"
  fi
  narrow=(--set grid.nx=9 --set grid.ny=38 --set grid.nz=64 --set physics.advection=$adv)
  rm -rf "$work/cpu"
  run 1 "${narrow[@]}" --set output.dir="$work/cpu" || fail "CPU, narrow ($adv)"
  check "narrow-$adv" 1 1 "${narrow[@]}"
  MINIMODEL_CUDA_TILE_FACES=1 check "narrow-$adv-faces1" 1 1 "${narrow[@]}"
  SHAPE="7 36" MINIMODEL_CUDA_TILE_LEVELS=7 check "narrow-$adv-levels7" 1 1 "${narrow[@]}"
  SHAPE="7 36" MINIMODEL_CUDA_TILE_LEVELS=7 MINIMODEL_CUDA_TILE_FACES=1 \
    check "narrow-$adv-levels7-faces1" 1 1 "${narrow[@]}"
  rm -rf "$work/cpu"
  shallow=(--set grid.nx=100 --set grid.ny=20 --set grid.nz=6 --set physics.advection=$adv)
  run 1 "${shallow[@]}" --set output.dir="$work/cpu" || fail "CPU, shallow ($adv)"
  SHAPE="6 42" check "shallow-$adv" 1 1 "${shallow[@]}"
  SHAPE="6 42" MINIMODEL_CUDA_TILE_FACES=1 check "shallow-$adv-faces1" 1 1 "${shallow[@]}"
  rm -rf "$work/cpu"
done
echo "ok: $n runs with the CPU's bits, tiled and not"

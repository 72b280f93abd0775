/* The per-thread functions of the GPU step's kernels (mm_gpu.h). Each
 * device runs them over the kernel's index space: the CUDA kernels one
 * thread each (cuda/mm_device_cuda.cu), the emulated device one thread
 * after another (mm_device_emulated.c), and the CPU test model.gpu_emu
 * checks them against the CPU step. A thread maps its index to a (column,
 * level) with mm_cell_rect_index: consecutive threads take consecutive
 * levels of a column, so that loads of the column-contiguous arrays
 * coalesce. Threads past the end of the index space do nothing. */
#ifndef MM_GPU_KERNELS_H
#define MM_GPU_KERNELS_H

#include "mm_cell.h"
#include "mm_rsum.h"

/* Threads per block of the horizontal and mixing kernels. */
#define MM_GPU_THREADS 256
/* The diagnostics kernel: MM_GPU_DIAG_THREADS threads per block, at most
 * MM_GPU_DIAG_MAX_BLOCKS blocks. */
#define MM_GPU_DIAG_THREADS    128
#define MM_GPU_DIAG_MAX_BLOCKS 1024

/* T*, S* of the cell of thread tid (mm_cell_horizontal). */
MM_CELL_FN void mm_gpu_horizontal_thread(const mm_cell_hstep *h, const mm_cell_rects *r, long tid) {
  long col;
  int k;
  if (mm_cell_rect_index(r, h->nz, h->nxh, tid, &col, &k)) mm_cell_horizontal(h, col, k);
}

/* The horizontal kernel of a rectangle in tiles (the interior of the block,
 * where most cells are): a thread block of tk levels (fastest) x tx columns
 * of one row takes a tile of that many levels and columns and marches it
 * north through up to MM_GPU_TILE_Y rows. The levels are split into
 * ceil(nz / MM_GPU_TILE_K) tiles of equal depth tk (the last one shallower
 * where they do not divide nz), and tx = MM_GPU_THREADS / tk: so nz = 10
 * gives tiles of 10 levels x 25 columns and nz = 100 tiles of 25 levels x 10
 * columns, and at most tk - 1 of a block's threads have no cell (with tiles
 * of 32 levels, 22 of every 32 where nz = 10, and 28 of every 32 in the
 * last tile of nz = 100: the kernel is bound by its instructions, and a
 * thread without a cell costs its warp as much as one with). T and S of
 * the rows the stencil reaches (two either side) and of the two columns
 * either side of the tile pass through a ring of MM_GPU_TILE_RING rows in
 * shared memory, each value loaded from memory once per tile (and once more
 * for the tiles beside it and the two rows above and below a march): the
 * per-cell kernel loads each value for each of the nine cells whose
 * stencil reaches it, through the caches. By default (faces = 0) each cell
 * computes its four faces itself from the ring, by mm_cell_tracer as the
 * per-cell kernel does (mm_gpu_tile_cellwise), so each face is computed by
 * both of its cells. With faces = 1 (MINIMODEL_CUDA_TILE_FACES=1) each
 * face's fluxes are computed once: a thread computes the east face of its
 * cell (the first column of the tile its west face too) into shared
 * memory, where the cell to the east finds it as its west face; and the
 * north face, which it carries in registers to the next row of the march
 * as that cell's south face (the first row computes its south face). A
 * face's fluxes come from mm_face_flux with the operands mm_cell_tracer
 * gives it from either cell, and the cell's sum is mm_cell_update's, so the
 * bits are the per-cell kernel's either way. Half the face evaluations, but
 * a second barrier per row and the faces through shared memory: on an H200
 * (2026-11-28, nz = 100) the kernel took 0.486 ms a step that way against
 * 0.398 ms cellwise (docs/performance.md, "GPU").
 *
 * A block (rows [j0, j1), mm_gpu_tile_of; mm_gpu_tile_phase):
 *   load rows j0-2 .. j0+2; barrier;
 *   for each row j of the march:
 *     faces = 0: load row j+3, T*, S* of row j; barrier;
 *     faces = 1: load row j+3, the x faces of row j; barrier;
 *                the y faces and T*, S* of row j; barrier.
 * Row j+3 goes to a ring slot that rows j-2 .. j+2 do not use. Loads of a
 * row are coalesced: thread t of the block takes elements t, t +
 * MM_GPU_THREADS, ... of the row's (tx + 4) columns x tk levels, levels
 * fastest (a column's levels are adjacent in memory; where tk = nz, the
 * whole row is one run). */
#define MM_GPU_TILE_K    32 /* levels of a tile, at most */
#define MM_GPU_TILE_Y    32
#define MM_GPU_TILE_RING 6
/* Elements of a ring row, (tx + 4) tk <= MM_GPU_THREADS + 4 MM_GPU_TILE_K,
 * and of a row's x faces, (tx + 1) tk, at most. */
#define MM_GPU_TILE_ROW   (MM_GPU_THREADS + 4 * MM_GPU_TILE_K)
#define MM_GPU_TILE_FACES (MM_GPU_THREADS + MM_GPU_TILE_K)
/* Blocks per SM the CUDA kernel's registers must leave room for
 * (__launch_bounds__): at 3, ptxas (CUDA 13, sm_90) gave the superbee
 * kernel 80 registers and no spill, both before and since each face is
 * computed once (unbounded it took 88, 2 blocks per SM; at 4 it spilled);
 * since the tiles' depth follows nz (tk, tx at run time), the superbee
 * kernel with each face once 72 at 3 and 63 at 4, the cellwise one 80 at 3
 * and 64 at 4, no spill. Its 46080 bytes of shared memory allow 4 on an H100
 * or H200. On an H200 (2026-11-28, each face then computed by both of its
 * cells) the kernel ran 3 blocks per SM, the limit of its registers and its
 * shared memory alike (Nsight Compute, docs/performance.md "GPU"). 4 is
 * to be timed on a device (MINIMODEL_CUDA_TILE_MIN_BLOCKS=4 runs the
 * kernel compiled for 4, mm_gpu_tiles's min_blocks); the cellwise kernel
 * leaves its 9216 bytes of x faces unused. */
#ifndef MM_GPU_TILE_MIN_BLOCKS
#define MM_GPU_TILE_MIN_BLOCKS 3
#endif

/* A rectangle's tiles: cells [ib, ie) x [jb, je) of the block (indices
 * without the halo), nz levels. Blocks are numbered with the tile's level
 * range fastest, then its columns, then its rows. */
typedef struct {
  int ib, ie, jb, je, nz;
  long nxh;
  int tk, tx;      /* levels and columns of a tile (tk * tx <= MM_GPU_THREADS) */
  long nk, nx, ny; /* tiles along levels, columns and rows */
  int faces;       /* 1: each face's fluxes computed once (mm_gpu_tile_xfaces,
                    * mm_gpu_tile_update); 0: each cell computes its own four
                    * faces from the ring, as the per-cell kernel does
                    * (mm_gpu_tile_cellwise) */
  int min_blocks;  /* blocks per SM the CUDA kernel is compiled for
                    * (__launch_bounds__): MM_GPU_TILE_MIN_BLOCKS, or 4
                    * (MINIMODEL_CUDA_TILE_MIN_BLOCKS); the emulated device
                    * ignores it */
} mm_gpu_tiles;

/* The shared memory of a block: T and S of the ring's rows, [slot][c tk +
 * kk: column c of the tile, from two west of it, level kk of the tile]; and
 * the fluxes per unit depth through the x faces of the row being computed,
 * [tracer: T, S][0 advective, 1 diffusive][f tk + kk: face f, west of the
 * tile's column f, f = tx east of its last; level kk] (degC m2/s,
 * g/kg m2/s). */
typedef struct {
  double temp[MM_GPU_TILE_RING][MM_GPU_TILE_ROW];
  double salt[MM_GPU_TILE_RING][MM_GPU_TILE_ROW];
  double xface[2][2][MM_GPU_TILE_FACES];
} mm_gpu_tile_smem;

/* What a thread carries from one row of its march to the next: the fluxes
 * per unit depth through the north face of its cell, the south face of the
 * cell north of it, [tracer: T, S] (0 where the face is dry). Registers on
 * a GPU; the emulated device keeps one per thread. */
typedef struct {
  double ga[2], gd[2]; /* advective, diffusive */
} mm_gpu_tile_carry;

/* levels: the levels of a tile, 1..MM_GPU_TILE_K; 0: nz split evenly into
 * tiles of at most MM_GPU_TILE_K levels. faces: mm_gpu_tiles's. */
MM_CELL_FN void mm_gpu_tiles_of(mm_gpu_tiles *t, int ib, int ie, int jb, int je, int nz, long nxh,
                                int levels, int faces) {
  t->ib = ib, t->ie = ie, t->jb = jb, t->je = je, t->nz = nz, t->nxh = nxh;
  t->faces = faces != 0;
  t->min_blocks = MM_GPU_TILE_MIN_BLOCKS;
  const int w = ie > ib ? ie - ib : 0, hgt = je > jb ? je - jb : 0;
  const int forced = levels >= 1 && levels <= MM_GPU_TILE_K;
  const int most = forced ? levels : MM_GPU_TILE_K;
  const int nk = nz > 0 ? (nz + most - 1) / most : 0;
  t->tk = forced || !nk ? most : (nz + nk - 1) / nk;
  t->tx = MM_GPU_THREADS / t->tk;
  t->nk = w && hgt ? nk : 0;
  t->nx = (w + t->tx - 1) / t->tx;
  t->ny = (hgt + MM_GPU_TILE_Y - 1) / MM_GPU_TILE_Y;
}

MM_CELL_FN long mm_gpu_tiles_blocks(const mm_gpu_tiles *t) {
  return t->nk * t->nx * t->ny;
}

/* Block b's first level, first column and rows [*j0, *j1) of its march. */
MM_CELL_FN void mm_gpu_tile_of(const mm_gpu_tiles *t, long b, int *k0, int *i0, int *j0, int *j1) {
  *k0 = (int)(b % t->nk) * t->tk;
  *i0 = t->ib + (int)(b / t->nk % t->nx) * t->tx;
  *j0 = t->jb + (int)(b / (t->nk * t->nx)) * MM_GPU_TILE_Y;
  *j1 = *j0 + MM_GPU_TILE_Y < t->je ? *j0 + MM_GPU_TILE_Y : t->je;
}

MM_CELL_FN int mm_gpu_tile_slot(int j, int j0) {
  return (j - j0 + 2) % MM_GPU_TILE_RING; /* j >= j0 - 2 */
}

/* Elements of a ring row each thread moves, at most. */
#define MM_GPU_TILE_PER_THREAD ((MM_GPU_TILE_ROW + MM_GPU_THREADS - 1) / MM_GPU_THREADS)

/* Thread tid's elements of row j of the tile at level k0, column i0: e =
 * tid, tid + MM_GPU_THREADS, ... of the row's columns i0 - 2 .. i0 + tx + 1
 * (those the rectangle's stencil reaches) x levels below nz:
 * fetched from memory into t[], s[] (fetch), or from there into the ring
 * (store). */
MM_CELL_FN void mm_gpu_tile_fetch(const mm_cell_hstep *h, const mm_gpu_tiles *t, int k0, int i0,
                                  int tid, int j, double *tv, double *sv) {
  /* a constant trip count, so that tv and sv stay in registers */
  for (int n = 0; n < MM_GPU_TILE_PER_THREAD; n++) {
    const int e = tid + n * MM_GPU_THREADS;
    if (e >= (t->tx + 4) * t->tk) break;
    const int c = e / t->tk, kk = e % t->tk;
    const int i = i0 - 2 + c, k = k0 + kk;
    if (i >= t->ie + 2 || k >= t->nz) continue;
    const long p = ((long)(j + MM_CELL_HALO) * t->nxh + (i + MM_CELL_HALO)) * t->nz + k;
    tv[n] = h->temp[p];
    sv[n] = h->salt[p];
  }
}
MM_CELL_FN void mm_gpu_tile_store(const mm_gpu_tiles *t, int k0, int i0, int slot, int tid,
                                  const double *tv, const double *sv, mm_gpu_tile_smem *s) {
  for (int n = 0; n < MM_GPU_TILE_PER_THREAD; n++) {
    const int e = tid + n * MM_GPU_THREADS;
    if (e >= (t->tx + 4) * t->tk) break;
    const int c = e / t->tk, kk = e % t->tk;
    if (i0 - 2 + c >= t->ie + 2 || k0 + kk >= t->nz) continue;
    s->temp[slot][e] = tv[n]; /* e = c tk + kk */
    s->salt[slot][e] = sv[n];
  }
}

/* The cell of thread tid of a tile at row j: its column of the block
 * with the halo (*col), its level (*k) and its tile column (*cx) and level
 * (*kk); 0 where the thread has no cell (tid >= tx tk, or past the
 * rectangle or nz). */
MM_CELL_FN int mm_gpu_tile_cell(const mm_gpu_tiles *t, int k0, int i0, int tid, int j, long *col,
                                int *k, int *cx, int *kk) {
  *kk = tid % t->tk, *cx = tid / t->tk;
  const int i = i0 + *cx;
  *k = k0 + *kk;
  if (*cx >= t->tx || i >= t->ie || *k >= t->nz) return 0;
  *col = (long)(j + MM_CELL_HALO) * t->nxh + (i + MM_CELL_HALO);
  return 1;
}

/* T*, S* of thread tid's cell of row j (rows j - 2 .. j + 2 in the ring)
 * by mm_cell_tracer, its four faces computed by the cell itself, as the
 * per-cell kernel does (faces = 0). Its first lines (the cell, p, kmt, the
 * ring rows) are mm_gpu_tile_update's too: one helper that returned them
 * in a struct cost the cellwise kernels registers (ptxas, CUDA 13, sm_90,
 * at 3 blocks per SM: upwind 70 -> 77, no advection 56 -> 70) and the
 * superbee one a 56-byte spill at 4. */
MM_CELL_FN void mm_gpu_tile_cellwise(const mm_cell_hstep *h, const mm_gpu_tiles *t, int k0, int i0,
                                     int j0, int tid, int j, const mm_gpu_tile_smem *s) {
  long col;
  int k, cx, kk;
  if (!mm_gpu_tile_cell(t, k0, i0, tid, j, &col, &k, &cx, &kk)) return;
  const long nxh = t->nxh, nz = t->nz, p = col * nz + k;
  const int *kmt = h->kmt;
  const int kP = kmt[col];
  if (k >= kP) return;
  int w[8];
  mm_cell_wet_faces(k, kP, kmt[col + 1], kmt[col - 1], kmt[col + nxh], kmt[col - nxh], kmt[col + 2],
                    kmt[col - 2], kmt[col + 2 * nxh], kmt[col - 2 * nxh], w);
  const double u_e = h->ue[p], u_w = h->ue[p - nz], v_n = h->vn[p], v_s = h->vn[p - nxh * nz];
  const int tk = t->tk, e = (cx + 2) * tk + kk; /* the cell in a ring row */
  const int r = mm_gpu_tile_slot(j, j0);
  const int rn = mm_gpu_tile_slot(j + 1, j0), rs = mm_gpu_tile_slot(j - 1, j0);
  const int rnn = mm_gpu_tile_slot(j + 2, j0), rss = mm_gpu_tile_slot(j - 2, j0);
  for (int v = 0; v < 2; v++) {
    const double(*q)[MM_GPU_TILE_ROW] = v ? s->salt : s->temp;
    /* mm_cell_tracer's order: P, E, W, N, S, EE, WW, NN, SS */
    const double tv[9] = {q[r][e],          q[r][e + tk],     q[r][e - tk], q[rn][e], q[rs][e],
                          q[r][e + 2 * tk], q[r][e - 2 * tk], q[rnn][e],    q[rss][e]};
    (v ? h->salt_next : h->temp_next)[p] =
        mm_cell_tracer(h->scheme, w, u_e, u_w, v_n, v_s, tv, h->dt_area, h->kh_x, h->kh_y);
  }
}

/* The x faces of row j (rows j - 2 .. j + 2 in the ring): thread tid's
 * east face (mm_cell_tracer's fa_e, fd_e of its cell) and, in the tile's
 * first column, its west face (fa_w, fd_w), into s->xface; zero where the
 * face is dry. */
MM_CELL_FN void mm_gpu_tile_xfaces(const mm_cell_hstep *h, const mm_gpu_tiles *t, int k0, int i0,
                                   int j0, int tid, int j, mm_gpu_tile_smem *s) {
  long col;
  int k, cx, kk;
  if (!mm_gpu_tile_cell(t, k0, i0, tid, j, &col, &k, &cx, &kk)) return;
  const int *kmt = h->kmt;
  const int kP = kmt[col], kE = kmt[col + 1], kW = kmt[col - 1];
  const int wet_e = k < mm_cell_imin(kP, kE), wet_w = k < mm_cell_imin(kW, kP);
  const long p = col * (long)t->nz + k;
  const int tk = t->tk, r = mm_gpu_tile_slot(j, j0);
  const int e = (cx + 2) * tk + kk, fe = (cx + 1) * tk + kk; /* the cell; its east face */
  const mm_gpu_tile_smem *ring = s;                          /* read only: the ring */
  for (int v = 0; v < 2; v++) {
    const double *q = v ? ring->salt[r] : ring->temp[r];
    double fa = 0.0, fd = 0.0;
    if (wet_e)
      mm_face_flux(h->scheme, h->ue[p], q[e - tk], q[e], q[e + tk], q[e + 2 * tk], wet_w,
                   k < mm_cell_imin(kE, kmt[col + 2]), h->dt_area, h->kh_x, &fa, &fd);
    s->xface[v][0][fe] = fa, s->xface[v][1][fe] = fd;
    if (cx == 0) {
      double fa_w = 0.0, fd_w = 0.0;
      if (wet_w)
        mm_face_flux(h->scheme, h->ue[p - t->nz], q[e - 2 * tk], q[e - tk], q[e], q[e + tk],
                     k < mm_cell_imin(kmt[col - 2], kW), wet_e, h->dt_area, h->kh_x, &fa_w, &fd_w);
      s->xface[v][0][kk] = fa_w, s->xface[v][1][kk] = fd_w;
    }
  }
}

/* T*, S* of thread tid's cell of row j: its north face (mm_cell_tracer's
 * ga_n, gd_n), its south face (the north face of row j - 1, carried in *cr;
 * computed at the first row of the march, j0), its x faces from s->xface.
 * The north face goes into *cr for row j + 1. */
MM_CELL_FN void mm_gpu_tile_update(const mm_cell_hstep *h, const mm_gpu_tiles *t, int k0, int i0,
                                   int j0, int tid, int j, const mm_gpu_tile_smem *s,
                                   mm_gpu_tile_carry *cr) {
  long col;
  int k, cx, kk;
  if (!mm_gpu_tile_cell(t, k0, i0, tid, j, &col, &k, &cx, &kk)) return;
  const long nxh = t->nxh, nz = t->nz, p = col * nz + k;
  const int *kmt = h->kmt;
  const int kP = kmt[col];
  if (k >= kP) { /* a dry cell: its north face is dry too */
    cr->ga[0] = cr->ga[1] = cr->gd[0] = cr->gd[1] = 0.0;
    return;
  }
  const int kN = kmt[col + nxh], kS = kmt[col - nxh];
  const int wet_n = k < mm_cell_imin(kP, kN), wet_s = k < mm_cell_imin(kS, kP);
  const int wet_nn = k < mm_cell_imin(kN, kmt[col + 2 * nxh]);
  const int wet_ss = j == j0 && k < mm_cell_imin(kmt[col - 2 * nxh], kS);
  const int tk = t->tk, e = (cx + 2) * tk + kk; /* the cell in a ring row */
  const int fw = cx * tk + kk, fe = fw + tk;    /* its west and east faces */
  const int r = mm_gpu_tile_slot(j, j0);
  const int rn = mm_gpu_tile_slot(j + 1, j0), rs = mm_gpu_tile_slot(j - 1, j0);
  const int rnn = mm_gpu_tile_slot(j + 2, j0), rss = mm_gpu_tile_slot(j - 2, j0);
  for (int v = 0; v < 2; v++) {
    const double(*q)[MM_GPU_TILE_ROW] = v ? s->salt : s->temp;
    const double tP = q[r][e], tN = q[rn][e], tS = q[rs][e];
    double ga_n = 0.0, gd_n = 0.0, ga_s, gd_s;
    if (wet_n)
      mm_face_flux(h->scheme, h->vn[p], tS, tP, tN, q[rnn][e], wet_s, wet_nn, h->dt_area, h->kh_y,
                   &ga_n, &gd_n);
    if (j == j0) {
      ga_s = 0.0, gd_s = 0.0;
      if (wet_s)
        mm_face_flux(h->scheme, h->vn[p - nxh * nz], q[rss][e], tS, tP, tN, wet_ss, wet_n,
                     h->dt_area, h->kh_y, &ga_s, &gd_s);
    } else {
      ga_s = cr->ga[v], gd_s = cr->gd[v];
    }
    (v ? h->salt_next : h->temp_next)[p] =
        mm_cell_update(tP, s->xface[v][0][fw], s->xface[v][0][fe], ga_s, ga_n, s->xface[v][1][fw],
                       s->xface[v][1][fe], gd_s, gd_n, h->dt_area);
    cr->ga[v] = ga_n, cr->gd[v] = gd_n;
  }
}

/* The march of block b in phases, a barrier after each (every device runs
 * it so: the CUDA kernel one thread per tid, the emulated device one thread
 * after another): phase 0 loads rows j0 - 2 .. j0 + 2 (those below j1 + 2);
 * cellwise (t->faces = 0), phase r + 1 computes row j = j0 + r with the
 * loads of row j + 3 as below. With each face once (t->faces = 1):
 * phase 2 r + 1 computes the x faces of row j = j0 + r, with the loads of
 * row j + 3 (where j + 3 < j1 + 2) fetched before the computation and
 * stored into the ring after it, so that their latency overlaps it; phase
 * 2 r + 2 the y faces and T*, S* of row j. *c: the thread's carry, the same
 * for all the phases of the block. */
MM_CELL_FN int mm_gpu_tile_phases(const mm_gpu_tiles *t, long b) {
  int k0, i0, j0, j1;
  mm_gpu_tile_of(t, b, &k0, &i0, &j0, &j1);
  return 1 + (t->faces ? 2 : 1) * (j1 - j0);
}
MM_CELL_FN void mm_gpu_tile_phase(const mm_cell_hstep *h, const mm_gpu_tiles *t, long b, int tid,
                                  int phase, mm_gpu_tile_smem *s, mm_gpu_tile_carry *c) {
  int k0, i0, j0, j1;
  mm_gpu_tile_of(t, b, &k0, &i0, &j0, &j1);
  double tv[MM_GPU_TILE_PER_THREAD] = {0.0}, sv[MM_GPU_TILE_PER_THREAD] = {0.0};
  if (phase == 0) {
    for (int j = j0 - 2; j <= j0 + 2 && j <= j1 + 1; j++) {
      mm_gpu_tile_fetch(h, t, k0, i0, tid, j, tv, sv);
      mm_gpu_tile_store(t, k0, i0, mm_gpu_tile_slot(j, j0), tid, tv, sv, s);
    }
    return;
  }
  const int j = j0 + (t->faces ? (phase - 1) / 2 : phase - 1);
  if (t->faces && (phase - 1) % 2) {
    mm_gpu_tile_update(h, t, k0, i0, j0, tid, j, s, c);
    return;
  }
  const int ahead = j + 3 <= j1 + 1;
  if (ahead) mm_gpu_tile_fetch(h, t, k0, i0, tid, j + 3, tv, sv);
  if (t->faces)
    mm_gpu_tile_xfaces(h, t, k0, i0, j0, tid, j, s);
  else
    mm_gpu_tile_cellwise(h, t, k0, i0, j0, tid, j, s);
  if (ahead) mm_gpu_tile_store(t, k0, i0, mm_gpu_tile_slot(j + 3, j0), tid, tv, sv, s);
}

/* kappa_w and the surface flux at the cell of thread tid (mm_cell_mixing). */
MM_CELL_FN void mm_gpu_mixing_thread(const mm_cell_mix *x, const mm_cell_rects *r, long nxh,
                                     long tid) {
  long col;
  int k;
  if (mm_cell_rect_index(r, x->nz, nxh, tid, &col, &k)) mm_cell_mixing(x, col, k);
}

/* Diagnostics: thread tid of nthreads takes the elements tid, tid +
 * nthreads, ... of the index space into its part p; the parts of a block
 * then merge in shared memory (mm_gpu_diag_tree), the blocks' parts on the
 * host. Merging is exact, so the order does not change the result. */
MM_CELL_FN void mm_gpu_diag_thread(const mm_cell_rects *r, int nz, long nxh, const int *kmt,
                                   const double *temp, const double *salt, const double *vol,
                                   long tid, long nthreads, mm_diag_part *p) {
  mm_diag_part_init(p);
  for (long e = tid; e < r->first[r->n]; e += nthreads) {
    long col;
    int k;
    mm_cell_rect_index(r, nz, nxh, e, &col, &k);
    if (k < kmt[col]) {
      const long pos = col * nz + k;
      mm_diag_part_add(p, temp[pos], salt[pos], vol[k], pos);
    }
  }
}

/* One level of the block's tree: thread t < s merges part t + s into part t
 * (s = MM_GPU_DIAG_THREADS / 2, / 4, ..., 1; a barrier between levels). */
MM_CELL_FN void mm_gpu_diag_tree_thread(mm_diag_part *part, int s, int t) {
  if (t < s) mm_diag_part_merge(&part[t], &part[t + s]);
}

#endif

/* The grid and its 2-D Cartesian decomposition over MPI ranks.
 *
 * Memory is column-contiguous: the nz levels of a column are adjacent and
 * consecutive columns (in x, then y) are adjacent. Each rank holds its block
 * of nxl x nyl columns surrounded by `halo` columns on every side:
 *   column index  col(i, j) = (j + halo) * nxh + (i + halo),  -halo <= i < nxl + halo
 *   element       [col * nz + k]
 */
#ifndef MM_GRID_H
#define MM_GRID_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "mm_config.h"
#include "mm_error.h"

#define MM_HALO 2 /* halo width: superbee needs two cells upstream */

typedef struct {
  /* global grid */
  int nx, ny, nz;
  double dx, dy; /* cell widths (m) */
  bool periodic_x, periodic_y;
  double *h;   /* [nz] layer thickness h_k (m) */
  double *z_w; /* [nz+1] interface depths, z_w[0] = 0 (m, positive down) */
  double *z_t; /* [nz] depth of cell centres (m) */
  double *dzw; /* [nz] distance between centres k and k+1; dzw[nz-1] = 0 (m) */
  double *vol; /* [nz] cell volume h_k * dx * dy (m3) */

  /* decomposition */
  MPI_Comm cart; /* Cartesian communicator, dims (py, px) */
  int rank, nranks;
  int px, py;                   /* ranks along x and y */
  int cx, cy;                   /* this rank's coordinates */
  int west, east, south, north; /* neighbour ranks or MPI_PROC_NULL at walls */
  int i0, j0;                   /* global index of the first local column */
  int nxl, nyl;                 /* local columns */
  int nxh, nyh;                 /* local columns including halo: nxl + 2 halo */
  size_t ncol_h;                /* nxh * nyh */

  int *kmt;       /* [ncol_h] wet levels per column, halo included; 0 = land */
  int *kmt_solve; /* [ncol_h] kmt in the block, 0 in the halo (solver depths) */
} mm_grid;

/* Build the grid for cfg on comm (collective). Errors: MM_ERR_INPUT for a
 * decomposition that does not fit the grid. */
MM_NODISCARD mm_err mm_grid_create(const mm_config *cfg, MPI_Comm comm, mm_grid *g);

/* Column fields that the emulated device (solver.backend = emulated) keeps
 * in host memory besides the model's: its copies of T, S, T*, S*, ue, vn
 * and of the last good T and S (mm_gpu_create). */
#define MM_GRID_EMULATED_FIELDS 8

/* Most columns per tile of the horizontal step (mm_horizontal_step splits
 * the columns evenly into tiles no wider). 64 rather than 32: a tile's rows
 * then no longer fit in L2, but the longer runs of each row that a tile
 * reads and writes stream better from memory (docs/performance.md). */
#define MM_HTILE 64
/* Doubles per level of one thread's workspace of the horizontal step
 * (mm_horizontal_ws): a column's faces and fluxes of a tile's rows. */
#define MM_HORIZONTAL_WS_LEVEL (8 + 4 * (MM_HTILE + 1))

/* OpenMP threads of a rank's step (mm_tdma_max_threads: OMP_NUM_THREADS
 * capped by OMP_THREAD_LIMIT; 1 without OpenMP): each has workspaces of
 * its own. */
int mm_grid_threads(void);

/* Estimated bytes per rank of cfg's run with a local block of nxl x nyl
 * columns of nz levels on `threads` OpenMP threads (the model's fields; two
 * records of one field in file order, the history's and a restart's or
 * crash file's; each thread's workspace of the horizontal step; what the
 * column solver of solver.tdma holds on those threads, as its backend
 * reports it (mm_tdma_host_bytes); and mm_grid_device_fields(cfg) more
 * column fields): what mm_grid_create checks against the memory
 * available. */
double mm_grid_memory_bytes(const mm_config *cfg, long nxl, long nyl, long nz, int threads);

/* Column fields of the device copy that cfg's backend adds to the step's
 * memory: MM_GRID_EMULATED_FIELDS for the emulated device, else 0. */
int mm_grid_device_fields(const mm_config *cfg);
void mm_grid_destroy(mm_grid *g);

/* Column index of local column (i, j), halo included. */
static inline size_t mm_col(const mm_grid *g, int i, int j) {
  return (size_t)(j + MM_HALO) * (size_t)g->nxh + (size_t)(i + MM_HALO);
}

/* Sea-floor depth D of global column (ig, jg) in [0, nx) x [0, ny) (m). */
double mm_bathymetry_depth(const mm_config *cfg, int ig, int jg);
/* Wet levels of global column (ig, jg); wraps periodic indices, returns -1 for
 * a column beyond a wall. */
int mm_grid_kmt_global(const mm_config *cfg, const mm_grid *g, int ig, int jg);

/* Layer thicknesses, interfaces and centres for cfg (h, z_w, z_t of nz, nz+1, nz). */
void mm_grid_levels(const mm_config *cfg, double *h, double *z_w, double *z_t);

#endif

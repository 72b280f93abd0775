/* Internal: transposes between the model's memory layout (column-contiguous,
 * k fastest, with halo) and the file order (z, y, x) of a rank's block. */
#ifndef MM_IO_LAYOUT_H
#define MM_IO_LAYOUT_H

#include "mm_grid.h"

/* A non-finite (or rejected) value found while unpacking. */
typedef struct {
  int found;   /* 0: none; 1: not finite; 2: equal to the rejected value */
  int i, j, k; /* global indices of the first one found in this block */
  double value;
} mm_io_bad;

/* Copy the rank's block of src (model layout, [mm_col(g,i,j)*nz + k]) into
 * dst in file order (z, y, x) of the block, dst[(k*nyl + j)*nxl + i], with
 * `land` on land cells (k >= kmt). Cache-sized tiles. */
void mm_io_pack(const mm_grid *g, const double *restrict src, double land, double *restrict dst);

/* The reverse: src in block file order to dst in model layout, 0 on land,
 * halo untouched. Reports the first wet value that is not finite (found =
 * 1) or equal to reject[r], r < n_reject (found = 2 + r: the values that
 * mark missing data). */
mm_io_bad mm_io_unpack(const mm_grid *g, const double *restrict src, const double *reject,
                       int n_reject, double *restrict dst);

/* The rank's block of kmt in file order (y, x): dst[j*nxl + i]. */
void mm_io_pack_kmt(const mm_grid *g, int *restrict dst);

#endif

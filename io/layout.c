#include "layout.h"

#include <math.h>

/* Tiles of the transposes: MM_IO_TILE_K levels x MM_IO_TILE_I columns.
 * 8 levels are one cache line of a column and touch 8 rows (levels) of the
 * file-order block, whose stride nxl * nyl * 8 bytes is often a multiple of
 * 4 KiB: more rows than that would evict each other from the same L1 sets.
 * 64 columns make each of those 8 rows 512 contiguous bytes. A tile is
 * 4 KiB of doubles on each side and stays in L1 while it is copied. */
enum { MM_IO_TILE_K = 8, MM_IO_TILE_I = 64 };

static inline int mm_min_int(int a, int b) {
  return a < b ? a : b;
}

void mm_io_pack(const mm_grid *g, const double *restrict src, double land, double *restrict dst) {
  const int nz = g->nz, nxl = g->nxl, nyl = g->nyl;
  const size_t plane = (size_t)nxl * (size_t)nyl; /* elements of one level of the block */
  for (int j = 0; j < nyl; j++)
    for (int kb = 0; kb < nz; kb += MM_IO_TILE_K)
      for (int ib = 0; ib < nxl; ib += MM_IO_TILE_I) {
        const int ke = mm_min_int(kb + MM_IO_TILE_K, nz);
        const int ie = mm_min_int(ib + MM_IO_TILE_I, nxl);
        for (int i = ib; i < ie; i++) {
          const size_t c = mm_col(g, i, j);
          const int kmt = g->kmt[c];
          const double *restrict column = src + c * (size_t)nz;
          double *restrict out = dst + (size_t)j * (size_t)nxl + (size_t)i;
          for (int k = kb; k < ke; k++)
            out[(size_t)k * plane] = k < kmt ? column[k] : land;
        }
      }
}

mm_io_bad mm_io_unpack(const mm_grid *g, const double *restrict src, const double *reject,
                       int n_reject, double *restrict dst) {
  const int nz = g->nz, nxl = g->nxl, nyl = g->nyl;
  const size_t plane = (size_t)nxl * (size_t)nyl;
  mm_io_bad bad = {0};
  for (int j = 0; j < nyl; j++)
    for (int kb = 0; kb < nz; kb += MM_IO_TILE_K)
      for (int ib = 0; ib < nxl; ib += MM_IO_TILE_I) {
        const int ke = mm_min_int(kb + MM_IO_TILE_K, nz);
        const int ie = mm_min_int(ib + MM_IO_TILE_I, nxl);
        for (int i = ib; i < ie; i++) {
          const size_t c = mm_col(g, i, j);
          const int kmt = g->kmt[c];
          const double *restrict in = src + (size_t)j * (size_t)nxl + (size_t)i;
          double *restrict column = dst + c * (size_t)nz;
          for (int k = kb; k < ke; k++) {
            const double v = in[(size_t)k * plane];
            if (k >= kmt) {
              column[k] = 0.0;
              continue;
            }
            column[k] = v;
            int why = !isfinite(v) ? 1 : 0;
            for (int r = 0; r < n_reject && !why; r++)
              if (v == reject[r]) why = 2 + r;
            if (why && !bad.found)
              bad = (mm_io_bad){.found = why, .i = g->i0 + i, .j = g->j0 + j, .k = k, .value = v};
          }
        }
      }
  return bad;
}

void mm_io_pack_kmt(const mm_grid *g, int *restrict dst) {
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++)
      dst[(size_t)j * (size_t)g->nxl + (size_t)i] = g->kmt[mm_col(g, i, j)];
}

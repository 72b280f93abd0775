/* simd in single precision: the tile kernel (tdma_simd_tile.h) for float
 * and the backend's single-precision entry points; the rest of the backend
 * is in tdma_simd.c (tdma_simd.h says why two files). */
#include "tdma_simd.h"

/* Single precision. */
#define MM_T          float
#define MM_V          mm_vf
#define MM_L          MM_LF
#define MM_NV         MM_SIMD_NV
#define MM_SUF        _f
#define MM_TRANSPOSE  MM_TRANSPOSE_F
#define MM_COL_THOMAS mm_col_thomas_f
#define MM_COL_FUSED  mm_col_fused_f
#include "tdma_simd_tile.h"

int mm_simd_solve_f(void *ctx, const mm_tdma_batch *bt, const float *a, const float *b,
                    const float *c, float *const *rhs, int nrhs) {
  mm_job_f jb = {.a = a, .b = b, .c = c, .rhs = rhs, .nrhs = nrhs};
  return mm_run_batch_f(ctx, bt, &jb);
}

int mm_simd_fused_f(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry_f *geo,
                    const float *kappa, float *const *rhs, int nrhs) {
  mm_job_f jb = {
      .fused = 1, .kappa = kappa, .g = geo->g, .inv_h = geo->inv_h, .rhs = rhs, .nrhs = nrhs};
  return mm_run_batch_f(ctx, bt, &jb);
}

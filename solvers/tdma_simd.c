/* simd: the Thomas algorithm vectorised across columns (method: see
 * tdma_simd_tile.h). Bitwise identical to `reference` in both precisions.
 *
 * Vectors are 32 bytes (4 doubles or 8 floats: AVX2; the compiler lowers
 * them to two SSE2 halves on older x86 and to NEON pairs on AArch64). Two
 * vectors per tile keep two divisions in flight, so a tile is 8 columns in
 * double and 16 in single precision. Built with MINIMODEL_SIMD off, the same
 * code runs with one-lane "vectors": a scalar tile of MM_NV interleaved
 * columns (no SIMD instructions required). OpenMP threads share the batch in
 * chunks of whole tiles; each thread has its own tile workspace. */
#include <stdlib.h>

#include "tdma_simd.h"

/* Double precision. */
#define MM_T          double
#define MM_V          mm_vd
#define MM_L          MM_LD
#define MM_NV         MM_SIMD_NV
#define MM_SUF        _d
#define MM_TRANSPOSE  MM_TRANSPOSE_D
#define MM_COL_THOMAS mm_col_thomas
#define MM_COL_FUSED  mm_col_fused
#include "tdma_simd_tile.h"
#undef MM_T
#undef MM_V
#undef MM_L
#undef MM_SUF
#undef MM_TRANSPOSE
#undef MM_COL_THOMAS
#undef MM_COL_FUSED

static int simd_create(void **ctx, int nz) {
  simd_ctx *s = calloc(1, sizeof *s);
  if (!s) return MM_TDMA_ENOMEM;
  s->nz = nz;
  mm_tdma_ws_init(&s->ws); /* sized by each call (mm_run_batch) */
  *ctx = s;
  return MM_TDMA_OK;
}

static void simd_destroy(void *ctx) {
  simd_ctx *s = ctx;
  if (!s) return;
  mm_tdma_ws_free(&s->ws);
  free(s);
}

static int simd_solve(void *ctx, const mm_tdma_batch *bt, const double *a, const double *b,
                      const double *c, double *const *rhs, int nrhs) {
  mm_job_d jb = {.a = a, .b = b, .c = c, .rhs = rhs, .nrhs = nrhs};
  return mm_run_batch_d(ctx, bt, &jb);
}

static int simd_fused(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                      const double *kappa, double *const *rhs, int nrhs) {
  mm_job_d jb = {
      .fused = 1, .kappa = kappa, .g = geo->g, .inv_h = geo->inv_h, .rhs = rhs, .nrhs = nrhs};
  return mm_run_batch_d(ctx, bt, &jb);
}

static int simd_fused_mixing(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                             const mm_tdma_mixing *mix, double *const rhs[2]) {
  mm_job_d jb = {.fused = 1,
                 .g = geo->g,
                 .inv_h = geo->inv_h,
                 .rhs = rhs,
                 .nrhs = 2,
                 .mixing = 1,
                 .alpha = mix->alpha,
                 .beta = mix->beta,
                 .kappa_v = mix->kappa_v,
                 .kappa_mix = mix->kappa_mix,
                 .top = mix->top,
                 .convect = mix->convect};
  return mm_run_batch_d(ctx, bt, &jb);
}

/* A tile's block in each thread, of the larger vector (the same bytes in
 * both precisions when vectorised; a double in the scalar build); a batch
 * solved column by column takes less. */
static size_t simd_host_bytes(int nz, int nrhs, int nthreads) {
  const size_t vector = sizeof(mm_vd) > sizeof(mm_vf) ? sizeof(mm_vd) : sizeof(mm_vf);
  return mm_tdma_ws_bytes(nthreads, simd_tile_bytes(nz, nrhs, vector));
}

const mm_tdma_backend mm_tdma_simd = {
    .name = "simd",
    .description = MM_SIMD_DESC,
    .device_memory = 0,
    .exact = 1,
    .available = NULL,
    .create = simd_create,
    .destroy = simd_destroy,
    .solve = simd_solve,
    .solve_f = mm_simd_solve_f,
    .fused = simd_fused,
    .fused_f = mm_simd_fused_f,
    .fused_mixing = simd_fused_mixing,
    .host_bytes = simd_host_bytes,
    /* auto's choice on the CPU: the fastest for every shape measured
     * (docs/performance.md), 2.5x to 7x faster than omp per core from nz = 8
     * (nz = 4 in double) up, about as fast below, and it threads like omp */
    .priority = 30,
};

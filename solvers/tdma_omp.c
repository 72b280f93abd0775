/* omp: the reference arithmetic (mm_tdma_column.h), one column at a time,
 * with OpenMP threads over columns. Bitwise identical to `reference`: every
 * column runs exactly the same scalar code; only who runs it changes. It is
 * also the fallback of `auto` when the SIMD backend is not built. */
#include <stdlib.h>

#include "mm_tdma.h"
#include "mm_tdma_column.h"
#include "tdma_internal.h"

typedef struct {
  int nz;
  mm_tdma_ws ws; /* per thread: c' of one column, nz doubles */
} omp_ctx;

static int omp_create(void **ctx, int nz) {
  omp_ctx *o = calloc(1, sizeof *o);
  if (!o) return MM_TDMA_ENOMEM;
  o->nz = nz;
  mm_tdma_ws_init(&o->ws);
  *ctx = o;
  return MM_TDMA_OK;
}

/* A thread's block: c' of one column of elements of elem bytes (what a call
 * reserves and omp_host_bytes counts) */
static size_t omp_block_bytes(int nz, size_t elem) {
  return (size_t)nz * elem;
}

static void omp_destroy(void *ctx) {
  omp_ctx *o = ctx;
  if (!o) return;
  mm_tdma_ws_free(&o->ws);
  free(o);
}

/* Both operations of both precisions share this loop; OP is the column call. */
#define OMP_COLUMNS(T, OP)                                                                         \
  omp_ctx *o = ctx;                                                                                \
  int rc = mm_tdma_check_depths(bt);                                                               \
  if (rc) return rc;                                                                               \
  int nt = mm_tdma_threads_for(bt->ncol * (size_t)bt->nz);                                         \
  if ((rc = mm_tdma_ws_reserve(&o->ws, nt, omp_block_bytes(o->nz, sizeof(T))))) return rc;         \
  const long ncol = (long)bt->ncol;                                                                \
  if (nt == 1) { /* no parallel region: it costs more than a small batch */                        \
    T *cp = mm_tdma_ws_block(&o->ws, 0);                                                           \
    for (long col = 0; col < ncol; col++) {                                                        \
      long off = col * (long)bt->nz;                                                               \
      OP;                                                                                          \
    }                                                                                              \
    return MM_TDMA_OK;                                                                             \
  }                                                                                                \
  _Pragma("omp parallel num_threads(nt)") {                                                        \
    T *cp = mm_tdma_ws_block(&o->ws, mm_tdma_thread_num());                                        \
    _Pragma("omp for schedule(dynamic, 256)") for (long col = 0; col < ncol; col++) {              \
      long off = col * (long)bt->nz;                                                               \
      OP;                                                                                          \
    }                                                                                              \
  }                                                                                                \
  return MM_TDMA_OK;

static int omp_solve(void *ctx, const mm_tdma_batch *bt, const double *a, const double *b,
                     const double *c, double *const *rhs, int nrhs) {
  OMP_COLUMNS(double, mm_col_thomas(bt->depth[col], a + off, b + off, c + off, rhs, nrhs, off, cp))
}
static int omp_solve_f(void *ctx, const mm_tdma_batch *bt, const float *a, const float *b,
                       const float *c, float *const *rhs, int nrhs) {
  OMP_COLUMNS(float, mm_col_thomas_f(bt->depth[col], a + off, b + off, c + off, rhs, nrhs, off, cp))
}
static int omp_fused(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                     const double *kappa, double *const *rhs, int nrhs) {
  OMP_COLUMNS(double,
              mm_col_fused(bt->depth[col], kappa + off, geo->g, geo->inv_h, rhs, nrhs, off, cp))
}
static int omp_fused_f(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry_f *geo,
                       const float *kappa, float *const *rhs, int nrhs) {
  OMP_COLUMNS(float,
              mm_col_fused_f(bt->depth[col], kappa + off, geo->g, geo->inv_h, rhs, nrhs, off, cp))
}

static size_t omp_host_bytes(int nz, int nrhs, int nthreads) {
  (void)nrhs;
  return mm_tdma_ws_bytes(nthreads, omp_block_bytes(nz, sizeof(double)));
}

const mm_tdma_backend mm_tdma_omp = {
    .name = "omp",
    .description = "reference Thomas per column, OpenMP threads over columns",
    .device_memory = 0,
    .exact = 1,
    .available = NULL,
    .create = omp_create,
    .destroy = omp_destroy,
    .solve = omp_solve,
    .solve_f = omp_solve_f,
    .fused = omp_fused,
    .fused_f = omp_fused_f,
    .host_bytes = omp_host_bytes,
    .priority = 20,
};

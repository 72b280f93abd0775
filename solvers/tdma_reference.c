/* reference: the textbook Thomas algorithm, one column at a time. Every other
 * backend is tested against it. */
#include <stdlib.h>

#include "mm_tdma.h"
#include "mm_tdma_column.h"
#include "tdma_internal.h"

typedef struct {
  double *cp;
  float *cp_f;
} ref_ctx;

static int ref_create(void **ctx, int nz) {
  ref_ctx *r = calloc(1, sizeof *r);
  if (!r) return MM_TDMA_ENOMEM;
  r->cp = malloc((size_t)nz * sizeof *r->cp);
  r->cp_f = malloc((size_t)nz * sizeof *r->cp_f);
  if (!r->cp || !r->cp_f) {
    free(r->cp);
    free(r->cp_f);
    free(r);
    return MM_TDMA_ENOMEM;
  }
  *ctx = r;
  return MM_TDMA_OK;
}

static void ref_destroy(void *ctx) {
  ref_ctx *r = ctx;
  if (!r) return;
  free(r->cp);
  free(r->cp_f);
  free(r);
}

#define REF_DEFINE(T, SUF, CP)                                                                     \
  static int ref_solve##SUF(void *ctx, const mm_tdma_batch *bt, const T *a, const T *b,            \
                            const T *c, T *const *rhs, int nrhs) {                                 \
    ref_ctx *r = ctx;                                                                              \
    if (mm_tdma_check_depths(bt)) return MM_TDMA_EINVAL; /* before touching any data */            \
    for (size_t col = 0; col < bt->ncol; col++) {                                                  \
      int n = bt->depth[col];                                                                      \
      long off = (long)(col * (size_t)bt->nz);                                                     \
      mm_col_thomas##SUF(n, a + off, b + off, c + off, rhs, nrhs, off, r->CP);                     \
    }                                                                                              \
    return MM_TDMA_OK;                                                                             \
  }                                                                                                \
  static int ref_fused##SUF(void *ctx, const mm_tdma_batch *bt, const GEO##SUF *geo,               \
                            const T *kappa, T *const *rhs, int nrhs) {                             \
    ref_ctx *r = ctx;                                                                              \
    if (mm_tdma_check_depths(bt)) return MM_TDMA_EINVAL;                                           \
    for (size_t col = 0; col < bt->ncol; col++) {                                                  \
      int n = bt->depth[col];                                                                      \
      long off = (long)(col * (size_t)bt->nz);                                                     \
      mm_col_fused##SUF(n, kappa + off, geo->g, geo->inv_h, rhs, nrhs, off, r->CP);                \
    }                                                                                              \
    return MM_TDMA_OK;                                                                             \
  }

#define GEO   mm_tdma_geometry
#define GEO_f mm_tdma_geometry_f
REF_DEFINE(double, , cp)
REF_DEFINE(float, _f, cp_f)

/* c' of one column in each precision, made with the solver; one thread */
static size_t ref_host_bytes(int nz, int nrhs, int nthreads) {
  (void)nrhs, (void)nthreads;
  return (size_t)nz * (sizeof(double) + sizeof(float));
}

const mm_tdma_backend mm_tdma_reference = {
    .name = "reference",
    .description = "textbook Thomas algorithm, one column at a time",
    .device_memory = 0,
    .exact = 1,
    .available = NULL,
    .create = ref_create,
    .destroy = ref_destroy,
    .solve = ref_solve,
    .solve_f = ref_solve_f,
    .fused = ref_fused,
    .fused_f = ref_fused_f,
    .host_bytes = ref_host_bytes,
    .priority = 10,
};

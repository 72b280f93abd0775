/* lapack: LAPACK's general tridiagonal solver (gtsv: Gaussian elimination with
 * partial pivoting) per column, through LAPACKE, with OpenMP threads over
 * columns. A yardstick, not bitwise identical to reference (pivoting and a
 * different operation order), hence exact = 0 and absent from auto.
 *
 * gtsv overwrites its diagonals with the factorisation and its right-hand
 * side block with the solution, so each column's diagonals and right-hand
 * sides are copied to per-thread workspace (n x nrhs, column-major) and the
 * solution is copied back. The LAPACKE _work entry points are used: the same
 * routine without LAPACKE's extra NaN scan of the inputs. */
#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "mm_tdma.h"
#include "mm_tdma_column.h"
#include "tdma_internal.h"

typedef struct {
  int nz;
  mm_tdma_ws ws; /* per thread: dl, d, du (nz each) and nz x nrhs of the call */
} lapack_ctx;

static int lapack_create(void **ctx, int nz) {
  lapack_ctx *l = calloc(1, sizeof *l);
  if (!l) return MM_TDMA_ENOMEM;
  l->nz = nz;
  mm_tdma_ws_init(&l->ws);
  *ctx = l;
  return MM_TDMA_OK;
}

/* A thread's block: dl, d, du and the right-hand sides of one column of
 * elements of elem bytes (what a call reserves and lapack_host_bytes counts) */
static size_t lapack_block_bytes(int nz, int nrhs, size_t elem) {
  return (size_t)nz * (size_t)(3 + nrhs) * elem;
}

static void lapack_destroy(void *ctx) {
  lapack_ctx *l = ctx;
  if (!l) return;
  mm_tdma_ws_free(&l->ws);
  free(l);
}

/* One column: the last argument (BUILD) fills dl[0..n-2], dg[0..n-1] and
 * du[0..n-2] of column `col` (offset off, n levels); GTSV is the LAPACKE
 * routine of the precision. Variadic because BUILD may contain commas. */
#define LAPACK_COLUMN(T, GTSV, ...)                                                                \
  do {                                                                                             \
    const int n = bt->depth[col];                                                                  \
    if (n == 0) break;                                                                             \
    const long off = col * (long)bt->nz;                                                           \
    __VA_ARGS__;                                                                                   \
    for (int r = 0; r < nrhs; r++)                                                                 \
      memcpy(x + (long)r * n, rhs[r] + off, (size_t)n * sizeof(T));                                \
    lapack_int info = GTSV(LAPACK_COL_MAJOR, n, nrhs, dl, dg, du, x, n);                           \
    if (info != 0) {                                                                               \
      err = info > 0 ? MM_TDMA_ESINGULAR : MM_TDMA_EINVAL;                                         \
      break;                                                                                       \
    }                                                                                              \
    for (int r = 0; r < nrhs; r++)                                                                 \
      memcpy(rhs[r] + off, x + (long)r * n, (size_t)n * sizeof(T));                                \
  } while (0)

/* The whole batch: one thread for small batches, else OpenMP over columns. */
#define LAPACK_COLUMNS(T, GTSV, BUILD)                                                             \
  lapack_ctx *ctx_ = ctx;                                                                          \
  int rc = mm_tdma_check_depths(bt);                                                               \
  if (rc) return rc;                                                                               \
  int nt = mm_tdma_threads_for(bt->ncol * (size_t)bt->nz);                                         \
  if (nt > 1 && (size_t)nt > bt->ncol) nt = (int)bt->ncol; /* a thread without a column */         \
  if ((rc = mm_tdma_ws_reserve(&ctx_->ws, nt, lapack_block_bytes(ctx_->nz, nrhs, sizeof(T)))))     \
    return rc;                                                                                     \
  const long ncol = (long)bt->ncol;                                                                \
  const int nz = ctx_->nz;                                                                         \
  int err = 0;                                                                                     \
  if (nt == 1) {                                                                                   \
    T *dl = mm_tdma_ws_block(&ctx_->ws, 0);                                                        \
    T *dg = dl + nz, *du = dg + nz, *x = du + nz;                                                  \
    for (long col = 0; col < ncol; col++)                                                          \
      LAPACK_COLUMN(T, GTSV, BUILD);                                                               \
    return err;                                                                                    \
  }                                                                                                \
  _Pragma("omp parallel num_threads(nt) reduction(max : err)") {                                   \
    T *dl = mm_tdma_ws_block(&ctx_->ws, mm_tdma_thread_num());                                     \
    T *dg = dl + nz, *du = dg + nz, *x = du + nz;                                                  \
    _Pragma("omp for schedule(dynamic, 256)") for (long col = 0; col < ncol; col++)                \
        LAPACK_COLUMN(T, GTSV, BUILD);                                                             \
  }                                                                                                \
  return err;

#define LAPACK_COPY_DIAGONALS(T)                                                                   \
  memcpy(dg, b + off, (size_t)n * sizeof(T));                                                      \
  if (n > 1) {                                                                                     \
    memcpy(dl, a + off + 1, (size_t)(n - 1) * sizeof(T));                                          \
    memcpy(du, c + off, (size_t)(n - 1) * sizeof(T));                                              \
  }

/* The coefficients of mm_col_coeffs (the same formulas as every fused solve). */
#define LAPACK_BUILD_DIAGONALS(COEFFS)                                                             \
  for (int k = 0; k < n; k++) {                                                                    \
    __typeof__(*dg) ak, bk, ck;                                                                    \
    COEFFS(k, n, kappa + off, geo->g, geo->inv_h, &ak, &bk, &ck);                                  \
    dg[k] = bk;                                                                                    \
    if (k > 0) dl[k - 1] = ak;                                                                     \
    if (k < n - 1) du[k] = ck;                                                                     \
  }

static int lapack_solve(void *ctx, const mm_tdma_batch *bt, const double *a, const double *b,
                        const double *c, double *const *rhs, int nrhs) {
  LAPACK_COLUMNS(double, LAPACKE_dgtsv_work, LAPACK_COPY_DIAGONALS(double))
}
static int lapack_solve_f(void *ctx, const mm_tdma_batch *bt, const float *a, const float *b,
                          const float *c, float *const *rhs, int nrhs) {
  LAPACK_COLUMNS(float, LAPACKE_sgtsv_work, LAPACK_COPY_DIAGONALS(float))
}
static int lapack_fused(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                        const double *kappa, double *const *rhs, int nrhs) {
  LAPACK_COLUMNS(double, LAPACKE_dgtsv_work, LAPACK_BUILD_DIAGONALS(mm_col_coeffs))
}
static int lapack_fused_f(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry_f *geo,
                          const float *kappa, float *const *rhs, int nrhs) {
  LAPACK_COLUMNS(float, LAPACKE_sgtsv_work, LAPACK_BUILD_DIAGONALS(mm_col_coeffs_f))
}

static size_t lapack_host_bytes(int nz, int nrhs, int nthreads) {
  return mm_tdma_ws_bytes(nthreads, lapack_block_bytes(nz, nrhs, sizeof(double)));
}

const mm_tdma_backend mm_tdma_lapack = {
    .name = "lapack",
    .description = "LAPACK gtsv (partial pivoting) per column, OpenMP threads over columns",
    .device_memory = 0,
    .exact = 0,
    .available = NULL,
    .create = lapack_create,
    .destroy = lapack_destroy,
    .solve = lapack_solve,
    .solve_f = lapack_solve_f,
    .fused = lapack_fused,
    .fused_f = lapack_fused_f,
    .host_bytes = lapack_host_bytes,
    .priority = 0,
};

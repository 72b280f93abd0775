/* Bitwise agreement of the exact backends: every backend with .exact = 1
 * gives results bit for bit equal to `reference` on random batches with
 * random depths (0, 1, 2 and nz among them), column counts that are not
 * multiples of any tile width, nz in {1, 2, 3, 17, 100}, 1..3 and
 * MM_TDMA_MAX_RHS right-hand sides, both precisions, plain and fused, with 1
 * to 3 threads. Also: the fused solve equals the plain solve of the
 * explicitly built coefficients (bitwise, for every exact backend), and
 * "auto" picks an exact backend. A flipped bit must be caught. */
#include "tdma_test_util.h"

/* Index of the first element where two arrays differ bitwise, or -1. */
static long first_diff(const void *x, const void *y, size_t n, size_t size) {
  const unsigned char *p = x, *q = y;
  for (size_t i = 0; i < n; i++)
    if (memcmp(p + i * size, q + i * size, size)) return (long)i;
  return -1;
}

/* Solve t with backend `name`; results into fresh copies of the rhs. */
static int solve_with(const char *name, const tu_batch *t, int fused, int single, int nrhs,
                      double ***xd, float ***xf) {
  mm_tdma *s;
  int rc = mm_tdma_create(name, t->nz, 0, &s);
  if (rc) return rc;
  const mm_tdma_batch bt = {.ncol = t->ncol, .nz = t->nz, .depth = t->depth};
  const mm_tdma_geometry geo = {.inv_h = t->inv_h, .g = t->g};
  const mm_tdma_geometry_f geof = {.inv_h = t->inv_hf, .g = t->gf};
  if (single) {
    *xf = tu_copy_rhs_f(t);
    rc = fused ? mm_tdma_fused_f(s, &bt, &geof, t->kappaf, *xf, nrhs)
               : mm_tdma_solve_f(s, &bt, t->af, t->bf, t->cf, *xf, nrhs);
  } else {
    *xd = tu_copy_rhs(t);
    rc = fused ? mm_tdma_fused(s, &bt, &geo, t->kappa, *xd, nrhs)
               : mm_tdma_solve(s, &bt, t->a, t->b, t->c, *xd, nrhs);
  }
  mm_tdma_destroy(s);
  return rc;
}

/* Compares every rhs of two results; returns 1 if bitwise equal. */
static int same(const tu_batch *t, int single, int nrhs, double **xd, float **xf, double **yd,
                float **yf, const char *what) {
  const size_t n = t->ncol * (size_t)t->nz;
  for (int q = 0; q < nrhs; q++) {
    long i = single ? first_diff(xf[q], yf[q], n, sizeof(float))
                    : first_diff(xd[q], yd[q], n, sizeof(double));
    if (i >= 0) {
      if (what)
        fprintf(stderr, "  %s: rhs %d differs at column %ld level %ld: %.17g vs %.17g\n", what, q,
                i / t->nz, i % t->nz, single ? (double)xf[q][i] : xd[q][i],
                single ? (double)yf[q][i] : yd[q][i]);
      return 0;
    }
  }
  return 1;
}

static int negative_control_done;

static void compare_backend(const mm_tdma_backend *be, const tu_batch *t, int fused, int single,
                            int nrhs) {
  double **xd = NULL, **yd = NULL;
  float **xf = NULL, **yf = NULL;
  int rc = solve_with("reference", t, fused, single, nrhs, &xd, &xf);
  TU_CHECK(rc == 0, "reference: %s", mm_tdma_strerror(rc));
  rc = solve_with(be->name, t, fused, single, nrhs, &yd, &yf);
  if (rc == MM_TDMA_ENOTSUP) goto done;
  TU_CHECK(rc == 0, "%s: %s", be->name, mm_tdma_strerror(rc));
  char what[160];
  snprintf(what, sizeof what, "%s %s %s ncol=%zu nz=%d nrhs=%d", be->name,
           single ? "single" : "double", fused ? "fused" : "solve", t->ncol, t->nz, nrhs);
  TU_CHECK(same(t, single, nrhs, xd, xf, yd, yf, what), "%s: not bitwise equal to reference", what);
  if (!negative_control_done && t->ncol > 30) {
    /* Flip the lowest mantissa bit of one wet value: must be caught. */
    size_t col = 0;
    while (t->depth[col] == 0)
      col++;
    const size_t i = col * (size_t)t->nz + (size_t)(t->depth[col] - 1);
    if (single) {
      uint32_t u;
      memcpy(&u, &yf[0][i], 4);
      u ^= 1;
      memcpy(&yf[0][i], &u, 4);
    } else {
      uint64_t u;
      memcpy(&u, &yd[0][i], 8);
      u ^= 1;
      memcpy(&yd[0][i], &u, 8);
    }
    negative_control_done = !same(t, single, nrhs, xd, xf, yd, yf, NULL);
    TU_CHECK(negative_control_done, "negative control: a flipped bit was not caught");
  }
done:
  if (xd) tu_free_rhs(xd, t->nrhs);
  if (xf) tu_free_rhs(xf, t->nrhs);
  if (yd) tu_free_rhs(yd, t->nrhs);
  if (yf) tu_free_rhs(yf, t->nrhs);
}

/* fused(kappa) == solve(coefficients built by the test), bitwise. */
static void fused_equals_plain(const char *name, const tu_batch *t, int single, int nrhs) {
  tu_batch p = *t; /* shares everything but a, b, c */
  const size_t n = t->ncol * (size_t)t->nz;
  p.a = tu_xmalloc(n * sizeof(double));
  p.b = tu_xmalloc(n * sizeof(double));
  p.c = tu_xmalloc(n * sizeof(double));
  p.af = tu_xmalloc(n * sizeof(float));
  p.bf = tu_xmalloc(n * sizeof(float));
  p.cf = tu_xmalloc(n * sizeof(float));
  for (size_t col = 0; col < t->ncol; col++) {
    const size_t off = col * (size_t)t->nz;
    tu_build_double(t->depth[col], t->kappa + off, t->g, t->inv_h, p.a + off, p.b + off, p.c + off);
    tu_build_float(t->depth[col], t->kappaf + off, t->gf, t->inv_hf, p.af + off, p.bf + off,
                   p.cf + off);
  }
  double **xd = NULL, **yd = NULL;
  float **xf = NULL, **yf = NULL;
  int rc1 = solve_with(name, t, 1, single, nrhs, &xd, &xf);
  int rc2 = solve_with(name, &p, 0, single, nrhs, &yd, &yf);
  TU_CHECK(rc1 == 0 && rc2 == 0, "%s: %s / %s", name, mm_tdma_strerror(rc1), mm_tdma_strerror(rc2));
  if (!rc1 && !rc2)
    TU_CHECK(same(t, single, nrhs, xd, xf, yd, yf, name),
             "%s %s nz=%d: fused differs from plain with built coefficients", name,
             single ? "single" : "double", t->nz);
  if (xd) tu_free_rhs(xd, t->nrhs);
  if (xf) tu_free_rhs(xf, t->nrhs);
  if (yd) tu_free_rhs(yd, t->nrhs);
  if (yf) tu_free_rhs(yf, t->nrhs);
  free(p.a), free(p.b), free(p.c), free(p.af), free(p.bf), free(p.cf);
}

int main(void) {
  tu_rng rng = {2026};
  const size_t ncols[] = {1, 3, 7, 37, 1001};
  const int nzs[] = {1, 2, 3, 17, 100};
  const int nrhss[] = {1, 2, 3, MM_TDMA_MAX_RHS};
  int nexact = 0;
  for (const mm_tdma_backend *const *pb = mm_tdma_backends(); *pb; pb++)
    if ((*pb)->exact && !(*pb)->device_memory && strcmp((*pb)->name, "reference")) nexact++;
  TU_CHECK(nexact >= 1, "no exact fast backend compiled in");

  for (int threads = 1; threads <= 3; threads++) {
    tu_set_threads(threads);
    for (size_t ic = 0; ic < sizeof ncols / sizeof *ncols; ic++)
      for (size_t iz = 0; iz < sizeof nzs / sizeof *nzs; iz++) {
        /* Threads only matter where the batch is big enough to be split. */
        if (threads > 1 && ncols[ic] * (size_t)nzs[iz] < 32768) continue;
        for (size_t ir = 0; ir < sizeof nrhss / sizeof *nrhss; ir++) {
          const int nrhs = nrhss[ir];
          tu_batch t;
          tu_batch_make(&t, &rng, ncols[ic], nzs[iz], nrhs, NULL);
          for (const mm_tdma_backend *const *pb = mm_tdma_backends(); *pb; pb++) {
            const mm_tdma_backend *be = *pb;
            if (!be->exact || be->device_memory || (be->available && !be->available())) continue;
            for (int fused = 0; fused <= 1; fused++)
              for (int single = 0; single <= 1; single++) {
                if (strcmp(be->name, "reference")) compare_backend(be, &t, fused, single, nrhs);
                if (!fused) fused_equals_plain(be->name, &t, single, nrhs);
              }
          }
          tu_batch_free(&t);
        }
      }
  }

  /* Uniform full-depth batches too (the fast paths of tiled backends: one
   * right-hand side has a kernel of its own in simd), with nz around
   * multiples of the vector widths. */
  tu_set_threads(2);
  for (int nz = 1; nz <= 20; nz++) {
    const size_t ncol = 1003; /* a last tile of 3 (double) or 11 (single) live columns */
    int *depth = tu_xmalloc(ncol * sizeof *depth);
    for (size_t i = 0; i < ncol; i++)
      depth[i] = nz;
    tu_batch t;
    tu_batch_make(&t, &rng, ncol, nz, 2, depth);
    free(depth);
    for (const mm_tdma_backend *const *pb = mm_tdma_backends(); *pb; pb++)
      if ((*pb)->exact && !(*pb)->device_memory && strcmp((*pb)->name, "reference"))
        for (int fused = 0; fused <= 1; fused++)
          for (int single = 0; single <= 1; single++)
            for (int nrhs = 1; nrhs <= 2; nrhs++)
              compare_backend(*pb, &t, fused, single, nrhs);
    tu_batch_free(&t);
  }

  /* auto: an exact CPU backend, so its choice never changes a result. */
  mm_tdma *s;
  int rc = mm_tdma_create("auto", 10, 0, &s);
  TU_CHECK(rc == 0, "auto: %s", mm_tdma_strerror(rc));
  if (!rc) {
    const mm_tdma_backend *be = mm_tdma_backend_of(s);
    printf("auto -> %s\n", be->name);
    TU_CHECK(be->exact && !be->device_memory, "auto picked %s, not an exact CPU backend", be->name);
    mm_tdma_destroy(s);
  }

  TU_CHECK(negative_control_done, "negative control did not run");
  if (tu_failures) {
    printf("%d failures\n", tu_failures);
    return 1;
  }
  printf("%d exact backend(s) bitwise equal to reference\n", nexact);
  return 0;
}

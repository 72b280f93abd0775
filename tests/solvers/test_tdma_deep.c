/* Deep columns, for every exact CPU backend:
 *  1. one deep column costs workspace of the order of its data, not of the
 *     most right-hand sides and threads a call could have (simd reserved
 *     1 + MM_TDMA_MAX_RHS d' of a whole tile of lanes per thread: 2.6 GB a
 *     thread for one column of 2e6 levels).
 *  2. a few deep columns (2 and 3, float32) cost workspace below their
 *     data: simd reserved a whole tile of 16 lanes for them, 4 times the
 *     data of two columns;
 *  3. float32 columns deeper than 2^24 levels beside a column of another
 *     depth, in one tile (in a batch of 8 columns, the rest land, wide
 *     enough for tiles), give `reference`'s bits (simd compared level
 *     numbers as floats, which hold every integer only up to 2^24: depth
 *     2^24 + 2 ended the column one level early, and the levels above it
 *     came out wrong);
 * About 3 GB of memory at its peak. */
#include "tdma_test_util.h"

/* The peak virtual size of this process so far (bytes; /proc/self/status,
 * VmPeak): a workspace reserved counts whether or not it is touched. */
static double peak_bytes(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  double kb = -1.0;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmPeak: %lf kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb * 1024.0;
}

/* A diagonally dominant system of ncol columns of nz levels (float32). */
static void deep_system(size_t n, float *a, float *b, float *c, float *d) {
  for (size_t e = 0; e < n; e++) {
    a[e] = -0.25f, c[e] = -0.25f, b[e] = 1.0f;
    d[e] = (float)(1 + (e * 7919) % 13) / 8.0f;
  }
}

int main(void) {
  /* 1. one column of 2e6 levels in double, on the threads the test has
   * (first: the peak only grows) */
  {
    const int nz = 2000000;
    const size_t n = (size_t)nz;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c),
           *x = malloc(n * sizeof *x);
    if (!(a && b && c && x)) return 1;
    for (size_t e = 0; e < n; e++)
      a[e] = -0.25, b[e] = 1.0, c[e] = -0.25, x[e] = 1.0;
    const int depth[1] = {nz};
    const mm_tdma_batch bt = {.ncol = 1, .nz = nz, .depth = depth};
    const double data = 4.0 * (double)n * sizeof(double);
    for (const mm_tdma_backend *const *pb = mm_tdma_backends(); *pb; pb++) {
      const mm_tdma_backend *be = *pb;
      if (be->device_memory || (be->available && !be->available())) continue;
      mm_tdma *s = NULL;
      if (mm_tdma_create(be->name, nz, 0, &s) != MM_TDMA_OK) continue;
      const double before = peak_bytes();
      TU_CHECK(before > 0, "no VmPeak in /proc/self/status");
      const int rc = mm_tdma_solve(s, &bt, a, b, c, &x, 1);
      const double grown = peak_bytes() - before;
      TU_CHECK(rc == MM_TDMA_OK, "%s: deep column: %s", be->name, mm_tdma_strerror(rc));
      /* a tile of 16 lanes, c' and d': 32 values a level; the data: 4 */
      TU_CHECK(
          grown <= 10.0 * data,
          "%s: one column of %d levels grew the peak virtual size by %.0f MB (%.1f x its data)",
          be->name, nz, grown / 1e6, grown / data);
      printf("%s: one column of %d levels: peak virtual size grew by %.0f MB (%.1f x the data)\n",
             be->name, nz, grown / 1e6, grown / data);
      mm_tdma_destroy(s);
    }
    free(a), free(b), free(c), free(x);
  }
  /* 2. two and three columns of 4e6 levels in float32 (arrays larger than
   * part 1's peak, so that the peak measures them) */
  for (int ncol = 2; ncol <= 3; ncol++) {
    const int nz = 4000000;
    const size_t n = (size_t)ncol * (size_t)nz;
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c),
          *x = malloc(n * sizeof *x);
    TU_CHECK(a && b && c && x, "out of memory");
    if (!(a && b && c && x)) return 1;
    deep_system(n, a, b, c, x);
    const int depth[3] = {nz, nz, nz};
    const mm_tdma_batch bt = {.ncol = (size_t)ncol, .nz = nz, .depth = depth};
    const double data = 4.0 * (double)n * sizeof(float);
    for (const mm_tdma_backend *const *pb = mm_tdma_backends(); *pb; pb++) {
      const mm_tdma_backend *be = *pb;
      if (be->device_memory || !be->solve_f || (be->available && !be->available())) continue;
      mm_tdma *s = NULL;
      if (mm_tdma_create(be->name, nz, 0, &s) != MM_TDMA_OK) continue;
      const double before = peak_bytes();
      const int rc = mm_tdma_solve_f(s, &bt, a, b, c, &x, 1);
      const double grown = peak_bytes() - before;
      TU_CHECK(rc == MM_TDMA_OK, "%s: %d deep columns: %s", be->name, ncol, mm_tdma_strerror(rc));
      /* column by column: c' and kappa of one column, 0.5 / ncol of the
       * data; a tile of 16 lanes, c' and d': 32 / (4 ncol) */
      TU_CHECK(grown <= 1.0 * data,
               "%s: %d columns of %d levels grew the peak virtual size by %.0f MB (%.1f x their "
               "data)",
               be->name, ncol, nz, grown / 1e6, grown / data);
      printf("%s: %d columns of %d levels: peak virtual size grew by %.0f MB (%.2f x the data)\n",
             be->name, ncol, nz, grown / 1e6, grown / data);
      mm_tdma_destroy(s);
    }
    free(a), free(b), free(c), free(x);
  }
  /* 3. depths nz and 2^24 + 2 (depth - 1 rounds down in float) in columns 0
   * and 1 of 8 (at least half a tile of float32 lanes, so that simd solves
   * them in a tile; the other 6 land, their memory never touched) */
  {
    const int nz = (1 << 24) + 3;
    const size_t n = 8 * (size_t)nz, wet = 2 * (size_t)nz;
    const int depth[8] = {nz, (1 << 24) + 2, 0, 0, 0, 0, 0, 0};
    const mm_tdma_batch bt = {.ncol = 8, .nz = nz, .depth = depth};
    float *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b), *c = calloc(n, sizeof *c),
          *want = calloc(n, sizeof *want), *x = calloc(n, sizeof *x);
    TU_CHECK(a && b && c && want && x, "out of memory");
    if (!(a && b && c && want && x)) return 1;
    deep_system(wet, a, b, c, want);
    memcpy(x, want, wet * sizeof *x);
    mm_tdma *ref = NULL;
    TU_CHECK(mm_tdma_create("reference", nz, 0, &ref) == MM_TDMA_OK, "reference");
    TU_CHECK(mm_tdma_solve_f(ref, &bt, a, b, c, &want, 1) == MM_TDMA_OK, "reference solve");
    mm_tdma_destroy(ref);
    for (const mm_tdma_backend *const *pb = mm_tdma_backends(); *pb; pb++) {
      const mm_tdma_backend *be = *pb;
      if (!be->exact || be->device_memory || !be->solve_f || !strcmp(be->name, "reference") ||
          (be->available && !be->available()))
        continue;
      mm_tdma *s = NULL;
      if (mm_tdma_create(be->name, nz, 0, &s) != MM_TDMA_OK) continue;
      deep_system(wet, a, b, c, x);
      const int rc = mm_tdma_solve_f(s, &bt, a, b, c, &x, 1);
      TU_CHECK(rc == MM_TDMA_OK, "%s: deep float32 solve: %s", be->name, mm_tdma_strerror(rc));
      size_t differ = 0, first = n;
      for (size_t e = 0; e < wet; e++)
        if (memcmp(&x[e], &want[e], sizeof *x)) differ++, first = first < e ? first : e;
      TU_CHECK(differ == 0,
               "%s: %zu values differ from reference, the first at column %zu level %zu", be->name,
               differ, first / (size_t)nz, first % (size_t)nz);
      printf("%s: float32, depths %d and %d: %s\n", be->name, depth[0], depth[1],
             differ ? "differs" : "reference's bits");
      mm_tdma_destroy(s);
    }
    free(a), free(b), free(c), free(want), free(x);
  }

  return tu_failures ? 1 : 0;
}

/* Error paths of the solver interface, for every CPU backend: unknown names,
 * bad nz, depth outside 0..nz, nrhs outside 1..MM_TDMA_MAX_RHS, a batch
 * deeper than the solver. A rejected call leaves the data untouched. The
 * checker itself must catch a wrong code (negative control). */
#include "tdma_test_util.h"

static int expect(int got, int want, const char *what) {
  if (got == want) return 1;
  fprintf(stderr, "  %s: got %d (%s), want %d (%s)\n", what, got, mm_tdma_strerror(got), want,
          mm_tdma_strerror(want));
  return 0;
}

#define EXPECT(got, want, ...)                                                                     \
  do {                                                                                             \
    char what_[200];                                                                               \
    snprintf(what_, sizeof what_, __VA_ARGS__);                                                    \
    TU_CHECK(expect((got), (want), what_), "%s", what_);                                           \
  } while (0)

int main(void) {
  mm_tdma *s = (mm_tdma *)&s; /* must be reset to NULL on failure */
  EXPECT(mm_tdma_create("no-such-backend", 10, 0, &s), MM_TDMA_EINVAL, "unknown backend");
  TU_CHECK(s == NULL, "create left *out set after failure");
  EXPECT(mm_tdma_create("", 10, 0, &s), MM_TDMA_EINVAL, "empty name");
  TU_CHECK(mm_tdma_find("auto") == NULL, "auto is not a table row");
  TU_CHECK(mm_tdma_find("no-such-backend") == NULL, "find of an unknown name");
  TU_CHECK(mm_tdma_find("reference") != NULL, "find reference");
  for (int code = 0; code <= 6; code++)
    TU_CHECK(mm_tdma_strerror(code) && *mm_tdma_strerror(code), "strerror(%d)", code);

  /* Negative control: the checker must notice a wrong code. */
  TU_CHECK(!expect(MM_TDMA_OK, MM_TDMA_EINVAL, "negative control (expected to report)"),
           "negative control: a wrong return code was not caught");

  tu_rng rng = {7};
  const int nz = 6;
  const size_t ncol = 40;
  for (const mm_tdma_backend *const *pb = mm_tdma_backends(); *pb; pb++) {
    const mm_tdma_backend *be = *pb;
    if (be->device_memory || (be->available && !be->available())) continue;
    const char *nm = be->name;
    EXPECT(mm_tdma_create(nm, 0, 0, &s), MM_TDMA_EINVAL, "%s: nz = 0", nm);
    EXPECT(mm_tdma_create(nm, -3, 0, &s), MM_TDMA_EINVAL, "%s: nz < 0", nm);
    EXPECT(mm_tdma_create(nm, nz, 1, &s), MM_TDMA_ENOTSUP, "%s: CPU backend asked for device", nm);
    int rc = mm_tdma_create(nm, nz, 0, &s);
    EXPECT(rc, MM_TDMA_OK, "%s: create", nm);
    if (rc) continue;

    tu_batch t;
    tu_batch_make(&t, &rng, ncol, nz, 2, NULL);
    const mm_tdma_geometry geo = {.inv_h = t.inv_h, .g = t.g};
    const mm_tdma_geometry_f geof = {.inv_h = t.inv_hf, .g = t.gf};
    double **x = tu_copy_rhs(&t);
    float **xf = tu_copy_rhs_f(&t);
    const size_t n = ncol * (size_t)nz;

    /* Depth out of range, put in the last column so that a backend that
     * checks as it goes would already have changed the data. */
    const int bad_depths[] = {nz + 1, -1};
    for (int ib = 0; ib < 2; ib++) {
      int keep = t.depth[ncol - 1];
      t.depth[ncol - 1] = bad_depths[ib];
      const mm_tdma_batch bt = {.ncol = ncol, .nz = nz, .depth = t.depth};
      EXPECT(mm_tdma_solve(s, &bt, t.a, t.b, t.c, x, 2), MM_TDMA_EINVAL, "%s: depth %d solve", nm,
             bad_depths[ib]);
      EXPECT(mm_tdma_solve_f(s, &bt, t.af, t.bf, t.cf, xf, 2), MM_TDMA_EINVAL,
             "%s: depth %d solve_f", nm, bad_depths[ib]);
      EXPECT(mm_tdma_fused(s, &bt, &geo, t.kappa, x, 2), MM_TDMA_EINVAL, "%s: depth %d fused", nm,
             bad_depths[ib]);
      EXPECT(mm_tdma_fused_f(s, &bt, &geof, t.kappaf, xf, 2), MM_TDMA_EINVAL,
             "%s: depth %d fused_f", nm, bad_depths[ib]);
      t.depth[ncol - 1] = keep;
    }
    for (int q = 0; q < 2; q++) {
      TU_CHECK(!memcmp(x[q], t.rhs[q], n * sizeof(double)), "%s: rejected call changed rhs", nm);
      TU_CHECK(!memcmp(xf[q], t.rhsf[q], n * sizeof(float)), "%s: rejected call changed rhs_f", nm);
    }

    const mm_tdma_batch bt = {.ncol = ncol, .nz = nz, .depth = t.depth};
    EXPECT(mm_tdma_solve(s, &bt, t.a, t.b, t.c, x, 0), MM_TDMA_EINVAL, "%s: nrhs 0", nm);
    EXPECT(mm_tdma_solve(s, &bt, t.a, t.b, t.c, x, -1), MM_TDMA_EINVAL, "%s: nrhs -1", nm);
    EXPECT(mm_tdma_solve(s, &bt, t.a, t.b, t.c, x, MM_TDMA_MAX_RHS + 1), MM_TDMA_EINVAL,
           "%s: nrhs > max", nm);
    EXPECT(mm_tdma_fused(s, &bt, &geo, t.kappa, x, 0), MM_TDMA_EINVAL, "%s: fused nrhs 0", nm);
    EXPECT(mm_tdma_fused_f(s, &bt, &geof, t.kappaf, xf, 0), MM_TDMA_EINVAL, "%s: fused_f nrhs 0",
           nm);
    const mm_tdma_batch deep = {.ncol = ncol, .nz = nz + 1, .depth = t.depth};
    EXPECT(mm_tdma_solve(s, &deep, t.a, t.b, t.c, x, 1), MM_TDMA_EINVAL, "%s: batch nz > solver nz",
           nm);
    const mm_tdma_batch nodepth = {.ncol = ncol, .nz = nz, .depth = NULL};
    EXPECT(mm_tdma_solve(s, &nodepth, t.a, t.b, t.c, x, 1), MM_TDMA_EINVAL, "%s: depth NULL", nm);
    EXPECT(mm_tdma_solve(s, NULL, t.a, t.b, t.c, x, 1), MM_TDMA_EINVAL, "%s: batch NULL", nm);
    /* An empty batch and a shallower batch are fine. */
    const mm_tdma_batch empty = {.ncol = 0, .nz = nz, .depth = NULL};
    EXPECT(mm_tdma_solve(s, &empty, t.a, t.b, t.c, x, 1), MM_TDMA_OK, "%s: empty batch", nm);
    for (size_t i = 0; i < ncol; i++)
      t.depth[i] = t.depth[i] > 3 ? 3 : t.depth[i];
    const mm_tdma_batch shallow = {.ncol = ncol, .nz = 3, .depth = t.depth};
    EXPECT(mm_tdma_solve(s, &shallow, t.a, t.b, t.c, x, 1), MM_TDMA_OK, "%s: batch nz < solver nz",
           nm);

    tu_free_rhs(x, 2);
    tu_free_rhs(xf, 2);
    tu_batch_free(&t);
    mm_tdma_destroy(s);
  }
  mm_tdma_destroy(NULL); /* allowed */

  if (tu_failures) {
    printf("%d failures\n", tu_failures);
    return 1;
  }
  printf("error paths ok\n");
  return 0;
}

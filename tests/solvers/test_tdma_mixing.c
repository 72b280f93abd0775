/* mm_tdma_fused_mixing: kappa from the two right-hand sides inside the solve.
 *
 * For every backend with the operation: random batches (depths 0, 1, 2, nz
 * and random ones, column counts 1 to 1001, nz 1 to 100, 1 and 2 threads),
 * tracers with stable and unstable interfaces, convection on and off, a
 * surface term zero and not. Expected: kappa written out here from the
 * formula of mm_tdma.h, the surface term added, then the `reference`
 * backend's fused solve (the textbook Thomas, a separate implementation).
 * The results must be the same bits, and levels at and below each depth
 * (NaN sentinels) untouched. A batch solved with another surface term must
 * differ (negative control). Also: ENOTSUP from a backend without the
 * operation, EINVAL without the mixing parameters. */
#include <string.h>

#include "tdma_test_util.h"

static int same_bits(const double *x, const double *y, size_t n) {
  return memcmp(x, y, n * sizeof *x) == 0;
}

static int unstable_fraction_ok;

static void check_case(const mm_tdma_backend *be, tu_rng *r, size_t ncol, int nz, int threads,
                       int convect, double top) {
  const size_t n = ncol * (size_t)nz;
  int *depth = tu_xmalloc(ncol * sizeof *depth);
  tu_depths(r, depth, ncol, nz);
  double *inv_h = tu_xmalloc((size_t)nz * sizeof *inv_h), *g = tu_xmalloc((size_t)nz * sizeof *g);
  tu_geometry(r, nz, inv_h, g);
  double *r0 = tu_xmalloc(n * sizeof *r0), *r1 = tu_xmalloc(n * sizeof *r1);
  long unstable = 0, interfaces = 0;
  tu_mixing_tracers(r, ncol, nz, depth, r0, r1);
  const mm_tdma_mixing mix = tu_mixing_params(convect, top);
  /* the expected result: kappa here, the surface term, reference's solve */
  double *kappa = tu_xmalloc(n * sizeof *kappa);
  double *e0 = tu_xmalloc(n * sizeof *e0), *e1 = tu_xmalloc(n * sizeof *e1);
  const mm_tdma_batch bt = {.ncol = ncol, .nz = nz, .depth = depth};
  const mm_tdma_geometry geo = {.inv_h = inv_h, .g = g};
  int rc = tu_mixing_expect(&mix, &bt, &geo, r0, r1, kappa, e0, e1);
  TU_CHECK(rc == MM_TDMA_OK, "reference fused: %s", mm_tdma_strerror(rc));
  for (size_t c = 0; c < ncol; c++)
    for (int k = 0; k + 1 < depth[c]; k++) {
      interfaces++;
      unstable += kappa[c * (size_t)nz + (size_t)k] == mix.kappa_mix;
    }
  mm_tdma *s = NULL;
  rc = mm_tdma_create(be->name, nz, 0, &s);
  TU_CHECK(rc == MM_TDMA_OK, "create %s: %s", be->name, mm_tdma_strerror(rc));
  if (!s) goto out;
  tu_set_threads(threads);
  double *x0 = tu_xmalloc(n * sizeof *x0), *x1 = tu_xmalloc(n * sizeof *x1);
  memcpy(x0, r0, n * sizeof *x0);
  memcpy(x1, r1, n * sizeof *x1);
  double *const xrhs[2] = {x0, x1};
  rc = mm_tdma_fused_mixing(s, &bt, &geo, &mix, xrhs);
  TU_CHECK(rc == MM_TDMA_OK, "%s fused_mixing: %s", be->name, mm_tdma_strerror(rc));
  TU_CHECK(same_bits(x0, e0, n) && same_bits(x1, e1, n),
           "%s fused_mixing ncol=%zu nz=%d threads=%d convect=%d top=%g: not the bits of kappa "
           "computed apart + reference",
           be->name, ncol, nz, threads, convect, top);
  /* negative control: another surface term changes the result (where
   * there is a wet column) */
  int wet = 0;
  for (size_t c = 0; c < ncol; c++)
    wet |= depth[c] > 0;
  if (top != 0.0 && wet) {
    memcpy(x0, r0, n * sizeof *x0);
    memcpy(x1, r1, n * sizeof *x1);
    mm_tdma_mixing other = mix;
    other.top = 2 * top;
    rc = mm_tdma_fused_mixing(s, &bt, &geo, &other, xrhs);
    TU_CHECK(rc == MM_TDMA_OK && !same_bits(x0, e0, n),
             "negative control: a different surface term gave the same result");
  }
  if (convect && interfaces > 20) unstable_fraction_ok |= unstable > 0 && unstable < interfaces;
  free(x0);
  free(x1);
out:
  mm_tdma_destroy(s);
  free(depth);
  free(inv_h);
  free(g);
  free(r0);
  free(r1);
  free(kappa);
  free(e0);
  free(e1);
}

int main(void) {
  tu_rng r = {12345};
  int tested = 0;
  for (const mm_tdma_backend *const *b = mm_tdma_backends(); *b; b++) {
    const mm_tdma_backend *be = *b;
    if (be->device_memory || !be->fused_mixing) continue;
    tested++;
    const size_t ncols[] = {1, 7, 33, 1001};
    const int nzs[] = {1, 2, 3, 5, 37, 100};
    for (size_t i = 0; i < sizeof ncols / sizeof *ncols; i++)
      for (size_t j = 0; j < sizeof nzs / sizeof *nzs; j++)
        for (int threads = 1; threads <= 2; threads++)
          for (int convect = 0; convect <= 1; convect++) {
            check_case(be, &r, ncols[i], nzs[j], threads, convect, 0.0);
            check_case(be, &r, ncols[i], nzs[j], threads, convect, -0.03);
          }
  }
  TU_CHECK(tested >= 1, "no host backend has fused_mixing");
  TU_CHECK(unstable_fraction_ok, "the cases never mixed stable and unstable interfaces");

  /* the errors */
  mm_tdma *s = NULL;
  int depth[1] = {3};
  double inv_h[3] = {1, 1, 1}, g[3] = {1, 1, 0}, t[3] = {0}, u[3] = {0};
  const mm_tdma_batch bt = {.ncol = 1, .nz = 3, .depth = depth};
  const mm_tdma_geometry geo = {.inv_h = inv_h, .g = g};
  double *const rhs[2] = {t, u};
  const mm_tdma_mixing mix = {.kappa_v = 1e-5, .kappa_mix = 1e-5};
  if (mm_tdma_create("reference", 3, 0, &s) == MM_TDMA_OK) {
    TU_CHECK(!mm_tdma_backend_of(s)->fused_mixing, "reference was meant to lack fused_mixing");
    TU_CHECK(mm_tdma_fused_mixing(s, &bt, &geo, &mix, rhs) == MM_TDMA_ENOTSUP,
             "reference: fused_mixing should be ENOTSUP");
    mm_tdma_destroy(s);
  }
  if (mm_tdma_create("simd", 3, 0, &s) == MM_TDMA_OK) {
    TU_CHECK(mm_tdma_fused_mixing(s, &bt, &geo, NULL, rhs) == MM_TDMA_EINVAL,
             "simd: fused_mixing without parameters should be EINVAL");
    mm_tdma_destroy(s);
  }
  if (tu_failures) {
    fprintf(stderr, "FAIL: %d failed checks\n", tu_failures);
    return 1;
  }
  printf("ok: fused_mixing of %d backend(s) bitwise equal to kappa apart + reference\n", tested);
  return 0;
}

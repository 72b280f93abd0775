/* Every backend of the table against a dense Gaussian elimination with
 * partial pivoting (tu_dense_solve, independent of the solvers): random
 * diagonally dominant plain systems and physical fused systems, depths 0..nz
 * in one batch, 1..3 right-hand sides, both precisions, 1 and 2 threads.
 * Checked per column: backward error <= 1e-13 (double) / 1e-5 (single),
 * agreement with the dense solution, levels at and below the depth (NaN
 * sentinels) left untouched. A perturbed result must be caught. */
#include "tdma_test_util.h"

#define TOL_D 1e-13
#define TOL_F 1e-5

/* Checks one column: x (n levels, the solver's result) against the system
 * (a, b, c, d); returns the larger of the backward error and the error
 * relative to the dense solution (the dense solution only weighs in through
 * a looser factor, since it carries the condition number). */
static double column_error(int n, const double *a, const double *b, const double *c,
                           const double *d, const double *x) {
  double *xd = tu_xmalloc((size_t)n * sizeof *xd);
  double err = 0;
  if (tu_dense_solve(n, a, b, c, d, xd) != 0) {
    free(xd);
    return INFINITY;
  }
  double emax = 0, xmax = 0;
  for (int k = 0; k < n; k++) {
    double e = fabs(x[k] - xd[k]);
    if (!(e <= emax)) emax = e;
    if (fabs(xd[k]) > xmax) xmax = fabs(xd[k]);
  }
  double fwd = xmax > 0 ? emax / xmax : emax;
  err = tu_residual(n, a, b, c, d, x);
  /* Forward error may exceed the backward error by the condition number
   * (modest here); 1e3 is a generous bound for these matrices. */
  if (fwd / 1e3 > err || fwd != fwd) err = fwd / 1e3;
  free(xd);
  return err;
}

/* The diagonals of column `col` in double (plain: as given; fused: built). */
typedef struct {
  double *a, *b, *c, *d, *x;
} colbuf;

/* Verifies a whole solved batch; returns the number of bad columns. xd / xf:
 * the solver's results (one of them NULL), prec: 'd' or 'f'. */
static int verify(const tu_batch *t, int fused, int nrhs, double *const *xd, float *const *xf,
                  double *worst) {
  const int nz = t->nz;
  colbuf cb;
  double **cols[] = {&cb.a, &cb.b, &cb.c, &cb.d, &cb.x};
  for (int i = 0; i < 5; i++)
    *cols[i] = tu_xmalloc((size_t)nz * sizeof(double));
  float *fa = tu_xmalloc((size_t)nz * sizeof(float)), *fb = tu_xmalloc((size_t)nz * sizeof(float)),
        *fc = tu_xmalloc((size_t)nz * sizeof(float));
  const double tol = xf ? TOL_F : TOL_D;
  int bad = 0;
  for (size_t col = 0; col < t->ncol; col++) {
    const int n = t->depth[col];
    const size_t off = col * (size_t)nz;
    if (fused) {
      if (xf) {
        tu_build_float(n, t->kappaf + off, t->gf, t->inv_hf, fa, fb, fc);
        for (int k = 0; k < n; k++)
          cb.a[k] = fa[k], cb.b[k] = fb[k], cb.c[k] = fc[k];
      } else {
        tu_build_double(n, t->kappa + off, t->g, t->inv_h, cb.a, cb.b, cb.c);
      }
    } else {
      for (int k = 0; k < n; k++) {
        cb.a[k] = xf ? t->af[off + k] : t->a[off + k];
        cb.b[k] = xf ? t->bf[off + k] : t->b[off + k];
        cb.c[k] = xf ? t->cf[off + k] : t->c[off + k];
      }
    }
    for (int q = 0; q < nrhs; q++) {
      int colbad = 0;
      for (int k = 0; k < n; k++) {
        cb.d[k] = xf ? t->rhsf[q][off + k] : t->rhs[q][off + k];
        cb.x[k] = xf ? xf[q][off + k] : xd[q][off + k];
      }
      /* Untouched below the depth: still the NaN sentinel, bit for bit. */
      for (int k = n; k < nz; k++) {
        if (xf ? memcmp(&xf[q][off + k], &t->rhsf[q][off + k], sizeof(float))
               : memcmp(&xd[q][off + k], &t->rhs[q][off + k], sizeof(double)))
          colbad = 1;
      }
      if (n > 0) {
        double e = column_error(n, cb.a, cb.b, cb.c, cb.d, cb.x);
        if (!(e <= *worst)) *worst = e;
        if (!(e <= tol)) colbad = 1;
      }
      bad += colbad;
    }
  }
  for (int i = 0; i < 5; i++)
    free(*cols[i]);
  free(fa);
  free(fb);
  free(fc);
  return bad;
}

static int run_one(const mm_tdma_backend *be, const tu_batch *t, int fused, int single, int nrhs,
                   int *caught_perturbation) {
  mm_tdma *s;
  int rc = mm_tdma_create(be->name, t->nz, 0, &s);
  TU_CHECK(rc == 0, "%s: create: %s", be->name, mm_tdma_strerror(rc));
  if (rc) return 1;
  const mm_tdma_batch bt = {.ncol = t->ncol, .nz = t->nz, .depth = t->depth};
  const mm_tdma_geometry geo = {.inv_h = t->inv_h, .g = t->g};
  const mm_tdma_geometry_f geof = {.inv_h = t->inv_hf, .g = t->gf};
  double **xd = NULL;
  float **xf = NULL;
  if (single) {
    xf = tu_copy_rhs_f(t);
    rc = fused ? mm_tdma_fused_f(s, &bt, &geof, t->kappaf, xf, nrhs)
               : mm_tdma_solve_f(s, &bt, t->af, t->bf, t->cf, xf, nrhs);
  } else {
    xd = tu_copy_rhs(t);
    rc = fused ? mm_tdma_fused(s, &bt, &geo, t->kappa, xd, nrhs)
               : mm_tdma_solve(s, &bt, t->a, t->b, t->c, xd, nrhs);
  }
  int bad = 0;
  double worst = 0;
  if (rc == MM_TDMA_ENOTSUP) {
    printf("  %-10s %s %s: not supported\n", be->name, single ? "single" : "double",
           fused ? "fused" : "solve");
  } else {
    TU_CHECK(rc == 0, "%s: solve: %s", be->name, mm_tdma_strerror(rc));
    bad = verify(t, fused, nrhs, xd, xf, &worst);
    TU_CHECK(bad == 0, "%s %s %s nz=%d nrhs=%d: %d bad columns (worst error %.3g)", be->name,
             single ? "single" : "double", fused ? "fused" : "solve", t->nz, nrhs, bad, worst);
    /* Negative control: the same check must reject a slightly wrong answer
     * (one wet level of the deepest column moved by 1e-9 relative in double,
     * 1e-3 in single), and a write below the depth. */
    if (!*caught_perturbation && bad == 0) {
      size_t deep = 0;
      for (size_t col = 0; col < t->ncol; col++)
        if (t->depth[col] > t->depth[deep]) deep = col;
      const size_t i = deep * (size_t)t->nz + (size_t)t->depth[deep] / 2;
      double w2 = 0;
      if (single) {
        float keep = xf[0][i];
        xf[0][i] = keep * (1.0f + 1e-3f) + 1e-3f;
        int caught = verify(t, fused, nrhs, xd, xf, &w2) > 0;
        xf[0][i] = keep;
        *caught_perturbation = caught;
      } else {
        double keep = xd[0][i];
        xd[0][i] = keep * (1.0 + 1e-9) + 1e-9;
        int caught = verify(t, fused, nrhs, xd, xf, &w2) > 0;
        xd[0][i] = keep;
        if (t->depth[deep] < t->nz) { /* a write below the depth */
          const size_t j = deep * (size_t)t->nz + (size_t)t->depth[deep];
          xd[0][j] = 0;
          caught = caught && verify(t, fused, nrhs, xd, xf, &w2) > 0;
          xd[0][j] = t->rhs[0][j];
        }
        *caught_perturbation = caught;
      }
      TU_CHECK(*caught_perturbation, "negative control: a perturbed result was not caught");
    }
    printf("  %-10s %s %s nz=%3d nrhs=%d: worst error %.2e\n", be->name,
           single ? "single" : "double", fused ? "fused" : "solve", t->nz, nrhs, worst);
  }
  if (xd) tu_free_rhs(xd, t->nrhs);
  if (xf) tu_free_rhs(xf, t->nrhs);
  mm_tdma_destroy(s);
  return bad;
}

/* The table's contract (mm_tdma.h): every backend provides the required
 * operations; only exact backends have a priority, and on each memory the
 * priorities differ; "auto" is the available backend of highest priority. */
static void check_table(void) {
  for (int device = 0; device < 2; device++) {
    const mm_tdma_backend *best = NULL;
    for (const mm_tdma_backend *const *pb = mm_tdma_backends(); *pb; pb++) {
      const mm_tdma_backend *be = *pb;
      TU_CHECK(be->name && be->description && be->create && be->destroy && be->solve &&
                   be->solve_f && be->fused && be->fused_f,
               "%s: a required operation is NULL", be->name);
      TU_CHECK(!be->fused_async || be->device_memory, "%s: fused_async on host memory", be->name);
      TU_CHECK(!be->fused_mixing || be->exact, "%s: fused_mixing on an inexact backend", be->name);
      TU_CHECK((!be->solve_async && !be->solve_f_async) || be->device_memory,
               "%s: solve_async on host memory", be->name);
      TU_CHECK(!be->fused_mixing_async || (be->device_memory && be->fused_mixing),
               "%s: fused_mixing_async on host memory or without fused_mixing", be->name);
      if (be->device_memory != device || be->priority <= 0) continue;
      TU_CHECK(be->exact, "%s: a priority for auto, but not exact", be->name);
      for (const mm_tdma_backend *const *q = mm_tdma_backends(); *q != be; q++)
        TU_CHECK((*q)->device_memory != device || (*q)->priority != be->priority,
                 "%s and %s: the same priority", (*q)->name, be->name);
      if ((!be->available || be->available()) && (!best || be->priority > best->priority))
        best = be;
    }
    mm_tdma *s = NULL;
    const int rc = mm_tdma_create("auto", 16, device, &s);
    if (best) {
      TU_CHECK(rc == MM_TDMA_OK && mm_tdma_backend_of(s) == best, "auto on %s memory: %s, want %s",
               device ? "device" : "host", rc ? mm_tdma_strerror(rc) : mm_tdma_backend_of(s)->name,
               best->name);
    } else {
      TU_CHECK(rc == MM_TDMA_EDEVICE, "auto on %s memory with no backend: %s",
               device ? "device" : "host", mm_tdma_strerror(rc));
    }
    mm_tdma_destroy(s);
  }
}

int main(void) {
  check_table();
  tu_rng rng = {12345};
  const int nzs[] = {1, 2, 5, 17, 64};
  int caught_d = 0, caught_f = 0, nbackends = 0;
  for (const mm_tdma_backend *const *pb = mm_tdma_backends(); *pb; pb++) {
    const mm_tdma_backend *be = *pb;
    if (be->device_memory || (be->available && !be->available())) {
      printf("%s: skipped (device backend or unavailable)\n", be->name);
      continue;
    }
    nbackends++;
    for (int threads = 1; threads <= 2; threads++) {
      tu_set_threads(threads);
      for (size_t iz = 0; iz < sizeof nzs / sizeof *nzs; iz++) {
        const int nz = nzs[iz];
        /* Every depth 0..nz, twice, plus a few; bigger batches when threaded
         * so that the parallel path runs (it starts at 32768 unknowns). */
        size_t ncol = 2 * (size_t)(nz + 1) + 5;
        if (threads > 1) ncol = 40000 / (size_t)nz + 3;
        for (int nrhs = 1; nrhs <= 3; nrhs++) {
          int *depth = tu_xmalloc(ncol * sizeof *depth);
          tu_depths(&rng, depth, ncol, nz);
          for (size_t col = 0; col < 2 * (size_t)(nz + 1); col++)
            depth[(col * 7919) % ncol] = (int)(col % (size_t)(nz + 1));
          tu_batch t;
          tu_batch_make(&t, &rng, ncol, nz, 3, depth);
          free(depth);
          for (int fused = 0; fused <= 1; fused++)
            for (int single = 0; single <= 1; single++)
              run_one(be, &t, fused, single, nrhs, single ? &caught_f : &caught_d);
          tu_batch_free(&t);
        }
      }
    }
  }
  TU_CHECK(nbackends >= 2, "expected at least reference and one fast backend, got %d", nbackends);
  TU_CHECK(caught_d && caught_f, "negative controls did not run");
  if (tu_failures) {
    printf("%d failures\n", tu_failures);
    return 1;
  }
  printf("all backends agree with the dense solve\n");
  return 0;
}

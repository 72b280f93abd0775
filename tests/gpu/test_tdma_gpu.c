/* The device backends (`cuda`, `cusparse`) on a GPU, against `reference` on
 * the host. Exit status 77 when there is no usable CUDA device: CTest then
 * reports the test as skipped (SKIP_RETURN_CODE), never as passed.
 *
 * Random batches from tests/solvers/tdma_test_util.h: diagonally dominant
 * plain systems and physical fused systems, depths 0, 1, 2 and nz among
 * random ones, column counts that are not multiples of 32, nz from 1 to 250,
 * 1, 2, 3 and 8 right-hand sides, both precisions. Levels at and below a
 * column's depth hold NaN and must come back bitwise unchanged. Tolerance per
 * column, normwise against reference: 1e-12 (double), 1e-4 (single). `cuda`
 * runs reference's arithmetic (no FMA contraction, IEEE division) and is
 * exact (.exact = 1): it must also be bitwise equal, in every case.
 * `cusparse` is cyclic reduction, not Thomas: where its
 * forward difference exceeds the tolerance, its normwise backward error
 * (tu_residual) must be within it instead. Also: the chunk/slot plans that
 * spill (forced through MM_TDMA_CUDA_KT / _SLOTS / _WARPS_PER_SM), a bad
 * depth (EINVAL, nothing written), an empty batch, a stale error of another
 * call left in the last-error slot (the solve succeeds), "auto" on the device,
 * and refusal of a device backend for host memory. And `cuda`'s solve that
 * builds kappa from its two right-hand sides (mm_tdma_fused_mixing, and
 * queued on a stream, mm_tdma_fused_mixing_async: the GPU step's), bitwise
 * against kappa written out here, the surface term added and reference's
 * fused solve, with convection on and off, a surface term zero and not,
 * and in the spilling plans. And the plain solve queued on a stream
 * (mm_tdma_solve_async, _f_async: the JAX handler's), bitwise the
 * synchronous one. */
#include <cuda_runtime_api.h>

#include "tdma_test_util.h"

#define SKIP 77

static void ck(cudaError_t e, const char *what, int line) {
  if (e != cudaSuccess) {
    fprintf(stderr, "FAIL %s:%d: %s: %s\n", __FILE__, line, what, cudaGetErrorString(e));
    exit(1);
  }
}
#define CK(call) ck((call), #call, __LINE__)

static void *to_dev(const void *h, size_t bytes) {
  void *d = NULL;
  CK(cudaMalloc(&d, bytes ? bytes : 1));
  if (bytes) CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
  return d;
}

/* Device copies of a batch, one precision. */
typedef struct {
  int *depth;
  void *a, *b, *c, *kappa, *inv_h, *g;
  void *rhs[MM_TDMA_MAX_RHS];
} dev_batch;

static void dev_make(dev_batch *d, const tu_batch *t, int single) {
  const size_t n = t->ncol * (size_t)t->nz, es = single ? sizeof(float) : sizeof(double);
  d->depth = to_dev(t->depth, t->ncol * sizeof(int));
  d->a = to_dev(single ? (void *)t->af : (void *)t->a, n * es);
  d->b = to_dev(single ? (void *)t->bf : (void *)t->b, n * es);
  d->c = to_dev(single ? (void *)t->cf : (void *)t->c, n * es);
  d->kappa = to_dev(single ? (void *)t->kappaf : (void *)t->kappa, n * es);
  d->inv_h = to_dev(single ? (void *)t->inv_hf : (void *)t->inv_h, (size_t)t->nz * es);
  d->g = to_dev(single ? (void *)t->gf : (void *)t->g, (size_t)t->nz * es);
  for (int q = 0; q < t->nrhs; q++)
    d->rhs[q] = to_dev(single ? (void *)t->rhsf[q] : (void *)t->rhs[q], n * es);
}

static void dev_free(dev_batch *d, int nrhs) {
  cudaFree(d->depth), cudaFree(d->a), cudaFree(d->b), cudaFree(d->c), cudaFree(d->kappa);
  cudaFree(d->inv_h), cudaFree(d->g);
  for (int q = 0; q < nrhs; q++)
    cudaFree(d->rhs[q]);
}

/* Runs backend `s` on device copies of t; the solution lands in x (host). */
static int dev_run(mm_tdma *s, const tu_batch *t, int fused, int single, int nrhs, void **x) {
  dev_batch d;
  dev_make(&d, t, single);
  const mm_tdma_batch bt = {.ncol = t->ncol, .nz = t->nz, .depth = d.depth};
  int rc;
  if (single) {
    const mm_tdma_geometry_f geo = {.inv_h = d.inv_h, .g = d.g};
    float *rhs[MM_TDMA_MAX_RHS];
    for (int q = 0; q < nrhs; q++)
      rhs[q] = d.rhs[q];
    rc = fused ? mm_tdma_fused_f(s, &bt, &geo, d.kappa, rhs, nrhs)
               : mm_tdma_solve_f(s, &bt, d.a, d.b, d.c, rhs, nrhs);
  } else {
    const mm_tdma_geometry geo = {.inv_h = d.inv_h, .g = d.g};
    double *rhs[MM_TDMA_MAX_RHS];
    for (int q = 0; q < nrhs; q++)
      rhs[q] = d.rhs[q];
    rc = fused ? mm_tdma_fused(s, &bt, &geo, d.kappa, rhs, nrhs)
               : mm_tdma_solve(s, &bt, d.a, d.b, d.c, rhs, nrhs);
  }
  const size_t bytes = t->ncol * (size_t)t->nz * (single ? sizeof(float) : sizeof(double));
  for (int q = 0; q < nrhs; q++)
    CK(cudaMemcpy(x[q], d.rhs[q], bytes, cudaMemcpyDeviceToHost));
  dev_free(&d, t->nrhs);
  return rc;
}

/* Reference solution on the host, into fresh copies. */
static void **ref_run(const tu_batch *t, int fused, int single, int nrhs) {
  mm_tdma *s;
  int rc = mm_tdma_create("reference", t->nz, 0, &s);
  TU_CHECK(rc == 0, "reference: %s", mm_tdma_strerror(rc));
  const mm_tdma_batch bt = {.ncol = t->ncol, .nz = t->nz, .depth = t->depth};
  void **x;
  if (single) {
    float **xf = tu_copy_rhs_f(t);
    const mm_tdma_geometry_f geo = {.inv_h = t->inv_hf, .g = t->gf};
    rc = fused ? mm_tdma_fused_f(s, &bt, &geo, t->kappaf, xf, nrhs)
               : mm_tdma_solve_f(s, &bt, t->af, t->bf, t->cf, xf, nrhs);
    x = (void **)xf;
  } else {
    double **xd = tu_copy_rhs(t);
    const mm_tdma_geometry geo = {.inv_h = t->inv_h, .g = t->g};
    rc = fused ? mm_tdma_fused(s, &bt, &geo, t->kappa, xd, nrhs)
               : mm_tdma_solve(s, &bt, t->a, t->b, t->c, xd, nrhs);
    x = (void **)xd;
  }
  TU_CHECK(rc == 0, "reference: %s", mm_tdma_strerror(rc));
  mm_tdma_destroy(s);
  return x;
}

static double val(const void *p, size_t i, int single) {
  return single ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* Normwise backward error of column `col` of solution x (rhs q). */
static double column_residual(const tu_batch *t, int fused, int single, int q, size_t col,
                              const void *x) {
  const int n = t->depth[col], nz = t->nz;
  const size_t off = col * (size_t)nz;
  double *a = tu_xmalloc((size_t)nz * sizeof(double)), *b = tu_xmalloc((size_t)nz * sizeof(double));
  double *c = tu_xmalloc((size_t)nz * sizeof(double)), *d = tu_xmalloc((size_t)nz * sizeof(double));
  double *xs = tu_xmalloc((size_t)nz * sizeof(double));
  if (fused && single) {
    float *af = tu_xmalloc((size_t)nz * 3 * sizeof(float)), *bf = af + nz, *cf = bf + nz;
    tu_build_float(n, t->kappaf + off, t->gf, t->inv_hf, af, bf, cf);
    for (int k = 0; k < n; k++)
      a[k] = af[k], b[k] = bf[k], c[k] = cf[k];
    free(af);
  } else if (fused) {
    tu_build_double(n, t->kappa + off, t->g, t->inv_h, a, b, c);
  } else {
    for (int k = 0; k < n; k++) {
      a[k] = val(single ? (void *)t->af : (void *)t->a, off + k, single);
      b[k] = val(single ? (void *)t->bf : (void *)t->b, off + k, single);
      c[k] = val(single ? (void *)t->cf : (void *)t->c, off + k, single);
    }
  }
  for (int k = 0; k < n; k++) {
    d[k] = val(single ? (void *)t->rhsf[q] : (void *)t->rhs[q], off + k, single);
    xs[k] = val(x, off + k, single);
  }
  const double r = tu_residual(n, a, b, c, d, xs);
  free(a), free(b), free(c), free(d), free(xs);
  return r;
}

static int cases, bitwise_cases;

/* One backend, one batch, one operation and precision. */
static void check_one(const char *name, mm_tdma *s, const tu_batch *t, int fused, int single,
                      int nrhs) {
  const size_t n = t->ncol * (size_t)t->nz, es = single ? sizeof(float) : sizeof(double);
  const double tol = single ? 1e-4 : 1e-12;
  const int exact_arith = mm_tdma_find(name)->exact;
  void **ref = ref_run(t, fused, single, nrhs);
  void *x[MM_TDMA_MAX_RHS];
  for (int q = 0; q < nrhs; q++)
    x[q] = tu_xmalloc(n * es);
  const int rc = dev_run(s, t, fused, single, nrhs, x);
  TU_CHECK(rc == 0, "%s: %s", name, mm_tdma_strerror(rc));
  int bitwise = 1;
  for (int q = 0; q < nrhs && !rc; q++) {
    const void *orig = single ? (void *)t->rhsf[q] : (void *)t->rhs[q];
    if (memcmp(x[q], ref[q], n * es)) bitwise = 0;
    for (size_t col = 0; col < t->ncol; col++) {
      const int dep = t->depth[col];
      const size_t off = col * (size_t)t->nz;
      /* dry levels: untouched */
      if (memcmp((const char *)x[q] + (off + dep) * es, (const char *)orig + (off + dep) * es,
                 (size_t)(t->nz - dep) * es)) {
        TU_CHECK(0, "%s %s %s ncol=%zu nz=%d: column %zu (depth %d) written below its depth", name,
                 single ? "single" : "double", fused ? "fused" : "plain", t->ncol, t->nz, col, dep);
        break;
      }
      double dmax = 0, rmax = 0;
      for (int k = 0; k < dep; k++) {
        const double xv = val(x[q], off + k, single), rv = val(ref[q], off + k, single);
        const double dv = fabs(xv - rv);
        if (!(dv <= dmax)) dmax = dv; /* NaN sticks */
        if (fabs(rv) > rmax) rmax = fabs(rv);
      }
      const double rel = rmax > 0 ? dmax / rmax : dmax;
      if (rel <= tol) continue;
      if (!exact_arith) {
        const double be = column_residual(t, fused, single, q, col, x[q]);
        if (be <= tol) continue;
        TU_CHECK(0,
                 "%s %s %s ncol=%zu nz=%d nrhs=%d: column %zu (depth %d) rhs %d: difference "
                 "%.3g to reference and backward error %.3g, both > %g",
                 name, single ? "single" : "double", fused ? "fused" : "plain", t->ncol, t->nz,
                 nrhs, col, dep, q, rel, be, tol);
      } else {
        TU_CHECK(0,
                 "%s %s %s ncol=%zu nz=%d nrhs=%d: column %zu (depth %d) rhs %d: relative "
                 "difference %.3g to reference > %g",
                 name, single ? "single" : "double", fused ? "fused" : "plain", t->ncol, t->nz,
                 nrhs, col, dep, q, rel, tol);
      }
      break;
    }
  }
  if (exact_arith && !rc)
    TU_CHECK(bitwise, "%s %s %s ncol=%zu nz=%d nrhs=%d: an exact backend, not bitwise equal", name,
             single ? "single" : "double", fused ? "fused" : "plain", t->ncol, t->nz, nrhs);
  cases++;
  bitwise_cases += bitwise && !rc;
  for (int q = 0; q < nrhs; q++)
    free(x[q]);
  tu_free_rhs(ref, nrhs);
}

static void check_backend(const char *name, const size_t *ncols, size_t nnc, const int *nzs,
                          size_t nnz, const int *nrhss, size_t nnr, tu_rng *rng) {
  for (size_t ic = 0; ic < nnc; ic++)
    for (size_t iz = 0; iz < nnz; iz++)
      for (size_t ir = 0; ir < nnr; ir++) {
        tu_batch t;
        tu_batch_make(&t, rng, ncols[ic], nzs[iz], nrhss[ir], NULL);
        mm_tdma *s;
        int rc = mm_tdma_create(name, t.nz, 1, &s);
        TU_CHECK(rc == 0, "create %s: %s", name, mm_tdma_strerror(rc));
        if (!rc) {
          for (int fused = 0; fused <= 1; fused++)
            for (int single = 0; single <= 1; single++)
              check_one(name, s, &t, fused, single, t.nrhs);
          mm_tdma_destroy(s);
        }
        tu_batch_free(&t);
      }
}

/* A depth outside 0..nz: EINVAL, and nothing written. */
static void check_bad_depth(const char *name, tu_rng *rng) {
  tu_batch t;
  tu_batch_make(&t, rng, 70, 9, 2, NULL);
  for (int bad = 0; bad < 2; bad++) {
    t.depth[45] = bad ? -1 : t.nz + 1;
    mm_tdma *s;
    if (mm_tdma_create(name, t.nz, 1, &s)) continue;
    dev_batch d;
    dev_make(&d, &t, 0);
    const mm_tdma_batch bt = {.ncol = t.ncol, .nz = t.nz, .depth = d.depth};
    double *rhs[2] = {d.rhs[0], d.rhs[1]};
    int rc = mm_tdma_solve(s, &bt, d.a, d.b, d.c, rhs, 2);
    TU_CHECK(rc == MM_TDMA_EINVAL, "%s: depth %d gave %s, want EINVAL", name, t.depth[45],
             mm_tdma_strerror(rc));
    const mm_tdma_geometry geo = {.inv_h = d.inv_h, .g = d.g};
    rc = mm_tdma_fused(s, &bt, &geo, d.kappa, rhs, 2);
    TU_CHECK(rc == MM_TDMA_EINVAL, "%s fused: depth %d gave %s, want EINVAL", name, t.depth[45],
             mm_tdma_strerror(rc));
    const size_t bytes = t.ncol * (size_t)t.nz * sizeof(double);
    double *back = tu_xmalloc(bytes);
    for (int q = 0; q < 2; q++) {
      CK(cudaMemcpy(back, d.rhs[q], bytes, cudaMemcpyDeviceToHost));
      TU_CHECK(!memcmp(back, t.rhs[q], bytes), "%s: a rejected batch was written", name);
    }
    free(back);
    /* the solver still works afterwards: an empty batch */
    const mm_tdma_batch empty = {.ncol = 0, .nz = t.nz, .depth = d.depth};
    rc = mm_tdma_solve(s, &empty, d.a, d.b, d.c, rhs, 2);
    TU_CHECK(rc == 0, "%s: empty batch: %s", name, mm_tdma_strerror(rc));
    dev_free(&d, 2);
    mm_tdma_destroy(s);
  }
  tu_batch_free(&t);
}

/* A non-sticky error that another library left in this thread's
 * last-error slot (here: cudaSetDevice of a device that is not there) is
 * not taken for the solve's own: the solve succeeds, with the bits of a
 * solve made without it. */
static void check_stale_error(const char *name, tu_rng *rng, int ndev) {
  tu_batch t;
  tu_batch_make(&t, rng, 70, 9, 1, NULL);
  mm_tdma *s;
  if (mm_tdma_create(name, t.nz, 1, &s)) {
    TU_CHECK(0, "%s: create failed", name);
    tu_batch_free(&t);
    return;
  }
  const size_t bytes = t.ncol * (size_t)t.nz * sizeof(double);
  double *want = tu_xmalloc(bytes), *got = tu_xmalloc(bytes);
  for (int stale = 0; stale <= 1; stale++) {
    dev_batch d;
    dev_make(&d, &t, 0);
    const mm_tdma_batch bt = {.ncol = t.ncol, .nz = t.nz, .depth = d.depth};
    double *rhs[1] = {d.rhs[0]};
    if (stale) {
      (void)cudaSetDevice(ndev); /* no such device: cudaErrorInvalidDevice, not sticky */
      TU_CHECK(cudaPeekAtLastError() == cudaErrorInvalidDevice,
               "%s: the planted error is not in the last-error slot", name);
    }
    const int rc = mm_tdma_solve(s, &bt, d.a, d.b, d.c, rhs, 1);
    TU_CHECK(rc == 0, "%s: a stale error of another call failed the solve: %s", name,
             mm_tdma_strerror(rc));
    (void)cudaGetLastError();
    CK(cudaMemcpy(stale ? got : want, d.rhs[0], bytes, cudaMemcpyDeviceToHost));
    dev_free(&d, 1);
  }
  TU_CHECK(!memcmp(want, got, bytes), "%s: the solve after a stale error differs", name);
  free(want), free(got);
  mm_tdma_destroy(s);
  tu_batch_free(&t);
}

/* The plain solve of t by `cuda` queued on a stream of its own
 * (mm_tdma_solve_async, _f_async: the JAX handler's) against the synchronous
 * solve of another solver, bitwise. warm: the queued solver made one
 * synchronous call first (its workspace sized, its status word set);
 * otherwise, as in the handler, its first call is the queued one. */
static void check_async(tu_rng *r, size_t ncol, int nz, int nrhs, int single, int warm) {
  tu_batch t;
  tu_batch_make(&t, r, ncol, nz, nrhs, NULL);
  mm_tdma *sync = NULL, *s = NULL;
  int rc = mm_tdma_create("cuda", nz, 1, &sync);
  if (!rc) rc = mm_tdma_create("cuda", nz, 1, &s);
  TU_CHECK(rc == 0, "cuda: %s", mm_tdma_strerror(rc));
  const size_t n = ncol * (size_t)nz, es = single ? sizeof(float) : sizeof(double);
  void **want = single ? (void **)tu_copy_rhs_f(&t) : (void **)tu_copy_rhs(&t);
  void **scratch = single ? (void **)tu_copy_rhs_f(&t) : (void **)tu_copy_rhs(&t);
  if (!rc) rc = dev_run(sync, &t, 0, single, nrhs, want);
  TU_CHECK(rc == 0, "cuda, synchronous: %s", mm_tdma_strerror(rc));
  if (!rc && warm) rc = dev_run(s, &t, 0, single, nrhs, scratch);
  dev_batch d;
  dev_make(&d, &t, single);
  CK(cudaDeviceSynchronize()); /* the uploads (legacy stream) before the queued solve */
  const mm_tdma_batch bt = {.ncol = ncol, .nz = nz, .depth = d.depth};
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  if (rc) {
  } else if (single) {
    float *rhs[MM_TDMA_MAX_RHS];
    for (int q = 0; q < nrhs; q++)
      rhs[q] = d.rhs[q];
    rc = mm_tdma_solve_f_async(s, &bt, d.a, d.b, d.c, rhs, nrhs, (void *)st);
  } else {
    double *rhs[MM_TDMA_MAX_RHS];
    for (int q = 0; q < nrhs; q++)
      rhs[q] = d.rhs[q];
    rc = mm_tdma_solve_async(s, &bt, d.a, d.b, d.c, rhs, nrhs, (void *)st);
  }
  TU_CHECK(rc == 0, "cuda, queued: %s", mm_tdma_strerror(rc));
  CK(cudaStreamSynchronize(st));
  CK(cudaStreamDestroy(st));
  void *got = tu_xmalloc(n * es);
  for (int q = 0; q < nrhs && !rc; q++) {
    CK(cudaMemcpy(got, d.rhs[q], n * es, cudaMemcpyDeviceToHost));
    TU_CHECK(!memcmp(got, want[q], n * es),
             "cuda solve%s_async ncol=%zu nz=%d nrhs=%d warm=%d: not the synchronous solve's bits",
             single ? "_f" : "", ncol, nz, nrhs, warm);
  }
  cases++, bitwise_cases += rc == 0;
  free(got);
  dev_free(&d, nrhs);
  tu_free_rhs(want, nrhs);
  tu_free_rhs(scratch, nrhs);
  mm_tdma_destroy(s);
  mm_tdma_destroy(sync);
  tu_batch_free(&t);
}

/* cuda's fused_mixing (async: on a stream of its own) against kappa from
 * the formula of mm_tdma_mixing, the surface term and reference, bitwise. */
static void check_mixing(tu_rng *r, size_t ncol, int nz, int convect, double top, int async) {
  const size_t n = ncol * (size_t)nz;
  int *depth = tu_xmalloc(ncol * sizeof *depth);
  tu_depths(r, depth, ncol, nz);
  double *inv_h = tu_xmalloc((size_t)nz * sizeof *inv_h), *g = tu_xmalloc((size_t)nz * sizeof *g);
  tu_geometry(r, nz, inv_h, g);
  double *r0 = tu_xmalloc(n * sizeof *r0), *r1 = tu_xmalloc(n * sizeof *r1);
  double *kappa = tu_xmalloc(n * sizeof *kappa);
  tu_mixing_tracers(r, ncol, nz, depth, r0, r1);
  const mm_tdma_mixing mix = tu_mixing_params(convect, top);
  double *e0 = tu_xmalloc(n * sizeof *e0), *e1 = tu_xmalloc(n * sizeof *e1);
  const mm_tdma_batch bt = {.ncol = ncol, .nz = nz, .depth = depth};
  const mm_tdma_geometry geo = {.inv_h = inv_h, .g = g};
  int rc = tu_mixing_expect(&mix, &bt, &geo, r0, r1, kappa, e0, e1);
  TU_CHECK(rc == 0, "reference: %s", mm_tdma_strerror(rc));
  mm_tdma *s = NULL;

  int *ddepth = to_dev(depth, ncol * sizeof *depth);
  double *dinv_h = to_dev(inv_h, (size_t)nz * sizeof *inv_h),
         *dg = to_dev(g, (size_t)nz * sizeof *g);
  double *d0 = to_dev(r0, n * sizeof *r0), *d1 = to_dev(r1, n * sizeof *r1);
  const mm_tdma_batch dbt = {.ncol = ncol, .nz = nz, .depth = ddepth};
  const mm_tdma_geometry dgeo = {.inv_h = dinv_h, .g = dg};
  double *const drhs[2] = {d0, d1};
  rc = mm_tdma_create("cuda", nz, 1, &s);
  TU_CHECK(rc == 0, "cuda: %s", mm_tdma_strerror(rc));
  if (!rc && async) {
    cudaStream_t st;
    CK(cudaStreamCreate(&st));
    /* the depths checked (and the workspace sized) once, as the GPU step does */
    rc = mm_tdma_fused_mixing(s, &dbt, &dgeo, &mix, drhs);
    CK(cudaMemcpy(d0, r0, n * sizeof *r0, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d1, r1, n * sizeof *r1, cudaMemcpyHostToDevice));
    if (!rc) rc = mm_tdma_fused_mixing_async(s, &dbt, &dgeo, &mix, drhs, (void *)st);
    CK(cudaStreamSynchronize(st));
    CK(cudaStreamDestroy(st));
  } else if (!rc) {
    rc = mm_tdma_fused_mixing(s, &dbt, &dgeo, &mix, drhs);
  }
  TU_CHECK(rc == 0, "cuda fused_mixing%s: %s", async ? "_async" : "", mm_tdma_strerror(rc));
  mm_tdma_destroy(s);
  double *x0 = tu_xmalloc(n * sizeof *x0), *x1 = tu_xmalloc(n * sizeof *x1);
  CK(cudaMemcpy(x0, d0, n * sizeof *x0, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(x1, d1, n * sizeof *x1, cudaMemcpyDeviceToHost));
  TU_CHECK(!memcmp(x0, e0, n * sizeof *x0) && !memcmp(x1, e1, n * sizeof *x1),
           "cuda fused_mixing%s ncol=%zu nz=%d convect=%d top=%g: not the bits of kappa apart "
           "+ reference",
           async ? "_async" : "", ncol, nz, convect, top);
  cases++, bitwise_cases += !memcmp(x0, e0, n * sizeof *x0) && !memcmp(x1, e1, n * sizeof *x1);
  CK(cudaFree(ddepth)), CK(cudaFree(dinv_h)), CK(cudaFree(dg)), CK(cudaFree(d0)), CK(cudaFree(d1));
  free(depth), free(inv_h), free(g), free(r0), free(r1), free(kappa), free(e0), free(e1);
  free(x0), free(x1);
}

int main(void) {
  int ndev = 0;
  const cudaError_t found = cudaGetDeviceCount(&ndev);
  if (found != cudaSuccess || ndev <= 0) { /* no device, no driver, or one too old */
    (void)cudaGetLastError();
    printf("no CUDA device (%s): skipped\n",
           found != cudaSuccess ? cudaGetErrorString(found) : "none found");
    return SKIP;
  }
  struct cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);

  const char *names[] = {"cuda", "cusparse"};
  for (int i = 0; i < 2; i++) {
    const mm_tdma_backend *be = mm_tdma_find(names[i]);
    TU_CHECK(be != NULL, "%s: not in this build", names[i]);
    if (!be) continue;
    TU_CHECK(be->device_memory && be->available && be->available(),
             "%s: not available although there is a device (built for another arch?)", names[i]);
    mm_tdma *s;
    int rc = mm_tdma_create(names[i], 10, 0, &s);
    TU_CHECK(rc == MM_TDMA_ENOTSUP, "%s for host memory: %s, want ENOTSUP", names[i],
             mm_tdma_strerror(rc));
    if (!rc) mm_tdma_destroy(s);
  }
  {
    mm_tdma *s;
    int rc = mm_tdma_create("auto", 10, 1, &s);
    TU_CHECK(rc == 0, "auto on the device: %s", mm_tdma_strerror(rc));
    if (!rc) {
      TU_CHECK(!strcmp(mm_tdma_backend_of(s)->name, "cuda"), "auto on the device picked %s",
               mm_tdma_backend_of(s)->name);
      mm_tdma_destroy(s);
    }
  }
  if (tu_failures) {
    printf("%d failures\n", tu_failures);
    return 1;
  }

  tu_rng rng = {4242};
  const size_t ncols[] = {1, 3, 31, 33, 37, 1001};
  const int nzs[] = {1, 2, 3, 17, 32, 33, 100, 250};
  const int nrhss[] = {1, 2, 3, MM_TDMA_MAX_RHS};
  for (int i = 0; i < 2; i++) {
    const int before = cases, before_bw = bitwise_cases;
    check_backend(names[i], ncols, 6, nzs, 8, nrhss, 4, &rng);
    printf("%s: %d cases, %d bitwise equal to reference\n", names[i], cases - before,
           bitwise_cases - before_bw);
    check_bad_depth(names[i], &rng);
    check_stale_error(names[i], &rng, ndev);
  }

  /* Plans that spill c'/d' to global memory, and small chunks. */
  /* KT, SLOTS, WARPS_PER_SM, PREFETCH */
  const char *plans[][4] = {{"8", "1", NULL, NULL},  {"3", "2", NULL, NULL},
                            {"1", "1", NULL, NULL},  {NULL, NULL, "8", NULL},
                            {NULL, NULL, "1", NULL}, {NULL, NULL, NULL, "1"},
                            {"8", "3", NULL, "1"},   {NULL, NULL, "2", "1"}};
  const size_t pcols[] = {37, 1001};
  const int pnzs[] = {17, 100};
  const int prhs[] = {1, 3};
  for (size_t i = 0; i < sizeof plans / sizeof *plans; i++) {
    const char *vars[4] = {"MM_TDMA_CUDA_KT", "MM_TDMA_CUDA_SLOTS", "MM_TDMA_CUDA_WARPS_PER_SM",
                           "MM_TDMA_CUDA_PREFETCH"};
    for (int v = 0; v < 4; v++) {
      if (plans[i][v])
        setenv(vars[v], plans[i][v], 1);
      else
        unsetenv(vars[v]);
    }
    const int before = cases, before_bw = bitwise_cases;
    check_backend("cuda", pcols, 2, pnzs, 2, prhs, 2, &rng);
    printf("cuda kt=%s slots=%s warps/SM=%s prefetch=%s: %d cases, %d bitwise\n",
           plans[i][0] ? plans[i][0] : "auto", plans[i][1] ? plans[i][1] : "auto",
           plans[i][2] ? plans[i][2] : "auto", plans[i][3] ? plans[i][3] : "0", cases - before,
           bitwise_cases - before_bw);
  }
  unsetenv("MM_TDMA_CUDA_KT"), unsetenv("MM_TDMA_CUDA_SLOTS");
  unsetenv("MM_TDMA_CUDA_WARPS_PER_SM"), unsetenv("MM_TDMA_CUDA_PREFETCH");

  /* the plain solve queued on a stream */
  for (int single = 0; single <= 1; single++)
    for (int nrhs = 1; nrhs <= 2; nrhs++)
      for (int warm = 0; warm <= 1; warm++) {
        check_async(&rng, 37, 17, nrhs, single, warm);
        check_async(&rng, 1001, 100, nrhs, single, warm);
        check_async(&rng, 333, 200, nrhs, single, warm); /* spills: a workspace */
      }
  printf("cuda solve_async, solve_f_async: bitwise the synchronous solve's\n");

  /* kappa inside the solve: the default plan (4 warps per SM), the plan of
   * 8 warps per SM (its default before 2026-11-30) and plans that spill */
  {
    const int before = cases, before_bw = bitwise_cases;
    const size_t mcols[] = {5, 37, 1001}; /* 5: depths 0, 1, 2, nz and one more */
    const int mnzs[] = {1, 2, 17, 33, 100};
    /* KT, SLOTS, PREFETCH, WARPS_PER_SM */
    const char *mplans[][4] = {{NULL, NULL, NULL, NULL}, {NULL, NULL, NULL, "8"},
                               {"8", "1", NULL, NULL},   {"3", "2", NULL, NULL},
                               {NULL, NULL, "1", NULL},  {"8", "3", "1", NULL}};
    for (size_t i = 0; i < sizeof mplans / sizeof *mplans; i++) {
      if (mplans[i][0]) setenv("MM_TDMA_CUDA_KT", mplans[i][0], 1);
      if (mplans[i][1]) setenv("MM_TDMA_CUDA_SLOTS", mplans[i][1], 1);
      if (mplans[i][2]) setenv("MM_TDMA_CUDA_PREFETCH", mplans[i][2], 1);
      if (mplans[i][3]) setenv("MM_TDMA_CUDA_WARPS_PER_SM", mplans[i][3], 1);
      for (size_t c = 0; c < 3; c++)
        for (size_t z = 0; z < 5; z++)
          for (int convect = 0; convect <= 1; convect++)
            for (int top = 0; top <= 1; top++)
              for (int async = 0; async <= 1; async++)
                check_mixing(&rng, mcols[c], mnzs[z], convect, top ? 0.25 : 0.0, async);
      unsetenv("MM_TDMA_CUDA_KT"), unsetenv("MM_TDMA_CUDA_SLOTS");
      unsetenv("MM_TDMA_CUDA_PREFETCH"), unsetenv("MM_TDMA_CUDA_WARPS_PER_SM");
    }
    printf("cuda fused_mixing: %d cases, %d bitwise\n", cases - before, bitwise_cases - before_bw);
  }

  /* One batch of realistic size. */
  {
    const size_t nc[] = {100003};
    const int nz[] = {100};
    const int nr[] = {2};
    check_backend("cuda", nc, 1, nz, 1, nr, 1, &rng);
    check_backend("cusparse", nc, 1, nz, 1, nr, 1, &rng);
  }

  if (tu_failures) {
    printf("%d failures\n", tu_failures);
    return 1;
  }
  printf("device backends agree with reference (%d cases, %d bitwise)\n", cases, bitwise_cases);
  return 0;
}

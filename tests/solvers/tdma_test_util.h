/* Shared pieces of the solver tests: a seeded random generator, random
 * batches (diagonally dominant plain systems; physical fused systems), and a
 * dense Gaussian elimination with partial pivoting that knows nothing of the
 * solvers. Header-only; every function is static. */
#ifndef MM_TDMA_TEST_UTIL_H
#define MM_TDMA_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_tdma.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static int tu_failures;

#define TU_CHECK(cond, ...)                                                                        \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      tu_failures++;                                                                               \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                         \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fputc('\n', stderr);                                                                         \
    }                                                                                              \
  } while (0)

/* splitmix64: small, seedable, identical everywhere. */
typedef struct {
  uint64_t s;
} tu_rng;
static inline uint64_t tu_next(tu_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
/* Uniform in [lo, hi). */
static inline double tu_uniform(tu_rng *r, double lo, double hi) {
  return lo + (hi - lo) * (double)(tu_next(r) >> 11) * 0x1.0p-53;
}
static inline int tu_int(tu_rng *r, int n) {
  return (int)(tu_next(r) % (uint64_t)n);
}

static inline void *tu_xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  return p;
}

/* Depths of a batch: 0, 1, 2 and nz first (as far as ncol allows), the rest
 * random in 0..nz, biased towards full columns like a real ocean. */
static inline void tu_depths(tu_rng *r, int *depth, size_t ncol, int nz) {
  const int special[4] = {0, 1, 2 < nz ? 2 : nz, nz};
  for (size_t i = 0; i < ncol; i++) {
    if (i < 4)
      depth[i] = special[i];
    else if (tu_int(r, 3) == 0)
      depth[i] = tu_int(r, nz + 1);
    else
      depth[i] = nz;
  }
  /* Shuffle so that the special ones land in different tile positions. */
  for (size_t i = ncol; i > 1; i--) {
    size_t j = (size_t)(tu_next(r) % i);
    int t = depth[i - 1];
    depth[i - 1] = depth[j];
    depth[j] = t;
  }
}

/* Dense n x n solve of the tridiagonal (a, b, c) (a[0], c[n-1] unused) with
 * right-hand side d, by Gaussian elimination with partial pivoting on the full
 * matrix in long double. x receives the solution. Returns 0, or -1 if
 * singular. */
static inline int tu_dense_solve(int n, const double *a, const double *b, const double *c,
                                 const double *d, double *x) {
  long double *m = tu_xmalloc((size_t)n * (size_t)(n + 1) * sizeof *m);
#define M(i, j) m[(size_t)(i) * (size_t)(n + 1) + (size_t)(j)]
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= n; j++)
      M(i, j) = 0;
    if (i > 0) M(i, i - 1) = a[i];
    M(i, i) = b[i];
    if (i < n - 1) M(i, i + 1) = c[i];
    M(i, n) = d[i];
  }
  for (int p = 0; p < n; p++) {
    int piv = p;
    for (int i = p + 1; i < n; i++)
      if (fabsl(M(i, p)) > fabsl(M(piv, p))) piv = i;
    if (M(piv, p) == 0) {
      free(m);
      return -1;
    }
    if (piv != p)
      for (int j = 0; j <= n; j++) {
        long double t = M(p, j);
        M(p, j) = M(piv, j);
        M(piv, j) = t;
      }
    for (int i = p + 1; i < n; i++) {
      long double f = M(i, p) / M(p, p);
      if (f == 0) continue;
      for (int j = p; j <= n; j++)
        M(i, j) -= f * M(p, j);
    }
  }
  for (int i = n - 1; i >= 0; i--) {
    long double s = M(i, n);
    for (int j = i + 1; j < n; j++)
      s -= M(i, j) * (long double)x[j];
    x[i] = (double)(s / M(i, i));
  }
#undef M
  free(m);
  return 0;
}

/* Relative residual of one column, normwise backward error in long double:
 * max_k |(A x - d)_k| / max_k (|a_k x_{k-1}| + |b_k x_k| + |c_k x_{k+1}| + |d_k|).
 * (Plain |A x - d| / |d| would grow with |b| / |d| for the strongly coupled
 * fused systems and say more about the test matrix than about the solver.) */
static inline double tu_residual(int n, const double *a, const double *b, const double *c,
                                 const double *d, const double *x) {
  long double rmax = 0, smax = 0;
  for (int k = 0; k < n; k++) {
    long double s = (long double)b[k] * x[k], mag = fabsl(s) + fabsl((long double)d[k]);
    if (k > 0) {
      s += (long double)a[k] * x[k - 1];
      mag += fabsl((long double)a[k] * x[k - 1]);
    }
    if (k < n - 1) {
      s += (long double)c[k] * x[k + 1];
      mag += fabsl((long double)c[k] * x[k + 1]);
    }
    long double r = fabsl(s - d[k]);
    if (!(r <= rmax)) rmax = r; /* NaN propagates */
    if (mag > smax) smax = mag;
  }
  return smax > 0 ? (double)(rmax / smax) : (double)rmax;
}

/* Geometry like the model's: stretched layers 1..60 m thick, dt = 1 day. */
static inline void tu_geometry(tu_rng *r, int nz, double *inv_h, double *g) {
  double *h = tu_xmalloc((size_t)nz * sizeof *h);
  for (int k = 0; k < nz; k++)
    h[k] = tu_uniform(r, 1.0, 60.0);
  for (int k = 0; k < nz; k++) {
    inv_h[k] = 1.0 / h[k];
    g[k] = k < nz - 1 ? 86400.0 / (0.5 * (h[k] + h[k + 1])) : 0.0;
  }
  free(h);
}

/* The fused coefficients written out independently of mm_tdma_column.h (the
 * formulas of docs/physics.md, in the order given there). */
#define TU_BUILD(T)                                                                                \
  static inline void tu_build_##T(int n, const T *kappa, const T *g, const T *inv_h, T *a, T *b,   \
                                  T *c) {                                                          \
    for (int k = 0; k < n; k++) {                                                                  \
      T up = k > 0 ? kappa[k - 1] * g[k - 1] : (T)0;                                               \
      T dn = k < n - 1 ? kappa[k] * g[k] : (T)0;                                                   \
      a[k] = -up * inv_h[k];                                                                       \
      c[k] = -dn * inv_h[k];                                                                       \
      b[k] = ((T)1 - a[k]) - c[k];                                                                 \
    }                                                                                              \
  }
TU_BUILD(double)
TU_BUILD(float)

/* A random batch in both precisions (the float one is the double one rounded).
 * Levels at and below a column's depth hold NaN in every array: a backend that
 * reads them shows it in its result, one that writes them shows it there. */
typedef struct {
  size_t ncol;
  int nz, nrhs;
  int *depth;
  double *a, *b, *c, *kappa, *rhs[MM_TDMA_MAX_RHS];
  double *inv_h, *g;
  float *af, *bf, *cf, *kappaf, *rhsf[MM_TDMA_MAX_RHS], *inv_hf, *gf;
} tu_batch;

/* depth: the depths to use, or NULL for tu_depths. */
static inline void tu_batch_make(tu_batch *t, tu_rng *r, size_t ncol, int nz, int nrhs,
                                 const int *depth) {
  memset(t, 0, sizeof *t);
  t->ncol = ncol;
  t->nz = nz;
  t->nrhs = nrhs;
  const size_t n = ncol * (size_t)nz;
  t->depth = tu_xmalloc(ncol * sizeof *t->depth);
  if (depth)
    memcpy(t->depth, depth, ncol * sizeof *depth);
  else
    tu_depths(r, t->depth, ncol, nz);
  double **dd[] = {&t->a, &t->b, &t->c, &t->kappa};
  float **ff[] = {&t->af, &t->bf, &t->cf, &t->kappaf};
  for (int i = 0; i < 4; i++) {
    *dd[i] = tu_xmalloc(n * sizeof(double));
    *ff[i] = tu_xmalloc(n * sizeof(float));
  }
  for (int q = 0; q < nrhs; q++) {
    t->rhs[q] = tu_xmalloc(n * sizeof(double));
    t->rhsf[q] = tu_xmalloc(n * sizeof(float));
  }
  t->inv_h = tu_xmalloc((size_t)nz * sizeof(double));
  t->g = tu_xmalloc((size_t)nz * sizeof(double));
  t->inv_hf = tu_xmalloc((size_t)nz * sizeof(float));
  t->gf = tu_xmalloc((size_t)nz * sizeof(float));
  tu_geometry(r, nz, t->inv_h, t->g);
  t->g[nz - 1] = NAN;
  for (int k = 0; k < nz; k++) {
    t->inv_hf[k] = (float)t->inv_h[k];
    t->gf[k] = (float)t->g[k];
  }
  for (size_t col = 0; col < ncol; col++)
    for (int k = 0; k < nz; k++) {
      size_t i = col * (size_t)nz + k;
      if (k < t->depth[col]) {
        t->a[i] = tu_uniform(r, -1.0, 1.0);
        t->c[i] = tu_uniform(r, -1.0, 1.0);
        t->b[i] =
            (tu_int(r, 2) ? 1.0 : -1.0) * (fabs(t->a[i]) + fabs(t->c[i]) + tu_uniform(r, 0.5, 2.0));
        /* Interface diffusivity 1e-5 .. 1e-1 m2/s (convective mixing). */
        t->kappa[i] = exp(tu_uniform(r, log(1e-5), log(1e-1)));
        for (int q = 0; q < nrhs; q++)
          t->rhs[q][i] = tu_uniform(r, -2.0, 30.0);
      } else {
        t->a[i] = t->b[i] = t->c[i] = t->kappa[i] = NAN;
        for (int q = 0; q < nrhs; q++)
          t->rhs[q][i] = NAN;
      }
      /* Values the Thomas algorithm never uses (a_0, c_{n-1}; kappa and g of
       * the bottom interface, whose conductance is 0 by definition) are NaN
       * too: a solver must not let them into the result. */
      if (k == 0) t->a[i] = NAN;
      if (k == t->depth[col] - 1) t->c[i] = t->kappa[i] = NAN;
      t->af[i] = (float)t->a[i];
      t->bf[i] = (float)t->b[i];
      t->cf[i] = (float)t->c[i];
      t->kappaf[i] = (float)t->kappa[i];
      for (int q = 0; q < nrhs; q++)
        t->rhsf[q][i] = (float)t->rhs[q][i];
    }
}

static inline void tu_batch_free(tu_batch *t) {
  free(t->depth);
  double *dd[] = {t->a, t->b, t->c, t->kappa, t->inv_h, t->g};
  float *ff[] = {t->af, t->bf, t->cf, t->kappaf, t->inv_hf, t->gf};
  for (int i = 0; i < 6; i++) {
    free(dd[i]);
    free(ff[i]);
  }
  for (int q = 0; q < t->nrhs; q++) {
    free(t->rhs[q]);
    free(t->rhsf[q]);
  }
}

/* Copies of the right-hand sides (the solvers work in place). */
static inline double **tu_copy_rhs(const tu_batch *t) {
  double **x = tu_xmalloc(MM_TDMA_MAX_RHS * sizeof *x);
  const size_t n = t->ncol * (size_t)t->nz;
  for (int q = 0; q < t->nrhs; q++) {
    x[q] = tu_xmalloc(n * sizeof(double));
    memcpy(x[q], t->rhs[q], n * sizeof(double));
  }
  return x;
}
static inline float **tu_copy_rhs_f(const tu_batch *t) {
  float **x = tu_xmalloc(MM_TDMA_MAX_RHS * sizeof *x);
  const size_t n = t->ncol * (size_t)t->nz;
  for (int q = 0; q < t->nrhs; q++) {
    x[q] = tu_xmalloc(n * sizeof(float));
    memcpy(x[q], t->rhsf[q], n * sizeof(float));
  }
  return x;
}
static inline void tu_free_rhs(void *x, int nrhs) {
  void **p = x;
  for (int q = 0; q < nrhs; q++)
    free(p[q]);
  free(p);
}

/* Tracers for mm_tdma_fused_mixing: r0 warm over cold with noise, r1 nearly
 * uniform, so that about a third of the interfaces are unstable; NaN at and
 * below each column's depth (sentinels that must survive). */
static inline void tu_mixing_tracers(tu_rng *r, size_t ncol, int nz, const int *depth, double *r0,
                                     double *r1) {
  for (size_t c = 0; c < ncol; c++)
    for (int k = 0; k < nz; k++) {
      const size_t p = c * (size_t)nz + (size_t)k;
      r0[p] = k < depth[c] ? 20.0 - 0.1 * k + tu_uniform(r, -0.15, 0.15) : NAN;
      r1[p] = k < depth[c] ? 35.0 + tu_uniform(r, -0.01, 0.01) : NAN;
    }
}

/* kappa of every wet interface from the formula of mm_tdma_mixing (written
 * out here, apart from the solvers). */
static inline void tu_mixing_kappa(const mm_tdma_mixing *mix, size_t ncol, int nz, const int *depth,
                                   const double *r0, const double *r1, double *kappa) {
  for (size_t c = 0; c < ncol; c++)
    for (int k = 0; k + 1 < depth[c]; k++) {
      const size_t p = c * (size_t)nz + (size_t)k;
      const double rho = -mix->alpha * (r0[p] - r0[p + 1]) + mix->beta * (r1[p] - r1[p + 1]);
      kappa[p] = mix->convect && rho > 0.0 ? mix->kappa_mix : mix->kappa_v;
    }
}

/* The mixing parameters of the tests: convection on or off, a surface term. */
static inline mm_tdma_mixing tu_mixing_params(int convect, double top) {
  const mm_tdma_mixing mix = {.alpha = 2e-4,
                              .beta = 7.6e-4,
                              .kappa_v = 1e-5,
                              .kappa_mix = 0.1,
                              .convect = convect,
                              .top = top};
  return mix;
}

/* The expected result of mm_tdma_fused_mixing on r0, r1 (host memory):
 * kappa written out here (tu_mixing_kappa; NaN elsewhere), the surface term
 * added to copies e0, e1 of r0, r1 at the top of every wet column, then
 * reference's fused solve of the copies. Returns its status. */
static inline int tu_mixing_expect(const mm_tdma_mixing *mix, const mm_tdma_batch *bt,
                                   const mm_tdma_geometry *geo, const double *r0, const double *r1,
                                   double *kappa, double *e0, double *e1) {
  const size_t n = bt->ncol * (size_t)bt->nz;
  for (size_t e = 0; e < n; e++)
    kappa[e] = NAN;
  tu_mixing_kappa(mix, bt->ncol, bt->nz, bt->depth, r0, r1, kappa);
  memcpy(e0, r0, n * sizeof *e0);
  memcpy(e1, r1, n * sizeof *e1);
  for (size_t c = 0; c < bt->ncol; c++)
    if (bt->depth[c] > 0 && mix->top != 0.0) e0[c * (size_t)bt->nz] += mix->top;
  mm_tdma *ref = NULL;
  int rc = mm_tdma_create("reference", bt->nz, 0, &ref);
  double *const erhs[2] = {e0, e1};
  if (!rc) rc = mm_tdma_fused(ref, bt, geo, kappa, erhs, 2);
  mm_tdma_destroy(ref);
  return rc;
}

static inline void tu_set_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

#endif

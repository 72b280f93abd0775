/* The per-column arithmetic of every tridiagonal solver, as static inline
 * functions usable from host and device code: the CPU test suite exercises
 * exactly the arithmetic the CUDA kernels run. The order of operations is the
 * one written in docs/physics.md (vertical step); do not re-associate. */
#ifndef MM_TDMA_COLUMN_H
#define MM_TDMA_COLUMN_H

#if defined(__CUDACC__)
#define MM_HD __host__ __device__ __forceinline__
#else
#define MM_HD static inline
#endif

/* Coefficients of level k (0 <= k < n) of a column of n wet levels, built from
 * the interface diffusivity kappa (kappa[k]: interface below level k) and the
 * per-level geometry g (dt / centre distance) and inv_h (1 / thickness). */
#define MM_TDMA_COLUMN_DEFINE(T, SUF)                                                              \
  MM_HD void mm_col_coeffs##SUF(int k, int n, const T *kappa, const T *g, const T *inv_h, T *a,    \
                                T *b, T *c) {                                                      \
    T cond_up = k > 0 ? kappa[k - 1] * g[k - 1] : (T)0;                                            \
    T cond_dn = k < n - 1 ? kappa[k] * g[k] : (T)0;                                                \
    *a = -cond_up * inv_h[k];                                                                      \
    *c = -cond_dn * inv_h[k];                                                                      \
    *b = ((T)1 - *a) - *c;                                                                         \
  }                                                                                                \
  /* Thomas algorithm on one column of n levels, stride 1, nrhs right-hand sides                   \
   * solved in place; cp is workspace of n entries. */                                             \
  MM_HD void mm_col_thomas##SUF(int n, const T *a, const T *b, const T *c, T *const *rhs,          \
                                int nrhs, long off, T *cp) {                                       \
    if (n <= 0) return;                                                                            \
    T m = (T)1 / b[0];                                                                             \
    cp[0] = c[0] * m;                                                                              \
    for (int r = 0; r < nrhs; r++)                                                                 \
      rhs[r][off] = rhs[r][off] * m;                                                               \
    for (int k = 1; k < n; k++) {                                                                  \
      m = (T)1 / (b[k] - a[k] * cp[k - 1]);                                                        \
      cp[k] = c[k] * m;                                                                            \
      for (int r = 0; r < nrhs; r++)                                                               \
        rhs[r][off + k] = (rhs[r][off + k] - a[k] * rhs[r][off + k - 1]) * m;                      \
    }                                                                                              \
    for (int k = n - 2; k >= 0; k--)                                                               \
      for (int r = 0; r < nrhs; r++)                                                               \
        rhs[r][off + k] = rhs[r][off + k] - cp[k] * rhs[r][off + k + 1];                           \
  }                                                                                                \
  /* Fused build + solve of one column: coefficients from kappa as it goes. */                     \
  MM_HD void mm_col_fused##SUF(int n, const T *kappa, const T *g, const T *inv_h, T *const *rhs,   \
                               int nrhs, long off, T *cp) {                                        \
    if (n <= 0) return;                                                                            \
    T a, b, c;                                                                                     \
    mm_col_coeffs##SUF(0, n, kappa, g, inv_h, &a, &b, &c);                                         \
    T m = (T)1 / b;                                                                                \
    cp[0] = c * m;                                                                                 \
    for (int r = 0; r < nrhs; r++)                                                                 \
      rhs[r][off] = rhs[r][off] * m;                                                               \
    for (int k = 1; k < n; k++) {                                                                  \
      mm_col_coeffs##SUF(k, n, kappa, g, inv_h, &a, &b, &c);                                       \
      m = (T)1 / (b - a * cp[k - 1]);                                                              \
      cp[k] = c * m;                                                                               \
      for (int r = 0; r < nrhs; r++)                                                               \
        rhs[r][off + k] = (rhs[r][off + k] - a * rhs[r][off + k - 1]) * m;                         \
    }                                                                                              \
    for (int k = n - 2; k >= 0; k--)                                                               \
      for (int r = 0; r < nrhs; r++)                                                               \
        rhs[r][off + k] = rhs[r][off + k] - cp[k] * rhs[r][off + k + 1];                           \
  }

MM_TDMA_COLUMN_DEFINE(double, )
MM_TDMA_COLUMN_DEFINE(float, _f)

/* Diffusivity of the interface between levels k and k+1 from the linear
 * equation of state (mm_tdma_mixing, docs/physics.md "Convective diffusivity"):
 * kappa_mix where the column is statically unstable, -alpha (t_k - t_k1) +
 * beta (s_k - s_k1) > 0, and convection is on; kappa_v otherwise (m2/s). */
MM_HD double mm_col_kappa(double alpha, double beta, double t_k, double t_k1, double s_k,
                          double s_k1, int convect, double kappa_v, double kappa_mix) {
  const int unstable = -alpha * (t_k - t_k1) + beta * (s_k - s_k1) > 0.0;
  return convect && unstable ? kappa_mix : kappa_v;
}

#endif

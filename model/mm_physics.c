#include "mm_physics.h"

#include <math.h>

/* Superbee limiter B(a, b) = phi(a/b) b without the division. */
static inline double superbee(double a, double b) {
  if (a * b <= 0.0) return 0.0;
  const double fa = fabs(a), fb = fabs(b);
  const double s = b > 0.0 ? 1.0 : -1.0;
  return s * fmax(fmin(2.0 * fa, fb), fmin(fa, 2.0 * fb));
}

/* Advective flux (per unit depth) through the face between cells L and R,
 * transport U > 0 towards R. tLL / tRR are the cells beyond L and R;
 * wet_LL / wet_RR say whether the faces LL|L and R|RR are wet. */
static inline __attribute__((always_inline)) double advective_flux(mm_advection scheme, double U, double cfac, double tLL,
                                    double tL, double tR, double tRR, int wet_LL, int wet_RR) {
  if (scheme == MM_ADV_NONE) return 0.0;
  double tu, td, d_up;
  if (U >= 0.0) {
    tu = tL;
    td = tR;
    d_up = wet_LL ? tL - tLL : 0.0;
  } else {
    tu = tR;
    td = tL;
    d_up = wet_RR ? tR - tRR : 0.0;
  }
  if (scheme == MM_ADV_UPWIND) return U * tu;
  const double c = fabs(U) * cfac;
  const double t_face = tu + (0.5 * (1.0 - c)) * superbee(d_up, td - tu);
  return U * t_face;
}

static inline int imin(int a, int b) { return a < b ? a : b; }

/* The kernel, inlined once per advection scheme so that the scheme is a
 * constant inside the loops. */
static inline __attribute__((always_inline)) void
horizontal_block(mm_model *m, int ib, int ie, int jb, int je, const mm_advection scheme) {
  const mm_grid *g = &m->grid;
  const int nz = g->nz;
  const double cfac = m->dt_area, kh_x = m->kh_x, kh_y = m->kh_y;
  const long sx = nz, sy = (long)g->nxh * nz; /* strides to the east and north neighbours */
  double *const state[2] = {m->temp, m->salt};
  double *const next[2] = {m->temp_next, m->salt_next};

  for (int j = jb; j < je; j++)
    for (int i = ib; i < ie; i++) {
      const size_t c = mm_col(g, i, j);
      const long p = (long)c * nz;
      const int kP = g->kmt[c];
      const int kE = g->kmt[c + 1], kW = g->kmt[c - 1];
      const int kEE = g->kmt[c + 2], kWW = g->kmt[c - 2];
      const int kN = g->kmt[c + g->nxh], kS = g->kmt[c - g->nxh];
      const int kNN = g->kmt[c + 2 * g->nxh], kSS = g->kmt[c - 2 * g->nxh];
      const double *ue_e = m->ue + p, *ue_w = m->ue + p - sx;
      const double *vn_n = m->vn + p, *vn_s = m->vn + p - sy;
      for (int v = 0; v < 2; v++) {
        const double *t = state[v] + p;
        double *tn = next[v] + p;
        for (int k = 0; k < kP; k++) {
          const int we = k < kE, ww = k < kW, wn = k < kN, ws = k < kS;
          /* east face: L = P, R = E */
          double fa_e = 0.0, fd_e = 0.0;
          if (we) {
            fa_e = advective_flux(scheme, ue_e[k], cfac, t[k - sx], t[k], t[k + sx], t[k + 2 * sx],
                                  ww, k < imin(kE, kEE));
            fd_e = -kh_x * (t[k + sx] - t[k]);
          }
          /* west face: L = W, R = P */
          double fa_w = 0.0, fd_w = 0.0;
          if (ww) {
            fa_w = advective_flux(scheme, ue_w[k], cfac, t[k - 2 * sx], t[k - sx], t[k],
                                  t[k + sx], k < imin(kWW, kW), we);
            fd_w = -kh_x * (t[k] - t[k - sx]);
          }
          /* north face: L = P, R = N */
          double ga_n = 0.0, gd_n = 0.0;
          if (wn) {
            ga_n = advective_flux(scheme, vn_n[k], cfac, t[k - sy], t[k], t[k + sy], t[k + 2 * sy],
                                  ws, k < imin(kN, kNN));
            gd_n = -kh_y * (t[k + sy] - t[k]);
          }
          /* south face: L = S, R = P */
          double ga_s = 0.0, gd_s = 0.0;
          if (ws) {
            ga_s = advective_flux(scheme, vn_s[k], cfac, t[k - 2 * sy], t[k - sy], t[k],
                                  t[k + sy], k < imin(kSS, kS), wn);
            gd_s = -kh_y * (t[k] - t[k - sy]);
          }
          const double adv = (fa_w - fa_e) + (ga_s - ga_n);
          const double dif = (fd_w - fd_e) + (gd_s - gd_n);
          tn[k] = t[k] + m->dt_area * (adv + dif);
        }
      }
    }
}

void mm_horizontal_step(mm_model *m, int ib, int ie, int jb, int je) {
  switch (m->cfg.advection) {
  case MM_ADV_NONE: horizontal_block(m, ib, ie, jb, je, MM_ADV_NONE); break;
  case MM_ADV_UPWIND: horizontal_block(m, ib, ie, jb, je, MM_ADV_UPWIND); break;
  case MM_ADV_SUPERBEE: horizontal_block(m, ib, ie, jb, je, MM_ADV_SUPERBEE); break;
  }
}

void mm_convective_kappa(mm_model *m) {
  const mm_grid *g = &m->grid;
  const int nz = g->nz;
  const double alpha = m->cfg.alpha, beta = m->cfg.beta;
  const double kv = m->cfg.kappa_v, kmix = m->kappa_mix;
  const int convect = m->cfg.kappa_convect > 0.0;
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++) {
      const size_t c = mm_col(g, i, j);
      const long p = (long)c * nz;
      const int n = g->kmt[c];
      const double *t = m->temp_next + p, *s = m->salt_next + p;
      double *kw = m->kappa_w + p;
      for (int k = 0; k + 1 < n; k++) {
        const int unstable = -alpha * (t[k] - t[k + 1]) + beta * (s[k] - s[k + 1]) > 0.0;
        kw[k] = convect && unstable ? kmix : kv;
      }
    }
}

mm_err mm_vertical_step(mm_model *m) {
  const mm_grid *g = &m->grid;
  const int nz = g->nz;
  if (m->q_top != 0.0)
    for (int j = 0; j < g->nyl; j++)
      for (int i = 0; i < g->nxl; i++) {
        const size_t c = mm_col(g, i, j);
        if (g->kmt[c] > 0) m->temp_next[c * nz] += m->q_top;
      }
  /* one batch: every column from the first to the last of the block; halo
   * columns in between have depth 0 and are skipped by the solver */
  const size_t first = mm_col(g, 0, 0), last = mm_col(g, g->nxl - 1, g->nyl - 1);
  const mm_tdma_batch bt = {.ncol = last - first + 1, .nz = nz, .depth = g->kmt_solve + first};
  const mm_tdma_geometry geo = {.inv_h = m->inv_h, .g = m->g_dt};
  double *const rhs[2] = {m->temp_next + first * nz, m->salt_next + first * nz};
  int rc = mm_tdma_fused(m->solver, &bt, &geo, m->kappa_w + first * nz, rhs, 2);
  MM_REQUIRE(rc == MM_TDMA_OK, MM_ERR_RUN, "tridiagonal solve (%s) failed: %s",
             mm_tdma_backend_of(m->solver)->name, mm_tdma_strerror(rc));
  return MM_OK;
}

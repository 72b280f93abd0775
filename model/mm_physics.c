#include "mm_physics.h"

#include <math.h>

#include "mm_cell.h"

_Static_assert(MM_CELL_ADV_NONE == (int)MM_ADV_NONE && MM_CELL_ADV_UPWIND == (int)MM_ADV_UPWIND &&
                   MM_CELL_ADV_SUPERBEE == (int)MM_ADV_SUPERBEE,
               "mm_cell.h and mm_config.h agree on the advection schemes");
_Static_assert(MM_CELL_HALO == MM_HALO, "mm_cell.h and mm_grid.h agree on the halo");

/* Fluxes per unit depth through one face, for the levels of one cell
 * (docs/physics.md, "Horizontal step"). The face lies between cells L and R
 * (R towards +x or +y); LL and RR are the cells beyond them. The face is wet
 * on its first n_face levels, the face LL|L on its first n_ll and R|RR on its
 * first n_rr. Writes the advective flux fa[k] and the diffusive flux fd[k]
 * for k < n_cell (0 where the face is dry). The arithmetic is mm_face_flux
 * (mm_cell.h, shared with the GPU kernels); it is branch-free, so this loop
 * vectorises over k. */
static inline __attribute__((always_inline)) void
face_fluxes(const mm_advection scheme, int n_face, int n_ll, int n_rr, int n_cell,
            const double *restrict U, const double *restrict tLL, const double *restrict tL,
            const double *restrict tR, const double *restrict tRR, double cfac, double kh,
            double *restrict fa, double *restrict fd) {
  for (int k = 0; k < n_face; k++)
    mm_face_flux((int)scheme, U[k], tLL[k], tL[k], tR[k], tRR[k], k < n_ll, k < n_rr, cfac, kh,
                 &fa[k], &fd[k]);
  for (int k = n_face < 0 ? 0 : n_face; k < n_cell; k++)
    fa[k] = fd[k] = 0.0;
}

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
  /* Face fluxes of the current cell, advective (fa, ga) and diffusive (fd,
   * gd). The x faces per tracer: a cell's east face is the next cell's west
   * face, so it is computed once and passed on (the buffers swap); the
   * values are those the next cell would compute, bit for bit. */
  double *w = m->work, *fa_e[2], *fd_e[2], *fa_w[2], *fd_w[2];
  for (int v = 0; v < 2; v++, w += 4 * nz) {
    fa_e[v] = w, fd_e[v] = w + nz, fa_w[v] = w + 2 * nz, fd_w[v] = w + 3 * nz;
  }
  double *const ga_n = w, *const ga_s = w + nz, *const gd_n = w + 2 * nz, *const gd_s = w + 3 * nz;

  for (int j = jb; j < je; j++) {
    int have_west = 0; /* fa_w, fd_w hold the west face of cell i (east face of i - 1) */
    for (int i = ib; i < ie; i++) {
      const size_t c = mm_col(g, i, j);
      const long p = (long)c * nz;
      const int kP = g->kmt[c];
      if (kP == 0) {
        have_west = 0;
        continue;
      }
      const int kE = g->kmt[c + 1], kW = g->kmt[c - 1];
      const int kEE = g->kmt[c + 2], kWW = g->kmt[c - 2];
      const int kN = g->kmt[c + g->nxh], kS = g->kmt[c - g->nxh];
      const int kNN = g->kmt[c + 2 * g->nxh], kSS = g->kmt[c - 2 * g->nxh];
      const double *ue_e = m->ue + p, *ue_w = m->ue + p - sx;
      const double *vn_n = m->vn + p, *vn_s = m->vn + p - sy;
      for (int v = 0; v < 2; v++) {
        const double *t = state[v] + p;
        double *tn = next[v] + p;
        /* east face: L = P, R = E, zero up to the deeper of the two cells so
         * that E can take it as its west face; west face: L = W, R = P;
         * likewise north and south */
        face_fluxes(scheme, mm_cell_imin(kP, kE), mm_cell_imin(kW, kP), mm_cell_imin(kE, kEE),
                    kP > kE ? kP : kE, ue_e, t - sx, t, t + sx, t + 2 * sx, cfac, kh_x, fa_e[v],
                    fd_e[v]);
        if (!have_west)
          face_fluxes(scheme, mm_cell_imin(kW, kP), mm_cell_imin(kWW, kW), mm_cell_imin(kP, kE), kP,
                      ue_w, t - 2 * sx, t - sx, t, t + sx, cfac, kh_x, fa_w[v], fd_w[v]);
        face_fluxes(scheme, mm_cell_imin(kP, kN), mm_cell_imin(kS, kP), mm_cell_imin(kN, kNN), kP,
                    vn_n, t - sy, t, t + sy, t + 2 * sy, cfac, kh_y, ga_n, gd_n);
        face_fluxes(scheme, mm_cell_imin(kS, kP), mm_cell_imin(kSS, kS), mm_cell_imin(kP, kN), kP,
                    vn_s, t - 2 * sy, t - sy, t, t + sy, cfac, kh_y, ga_s, gd_s);
        const double *restrict aw = fa_w[v], *restrict ae = fa_e[v];
        const double *restrict dw = fd_w[v], *restrict de = fd_e[v];
        for (int k = 0; k < kP; k++)
          tn[k] = mm_cell_update(t[k], aw[k], ae[k], ga_s[k], ga_n[k], dw[k], de[k], gd_s[k],
                                 gd_n[k], cfac);
        /* the east face becomes the next cell's west face */
        double *x = fa_w[v];
        fa_w[v] = fa_e[v], fa_e[v] = x;
        x = fd_w[v];
        fd_w[v] = fd_e[v], fd_e[v] = x;
      }
      have_west = 1;
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
      for (int k = 0; k + 1 < n; k++)
        kw[k] = mm_cell_kappa(alpha, beta, t[k], t[k + 1], s[k], s[k + 1], convect, kv, kmix);
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

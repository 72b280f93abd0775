#include "mm_flow.h"

#include <math.h>
#include <stdlib.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

double mm_flow_psi(const mm_config *cfg, int I, int J) {
  const double U = cfg->flow_speed;
  const double Lx = cfg->nx * cfg->dx, Ly = cfg->ny * cfg->dy;
  const double x = I * cfg->dx, y = J * cfg->dy;
  double psi;
  switch (cfg->flow) {
  case MM_FLOW_UNIFORM: psi = -U * y; break;
  case MM_FLOW_GYRE: {
    const double psi0 = U * Ly / M_PI;
    psi = psi0 * sin(M_PI * x / Lx) * sin(M_PI * y / Ly);
    break;
  }
  default: return 0.0;
  }
  const double scale = U * fmax(Lx, Ly);
  if (scale <= 0.0) return 0.0;
  int e;
  frexp(scale, &e);
  const double q = ldexp(1.0, e - 40);
  return rint(psi / q) * q;
}

mm_err mm_flow_create(const mm_config *cfg, const mm_grid *g, double *ue, double *vn) {
  const int nz = g->nz;
  const int he = MM_HALO + 1; /* corners of halo columns touch one more cell */
  const int nxe = g->nxl + 2 * he, nye = g->nyl + 2 * he;
  int *kmt_ext;
  MM_ALLOC(kmt_ext, (size_t)nxe * nye);
#define KE(i, j) kmt_ext[(size_t)((j) + he) * nxe + (size_t)((i) + he)]
  for (int j = -he; j < g->nyl + he; j++)
    for (int i = -he; i < g->nxl + he; i++)
      KE(i, j) = mm_grid_kmt_global(cfg, g, g->i0 + i, g->j0 + j);

      /* levels at which corner (I, J) (local: NE corner of cell (I-1, J-1)) is
       * surrounded by water: min kmt of the cells touching it, walls not counted */
#define WETMIN(I, J, out)                                                                          \
  do {                                                                                             \
    int m_ = nz;                                                                                   \
    const int cells_[4] = {KE((I)-1, (J)-1), KE((I), (J)-1), KE((I)-1, (J)), KE((I), (J))};        \
    for (int q_ = 0; q_ < 4; q_++)                                                                 \
      if (cells_[q_] >= 0 && cells_[q_] < m_) m_ = cells_[q_];                                     \
    (out) = m_;                                                                                    \
  } while (0)

  for (int j = -MM_HALO; j < g->nyl + MM_HALO; j++)
    for (int i = -MM_HALO; i < g->nxl + MM_HALO; i++) {
      const size_t c = mm_col(g, i, j) * (size_t)nz;
      for (int k = 0; k < nz; k++)
        ue[c + k] = vn[c + k] = 0.0;
      if (cfg->flow == MM_FLOW_NONE) continue;
      int ig = g->i0 + i, jg = g->j0 + j;
      if (ig < 0 || ig >= g->nx) {
        if (!g->periodic_x) continue; /* beyond a wall: land */
        ig = ((ig % g->nx) + g->nx) % g->nx;
      }
      if (jg < 0 || jg >= g->ny) {
        if (!g->periodic_y) continue;
        jg = ((jg % g->ny) + g->ny) % g->ny;
      }
      /* corners, unwrapped relative to the wrapped cell */
      const double psi_ne = mm_flow_psi(cfg, ig + 1, jg + 1);
      const double psi_se = mm_flow_psi(cfg, ig + 1, jg);
      const double psi_nw = mm_flow_psi(cfg, ig, jg + 1);
      int w_ne, w_se, w_nw;
      WETMIN(i + 1, j + 1, w_ne);
      WETMIN(i + 1, j, w_se);
      WETMIN(i, j + 1, w_nw);
      /* a face carries transport only where the cells on both sides are wet */
      const int kP = KE(i, j), kE = KE(i + 1, j) < 0 ? 0 : KE(i + 1, j);
      const int kN = KE(i, j + 1) < 0 ? 0 : KE(i, j + 1);
      for (int k = 0; k < nz; k++) {
        const double ne = k < w_ne ? psi_ne : 0.0;
        const double se = k < w_se ? psi_se : 0.0;
        const double nw = k < w_nw ? psi_nw : 0.0;
        ue[c + k] = k < kP && k < kE ? -(ne - se) : 0.0;
        vn[c + k] = k < kP && k < kN ? ne - nw : 0.0;
      }
    }
#undef WETMIN
#undef KE
  free(kmt_ext);
  return MM_OK;
}

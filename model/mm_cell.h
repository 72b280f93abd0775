/* The per-cell arithmetic of the explicit part of the step (docs/physics.md,
 * "Horizontal step" and "Convective diffusivity"), as static inline functions
 * usable from host and device code. The CPU kernels (mm_physics.c) and the
 * GPU kernels (cuda/mm_device_cuda.cu) both call these, so the CPU test suite runs
 * exactly the arithmetic the GPU runs, and with no FMA contraction on either
 * side (-ffp-contract=off, nvcc --fmad=false) the results are the same bits.
 * The order of operations is the one of docs/physics.md: do not
 * re-associate. Plain C99/C++: no restrict, no C-only headers. */
#ifndef MM_CELL_H
#define MM_CELL_H

#include <math.h>
#include <stddef.h>

#include "mm_tdma_column.h"

#if defined(__CUDACC__)
#define MM_CELL_FN __host__ __device__ __forceinline__
#else
#define MM_CELL_FN static inline __attribute__((always_inline))
#endif

/* Advection schemes, the values of mm_advection (mm_config.h). */
enum { MM_CELL_ADV_NONE = 0, MM_CELL_ADV_UPWIND = 1, MM_CELL_ADV_SUPERBEE = 2 };

/* Halo width, MM_HALO of mm_grid.h. */
#define MM_CELL_HALO 2

MM_CELL_FN double mm_cell_min(double a, double b) {
  return a < b ? a : b;
}
MM_CELL_FN double mm_cell_max(double a, double b) {
  return a > b ? a : b;
}
MM_CELL_FN int mm_cell_imin(int a, int b) {
  return a < b ? a : b;
}

/* The sign of a face's transport where it is known for all the levels of
 * a loop: then the upwind cell is known without a comparison per level
 * (mm_face_flux_dir). */
enum { MM_CELL_DIR_ANY = 0, MM_CELL_DIR_POS = 1, MM_CELL_DIR_NEG = 2 };

/* Fluxes per unit depth through one wet face at one level. The face lies
 * between cells L and R (R towards +x or +y); LL and RR are the cells beyond.
 *   u       transport per unit depth through the face, > 0 towards R (m2/s)
 *   t_*     the tracer in LL, L, R, RR
 *   wet_ll  the face LL|L is wet at this level; wet_rr likewise R|RR
 *   dt_area    dt / (dx dy) (s/m2)
 *   kh      kappa_h dy/dx (x faces) or kappa_h dx/dy (y faces) (m2/s)
 * *fa: advective flux u t_face; *fd: diffusive flux -kh (t_R - t_L).
 * Branch-free, so that the CPU loop over levels vectorises. */
MM_CELL_FN void mm_face_flux_dir(int scheme, int dir, double u, double t_ll, double t_l, double t_r,
                                 double t_rr, long wet_ll, long wet_rr, double dt_area, double kh,
                                 double *fa, double *fd) {
  double adv = 0.0;
  if (scheme != MM_CELL_ADV_NONE) {
    /* dir: u >= 0 (MM_CELL_DIR_POS) or u < 0 (MM_CELL_DIR_NEG) known, the
     * same choice as the comparison */
    const long pos = dir == MM_CELL_DIR_POS ? 1 : dir == MM_CELL_DIR_NEG ? 0 : u >= 0.0;
    const double tu = pos ? t_l : t_r; /* upwind cell */
    if (scheme == MM_CELL_ADV_UPWIND) {
      adv = u * tu;
    } else {
      const double td = pos ? t_r : t_l;    /* downwind cell */
      const double tuu = pos ? t_ll : t_rr; /* the cell beyond the upwind one */
      const long wet_uu = pos ? wet_ll : wet_rr;
      const double a = wet_uu ? tu - tuu : 0.0, b = td - tu;
      /* superbee B(a, b) = sign(b) max(min(2|a|, |b|), min(|a|, 2|b|)), 0
       * if a b <= 0, without the absolute values, the product or a select,
       * from p = min(2 min(a, b), max(a, b)) and n = max(2 max(a, b), min(a, b)):
       *   B = max(p, min(n, 0))
       *   - a, b > 0: p is B, n > 0;
       *   - a, b < 0: n is B (the same, negated: min, max and doubling are
       *     exact), and p = 2 min(a, b) < n;
       *   - a b <= 0: p <= 0 (it is 2a or 2 min(a, b) where a <= 0 or
       *     b <= 0) and min(n, 0) is +0 (n is 2 max(a, b) >= 0 or a zero),
       *     so B is +0, never -0.
       * The same bits as the test of the product wherever a b does not
       * round to 0 (|a b| < 2.5e-324 with a and b of one sign, where B is
       * now the tiny limiter, not 0); eight or nine operations instead of
       * twelve. */
      const double mn = mm_cell_min(a, b), mx = mm_cell_max(a, b);
      const double p = mm_cell_min(2.0 * mn, mx), n = mm_cell_max(2.0 * mx, mn);
      const double limited = mm_cell_max(p, mm_cell_min(n, 0.0));
      /* 0.5 (1 - c), c = |u| dt_area the Courant number of the face, as
       * 0.5 - |u| (0.5 dt_area): scaling by 0.5 is exact, so these are the
       * same bits; and |u| is u or -u where the sign is known */
      const double half_dt = 0.5 * dt_area;
      const double half_1mc = dir == MM_CELL_DIR_POS   ? 0.5 - u * half_dt
                              : dir == MM_CELL_DIR_NEG ? 0.5 + u * half_dt
                                                       : 0.5 - fabs(u) * half_dt;
      adv = u * (tu + half_1mc * limited);
    }
  }
  *fa = adv;
  *fd = -kh * (t_r - t_l);
}
MM_CELL_FN void mm_face_flux(int scheme, double u, double t_ll, double t_l, double t_r, double t_rr,
                             long wet_ll, long wet_rr, double dt_area, double kh, double *fa,
                             double *fd) {
  mm_face_flux_dir(scheme, MM_CELL_DIR_ANY, u, t_ll, t_l, t_r, t_rr, wet_ll, wet_rr, dt_area, kh,
                   fa, fd);
}

/* The sign of the transport u[k], k < n, of one face: MM_CELL_DIR_POS where
 * every u[k] >= 0 (n = 0 too), MM_CELL_DIR_NEG where every u[k] < 0,
 * MM_CELL_DIR_ANY otherwise (NaN included). */
MM_CELL_FN int mm_face_dir(const double *u, int n) {
  int pos = 1, neg = 1;
  for (int k = 0; k < n; k++)
    pos &= u[k] >= 0.0, neg &= u[k] < 0.0;
  return pos ? MM_CELL_DIR_POS : neg ? MM_CELL_DIR_NEG : MM_CELL_DIR_ANY;
}

/* The new value of a cell from its old value t and the fluxes through its
 * west, east, south and north faces: T* = T + dt/(dx dy) (advective +
 * diffusive convergence). MM_CELL_UPDATE is the expression itself, for
 * operands of any arithmetic type: doubles in mm_cell_update, vectors of
 * doubles in the CPU kernel that streams its stores (mm_physics.c). */
#define MM_CELL_UPDATE(t, fa_w, fa_e, ga_s, ga_n, fd_w, fd_e, gd_s, gd_n, dt_area)                 \
  ((t) + (dt_area) *                                                                               \
             ((((fa_w) - (fa_e)) + ((ga_s) - (ga_n))) + (((fd_w) - (fd_e)) + ((gd_s) - (gd_n)))))
MM_CELL_FN double mm_cell_update(double t, double fa_w, double fa_e, double ga_s, double ga_n,
                                 double fd_w, double fd_e, double gd_s, double gd_n,
                                 double dt_area) {
  return MM_CELL_UPDATE(t, fa_w, fa_e, ga_s, ga_n, fd_w, fd_e, gd_s, gd_n, dt_area);
}

/* Diffusivity of the interface between levels k and k+1 (mm_col_kappa, the
 * solvers' own, so that the mixing kernel and a solve that builds kappa
 * itself give the same bits). */
MM_CELL_FN double mm_cell_kappa(double alpha, double beta, double t_k, double t_k1, double s_k,
                                double s_k1, int convect, double kappa_v, double kappa_mix) {
  return mm_col_kappa(alpha, beta, t_k, t_k1, s_k, s_k1, convect, kappa_v, kappa_mix);
}

/* The operands of the horizontal step at one cell, for kernels that compute
 * one (column, level) per thread. Arrays are column-contiguous with the halo
 * (mm_grid.h): element [col * nz + k]; the east neighbour of column col is
 * col + 1, the north one col + nxh. */
typedef struct {
  int nz;
  long nxh;                      /* columns per row, halo included */
  int scheme;                    /* MM_CELL_ADV_* */
  const int *kmt;                /* [ncol_h] wet levels per column */
  const double *ue, *vn;         /* [ncol_h nz] east / north face transports (m2/s) */
  const double *temp, *salt;     /* [ncol_h nz] T (degC), S (g/kg) at step n */
  double *temp_next, *salt_next; /* [ncol_h nz] T*, S* */
  double dt_area, kh_x, kh_y;    /* dt/(dx dy) (s/m2); kappa_h dy/dx, kappa_h dx/dy (m2/s) */
} mm_cell_hstep;

/* The wet faces at level k of a cell from the wet levels of its column (P)
 * and of the columns one and two cells east, west, north and south:
 * w[0..3] its east, west, north and south faces, w[4..7] the faces beyond
 * them (EE|E, W|WW, N|NN, S|SS). */
enum {
  MM_CELL_E = 0,
  MM_CELL_W,
  MM_CELL_N,
  MM_CELL_S,
  MM_CELL_EE,
  MM_CELL_WW,
  MM_CELL_NN,
  MM_CELL_SS
};
MM_CELL_FN void mm_cell_wet_faces(int k, int kP, int kE, int kW, int kN, int kS, int kEE, int kWW,
                                  int kNN, int kSS, int w[8]) {
  w[MM_CELL_E] = k < mm_cell_imin(kP, kE), w[MM_CELL_W] = k < mm_cell_imin(kW, kP);
  w[MM_CELL_N] = k < mm_cell_imin(kP, kN), w[MM_CELL_S] = k < mm_cell_imin(kS, kP);
  w[MM_CELL_EE] = k < mm_cell_imin(kE, kEE), w[MM_CELL_WW] = k < mm_cell_imin(kWW, kW);
  w[MM_CELL_NN] = k < mm_cell_imin(kN, kNN), w[MM_CELL_SS] = k < mm_cell_imin(kSS, kS);
}

/* T* (or S*) of a wet cell from its wet faces w (mm_cell_wet_faces), the
 * transports through its east, west, north and south faces, and the tracer
 * at the cell (t[0]) and at the cells one and two away: t[1 + MM_CELL_E]
 * east, ... t[1 + MM_CELL_SS] two south. Values behind a dry face are not
 * used. The same fluxes and the same sums as mm_horizontal_step. */
MM_CELL_FN double mm_cell_tracer(int scheme, const int w[8], double u_e, double u_w, double v_n,
                                 double v_s, const double t[9], double dt_area, double kx,
                                 double ky) {
  const double tP = t[0], tE = t[1 + MM_CELL_E], tW = t[1 + MM_CELL_W], tN = t[1 + MM_CELL_N];
  const double tS = t[1 + MM_CELL_S], tEE = t[1 + MM_CELL_EE], tWW = t[1 + MM_CELL_WW];
  const double tNN = t[1 + MM_CELL_NN], tSS = t[1 + MM_CELL_SS];
  double fa_e = 0.0, fd_e = 0.0, fa_w = 0.0, fd_w = 0.0;
  double ga_n = 0.0, gd_n = 0.0, ga_s = 0.0, gd_s = 0.0;
  if (w[MM_CELL_E])
    mm_face_flux(scheme, u_e, tW, tP, tE, tEE, w[MM_CELL_W], w[MM_CELL_EE], dt_area, kx, &fa_e,
                 &fd_e);
  if (w[MM_CELL_W])
    mm_face_flux(scheme, u_w, tWW, tW, tP, tE, w[MM_CELL_WW], w[MM_CELL_E], dt_area, kx, &fa_w,
                 &fd_w);
  if (w[MM_CELL_N])
    mm_face_flux(scheme, v_n, tS, tP, tN, tNN, w[MM_CELL_S], w[MM_CELL_NN], dt_area, ky, &ga_n,
                 &gd_n);
  if (w[MM_CELL_S])
    mm_face_flux(scheme, v_s, tSS, tS, tP, tN, w[MM_CELL_SS], w[MM_CELL_N], dt_area, ky, &ga_s,
                 &gd_s);
  return mm_cell_update(tP, fa_w, fa_e, ga_s, ga_n, fd_w, fd_e, gd_s, gd_n, dt_area);
}

/* T* and S* at level k of column col (nothing where the cell is dry), every
 * operand from memory. */
MM_CELL_FN void mm_cell_horizontal(const mm_cell_hstep *h, long col, int k) {
  const int *kmt = h->kmt;
  const long nxh = h->nxh;
  const int kP = kmt[col];
  if (k >= kP) return;
  int w[8];
  mm_cell_wet_faces(k, kP, kmt[col + 1], kmt[col - 1], kmt[col + nxh], kmt[col - nxh], kmt[col + 2],
                    kmt[col - 2], kmt[col + 2 * nxh], kmt[col - 2 * nxh], w);
  const long nz = h->nz, p = col * nz + k, sx = nz, sy = nxh * nz;
  const double u_e = h->ue[p], u_w = h->ue[p - sx], v_n = h->vn[p], v_s = h->vn[p - sy];
  for (int v = 0; v < 2; v++) {
    const double *t = (v ? h->salt : h->temp) + p;
    const double tv[9] = {t[0],      t[sx],      t[-sx],    t[sy],     t[-sy],
                          t[2 * sx], t[-2 * sx], t[2 * sy], t[-2 * sy]};
    (v ? h->salt_next : h->temp_next)[p] =
        mm_cell_tracer(h->scheme, w, u_e, u_w, v_n, v_s, tv, h->dt_area, h->kh_x, h->kh_y);
  }
}

/* The operands of the mixing kernel (one (column, level) per thread). */
typedef struct {
  int nz;
  const int *kmt;
  double *temp_next;       /* [ncol_h nz] T* (degC): gets the surface flux */
  const double *salt_next; /* [ncol_h nz] S* (g/kg) */
  double *kappa_w;         /* [ncol_h nz] interface diffusivity (m2/s) */
  double alpha, beta;      /* thermal expansion (1/K), haline contraction (kg/g) */
  double kappa_v,
      kappa_mix; /* background diffusivity; kappa_v + kappa_convect, where unstable (m2/s) */
  int convect;
  double q_top; /* surface heating of the top cell per step (degC) */
} mm_cell_mix;

/* kappa_w below level k of column col from T*, S* (mm_convective_kappa),
 * then at k = 0 the surface flux into the top cell (mm_vertical_step). Only
 * the thread of level k reads T*[k] before the flux is added, so per-level
 * threads need no barrier. */
MM_CELL_FN void mm_cell_mixing(const mm_cell_mix *x, long col, int k) {
  const int n = x->kmt[col];
  if (k >= n) return;
  const long p = col * (long)x->nz + k;
  if (k + 1 < n)
    x->kappa_w[p] =
        mm_cell_kappa(x->alpha, x->beta, x->temp_next[p], x->temp_next[p + 1], x->salt_next[p],
                      x->salt_next[p + 1], x->convect, x->kappa_v, x->kappa_mix);
  if (k == 0 && x->q_top != 0.0) x->temp_next[p] += x->q_top;
}

/* Up to four rectangles of local cells [ib, ie) x [jb, je) (block indices,
 * 0 <= i < nxl), each cell nz threads (one per level): the index space of a
 * kernel over the interior or the frame of the block. */
typedef struct {
  int n;
  int ib[4], ie[4], jb[4], je[4];
  long first[5]; /* first[r]: threads before rectangle r; first[n]: all */
} mm_cell_rects;

/* Parts of the block: all of it, the interior (cells at least MM_CELL_HALO
 * from the edge, which need no halo values), or the frame around it. */
enum { MM_CELL_WHOLE = 0, MM_CELL_INTERIOR = 1, MM_CELL_FRAME = 2 };

MM_CELL_FN void mm_cell_rects_add(mm_cell_rects *r, int nz, int ib, int ie, int jb, int je) {
  if (ie <= ib || je <= jb) return;
  const int q = r->n++;
  r->ib[q] = ib, r->ie[q] = ie, r->jb[q] = jb, r->je[q] = je;
  r->first[q + 1] = r->first[q] + (long)(ie - ib) * (je - jb) * nz;
}

/* The rectangles of `part` of an nxl x nyl block, in the order the CPU step
 * takes them (mm_model_step). A block too small for an interior is all
 * frame (and has no interior). */
MM_CELL_FN void mm_cell_rects_block(mm_cell_rects *r, int nz, int nxl, int nyl, int part) {
  const int h = MM_CELL_HALO;
  const int inner = nxl > 2 * h && nyl > 2 * h;
  r->n = 0;
  for (int q = 0; q < 5; q++)
    r->first[q] = 0;
  if (part == MM_CELL_WHOLE || (part == MM_CELL_FRAME && !inner)) {
    mm_cell_rects_add(r, nz, 0, nxl, 0, nyl);
  } else if (part == MM_CELL_INTERIOR) {
    if (inner) mm_cell_rects_add(r, nz, h, nxl - h, h, nyl - h);
  } else {
    mm_cell_rects_add(r, nz, 0, nxl, 0, h);             /* south */
    mm_cell_rects_add(r, nz, 0, nxl, nyl - h, nyl);     /* north */
    mm_cell_rects_add(r, nz, 0, h, h, nyl - h);         /* west */
    mm_cell_rects_add(r, nz, nxl - h, nxl, h, nyl - h); /* east */
  }
}

/* Thread `tid` of the index space: its column (halo included) and level;
 * 0 past the end. Consecutive threads are consecutive levels of a column,
 * then consecutive columns of a row, so loads coalesce. */
MM_CELL_FN int mm_cell_rect_index(const mm_cell_rects *r, int nz, long nxh, long tid, long *col,
                                  int *k) {
  if (tid >= r->first[r->n]) return 0;
  int q = 0;
  while (q + 1 < r->n && tid >= r->first[q + 1])
    q++;
  const long e = tid - r->first[q], cell = e / nz, w = r->ie[q] - r->ib[q];
  const long i = r->ib[q] + cell % w, j = r->jb[q] + cell / w;
  *col = (j + MM_CELL_HALO) * nxh + (i + MM_CELL_HALO);
  *k = (int)(e % nz);
  return 1;
}

#endif

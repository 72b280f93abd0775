#include "mm_physics.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

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
            const double *restrict tR, const double *restrict tRR, double dt_area, double kh,
            double *restrict fa, double *restrict fd) {
  /* the levels where the faces LL|L and R|RR are wet too run without the
   * masks, as in column_levels; the rest with them */
  const int n_all = mm_cell_imin(n_face, mm_cell_imin(n_ll, n_rr));
  int k = 0;
  for (; k < n_all; k++)
    mm_face_flux((int)scheme, U[k], tLL[k], tL[k], tR[k], tRR[k], 1, 1, dt_area, kh, &fa[k],
                 &fd[k]);
  for (; k < n_face; k++)
    mm_face_flux((int)scheme, U[k], tLL[k], tL[k], tR[k], tRR[k], k < n_ll, k < n_rr, dt_area, kh,
                 &fa[k], &fd[k]);
  for (; k < n_cell; k++) /* below the face */
    fa[k] = fd[k] = 0.0;
}

/* One tracer of one wet cell P (kP levels): the fluxes through its east and
 * north faces in one loop over its levels, then T* (or S*) from them and the
 * west and south faces already known (passed on from the cells to the west
 * and south) in a second loop that reads them back from L1. One loop for
 * both made each iteration's dependency chain too long for the out-of-order
 * window (5 to 6% slower in cache, docs/performance.md). The same
 * mm_face_flux and mm_cell_update per level as face_fluxes and an update
 * loop of its own, so the same bits. A face value is written up to the
 * deeper of its two cells (zero below the face's own depth, as face_fluxes
 * writes it). Measured on bench_reference (one
 * thread, data in cache): 8.1 ns per cell for both tracers, against 8.7 with
 * both tracers in one loop (too many streams for the registers), and 6.9
 * with the levels where every face is wet run without masks.
 *   t      the tracer at P (t[k +- sx], t[k +- sy]: the neighbours)
 *   aw, dw, as, ds  [k]: west and south faces (advective, diffusive)
 *   ae, de, an, dn  [k]: east and north faces, written
 *   stream  1: tn is written with non-temporal stores (stream_update;
 *           m->stream_next)
 *   tn     the tracer after the horizontal step, written (k < kP)
 *   ahead  columns to prefetch for reading (prefetch_for_read), or NULL:
 *          [0] after the faces, [1] after T* (or S*) */
typedef struct {
  int kP, nE, nN;         /* wet levels of P, of its east face, of its north face */
  int nWP, nEE, nSP, nNN; /* of the faces W|P, E|EE, S|P, N|NN */
  int kE, kN;             /* wet levels of the east and north cells */
} column_faces;

/* Levels k0 <= k < k1 of column_tracer. all_wet (a constant at each call):
 * every face the levels involve is wet there, so the masks are known to be
 * all ones and drop out of the loop. dir_x, dir_y (constants): the sign of
 * the east and north faces' transport over these levels where known
 * (MM_CELL_DIR_*), so the upwind cells are known without the comparison
 * and the selections per level (13% faster in cache,
 * docs/performance.md). */
static inline __attribute__((always_inline)) void
column_levels(const mm_advection scheme, const int all_wet, const int dir_x, const int dir_y,
              long k0, long k1, const column_faces *f, const double *restrict ue,
              const double *restrict vn, const double *restrict t, long sx, long sy, double dt_area,
              double kh_x, double kh_y, double *restrict ae, double *restrict de,
              double *restrict an, double *restrict dn) {
  /* levels as 64-bit integers, like the doubles: 4 lanes per vector for
   * both, not 8 for the comparisons and 2 x 4 for the arithmetic */
  const long nE = f->nE, nN = f->nN, nWP = f->nWP, nEE = f->nEE, nSP = f->nSP, nNN = f->nNN;
  for (long k = k0; k < k1; k++) {
    double fae, fde, fan, fdn;
    mm_face_flux_dir((int)scheme, dir_x, ue[k], t[k - sx], t[k], t[k + sx], t[k + 2 * sx],
                     all_wet || k < nWP, all_wet || k < nEE, dt_area, kh_x, &fae, &fde);
    mm_face_flux_dir((int)scheme, dir_y, vn[k], t[k - sy], t[k], t[k + sy], t[k + 2 * sy],
                     all_wet || k < nSP, all_wet || k < nNN, dt_area, kh_y, &fan, &fdn);
    if (!all_wet) {
      fae = k < nE ? fae : 0.0, fde = k < nE ? fde : 0.0;
      fan = k < nN ? fan : 0.0, fdn = k < nN ? fdn : 0.0;
    }
    ae[k] = fae, de[k] = fde, an[k] = fan, dn[k] = fdn;
  }
}

#if defined(__AVX__)
/* The last 32 bytes of a column of T* or S* where they end in the middle of
 * a 64-byte line (nz = 100: every other column), held back and streamed
 * just before the first 32 bytes of the next column, the other half of that
 * line, so that the line goes to memory whole rather than as two halves:
 * 6% faster per cell from memory with nz = 100, where half the columns
 * end mid-line, and no change with nz = 96, where none does
 * (docs/performance.md). dst is NULL where nothing is held. */
typedef struct {
  double *dst;
  __m256d val;
} half_line;
static inline __attribute__((always_inline)) void half_line_flush(half_line *h) {
  if (h->dst) _mm256_stream_pd(h->dst, h->val), h->dst = NULL;
}
#else
typedef struct {
  double *dst;
} half_line;
static inline void half_line_flush(half_line *h) {
  (void)h;
}
#endif

/* tn[k] = T* (or S*) of the cell, k < n, from its old values t and its
 * faces' fluxes (mm_cell_update), written with non-temporal stores: the
 * lines go to memory without being read into the caches first (the fields
 * are larger than the last-level cache, m->stream_next). Whole 32-byte
 * vectors are computed and streamed as they are (MM_CELL_UPDATE on vectors
 * of 4 doubles: the same operations per level, so the same bits); the
 * levels before the first 32-byte boundary of tn and after the last one go
 * one at a time. *held is streamed first, just before the column's first
 * vector, and takes the column's last vector where that ends mid-line
 * (nothing reads T* or S* back in the horizontal step where they are
 * streamed, m->kappa_in_solve, so a held half may wait for the next column;
 * horizontal_tile streams what is still held at its end). Computing the
 * column into a buffer and streaming a copy of it took 9 more instructions
 * per vector, about a tenth of the horizontal step's (docs/performance.md). */
static inline __attribute__((always_inline)) void
stream_update(long n, const double *restrict t, const double *restrict aw,
              const double *restrict ae, const double *restrict as, const double *restrict an,
              const double *restrict dw, const double *restrict de, const double *restrict ds,
              const double *restrict dn, double dt_area, double *restrict tn, half_line *held) {
  long k = 0;
#if defined(__AVX__)
  typedef double v4d __attribute__((vector_size(32), aligned(8), may_alias));
  long long x;
  for (; k < n && ((uintptr_t)(tn + k) & 31u) != 0; k++) {
    const double y =
        mm_cell_update(t[k], aw[k], ae[k], as[k], an[k], dw[k], de[k], ds[k], dn[k], dt_area);
    memcpy(&x, &y, sizeof x), _mm_stream_si64((long long *)(tn + k), x);
  }
#define MM_V4(a) (*(const v4d *)((a) + k))
#define MM_Y                                                                                       \
  MM_CELL_UPDATE(MM_V4(t), MM_V4(aw), MM_V4(ae), MM_V4(as), MM_V4(an), MM_V4(dw), MM_V4(de),       \
                 MM_V4(ds), MM_V4(dn), dt_area)
  const long n4 = k + ((n - k) & ~3L);
  if (k < n4) { /* the first vector, after the held half of its line */
    const v4d y = MM_Y;
    half_line_flush(held);
    _mm256_stream_pd(tn + k, (__m256d)y);
    k += 4;
  } else {
    half_line_flush(held);
  }
  const int hold = k < n4 && n4 == n && ((uintptr_t)(tn + n) & 63u) != 0;
  for (; k < n4 - hold * 4; k += 4) {
    const v4d y = MM_Y;
    _mm256_stream_pd(tn + k, (__m256d)y);
  }
  if (hold) {
    held->val = (__m256d)(MM_Y), held->dst = tn + k;
    k += 4;
  }
#undef MM_Y
#undef MM_V4
  for (; k < n; k++) {
    const double y =
        mm_cell_update(t[k], aw[k], ae[k], as[k], an[k], dw[k], de[k], ds[k], dn[k], dt_area);
    memcpy(&x, &y, sizeof x), _mm_stream_si64((long long *)(tn + k), x);
  }
#else
  (void)held;
  for (; k < n; k++)
    tn[k] = mm_cell_update(t[k], aw[k], ae[k], as[k], an[k], dw[k], de[k], ds[k], dn[k], dt_area);
#endif
}

/* Prefetch for writing the first n values of a column (col[k], k < n). The
 * horizontal step writes T* and S* a column at a time into lines that are
 * not in cache; each store then waits for its line, and the hardware
 * prefetchers, which follow loads, do not fetch ahead of stores. Asking for
 * the next cell's output lines while this cell computes made the horizontal
 * step 6 to 15% faster from memory on one rank (docs/performance.md). */
static inline __attribute__((always_inline)) void prefetch_for_write(const double *col, int n) {
  const uintptr_t line = 64;
  const uintptr_t end = (uintptr_t)(col + n);
  for (uintptr_t q = (uintptr_t)col & ~(line - 1); q < end; q += line)
    __builtin_prefetch((const void *)q, 1, 3);
}

/* Prefetch for reading the first n values of a column. Where the fields
 * come from memory (m->stream_next), the next cell's new data (its T and S
 * two rows north, its face transports) are asked for while this cell
 * computes: the horizontal step 4% faster from memory on 1 and 2 ranks,
 * and 5% slower in cache, where it is left out (docs/performance.md).
 * The four columns (52 lines) are asked for at four points of the cell's
 * work, one at a time (column_tracer's `ahead`), not at once: a burst of
 * them fills the core's miss buffers, and the prefetches then wait (7 to
 * 9% faster from memory on 2 ranks). */
static inline __attribute__((always_inline)) void prefetch_for_read(const double *col, long n) {
  const double *const end = col + n;
#pragma GCC unroll 4
  for (const double *q = col; q < end; q += 8)
    __builtin_prefetch(q, 0, 3);
}

static inline __attribute__((always_inline)) void
column_tracer(const mm_advection scheme, int dirs, const column_faces *f, const double *restrict ue,
              const double *restrict vn, const double *restrict t, long sx, long sy, double dt_area,
              double kh_x, double kh_y, const double *restrict aw, const double *restrict dw,
              const double *restrict as, const double *restrict ds, double *restrict ae,
              double *restrict de, double *restrict an, double *restrict dn, const int stream,
              double *restrict tn, half_line *held, const double *const ahead[2]) {
  /* the levels where all six faces are wet (all of them under a flat
   * bottom), then the rest with masks */
  int n_all = f->nE < f->nN ? f->nE : f->nN;
  const int n_ll = mm_cell_imin(mm_cell_imin(f->nWP, f->nEE), mm_cell_imin(f->nSP, f->nNN));
  if (n_ll < n_all) n_all = n_ll;
  /* the all-wet levels with the signs of the faces' transports where each
   * is one (dirs = 3 dir_x + dir_y; without advection, no matter) */
  if (scheme == MM_ADV_NONE) dirs = 0;
#define MM_LEVELS(DX, DY)                                                                          \
  case 3 * (DX) + (DY):                                                                            \
    column_levels(scheme, 1, DX, DY, 0, n_all, f, ue, vn, t, sx, sy, dt_area, kh_x, kh_y, ae, de,  \
                  an, dn);                                                                         \
    break
  switch (dirs) {
    MM_LEVELS(MM_CELL_DIR_ANY, MM_CELL_DIR_ANY);
    MM_LEVELS(MM_CELL_DIR_ANY, MM_CELL_DIR_POS);
    MM_LEVELS(MM_CELL_DIR_ANY, MM_CELL_DIR_NEG);
    MM_LEVELS(MM_CELL_DIR_POS, MM_CELL_DIR_ANY);
    MM_LEVELS(MM_CELL_DIR_POS, MM_CELL_DIR_POS);
    MM_LEVELS(MM_CELL_DIR_POS, MM_CELL_DIR_NEG);
    MM_LEVELS(MM_CELL_DIR_NEG, MM_CELL_DIR_ANY);
    MM_LEVELS(MM_CELL_DIR_NEG, MM_CELL_DIR_POS);
    MM_LEVELS(MM_CELL_DIR_NEG, MM_CELL_DIR_NEG);
  }
#undef MM_LEVELS
  /* the rest, with masks, comparing the signs per level */
  column_levels(scheme, 0, MM_CELL_DIR_ANY, MM_CELL_DIR_ANY, n_all, f->kP, f, ue, vn, t, sx, sy,
                dt_area, kh_x, kh_y, ae, de, an, dn);
  if (ahead[0]) prefetch_for_read(ahead[0], sx); /* a column: sx = nz values */
  if (stream) {                                  /* to memory past the caches */
    stream_update(f->kP, t, aw, ae, as, an, dw, de, ds, dn, dt_area, tn, held);
  } else {
    for (long k = 0; k < f->kP; k++)
      tn[k] = mm_cell_update(t[k], aw[k], ae[k], as[k], an[k], dw[k], de[k], ds[k], dn[k], dt_area);
  }
  if (ahead[1]) prefetch_for_read(ahead[1], sx);
  for (int k = f->kP; k < f->kE; k++)
    ae[k] = de[k] = 0.0;
  for (int k = f->kP; k < f->kN; k++)
    an[k] = dn[k] = 0.0;
}

/* The horizontal step of one tile: the cells ib <= i < ie (at most
 * MM_HTILE columns), jb <= j < je, row by row from south to north. Each face
 * is computed once (docs/physics.md, "Horizontal step"):
 *   - x faces: a cell's east face is the next cell's west face; it is passed
 *     on along the row (the buffers swap);
 *   - y faces: a cell's north face is the south face of the cell above it;
 *     it is kept in the column's slot of a row buffer until the next row.
 * The values passed on are those the receiving cell would compute, bit for
 * bit: a face is written to the deeper of its two cells' depths (zero below
 * the face's own depth). A tile's rows of T and S are read from memory
 * once, as the tile reaches them, and from cache (L2 or L3) while the
 * tile's rows go by.
 *
 * Then, per cell, the convective diffusivity from T*, S* (kappa_w below each
 * level but the last) and the surface flux into the top cell, in that order
 * (docs/physics.md, "Convective diffusivity"): the column is still in L1, so
 * there is no pass of its own over memory. Skipped where the solver does
 * both inside the solve (m->kappa_in_solve, mm_tdma_fused_mixing).
 *
 * ws: the calling thread's workspace of mm_horizontal_ws(nz) doubles. The
 * kernel is inlined once per advection scheme so that the scheme is a
 * constant inside the loops. */
static inline __attribute__((always_inline)) void horizontal_tile(mm_model *m, int ib, int ie,
                                                                  int jb, int je, double *ws,
                                                                  const mm_advection scheme) {
  const mm_grid *g = &m->grid;
  const int nz = g->nz;
  const double dt_area = m->dt_area, kh_x = m->kh_x, kh_y = m->kh_y;
  const long sx = nz, sy = (long)g->nxh * nz; /* strides to the east and north neighbours */
  double *const state[2] = {m->temp, m->salt};
  double *const next[2] = {m->temp_next, m->salt_next};
  /* x faces of the current cell per tracer: advective fa, diffusive fd */
  double *w = ws, *fa_e[2], *fd_e[2], *fa_w[2], *fd_w[2];
  for (int v = 0; v < 2; v++, w += 4 * nz)
    fa_e[v] = w, fd_e[v] = w + nz, fa_w[v] = w + 2 * nz, fd_w[v] = w + 3 * nz;
  /* y faces per tracer: slot s < MM_HTILE holds the south face of column
   * ib + s in the current row (valid where south[s]); slot MM_HTILE takes
   * the current cell's north face, then swaps into the column's slot */
  double *ga[2][MM_HTILE + 1], *gd[2][MM_HTILE + 1];
  for (int v = 0; v < 2; v++)
    for (int q = 0; q <= MM_HTILE; q++, w += 2 * nz)
      ga[v][q] = w, gd[v][q] = w + nz;
  half_line held[2] = {{NULL}, {NULL}}; /* of T*, of S* */
  unsigned char south[MM_HTILE] = {0};
  const double alpha = m->cfg.alpha, beta = m->cfg.beta;
  const double kv = m->cfg.kappa_v, kmix = m->kappa_mix, q_top = m->q_top;
  const int convect = m->cfg.kappa_convect > 0.0;
  const int stream = m->stream_next;

  for (int j = jb; j < je; j++) {
    int have_west = 0; /* fa_w, fd_w hold the west face of cell i (east face of i - 1) */
    for (int i = ib; i < ie; i++) {
      const int slot = i - ib;
      const size_t c = mm_col(g, i, j);
      const long p = (long)c * nz;
      const int kP = g->kmt[c];
      if (kP == 0) {
        have_west = 0;
        south[slot] = 0;
        continue;
      }
      const int kE = g->kmt[c + 1], kW = g->kmt[c - 1];
      /* T* and S* of the cell to the east, written next */
      if (!stream)
        for (int v = 0; v < 2; v++)
          prefetch_for_write(next[v] + p + nz, kE);
      /* from memory (the fields larger than the last-level cache): what
       * the next cell reads first, its T and S two rows north and its own
       * face transports, one column here and three while this cell
       * computes (`ahead` below) */
      if (stream) prefetch_for_read(state[0] + p + sx + 2 * sy, nz);
      const int kEE = g->kmt[c + 2], kWW = g->kmt[c - 2];
      const int kN = g->kmt[c + g->nxh], kS = g->kmt[c - g->nxh];
      const int kNN = g->kmt[c + 2 * g->nxh], kSS = g->kmt[c - 2 * g->nxh];
      const double *ue_e = m->ue + p, *ue_w = m->ue + p - sx;
      const double *vn_n = m->vn + p, *vn_s = m->vn + p - sy;
      /* west face: L = W, R = P; south face: L = S, R = P (unless passed on
       * from the cell to the west, kept from the row below) */
      for (int v = 0; v < 2; v++) {
        const double *t = state[v] + p;
        if (!have_west)
          face_fluxes(scheme, mm_cell_imin(kW, kP), mm_cell_imin(kWW, kW), mm_cell_imin(kP, kE), kP,
                      ue_w, t - 2 * sx, t - sx, t, t + sx, dt_area, kh_x, fa_w[v], fd_w[v]);
        if (!south[slot])
          face_fluxes(scheme, mm_cell_imin(kS, kP), mm_cell_imin(kSS, kS), mm_cell_imin(kP, kN), kP,
                      vn_s, t - 2 * sy, t - sy, t, t + sy, dt_area, kh_y, ga[v][slot], gd[v][slot]);
      }
      /* east face: L = P, R = E; north face: L = P, R = N; and T*, S* */
      const column_faces f = {kP,
                              mm_cell_imin(kP, kE),
                              mm_cell_imin(kP, kN),
                              mm_cell_imin(kW, kP),
                              mm_cell_imin(kE, kEE),
                              mm_cell_imin(kS, kP),
                              mm_cell_imin(kN, kNN),
                              kE,
                              kN};
      const int dirs = 3 * m->ue_dir[c] + m->vn_dir[c];
      const double *const ahead[2][2] = {
          {stream ? m->ue + p + sx : NULL, stream ? state[1] + p + sx + 2 * sy : NULL},
          {stream ? m->vn + p + sx : NULL, NULL}};
      for (int v = 0; v < 2; v++)
        column_tracer(scheme, dirs, &f, ue_e, vn_n, state[v] + p, sx, sy, dt_area, kh_x, kh_y,
                      fa_w[v], fd_w[v], ga[v][slot], gd[v][slot], fa_e[v], fd_e[v], ga[v][MM_HTILE],
                      gd[v][MM_HTILE], stream, next[v] + p, &held[v], ahead[v]);
      /* the east face becomes the next cell's west face, the north face the
       * south face of the cell above */
      for (int v = 0; v < 2; v++) {
        double *x = fa_w[v];
        fa_w[v] = fa_e[v], fa_e[v] = x;
        x = fd_w[v];
        fd_w[v] = fd_e[v], fd_e[v] = x;
        x = ga[v][slot];
        ga[v][slot] = ga[v][MM_HTILE], ga[v][MM_HTILE] = x;
        x = gd[v][slot];
        gd[v][slot] = gd[v][MM_HTILE], gd[v][MM_HTILE] = x;
      }
      have_west = 1;
      south[slot] = 1;
      if (m->kappa_in_solve) continue;
      /* convective mixing of the new column, then the surface flux */
      double *restrict tn = m->temp_next + p, *restrict kw = m->kappa_w + p;
      const double *restrict sn = m->salt_next + p;
      for (int k = 0; k + 1 < kP; k++)
        kw[k] = mm_cell_kappa(alpha, beta, tn[k], tn[k + 1], sn[k], sn[k + 1], convect, kv, kmix);
      if (q_top != 0.0) tn[0] += q_top;
    }
  }
  for (int v = 0; v < 2; v++)
    half_line_flush(&held[v]);
}

void mm_flow_directions(mm_model *m) {
  const mm_grid *g = &m->grid;
  const long nz = g->nz, nxh = g->nxh, ncol = (long)g->ncol_h;
  for (long c = 0; c < ncol; c++) {
    /* the faces of columns without an east or north neighbour are never
     * computed */
    const int kP = g->kmt[c];
    const int kE = c + 1 < ncol ? g->kmt[c + 1] : 0, kN = c + nxh < ncol ? g->kmt[c + nxh] : 0;
    m->ue_dir[c] = (unsigned char)mm_face_dir(m->ue + c * nz, mm_cell_imin(kP, kE));
    m->vn_dir[c] = (unsigned char)mm_face_dir(m->vn + c * nz, mm_cell_imin(kP, kN));
  }
}

size_t mm_horizontal_ws(int nz) {
  return (size_t)nz * MM_HORIZONTAL_WS_LEVEL;
}

void mm_horizontal_step(mm_model *m, int ib, int ie, int jb, int je) {
  if (ie <= ib || je <= jb) return;
  /* tasks: tiles of at most MM_HTILE columns, each over a band of rows;
   * bands only where there are too few tiles for the threads (a band
   * restarts the row buffer: one more y face per column). Tiles and bands
   * split the columns and rows evenly (widths differ by one at most), and
   * there are as many tiles as a multiple of the threads where that fits,
   * so that the static schedule gives each thread the same number of
   * cells: with tiles of exactly MM_HTILE, 400 columns on 2 threads were
   * split 224 / 176. */
  const int nt = m->nthreads, cols = ie - ib, rows = je - jb;
  int ntx = (cols + MM_HTILE - 1) / MM_HTILE;
  int nby = (4 * nt + ntx - 1) / ntx;
  if (nby > rows / 8) nby = rows / 8;
  if (nby < 1) nby = 1;
  if (nby == 1 && nt > 1 && (ntx + nt - 1) / nt * nt <= cols) ntx = (ntx + nt - 1) / nt * nt;
  while (nby > 1 && (ntx * nby) % nt != 0 && nby < rows / 8)
    nby++;
  const int ntask = ntx * nby;
  const size_t stride = mm_horizontal_ws(m->grid.nz);
#pragma omp parallel for schedule(static) num_threads(nt) if (ntask > 1)
  for (int task = 0; task < ntask; task++) {
    const int tx = task % ntx, ty = task / ntx;
    const int i0 = ib + (int)((long)tx * cols / ntx), i1 = ib + (int)((long)(tx + 1) * cols / ntx);
    const int j0 = jb + (int)((long)ty * rows / nby), j1 = jb + (int)((long)(ty + 1) * rows / nby);
    if (j0 >= j1 || i0 >= i1) continue;
    int thread = 0;
#ifdef _OPENMP
    thread = omp_get_thread_num();
#endif
    double *ws = m->work + (size_t)thread * stride;
    switch (m->cfg.advection) {
    case MM_ADV_NONE: horizontal_tile(m, i0, i1, j0, j1, ws, MM_ADV_NONE); break;
    case MM_ADV_UPWIND: horizontal_tile(m, i0, i1, j0, j1, ws, MM_ADV_UPWIND); break;
    case MM_ADV_SUPERBEE: horizontal_tile(m, i0, i1, j0, j1, ws, MM_ADV_SUPERBEE); break;
    }
#if defined(__AVX__)
    _mm_sfence(); /* the streamed stores are seen before the threads join */
#endif
  }
}

mm_err mm_vertical_step(mm_model *m) {
  const mm_grid *g = &m->grid;
  const int nz = g->nz;
  /* one batch: every column from the first to the last of the block; halo
   * columns in between have depth 0 and are skipped by the solver */
  const size_t first = mm_col(g, 0, 0), last = mm_col(g, g->nxl - 1, g->nyl - 1);
  const mm_tdma_batch bt = {.ncol = last - first + 1, .nz = nz, .depth = g->kmt_solve + first};
  const mm_tdma_geometry geo = {.inv_h = m->inv_h, .g = m->g_dt};
  double *const rhs[2] = {m->temp_next + first * nz, m->salt_next + first * nz};
  int rc;
  if (m->kappa_in_solve) {
    /* kappa_w and the surface heating inside the solve, from T*, S* */
    const mm_tdma_mixing mix = {.alpha = m->cfg.alpha,
                                .beta = m->cfg.beta,
                                .kappa_v = m->cfg.kappa_v,
                                .kappa_mix = m->kappa_mix,
                                .convect = m->cfg.kappa_convect > 0.0,
                                .top = m->q_top};
    rc = mm_tdma_fused_mixing(m->solver, &bt, &geo, &mix, rhs);
  } else {
    rc = mm_tdma_fused(m->solver, &bt, &geo, m->kappa_w + first * nz, rhs, 2);
  }
  MM_REQUIRE(rc == MM_TDMA_OK, MM_ERR_RUN, "tridiagonal solve (%s) failed: %s",
             mm_tdma_backend_of(m->solver)->name, mm_tdma_strerror(rc));
  return MM_OK;
}

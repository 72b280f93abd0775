/* The arithmetic and index maps of the GPU time step, run on the CPU.
 *
 * The GPU kernels (model/cuda/mm_device_cuda.cu) are thin: each thread maps its
 * index to a (column, level) with mm_cell_rect_index and calls a function of
 * mm_cell.h / mm_rsum.h / mm_gpu.h. This test calls the same functions over
 * the same index spaces, thread by thread, and compares with the CPU step:
 *   - the explicit part: the horizontal kernel over the interior then the
 *     frame rectangles (every wet cell of the block written exactly once, no
 *     dry cell written), then the mixing kernel (kappa_w, the surface flux),
 *     bitwise equal to the CPU's mm_horizontal_step (which computes kappa_w
 *     and the flux per column), for each advection scheme, and for a flow
 *     whose sign varies per column and per level (the CPU picks the upwind
 *     cells per column where it can);
 *   - diagnostics: per-thread parts merged in the kernel's tree order and
 *     over blocks, equal to mm_diag_compute (sums, extrema, first NaN,
 *     first value outside the physically possible range);
 *   - halo: strips copied out as the GPU copies them (2-D copies by the
 *     strip geometry of mm_halo), exchanged by mm_halo on the staging copy,
 *     copied back, give the halo of a direct exchange (model.halo tests
 *     mm_halo itself against the neighbours' values).
 * Runs on 1, 2 and 4 ranks, periodic and walled. */
#include <string.h>

#include "mm_gpu.h"
#include "mm_gpu_kernels.h"
#include "mm_physics.h"
#include "test_model_common.h"

static const char *base =
    "[run]\ndt = 1800\n[grid]\nnx = 24\nny = 20\nnz = 9\ndx = 20000\ndy = 20000\n"
    "depth = 3000\ndz_surface = 50\nbathymetry = %s\nperiodic_x = %s\nperiodic_y = %s\n"
    "[physics]\nkappa_v = 1e-5\nkappa_convect = 0.5\nkappa_h = 300\nadvection = %s\n"
    "flow = %s\nflow_speed = 0.3\n[forcing]\nheat_flux = 150\n[initial]\npattern = %s\n";

static mm_cell_hstep hstep_of(const mm_model *m, double *temp_next, double *salt_next) {
  const mm_grid *g = &m->grid;
  mm_cell_hstep h = {.nz = g->nz,
                     .nxh = g->nxh,
                     .scheme = (int)m->cfg.advection,
                     .kmt = g->kmt,
                     .ue = m->ue,
                     .vn = m->vn,
                     .temp = m->temp,
                     .salt = m->salt,
                     .temp_next = temp_next,
                     .salt_next = salt_next,
                     .dt_area = m->dt_area,
                     .kh_x = m->kh_x,
                     .kh_y = m->kh_y};
  return h;
}

/* Every thread of the index space of `part`, as the kernel launches them
 * (a whole number of MM_GPU_THREADS-thread blocks, threads past the end do
 * nothing). */
static void emulate_horizontal(const mm_model *m, const mm_cell_hstep *h, int part) {
  const mm_grid *g = &m->grid;
  mm_cell_rects r;
  mm_cell_rects_block(&r, g->nz, g->nxl, g->nyl, part);
  const long n = r.first[r.n],
             launched = (n + MM_GPU_THREADS - 1) / MM_GPU_THREADS * MM_GPU_THREADS;
  for (long tid = 0; tid < launched; tid++) {
    long col;
    int k;
    if (mm_cell_rect_index(&r, g->nz, g->nxh, tid, &col, &k))
      mm_cell_horizontal(h, col, k);
    else
      TEST_CHECK(tid >= n, "thread %ld of %ld has no cell", tid, n);
  }
}

/* The horizontal kernel over the interior, then the frame, then the
 * mixing kernel over the whole block, against the CPU's explicit part
 * (mm_horizontal_step: T*, S*, kappa_w and the surface flux). */
static void check_explicit(mm_model *m, const char *what) {
  const mm_grid *g = &m->grid;
  const size_t n = g->ncol_h * (size_t)g->nz;
  double *fields[2] = {m->temp, m->salt};
  TEST_OK(mm_halo_start(&m->halo, fields, 2));
  TEST_OK(mm_halo_finish(&m->halo));
  /* the CPU step of the whole block, computing kappa_w and the surface flux
   * itself (as with a solver without mm_tdma_fused_mixing; with one they
   * move into the solve, checked by solvers.tdma.mixing and regress.*.mixing_in_solve_bitwise) */
  for (size_t e = 0; e < n; e++)
    m->kappa_w[e] = -1.0;
  const int in_solve = m->kappa_in_solve;
  m->kappa_in_solve = 0;
  mm_horizontal_step(m, 0, g->nxl, 0, g->nyl);
  m->kappa_in_solve = in_solve;
  /* the kernels' threads: every output starts as NaN, so a cell written
   * twice with different values or never written shows */
  double *tn = malloc(n * sizeof *tn), *sn = malloc(n * sizeof *sn), *kw = malloc(n * sizeof *kw);
  for (size_t e = 0; e < n; e++)
    tn[e] = sn[e] = kw[e] = NAN;
  const mm_cell_hstep h = hstep_of(m, tn, sn);
  emulate_horizontal(m, &h, MM_CELL_INTERIOR);
  emulate_horizontal(m, &h, MM_CELL_FRAME);
  const mm_cell_mix x = {.nz = g->nz,
                         .kmt = g->kmt,
                         .temp_next = tn,
                         .salt_next = sn,
                         .kappa_w = kw,
                         .alpha = m->cfg.alpha,
                         .beta = m->cfg.beta,
                         .kappa_v = m->cfg.kappa_v,
                         .kappa_mix = m->kappa_mix,
                         .convect = m->cfg.kappa_convect > 0.0,
                         .q_top = m->q_top};
  mm_cell_rects r;
  mm_cell_rects_block(&r, g->nz, g->nxl, g->nyl, MM_CELL_WHOLE);
  const long launched = (r.first[r.n] + MM_GPU_THREADS - 1) / MM_GPU_THREADS * MM_GPU_THREADS;
  for (long tid = 0; tid < launched; tid++)
    mm_gpu_mixing_thread(&x, &r, g->nxh, tid);
  long wrong = 0, unset = 0, extra = 0, kappa_wrong = 0, kappa_checked = 0;
  for (long c = 0; c < (long)g->ncol_h; c++) {
    const long i = c % g->nxh - MM_HALO, j = c / g->nxh - MM_HALO;
    const int in_block = i >= 0 && i < g->nxl && j >= 0 && j < g->nyl;
    for (int k = 0; k < g->nz; k++) {
      const size_t e = (size_t)c * g->nz + k;
      const int wet = in_block && k < g->kmt[c];
      if (!wet) {
        extra += !isnan(tn[e]) || !isnan(sn[e]) || !isnan(kw[e]);
      } else if (isnan(tn[e]) || isnan(sn[e])) {
        unset++;
      } else {
        wrong += memcmp(&tn[e], &m->temp_next[e], sizeof(double)) != 0 ||
                 memcmp(&sn[e], &m->salt_next[e], sizeof(double)) != 0;
        if (k + 1 < g->kmt[c]) {
          kappa_wrong += memcmp(&kw[e], &m->kappa_w[e], sizeof(double)) != 0;
          kappa_checked++;
        }
      }
    }
  }
  TEST_CHECK(wrong == 0 && unset == 0 && extra == 0,
             "%s: T*, S*: %ld cells differ from the CPU, %ld wet cells not written, %ld dry "
             "written",
             what, wrong, unset, extra);
  TEST_CHECK(kappa_wrong == 0 && kappa_checked > 0, "%s: kappa_w: %ld of %ld values differ", what,
             kappa_wrong, kappa_checked);
  TEST_CHECK(m->q_top != 0.0, "%s: the surface flux is exercised", what);
  free(tn);
  free(sn);
  free(kw);
}

/* The diagnostics kernel on `blocks` blocks: per-thread parts, the tree in
 * shared memory, then the blocks in order on the host. */
static void emulate_diag(const mm_model *m, long blocks, mm_diag *d) {
  const mm_grid *g = &m->grid;
  mm_cell_rects r;
  mm_cell_rects_block(&r, g->nz, g->nxl, g->nyl, MM_CELL_WHOLE);
  const long T = MM_GPU_DIAG_THREADS;
  static mm_diag_part part[MM_GPU_DIAG_THREADS];
  mm_diag_part total;
  mm_diag_part_init(&total);
  for (long b = 0; b < blocks; b++) {
    for (long t = 0; t < T; t++)
      mm_gpu_diag_thread(&r, g->nz, g->nxh, g->kmt, m->temp, m->salt, g->vol, b * T + t, blocks * T,
                         &part[t]);
    for (long s = T / 2; s > 0; s /= 2)
      for (long t = 0; t < s; t++)
        mm_diag_part_merge(&part[t], &part[t + s]);
    mm_diag_part_merge(&total, &part[0]);
  }
  TEST_OK(mm_diag_finish(g, &total, m->cfg.rho0, m->cfg.cp, d));
}

static void check_diag(mm_model *m, const char *what) {
  const mm_grid *g = &m->grid;
  /* clean; two values outside the physically possible range on the last
   * rank (temp = 150, then salt = -5; the first is reported); then also two
   * non-finite ones on rank 0 */
  int planted[3] = {-1, -1, -1}; /* global i, j, k of the temp = 150 */
  for (int mode = 0; mode < 3; mode++) {
    const int with_nan = mode == 2;
    if (mode == 1) {
      if (g->rank == g->nranks - 1)
        for (int j = 0, hits = 0; j < g->nyl && hits < 2; j++)
          for (int i = 0; i < g->nxl && hits < 2; i++)
            if (g->kmt[mm_col(g, i, j)] > 1) {
              (hits ? m->salt : m->temp)[mm_col(g, i, j) * g->nz + 1] = hits ? -5.0 : 150.0;
              if (!hits) planted[0] = g->i0 + i, planted[1] = g->j0 + j, planted[2] = 1;
              hits++;
            }
      MPI_Bcast(planted, 3, MPI_INT, g->nranks - 1, g->cart);
    }
    if (with_nan) { /* two bad values on rank 0: the first in (j, i, k) order is reported */
      if (g->rank == 0)
        for (int j = g->nyl - 1, hits = 0; j >= 0 && hits < 2; j--)
          for (int i = g->nxl - 1; i >= 0 && hits < 2; i--)
            if (g->kmt[mm_col(g, i, j)] > 1) {
              double *v = hits ? m->salt : m->temp;
              v[mm_col(g, i, j) * g->nz + 1] = hits ? INFINITY : NAN;
              hits++;
            }
    }
    mm_diag want, got;
    TEST_OK(mm_model_diagnostics(m, &want));
    const long launches[3] = {1, 7, MM_GPU_DIAG_MAX_BLOCKS};
    for (int q = 0; q < 3; q++) {
      emulate_diag(m, launches[q], &got);
      TEST_CHECK(got.heat_content == want.heat_content && got.salt_content == want.salt_content,
                 "%s: %ld blocks: sums %.17g %.17g, CPU %.17g %.17g", what, launches[q],
                 got.heat_content, got.salt_content, want.heat_content, want.salt_content);
      TEST_CHECK(got.temp_min == want.temp_min && got.temp_max == want.temp_max &&
                     got.salt_min == want.salt_min && got.salt_max == want.salt_max,
                 "%s: %ld blocks: extrema differ", what, launches[q]);
      TEST_CHECK(got.nonfinite == want.nonfinite && got.bad_var == want.bad_var &&
                     got.bad_i == want.bad_i && got.bad_j == want.bad_j && got.bad_k == want.bad_k,
                 "%s: %ld blocks: non-finite %ld at %d (%d,%d,%d), CPU %ld at %d (%d,%d,%d)", what,
                 launches[q], got.nonfinite, got.bad_var, got.bad_i, got.bad_j, got.bad_k,
                 want.nonfinite, want.bad_var, want.bad_i, want.bad_j, want.bad_k);
      TEST_CHECK(got.out_of_range == want.out_of_range && got.range_var == want.range_var &&
                     got.range_i == want.range_i && got.range_j == want.range_j &&
                     got.range_k == want.range_k && got.range_value == want.range_value,
                 "%s: %ld blocks: out of range %ld at %d (%d,%d,%d) = %g, CPU %ld at %d "
                 "(%d,%d,%d) = %g",
                 what, launches[q], got.out_of_range, got.range_var, got.range_i, got.range_j,
                 got.range_k, got.range_value, want.out_of_range, want.range_var, want.range_i,
                 want.range_j, want.range_k, want.range_value);
    }
    TEST_CHECK(want.nonfinite == (with_nan ? 2 : 0), "%s: %ld non-finite values planted", what,
               want.nonfinite);
    TEST_CHECK(want.out_of_range == (mode ? 2 : 0), "%s: %ld values out of range planted", what,
               want.out_of_range);
    if (mode)
      TEST_CHECK(want.range_var == 0 && want.range_value == 150.0 && want.range_i == planted[0] &&
                     want.range_j == planted[1] && want.range_k == planted[2],
                 "%s: out of range reported at %d (%d,%d,%d) = %g, planted temp = 150 at "
                 "(%d,%d,%d)",
                 what, want.range_var, want.range_i, want.range_j, want.range_k, want.range_value,
                 planted[0], planted[1], planted[2]);
  }
}

/* Strips out to a staging copy, mm_halo on it, strips back: the halo of
 * `dev` must then be that of a direct exchange. Only wet-or-not does not
 * matter here: every element of the strips is compared. */
static void check_halo(mm_model *m, const char *what) {
  const mm_grid *g = &m->grid;
  const size_t n = g->ncol_h * (size_t)g->nz;
  double *dev = malloc(n * sizeof *dev), *stage = malloc(n * sizeof *stage);
  double *direct = malloc(n * sizeof *direct);
  for (size_t e = 0; e < n; e++) { /* values that name their rank and place */
    dev[e] = direct[e] = g->rank * 1e7 + (double)e;
    stage[e] = -1.0;
  }
  mm_halo h;
  TEST_OK(mm_halo_create(g, &h));
  const int nb[4] = {g->west, g->east, g->south, g->north};
  for (int d = 0; d < 4; d++) /* the device-to-host copies of the frame strips */
    if (nb[d] != MPI_PROC_NULL)
      for (size_t r = 0; r < h.height[d]; r++)
        memcpy(stage + h.off_send[d] + r * h.pitch, dev + h.off_send[d] + r * h.pitch,
               h.width[d] * sizeof *dev);
  double *f1[1] = {stage}, *f2[1] = {direct};
  TEST_OK(mm_halo_start(&h, f1, 1));
  TEST_OK(mm_halo_finish(&h));
  TEST_OK(mm_halo_start(&h, f2, 1));
  TEST_OK(mm_halo_finish(&h));
  for (int d = 0; d < 4; d++) /* the host-to-device copies of the halo strips */
    if (nb[d] != MPI_PROC_NULL)
      for (size_t r = 0; r < h.height[d]; r++)
        memcpy(dev + h.off_recv[d] + r * h.pitch, stage + h.off_recv[d] + r * h.pitch,
               h.width[d] * sizeof *dev);
  mm_halo_destroy(&h);
  long wrong = 0, changed = 0;
  for (size_t e = 0; e < n; e++) {
    wrong += dev[e] != direct[e];
    changed += direct[e] != g->rank * 1e7 + (double)e;
  }
  const int any_nb = nb[0] != MPI_PROC_NULL || nb[2] != MPI_PROC_NULL;
  TEST_CHECK(wrong == 0, "%s: halo through strips: %ld elements differ from a direct exchange",
             what, wrong);
  TEST_CHECK(!any_nb || changed > 0, "%s: the exchange moved nothing", what);
  free(dev);
  free(stage);
  free(direct);
}

/* A flow whose sign per face varies: per column, by a hash of its global
 * place, the east and north faces' transport is positive on every level,
 * negative on every level, of either sign level by level, or zero; then
 * the CPU step (which picks the upwind cells per column where the sign is
 * one, mm_flow_directions) against the kernels' per-level choice. Not
 * divergence-free: the explicit part does not need it. */
static void check_flow_signs(mm_model *m, const char *what) {
  const mm_grid *g = &m->grid;
  const double umax = 0.3 * g->dy; /* m2/s: 0.3 m/s through a face */
  for (long c = 0; c < (long)g->ncol_h; c++) {
    const long i = c % g->nxh - MM_HALO + g->i0, j = c / g->nxh - MM_HALO + g->j0;
    for (int d = 0; d < 2; d++) {
      double *u = (d ? m->vn : m->ue) + c * g->nz;
      unsigned h = (unsigned)(i * 7919 + j * 104729 + d * 1299709) * 2654435761u;
      const unsigned kind = (h >> 7) % 4;
      for (int k = 0; k < g->nz; k++) {
        h = h * 1103515245u + 12345u;
        const double mag = umax * (0.05 + (double)((h >> 8) & 0xffff) / 65536.0);
        const int neg = kind == 1 || (kind == 2 && ((h >> 28) & 1));
        u[k] = kind == 3 ? 0.0 : neg ? -mag : mag;
      }
    }
  }
  mm_flow_directions(m);
  long count[3] = {0, 0, 0};
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++) {
      const size_t c = mm_col(g, i, j);
      if (g->kmt[c] > 1 && g->kmt[c + 1] > 1) count[m->ue_dir[c]]++;
      if (g->kmt[c] > 1 && g->kmt[c + g->nxh] > 1) count[m->vn_dir[c]]++;
    }
  TEST_CHECK(count[MM_CELL_DIR_ANY] > 0 && count[MM_CELL_DIR_POS] > 0 && count[MM_CELL_DIR_NEG] > 0,
             "%s: faces of each sign class: %ld of either, %ld positive, %ld negative", what,
             count[MM_CELL_DIR_ANY], count[MM_CELL_DIR_POS], count[MM_CELL_DIR_NEG]);
  char w[320];
  snprintf(w, sizeof w, "%s, signs varied per column and level", what);
  check_explicit(m, w);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *cases[][6] = {
      /* bathymetry, periodic_x, periodic_y, advection, flow, pattern */
      {"seamount", "false", "false", "superbee", "gyre", "stratified"},
      {"bowl", "true", "true", "upwind", "none", "step"},
      {"flat", "true", "false", "superbee", "uniform", "step"},
      {"slope", "false", "true", "none", "none", "stratified"},
  };
  for (size_t q = 0; q < sizeof cases / sizeof cases[0]; q++) {
    char ini[1024], what[128];
    snprintf(ini, sizeof ini, base, cases[q][0], cases[q][1], cases[q][2], cases[q][3], cases[q][4],
             cases[q][5]);
    snprintf(what, sizeof what, "%s/%s/%s", cases[q][0], cases[q][3], cases[q][4]);
    mm_model *m = test_model(ini, MPI_COMM_WORLD);
    test_steps(m, 3); /* a state with structure, also convectively unstable in places */
    check_explicit(m, what);
    check_halo(m, what);
    if (m->cfg.advection != MM_ADV_NONE) check_flow_signs(m, what);
    check_diag(m, what); /* plants NaNs: last */
    mm_model_destroy(m);
  }
  return test_finish();
}

#include "mm_model_private.h"

#include <float.h>
#include <limits.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_flow.h"
#include "mm_device.h"
#include "mm_gpu.h"
#include "mm_physics.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Analytic initial state (docs/physics.md, "Initial state"). */
static void initial_state(mm_model *m) {
  const mm_grid *g = &m->grid;
  const mm_config *cfg = &m->cfg;
  const int nz = g->nz;
  const double ts = cfg->t_surface, tb = cfg->t_bottom;
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++) {
      const size_t c = mm_col(g, i, j);
      const int n = g->kmt[c];
      const int ig = g->i0 + i, jg = g->j0 + j;
      const double xi = (ig + 0.5) / (double)g->nx, eta = (jg + 0.5) / (double)g->ny;
      double *t = m->temp + c * nz, *s = m->salt + c * nz;
      for (int k = 0; k < n; k++) {
        const double z = g->z_t[k];
        switch (cfg->initial_pattern) {
        case MM_INIT_STRATIFIED: {
          const double e = exp(-z / 500.0);
          t[k] = tb + (ts - tb) * e + 0.5 * sin(2.0 * M_PI * xi) * sin(M_PI * eta) * e;
          s[k] = 35.0 - 0.5 * exp(-z / 1000.0);
          break;
        }
        case MM_INIT_STEP: {
          const int inside = xi >= 0.25 && xi < 0.5 && eta >= 0.25 && eta < 0.5;
          t[k] = inside ? ts : tb;
          s[k] = 35.0;
          break;
        }
        case MM_INIT_MODE: {
          const double v = cos((double)cfg->initial_mode * M_PI * (k + 0.5) / n);
          t[k] = v;
          s[k] = 35.0 + v;
          break;
        }
        case MM_INIT_UNIFORM:
          t[k] = ts;
          s[k] = 35.0;
          break;
        }
      }
    }
}

/* Refuse a grid without a wet cell: there is no ocean to step (its
 * diagnostics would be the empty sums' and extrema's, +-Inf). Collective. */
static MM_NODISCARD mm_err check_wet(const mm_model *m) {
  const mm_grid *g = &m->grid;
  long wet = 0, all = 0;
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++)
      wet += g->kmt[mm_col(g, i, j)];
  MM_MPI(MPI_Allreduce(&wet, &all, 1, MPI_LONG, MPI_SUM, g->cart));
  char bathymetry[64];
  mm_config_value_text(&m->cfg, "grid", "bathymetry", bathymetry, sizeof bathymetry);
  MM_REQUIRE(all > 0, MM_ERR_INPUT,
             "grid.bathymetry = %s on this grid (%d x %d columns, %d levels, grid.depth = %g m) "
             "has no wet cell: every column is land; use a larger grid, more depth or "
             "another bathymetry",
             bathymetry, g->nx, g->ny, g->nz, m->cfg.depth);
  return MM_OK;
}

/* The discrete flow must be exactly divergence-free in every wet cell: it
 * is for a gyre, and for a uniform flow in a channel periodic in x whose
 * walls no land touches; anything else is refused. */
static MM_NODISCARD mm_err check_divergence(const mm_model *m) {
  const mm_grid *g = &m->grid;
  const int nz = g->nz;
  /* the first cell of the grid (rows, then columns, then levels) whose
   * transports do not cancel, as one number that every rank gets: the
   * message names it whichever rank holds it (the others' said no cell) */
  long first = LONG_MAX;
  for (int j = 0; j < g->nyl && first == LONG_MAX; j++)
    for (int i = 0; i < g->nxl && first == LONG_MAX; i++) {
      const size_t c = mm_col(g, i, j);
      const double *ee = m->ue + c * nz, *ew = m->ue + mm_col(g, i - 1, j) * nz;
      const double *nn = m->vn + c * nz, *ns = m->vn + mm_col(g, i, j - 1) * nz;
      for (int k = 0; k < g->kmt[c] && first == LONG_MAX; k++)
        if ((ew[k] - ee[k]) + (ns[k] - nn[k]) != 0.0)
          first = ((long)(g->j0 + j) * g->nx + (g->i0 + i)) * nz + k;
    }
  long any = LONG_MAX;
  MM_MPI(MPI_Allreduce(&first, &any, 1, MPI_LONG, MPI_MIN, g->cart));
  MM_REQUIRE(any == LONG_MAX, MM_ERR_INPUT,
             "physics.flow = %s is not divergence-free on this grid (cell i=%ld j=%ld k=%ld): "
             "a uniform flow needs grid.periodic_x = true and no land touching the walls",
             m->cfg.flow == MM_FLOW_UNIFORM ? "uniform" : "gyre", any / nz % g->nx,
             any / nz / g->nx, any % nz);
  return MM_OK;
}

/* The largest x = dt / (dx dy) for which the explicit horizontal step keeps
 * every weight of one cell's update >= 0 (docs/physics.md, "Stability of the
 * explicit part"); +inf where nothing moves the cell. T*_P is a combination
 * of the old values around P whose weights sum to 1; the weight of T_P
 * itself is at least
 *   1 - x (O + D)                upwind
 *   1 - x (2 O + D) + x^2 Q      superbee, whatever the limiter's value
 *   1 - x D                      none
 * and the others are >= 0 as long as x |u| <= 1 at every outflow face (which
 * the smaller root below implies). O: the sum of the transports out of the
 * cell through its wet faces (m2/s), Q: the sum of their squares, D: the sum
 * of kappa_h dy/dx and kappa_h dx/dy over its wet x and y faces (m2/s). */
static double stable_x(mm_advection scheme, double out, double sq, double dif) {
  double a = dif;
  if (scheme == MM_ADV_UPWIND) a = out + dif;
  if (scheme == MM_ADV_SUPERBEE) a = 2.0 * out + dif;
  if (isnan(a)) return 0.0; /* a coefficient that is not a number: nothing is stable */
  if (!(a > 0.0)) return INFINITY;
  if (scheme != MM_ADV_SUPERBEE || sq == 0.0) return 1.0 / a;
  /* the smaller root of x a - x^2 Q = 1, in a form free of cancellation
   * (a^2 >= 4 Q, since a >= 2 O and O^2 >= Q) */
  if (isfinite(a * a)) return 2.0 / (a + sqrt(fmax(a * a - 4.0 * sq, 0.0)));
  /* a^2 beyond the doubles (transports over about 1e154 m2/s: a grid.dx of
   * 1e-150 m): the same root scaled by a, 2 / (a (1 + sqrt(1 - 4 Q / a^2)));
   * Q itself beyond them: 1 / a, the root's lower bound (it is within
   * [1/a, 2/a]) */
  if (!isfinite(sq)) return 1.0 / a;
  return 2.0 / (a * (1.0 + sqrt(fmax(1.0 - 4.0 * (sq / a / a), 0.0))));
}

/* The largest decimal of `digits` significant digits that is <= x, written
 * to buf: a time step that is sure to pass the check (x itself where that
 * cannot be formed: 0, +inf, or beyond the range of the scale). */
static double floor_decimal(double x, int digits, char *buf, size_t len) {
  const double scale = x > 0.0 && isfinite(x) ? pow(10.0, digits - 1 - (int)floor(log10(x))) : 0.0;
  if (!(scale > 0.0) || !isfinite(scale * x)) {
    snprintf(buf, len, "%.17g", x);
    return x;
  }
  for (double v = floor(x * scale); v > 0.0; v -= 1.0) {
    snprintf(buf, len, "%.*g", digits, v / scale);
    const double back = strtod(buf, NULL);
    if (back <= x && back > 0.0) return back;
  }
  snprintf(buf, len, "%.17g", x);
  return x;
}

/* Refuse a dt beyond the stability limit of the explicit horizontal step,
 * advection and diffusion together, with the flow's own face transports
 * (stable_x at every wet cell); the message gives a dt that passes. */
static MM_NODISCARD mm_err check_stability(mm_model *m) {
  const mm_grid *g = &m->grid;
  const mm_config *cfg = &m->cfg;
  const int nz = g->nz;
  const long nxh = g->nxh;
  const double kh_x = m->kh_x, kh_y = m->kh_y;
  struct {
    double x;
    int rank;
  } mine = {INFINITY, g->rank}, all;
  double at[6] = {-1, -1, -1, 0, 0, 0}; /* binding cell: i, j, k (global); O, Q, D */
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++) {
      const size_t c = mm_col(g, i, j);
      const int kP = g->kmt[c], kE = g->kmt[c + 1], kW = g->kmt[c - 1];
      const int kN = g->kmt[c + nxh], kS = g->kmt[c - nxh];
      for (int k = 0; k < kP; k++) {
        /* the faces the step takes (mm_cell_horizontal): wet on both sides */
        const int we = k < kE, ww = k < kW, wn = k < kN, ws = k < kS;
        const double oe = we ? fmax(m->ue[c * nz + k], 0.0) : 0.0;
        const double ow = ww ? fmax(-m->ue[(c - 1) * nz + k], 0.0) : 0.0;
        const double on = wn ? fmax(m->vn[c * nz + k], 0.0) : 0.0;
        const double os = ws ? fmax(-m->vn[(c - nxh) * nz + k], 0.0) : 0.0;
        const double out = ((oe + ow) + on) + os;
        const double sq = ((oe * oe + ow * ow) + on * on) + os * os;
        const double dif = (double)(we + ww) * kh_x + (double)(wn + ws) * kh_y;
        const double x = stable_x(cfg->advection, out, sq, dif);
        if (x < mine.x) {
          mine.x = x;
          const double here[6] = {g->i0 + i, g->j0 + j, k, out, sq, dif};
          memcpy(at, here, sizeof at);
        }
      }
    }
  MM_MPI(MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE_INT, MPI_MINLOC, g->cart));
  const double dt = cfg->run_dt;
  /* the step multiplies its fluxes by dt / (dx dy): 0 x inf would be NaN */
  MM_REQUIRE(isfinite(m->dt_area), MM_ERR_INPUT,
             "grid.dx = %g m, grid.dy = %g m: run.dt / (dx dy) = %g s/m2 is not a finite number",
             g->dx, g->dy, m->dt_area);
  m->dt_stable = all.x * (g->dx * g->dy);
  if (dt <= m->dt_stable) return MM_OK;
  MM_MPI(MPI_Bcast(at, 6, MPI_DOUBLE, all.rank, g->cart));
  const int adv = cfg->advection != MM_ADV_NONE && at[3] > 0.0, dif = at[5] > 0.0;
  const char *what = adv && dif ? "advective + diffusive" : adv ? "advective" : "diffusive";
  const char *scheme = "no";
  if (cfg->advection == MM_ADV_UPWIND) scheme = "upwind";
  if (cfg->advection == MM_ADV_SUPERBEE) scheme = "superbee";
  char use[64];
  floor_decimal(m->dt_stable, 6, use, sizeof use);
  /* the other keys of the limit that binds (run.dt's origin is the
   * message's prefix, mm_config_name_origin): the cells, and kappa_h where
   * diffusion enters it, the advection's keys where advection does */
  const char *limit_keys[7] = {"grid.dx", "grid.dy"}, **next = limit_keys + 2;
  if (dif) *next++ = "physics.kappa_h";
  if (adv) *next++ = "physics.advection", *next++ = "physics.flow", *next++ = "physics.flow_speed";
  *next = NULL;
  char with[6 * (MM_STR_MAX + 32)];
  mm_config_given_with(cfg, limit_keys, with, sizeof with);
  if (!(m->dt_stable > 0.0)) /* below the doubles: no dt to suggest ("use run.dt <= 0 s") */
    return MM_ERROR(MM_ERR_INPUT,
                    "run.dt = %g s breaks the %s stability limit of the explicit horizontal step "
                    "(%s advection, kappa_h = %g m2/s; the limit is set at cell i=%d j=%d k=%d): "
                    "no time step passes on this grid (the largest stable one is below the "
                    "smallest double): make the cells larger (grid.dx = %g m, grid.dy = %g m) or "
                    "kappa_h smaller%s",
                    dt, what, scheme, cfg->kappa_h, (int)at[0], (int)at[1], (int)at[2], g->dx,
                    g->dy, with);
  return MM_ERROR(MM_ERR_INPUT,
                  "run.dt = %g s breaks the %s stability limit of the explicit horizontal step "
                  "(%s advection, kappa_h = %g m2/s; the limit is set at cell i=%d j=%d k=%d): it "
                  "is %s%.5g times the largest stable time step; use run.dt <= %s s%s",
                  dt, what, scheme, cfg->kappa_h, (int)at[0], (int)at[1], (int)at[2],
                  isfinite(dt / m->dt_stable) ? "" : "more than ",
                  isfinite(dt / m->dt_stable) ? dt / m->dt_stable : DBL_MAX, use, with);
}

/* This rank's index among the ranks of its node (to share out the GPUs),
 * and how many ranks the node runs (to share out its cache). */
static MM_NODISCARD mm_err node_rank(MPI_Comm comm, int *r, int *n) {
  MPI_Comm node;
  MM_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int rc = MPI_Comm_rank(node, r);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(node, n);
  MM_MPI(MPI_Comm_free(&node));
  MM_MPI(rc);
  return MM_OK;
}

/* The device of solver.backend (NULL for cpu, and for cuda in a build
 * without CUDA), and whether its memory is the device's own. */
static const mm_device_backend *device_of(const mm_config *cfg, int *on_device) {
  const char *name = cfg->backend == MM_BACKEND_CUDA ? "cuda" : "emulated";
  const mm_device_backend *dev = cfg->backend == MM_BACKEND_CPU ? NULL : mm_device_find(name);
  *on_device = dev ? dev->device_memory : cfg->backend == MM_BACKEND_CUDA;
  return dev;
}

/* solver.tdma names a solver for the memory the step runs on (checked
 * before any device is opened, so that a wrong name is found anywhere). */
static MM_NODISCARD mm_err check_tdma_name(const mm_config *cfg) {
  int on_device;
  (void)device_of(cfg, &on_device);
  const mm_tdma_backend *be = mm_tdma_find(cfg->tdma);
  if (!strcmp(cfg->tdma, "auto") || (be && be->device_memory == on_device)) return MM_OK;
  char names[512] = "auto";
  for (const mm_tdma_backend *const *b = mm_tdma_backends(); *b; b++)
    if ((*b)->device_memory == on_device && strlen(names) + strlen((*b)->name) + 3 < sizeof names)
      strcat(strcat(names, ", "), (*b)->name);
  return MM_ERROR(MM_ERR_INPUT, "solver.tdma = %s: not a %s solver variant (available: %s)%s",
                  cfg->tdma, on_device ? "cuda" : "cpu", names,
                  cfg->backend == MM_BACKEND_EMULATED && !on_device
                      ? "; solver.backend = emulated keeps its fields in host memory and "
                        "solves them with the cpu variants"
                      : "");
}

/* solver.backend other than cpu: a context on its device (node rank mod
 * devices). */
static MM_NODISCARD mm_err open_device(mm_model *m) {
  const mm_config *cfg = &m->cfg;
  int on_device;
  const mm_device_backend *dev = device_of(cfg, &on_device);
  const char *name = cfg->backend == MM_BACKEND_CUDA ? "cuda" : "emulated";
  char msg[512] = "minimodel was built without CUDA";
  int local_rank = 0, on_node = 1;
  MM_CHECK(node_rank(m->grid.cart, &local_rank, &on_node));
  MM_REQUIRE(dev && dev->available(local_rank, msg, sizeof msg), MM_ERR_INPUT,
             "solver.backend = %s: no usable device for it on this machine (%s)", name, msg);
  if (dev->create(&cfg->env, local_rank, &m->dev_ctx, msg, sizeof msg))
    return MM_ERROR(MM_ERR_RUN, "solver.backend = %s: %s", name, msg);
  m->dev = dev;
  dev->describe(m->dev_ctx, m->device, sizeof m->device);
  return MM_OK;
}

/* Bytes of the last-level cache that one core sees (Linux's
 * /sys/devices/system/cpu/cpu0/cache/index3/size, "32768K"); 32 MiB where
 * that cannot be read. */
static double llc_bytes(void) {
  double bytes = 32.0 * 1024 * 1024;
  FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
  if (f) {
    double v;
    char unit = 0;
    if (fscanf(f, "%lf%c", &v, &unit) >= 1 && v > 0)
      bytes = v * (unit == 'K' ? 1024.0 : unit == 'M' ? 1024.0 * 1024 : 1.0);
    fclose(f);
  }
  return bytes;
}

static MM_NODISCARD mm_err create_solver(mm_model *m) {
  const mm_config *cfg = &m->cfg;
  const int on_device = m->dev && m->dev->device_memory;
  int rc = mm_tdma_create(cfg->tdma, m->grid.nz, on_device, &m->solver);
  if (rc == MM_TDMA_OK) return MM_OK;
  if (rc == MM_TDMA_EINVAL || rc == MM_TDMA_ENOTSUP) MM_CHECK(check_tdma_name(cfg));
  if (rc == MM_TDMA_EDEVICE)
    return MM_ERROR(MM_ERR_INPUT,
                    "solver.backend = %s, solver.tdma = %s: no usable device for it on this "
                    "machine (%s)",
                    on_device ? "cuda" : "cpu", cfg->tdma,
                    on_device ? "no CUDA device, or minimodel was built without CUDA"
                              : "not available in this build");
  return MM_ERROR(MM_ERR_RUN, "solver %s: %s", cfg->tdma, mm_tdma_strerror(rc));
}

/* The GPU-resident step: the device copy of everything the step needs. */
static MM_NODISCARD mm_err create_gpu(mm_model *m) {
  const mm_grid *g = &m->grid;
  const mm_config *cfg = &m->cfg;
  MM_REQUIRE(!m->dev->device_memory || mm_tdma_backend_of(m->solver)->fused_async, MM_ERR_INPUT,
             "solver.backend = %s, solver.tdma = %s: this solver cannot run inside the GPU "
             "time step (it has no stream-ordered fused solve); use solver.tdma = cuda or auto",
             m->dev->name, cfg->tdma);
  mm_gpu_setup s = {0};
  s.device = m->dev, s.ctx = m->dev_ctx;
  s.nz = g->nz, s.nxl = g->nxl, s.nyl = g->nyl;
  s.nxh = g->nxh, s.nyh = g->nyh, s.ncol_h = g->ncol_h;
  const int nb[4] = {g->west, g->east, g->south, g->north};
  for (int d = 0; d < 4; d++) {
    s.neighbour[d] = nb[d] != MPI_PROC_NULL;
    s.send_off[d] = m->halo.off_send[d], s.recv_off[d] = m->halo.off_recv[d];
    s.width[d] = m->halo.width[d], s.height[d] = m->halo.height[d];
  }
  s.pitch = m->halo.pitch;
  s.kmt = g->kmt, s.kmt_solve = g->kmt_solve;
  s.ue = m->ue, s.vn = m->vn;
  s.g_dt = m->g_dt, s.inv_h = m->inv_h, s.vol = g->vol;
  s.hstep.scheme = (int)cfg->advection;
  s.hstep.dt_area = m->dt_area, s.hstep.kh_x = m->kh_x, s.hstep.kh_y = m->kh_y;
  s.mix.alpha = cfg->alpha, s.mix.beta = cfg->beta;
  s.mix.kappa_v = cfg->kappa_v, s.mix.kappa_mix = m->kappa_mix;
  s.mix.convect = cfg->kappa_convect > 0.0;
  s.mix.q_top = m->q_top;
  s.host_temp = m->temp, s.host_salt = m->salt;
  s.solver = m->solver;
  /* MINIMODEL_CUDA_GRAPH=0: launch the kernels one by one (for profiling) */
  s.use_graph = !cfg->env.no_graph;
  /* MINIMODEL_CUDA_KAPPA_IN_SOLVE=0: the mixing kernel, kappa_w through
   * memory (for profiling) */
  s.kappa_in_solve = !cfg->env.no_kappa_in_solve;
  /* MINIMODEL_CUDA_TILES=0: the per-cell horizontal kernel everywhere */
  s.tiles = !cfg->env.no_tiles;
  /* MINIMODEL_CUDA_TILE_LEVELS: the levels of those tiles (for tuning) */
  s.tile_levels = cfg->env.tile_levels;
  /* MINIMODEL_CUDA_TILE_FACES=1: each face of those tiles computed once */
  s.tile_faces = cfg->env.tile_faces;
  /* MINIMODEL_CUDA_TILE_MIN_BLOCKS: their CUDA kernel's blocks per SM */
  s.tile_min_blocks = cfg->env.tile_min_blocks;
  /* the halo through device memory when MPI takes it, unless
   * MINIMODEL_CUDA_AWARE_MPI=0; the same on every rank */
  int aware = m->dev->mpi_takes_device_memory((int)cfg->env.cuda_aware_mpi);
  int all = 0;
  MM_MPI(MPI_Allreduce(&aware, &all, 1, MPI_INT, MPI_MIN, g->cart));
  m->gpu_stage = !all;
  MM_CHECK(mm_gpu_create(&s, &m->gpu));
  return MM_OK;
}

/* The state and work arrays (this rank alone). */
static MM_NODISCARD mm_err allocate(mm_model *m) {
  const mm_grid *g = &m->grid;
  const size_t n = g->ncol_h * (size_t)g->nz;
  /* fault injection (mm_settings.h): the allocation fails on one rank */
  const mm_settings *env = &m->cfg.env;
  if (mm_fault_is(env, env->fault.alloc, "model", g->rank))
    return MM_ERROR(MM_ERR_RUN, "out of memory allocating m->temp (%zu bytes) [injected fault]",
                    n * sizeof *m->temp);
  MM_ALLOC(m->temp, n);
  MM_ALLOC(m->salt, n);
  MM_ALLOC(m->temp_next, n);
  MM_ALLOC(m->salt_next, n);
  MM_ALLOC(m->ue, n);
  MM_ALLOC(m->vn, n);
  MM_ALLOC(m->kappa_w, n);
  MM_ALLOC(m->ue_dir, g->ncol_h);
  MM_ALLOC(m->vn_dir, g->ncol_h);
  MM_ALLOC(m->g_dt, g->nz);
  MM_ALLOC(m->inv_h, g->nz);
  MM_ALLOC(m->work, (size_t)m->nthreads * mm_horizontal_ws(g->nz));
  return MM_OK;
}

mm_err mm_model_create(const mm_config *cfg, MPI_Comm comm, mm_model **out) {
  *out = NULL;
  mm_model *m = calloc(1, sizeof *m);
  MM_REQUIRE(m, MM_ERR_RUN, "out of memory");
  *out = m; /* so that the caller destroys what was built on error */
  m->cfg = *cfg;
  m->grid.cart = MPI_COMM_NULL;
  m->nthreads = mm_grid_threads(); /* as the memory check counts them */
  /* the grid's collectives come first; what may fail on one rank alone (the
   * memory check, allocations) follows them, and the ranks agree on it before
   * the next collective (check_stability) */
  mm_err err = mm_grid_create(cfg, comm, &m->grid);
  const mm_grid *g = &m->grid;
  if (err == MM_OK) err = mm_halo_create(g, &m->halo);
  if (err == MM_OK) err = allocate(m);
  if (err == MM_OK) err = mm_flow_create(cfg, g, m->ue, m->vn);
  MM_CHECK(mm_agree(comm, err));
  MM_CHECK(check_wet(m));
  mm_flow_directions(m);
  MM_CHECK(check_divergence(m));
  const double dt = cfg->run_dt;
  m->dt_area = dt / (g->dx * g->dy);
  m->kh_x = cfg->kappa_h * g->dy / g->dx;
  m->kh_y = cfg->kappa_h * g->dx / g->dy;
  MM_CHECK(check_stability(m));

  for (int k = 0; k < g->nz; k++) {
    m->g_dt[k] = k + 1 < g->nz ? dt / g->dzw[k] : 0.0;
    m->inv_h[k] = 1.0 / g->h[k];
  }
  m->q_top = dt * cfg->heat_flux / (cfg->rho0 * cfg->cp * g->h[0]);
  m->kappa_mix = cfg->kappa_v + cfg->kappa_convect;
  MM_CHECK(check_tdma_name(cfg));
  if (cfg->backend != MM_BACKEND_CPU) MM_CHECK(mm_agree(comm, open_device(m)));
  MM_CHECK(mm_agree(comm, create_solver(m))); /* create_gpu and node_rank are collective */
  m->kappa_in_solve = !m->dev && mm_tdma_backend_of(m->solver)->fused_mixing != NULL;
  if (m->kappa_in_solve) {
    /* T* and S* of the node's ranks against the last-level cache */
    int local_rank = 0, on_node = 1;
    MM_CHECK(mm_agree(comm, node_rank(comm, &local_rank, &on_node)));
    m->stream_next = 2.0 * g->ncol_h * g->nz * sizeof(double) * on_node > llc_bytes();
  }
  initial_state(m);
  if (m->dev) MM_CHECK(create_gpu(m));
  return MM_OK;
}

void mm_model_destroy(mm_model *m) {
  if (!m) return;
  mm_gpu_destroy(m->gpu);
  mm_tdma_destroy(m->solver);
  if (m->dev) m->dev->destroy(m->dev_ctx);
  mm_halo_destroy(&m->halo);
  mm_grid_destroy(&m->grid);
  free(m->temp);
  free(m->salt);
  free(m->temp_next);
  free(m->salt_next);
  free(m->ue);
  free(m->vn);
  free(m->kappa_w);
  free(m->ue_dir);
  free(m->vn_dir);
  free(m->g_dt);
  free(m->inv_h);
  free(m->work);
  free(m);
}

/* The step on the GPU (mm_gpu.h): the halo exchange between its halves. */
static MM_NODISCARD mm_err gpu_step(mm_model *m, mm_timers *tm) {
  const mm_grid *g = &m->grid;
  mm_timer_start(tm, MM_PHASE_HALO); /* strips out, MPI exchange (host clock) */
  const mm_err failed = mm_gpu_step_begin(m->gpu, m->gpu_stage);
  /* the exchange even after a failure here: the neighbours wait for it, and
   * the agreement after the step then stops every rank */
  double *fields[2] = {m->temp, m->salt};
  if (!m->gpu_stage) mm_gpu_fields(m->gpu, &fields[0], &fields[1]);
  mm_err err = mm_halo_start(&m->halo, fields, 2);
  if (err == MM_OK) err = mm_halo_finish(&m->halo);
  mm_timer_stop(tm, MM_PHASE_HALO);
  MM_CHECK(failed);
  MM_CHECK(err);
  mm_gpu_times t;
  MM_CHECK(mm_gpu_step_end(m->gpu, m->gpu_stage, &t));
  mm_timer_add(tm, MM_PHASE_HALO, t.halo);
  mm_timer_add(tm, MM_PHASE_HORIZONTAL, t.horizontal);
  if (mm_gpu_kappa_in_solve(m->gpu)) { /* no mixing kernel: the events' gap is the solve's */
    mm_timer_add(tm, MM_PHASE_SOLVE, t.solve + t.mixing);
  } else {
    mm_timer_add(tm, MM_PHASE_MIXING, t.mixing);
    mm_timer_add(tm, MM_PHASE_SOLVE, t.solve);
  }
  /* fault injection (mm_settings.h): the solve fails on one rank */
  if (m->step + 1 == m->cfg.env.fault.solve_step && mm_fault_here(&m->cfg.env, g->rank))
    return MM_ERROR(MM_ERR_RUN, "tridiagonal solve failed at step %ld [injected fault]",
                    m->step + 1);
  m->step++;
  m->time = (double)m->step * m->cfg.run_dt;
  return MM_OK;
}

/* The explicit part with the halo exchange overlapped: the interior cells
 * (at least MM_HALO from each block edge that has a neighbour) need no halo
 * values, so they go while the halo is in flight; the frame follows. An
 * edge without a neighbour (a wall: MPI_PROC_NULL) has nothing in flight,
 * so the interior reaches it: on 1 x 2 ranks the frame is the two strips of
 * whole rows at the edge between the ranks, not also 2 columns on each
 * side, which cost more per cell than the rows (short runs in memory, each
 * cell's west face computed afresh). */
static MM_NODISCARD mm_err explicit_part(mm_model *m, mm_timers *tm) {
  const int nx = m->grid.nxl, ny = m->grid.nyl, h = MM_HALO;
  const mm_halo *halo = &m->halo;
  /* the interior [ib, ie) x [jb, je) */
  const int ib = halo->west == MPI_PROC_NULL ? 0 : h;
  const int ie = halo->east == MPI_PROC_NULL ? nx : nx - h;
  const int jb = halo->south == MPI_PROC_NULL ? 0 : h;
  const int je = halo->north == MPI_PROC_NULL ? ny : ny - h;
  const int inner = ie > ib && je > jb;
  mm_timer_start(tm, MM_PHASE_HALO);
  double *fields[2] = {m->temp, m->salt};
  const mm_err started = mm_halo_start(&m->halo, fields, 2);
  mm_timer_stop(tm, MM_PHASE_HALO);
  MM_CHECK(started);

  mm_timer_start(tm, MM_PHASE_HORIZONTAL);
  if (inner) mm_horizontal_step(m, ib, ie, jb, je);
  mm_timer_stop(tm, MM_PHASE_HORIZONTAL);

  mm_timer_start(tm, MM_PHASE_HALO);
  const mm_err finished = mm_halo_finish(&m->halo);
  mm_timer_stop(tm, MM_PHASE_HALO);
  MM_CHECK(finished);

  /* the frame; mm_horizontal_step does nothing on an empty strip */
  mm_timer_start(tm, MM_PHASE_HORIZONTAL);
  if (inner) {
    mm_horizontal_step(m, 0, nx, 0, jb);   /* south frame */
    mm_horizontal_step(m, 0, nx, je, ny);  /* north frame */
    mm_horizontal_step(m, 0, ib, jb, je);  /* west frame */
    mm_horizontal_step(m, ie, nx, jb, je); /* east frame */
  } else {
    mm_horizontal_step(m, 0, nx, 0, ny);
  }
  mm_timer_stop(tm, MM_PHASE_HORIZONTAL);
  return MM_OK;
}

/* The implicit part: one tridiagonal solve per column, T and S together. */
static MM_NODISCARD mm_err implicit_part(mm_model *m, mm_timers *tm) {
  mm_timer_start(tm, MM_PHASE_SOLVE);
  mm_err err = mm_vertical_step(m);
  /* fault injection (mm_settings.h): the solve fails on one rank */
  if (err == MM_OK && m->step + 1 == m->cfg.env.fault.solve_step &&
      mm_fault_here(&m->cfg.env, m->grid.rank))
    err =
        MM_ERROR(MM_ERR_RUN, "tridiagonal solve failed at step %ld [injected fault]", m->step + 1);
  mm_timer_stop(tm, MM_PHASE_SOLVE);
  return err;
}

/* Fault injection (mm_settings.h): an MPI call of this step fails on
 * every rank (a reduction of a negative count). */
static MM_NODISCARD mm_err fault_mpi(const mm_model *m) {
  if (m->step + 1 == m->cfg.env.fault.mpi_step) {
    int one = 1, sum = 0;
    MM_MPI(MPI_Allreduce(&one, &sum, -1, MPI_INT, MPI_SUM, m->grid.cart));
  }
  return MM_OK;
}

/* One time step, n -> n+1 (docs/physics.md), for T and for S:
 *
 *   T*_P = T_P + dt/(dx dy) sum over the faces of P (F_adv + F_dif)
 *                                       explicit horizontal advection and
 *                                       diffusion (upwind or superbee)
 *   kappa_{k+1/2} = kappa_v + kappa_c   where rho*_k > rho*_{k+1}, else kappa_v
 *                                       (convective mixing, from T*, S*)
 *   T*_0 += dt Q / (rho0 cp h_0)        surface heating (T only)
 *   h_k T_k - cond_{k-1/2} (T_{k-1} - T_k) + cond_{k+1/2} (T_k - T_{k+1})
 *       = h_k T*_k,  cond = dt kappa / dzw
 *                                       implicit vertical diffusion: one
 *                                       tridiagonal solve per column
 *
 * On the CPU the first three are one sweep (mm_horizontal_step); on the GPU
 * the same arithmetic runs as kernels (mm_gpu.h). */
mm_err mm_model_step(mm_model *m, mm_timers *tm) {
  MM_CHECK(fault_mpi(m));
  /* fault injection (mm_settings.h): rank R's halo exchange fails */
  if (m->step + 1 == m->cfg.env.fault.halo_step && mm_fault_here(&m->cfg.env, m->grid.rank))
    m->halo.fail_next = true;
  if (m->gpu) return gpu_step(m, tm);
  MM_CHECK(explicit_part(m, tm)); /* T*, S*, kappa_w, the surface heating */
  MM_CHECK(implicit_part(m, tm)); /* T, S at n+1 in temp_next, salt_next */
  /* the new state becomes the current one */
  double *t = m->temp, *s = m->salt;
  m->temp = m->temp_next;
  m->salt = m->salt_next;
  m->temp_next = t;
  m->salt_next = s;
  m->step++;
  m->time = (double)m->step * m->cfg.run_dt;
  return MM_OK;
}

const mm_config *mm_model_config(const mm_model *m) {
  return &m->cfg;
}
const mm_grid *mm_model_grid(const mm_model *m) {
  return &m->grid;
}
double *mm_model_temp(mm_model *m) {
  return m->temp;
}
double *mm_model_salt(mm_model *m) {
  return m->salt;
}
long mm_model_steps_done(const mm_model *m) {
  return m->step;
}
double mm_model_time(const mm_model *m) {
  return m->time;
}

void mm_model_set_step(mm_model *m, long step) {
  m->step = step;
  m->time = (double)step * m->cfg.run_dt;
}

const char *mm_model_backend(const mm_model *m) {
  return m->dev ? m->dev->name : "cpu";
}

const char *mm_model_tdma(const mm_model *m) {
  return mm_tdma_backend_of(m->solver)->name;
}

const char *mm_model_device(const mm_model *m) {
  return m->device;
}

const char *mm_model_halo_path(const mm_model *m) {
  if (!m->gpu) return NULL;
  return m->gpu_stage ? "pinned host strips" : "CUDA-aware MPI";
}

long mm_model_graph_launches(const mm_model *m) {
  return m->gpu ? mm_gpu_graph_launches(m->gpu) : 0;
}

int mm_model_on_device(const mm_model *m) {
  return m->gpu != NULL;
}

int mm_model_horizontal_tiles(const mm_model *m, int *levels, int *columns, int *faces,
                              int *min_blocks) {
  if (m->gpu) return mm_gpu_horizontal_tiles(m->gpu, levels, columns, faces, min_blocks);
  if (levels) *levels = 0;
  if (columns) *columns = 0;
  if (faces) *faces = 0;
  if (min_blocks) *min_blocks = 0;
  return 0;
}

int mm_model_kappa_in_solve(const mm_model *m) {
  if (m->gpu) return mm_gpu_kappa_in_solve(m->gpu);
  return m->kappa_in_solve;
}

mm_err mm_model_diagnostics(const mm_model *m, mm_diag *d) {
  MM_CHECK(mm_diag_compute(&m->grid, m->temp, m->salt, m->cfg.rho0, m->cfg.cp, d));
  d->step = m->step;
  d->time = m->time;
  return MM_OK;
}

/* Wet values of temp and salt on all ranks that are non-finite or outside
 * the physically possible range (collective). */
static MM_NODISCARD mm_err count_suspect(const mm_model *m, long *total) {
  const mm_grid *g = &m->grid;
  long bad = 0;
#pragma omp parallel for schedule(static) reduction(+ : bad)
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++) {
      const size_t c = mm_col(g, i, j);
      const double *t = m->temp + c * g->nz, *s = m->salt + c * g->nz;
      for (int k = 0; k < g->kmt[c]; k++) /* false for NaN, and for +-Inf */
        bad += !mm_temp_possible(t[k]) + !mm_salt_possible(s[k]);
    }
  MM_MPI(MPI_Allreduce(&bad, total, 1, MPI_LONG, MPI_SUM, g->cart));
  return MM_OK;
}

mm_err mm_model_check(mm_model *m, mm_diag *d, bool full) {
  if (!m->gpu) {
    /* between records a plain scan; the sums only when needed */
    long suspect = 0;
    if (!full) MM_CHECK(count_suspect(m, &suspect));
    if (full || suspect > 0) {
      MM_CHECK(mm_model_diagnostics(m, d));
    } else {
      d->nonfinite = 0;
      d->out_of_range = 0;
    }
    return MM_OK;
  }
  /* the ranks agree on the kernel's outcome before the collectives below */
  mm_diag_part part;
  const mm_err err = mm_gpu_diagnostics(m->gpu, &part);
  MM_CHECK(mm_agree(m->grid.cart, err));
  long bad = 0;
  const long suspect = part.bad + part.out; /* non-finite or out of the possible range */
  if (!full) MM_MPI(MPI_Allreduce(&suspect, &bad, 1, MPI_LONG, MPI_SUM, m->grid.cart));
  if (full || bad > 0) {
    MM_CHECK(mm_diag_finish(&m->grid, &part, m->cfg.rho0, m->cfg.cp, d));
    d->step = m->step;
    d->time = m->time;
  } else {
    d->nonfinite = 0;
    d->out_of_range = 0;
  }
  return MM_OK;
}

mm_err mm_model_state_changed(mm_model *m) {
  if (m->gpu) MM_CHECK(mm_gpu_upload(m->gpu));
  return MM_OK;
}

mm_err mm_model_fetch_state(mm_model *m) {
  if (m->gpu) MM_CHECK(mm_gpu_download(m->gpu));
  return MM_OK;
}

mm_err mm_model_keep_good(mm_model *m, double *good_t, double *good_s) {
  if (m->gpu) {
    MM_CHECK(mm_gpu_keep_good(m->gpu));
    return MM_OK;
  }
  const size_t n = m->grid.ncol_h * (size_t)m->grid.nz;
  memcpy(good_t, m->temp, n * sizeof *good_t);
  memcpy(good_s, m->salt, n * sizeof *good_s);
  return MM_OK;
}

mm_err mm_model_fetch_good(mm_model *m, double *good_t, double *good_s) {
  if (m->gpu) MM_CHECK(mm_gpu_fetch_good(m->gpu, good_t, good_s));
  return MM_OK;
}

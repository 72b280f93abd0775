#include "mm_grid.h"

#include "mm_host_memory.h"
#include "mm_tdma.h"

#include <stdio.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

void mm_grid_levels(const mm_config *cfg, double *h, double *z_w, double *z_t) {
  const int nz = (int)cfg->nz;
  if (cfg->dz_surface > 0) {
    /* thickness grows linearly: h_k = h_s + k g, sum = depth */
    const double hs = cfg->dz_surface;
    const double g = nz > 1 ? 2.0 * (cfg->depth - nz * hs) / ((double)nz * (double)(nz - 1)) : 0.0;
    for (int k = 0; k < nz; k++)
      h[k] = nz > 1 ? hs + k * g : cfg->depth;
  } else {
    for (int k = 0; k < nz; k++)
      h[k] = cfg->depth / nz;
  }
  z_w[0] = 0.0;
  for (int k = 0; k < nz; k++) {
    z_w[k + 1] = z_w[k] + h[k];
    z_t[k] = z_w[k] + 0.5 * h[k];
  }
}

double mm_bathymetry_depth(const mm_config *cfg, int ig, int jg) {
  const double xi = (ig + 0.5) / (double)cfg->nx, eta = (jg + 0.5) / (double)cfg->ny;
  const double rx = (xi - 0.5) / 0.5, ry = (eta - 0.5) / 0.5;
  const double r2 = rx * rx + ry * ry;
  switch (cfg->bathymetry) {
  case MM_BATHY_FLAT: return cfg->depth;
  case MM_BATHY_BOWL: return cfg->depth * (1.0 - r2);
  case MM_BATHY_SEAMOUNT: return cfg->depth * (1.0 - 0.8 * exp(-r2 / 0.1));
  case MM_BATHY_SLOPE: return cfg->depth * fmin(1.0, 1.5 * xi - 0.1);
  }
  return cfg->depth;
}

/* Wet levels under sea-floor depth D: levels whose centre lies above it. */
static int kmt_of_depth(const double *z_t, int nz, double depth) {
  int k = 0;
  while (k < nz && z_t[k] < depth)
    k++;
  return k;
}

int mm_grid_kmt_global(const mm_config *cfg, const mm_grid *g, int ig, int jg) {
  if (ig < 0 || ig >= g->nx) {
    if (!g->periodic_x) return -1;
    ig = ((ig % g->nx) + g->nx) % g->nx;
  }
  if (jg < 0 || jg >= g->ny) {
    if (!g->periodic_y) return -1;
    jg = ((jg % g->ny) + g->ny) % g->ny;
  }
  return kmt_of_depth(g->z_t, g->nz, mm_bathymetry_depth(cfg, ig, jg));
}

/* Memory a rank may use (*out): what this process may still take
 * (mm_host_memory_available: MemAvailable, or a memory cgroup's limit less
 * its use where that is less, whose directory goes to limit_of) shared by
 * the `*local` ranks of this node, or MINIMODEL_MEMORY_LIMIT (bytes per
 * rank) when set; -1 when that is not a number > 0. Collective: every rank
 * takes part in the split of comm, whatever its own environment or /proc
 * says (the variable may be set on some ranks only). */
static MM_NODISCARD mm_err available_bytes(MPI_Comm comm, const mm_settings *env, double *out,
                                           int *local, char *limit_of, size_t len) {
  MPI_Comm node;
  *local = 1;
  limit_of[0] = '\0';
  MM_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  const int rc = MPI_Comm_size(node, local);
  MM_MPI(MPI_Comm_free(&node));
  MM_MPI(rc);
  const char *limit = env->memory_limit;
  if (*limit) {
    *out = mm_host_memory_limit(limit);
    return MM_OK;
  }
  *out = mm_host_memory_available(limit_of, len) / *local;
  return MM_OK;
}

int mm_grid_device_fields(const mm_config *cfg) {
  return cfg->backend == MM_BACKEND_EMULATED ? MM_GRID_EMULATED_FIELDS : 0;
}

int mm_grid_threads(void) {
  return mm_tdma_max_threads();
}

double mm_grid_memory_bytes(const mm_config *cfg, long nxl, long nyl, long nz, int threads) {
  const int device_fields = mm_grid_device_fields(cfg);
  const double cols = (double)(nxl + 2 * MM_HALO) * (double)(nyl + 2 * MM_HALO);
  /* 9 column fields of the model (T, S, T*, S*, ue, vn, kappa_w, last good T
   * and S), each rounded up to whole 2 MB pages from 4 MB on
   * (mm_calloc_aligned), 2 int maps, the 2 byte maps of the flow's
   * directions, two records of one field (T or S) in file order (the
   * history's, and a restart's or a crash file's, which a write at a record
   * step needs at once) */
  double field = cols * (double)nz * 8.0;
  const double huge = (double)MM_HUGE_PAGE;
  if (field >= 2.0 * huge) field = ceil(field / huge) * huge;
  /* per thread: the horizontal step's workspace; and what the column
   * solver of solver.tdma holds for T and S on those threads (host memory:
   * a GPU step's solver works in the device's) */
  if (threads < 1) threads = 1;
  const double per_thread = (double)nz * MM_HORIZONTAL_WS_LEVEL * 8.0;
  const size_t solver =
      mm_tdma_host_bytes(cfg->tdma, (int)nz, cfg->backend == MM_BACKEND_CUDA, 2, threads);
  return field * (9.0 + device_fields) + cols * 8.0 + cols * 2.0 +
         2.0 * (double)nxl * nyl * nz * 8.0 + threads * per_thread + (double)solver;
}

/* Refuse, before allocating, a block that would not fit in memory. */
static MM_NODISCARD mm_err mm_grid_check_memory(const mm_grid *g, const mm_config *cfg) {
  const mm_settings *env = &cfg->env;
  /* the largest block of any rank */
  const long nxl = (g->nx + g->px - 1) / g->px, nyl = (g->ny + g->py - 1) / g->py;
  const double need = mm_grid_memory_bytes(cfg, nxl, nyl, g->nz, mm_grid_threads());
  double avail = 0.0;
  int local = 1;
  char limit_of[512];
  MM_CHECK(available_bytes(g->cart, env, &avail, &local, limit_of, sizeof limit_of));
  MM_REQUIRE(!*env->memory_limit || avail > 0.0, MM_ERR_INPUT,
             "MINIMODEL_MEMORY_LIMIT = %s: must be a number of bytes > 0 (decimal, and finite: "
             "at most about 1.8e308)",
             env->memory_limit);
  char whose[640] = ""; /* where the figure comes from, when a cgroup's limit sets it */
  if (!*env->memory_limit && limit_of[0])
    snprintf(whose, sizeof whose,
             " (the memory limit of the cgroup %s, less what it uses%s: a job's or a "
             "container's limit, beyond which the kernel kills the run)",
             limit_of, local > 1 ? ", shared by the node's ranks" : "");
  MM_REQUIRE(need <= avail, MM_ERR_INPUT,
             "grid %d x %d x %d on %d rank%s needs about %.3g GB per rank but %.3g GB are "
             "available%s; use more ranks or a smaller grid",
             g->nx, g->ny, g->nz, g->nranks, g->nranks == 1 ? "" : "s", need / 1e9, avail / 1e9,
             whose);
  return MM_OK;
}

/* Whether px x py ranks fit the grid as the checks of mm_grid_create ask:
 * no more ranks than columns or rows in a direction, and at least MM_HALO of
 * them per block in a direction with neighbours (or that wraps onto itself). */
static bool decomposition_fits(const mm_grid *g, int px, int py) {
  return px <= g->nx && py <= g->ny && (g->nx / px >= MM_HALO || (px == 1 && !g->periodic_x)) &&
         (g->ny / py >= MM_HALO || (py == 1 && !g->periodic_y));
}

/* Split n cells over p ranks, the remainder spread over the first ranks. */
static void split(int n, int p, int c, int *start, int *count) {
  int base = n / p, rem = n % p;
  *count = base + (c < rem);
  *start = c * base + (c < rem ? c : rem);
}

mm_err mm_grid_create(const mm_config *cfg, MPI_Comm comm, mm_grid *g) {
  memset(g, 0, sizeof *g);
  g->cart = MPI_COMM_NULL;
  g->nx = (int)cfg->nx;
  g->ny = (int)cfg->ny;
  g->nz = (int)cfg->nz;
  g->dx = cfg->dx;
  g->dy = cfg->dy;
  g->periodic_x = cfg->periodic_x;
  g->periodic_y = cfg->periodic_y;
  const int nz = g->nz;

  MM_ALLOC(g->h, nz);
  MM_ALLOC(g->z_w, nz + 1);
  MM_ALLOC(g->z_t, nz);
  MM_ALLOC(g->dzw, nz);
  MM_ALLOC(g->vol, nz);
  mm_grid_levels(cfg, g->h, g->z_w, g->z_t);
  for (int k = 0; k < nz; k++) {
    g->dzw[k] = k + 1 < nz ? g->z_t[k + 1] - g->z_t[k] : 0.0;
    g->vol[k] = g->h[k] * g->dx * g->dy;
  }

  /* decomposition: dims (py, px), rank order row-major (x fastest) */
  int nranks;
  MM_MPI(MPI_Comm_size(comm, &nranks));
  int dims[2] = {(int)cfg->ranks_y, (int)cfg->ranks_x};
  if (dims[0] > 0 && dims[1] > 0)
    MM_REQUIRE((long)dims[0] * dims[1] == nranks, MM_ERR_INPUT,
               "grid.ranks_x x grid.ranks_y = %d x %d = %ld but the run has %d rank%s", dims[1],
               dims[0], (long)dims[0] * dims[1], nranks, nranks == 1 ? "" : "s");
  else
    MM_REQUIRE((dims[0] == 0 || nranks % dims[0] == 0) && (dims[1] == 0 || nranks % dims[1] == 0),
               MM_ERR_INPUT, "grid.ranks_%s = %d does not divide the %d ranks of the run",
               dims[1] && nranks % dims[1] ? "x" : "y",
               dims[1] && nranks % dims[1] ? dims[1] : dims[0], nranks);
  const int asked[2] = {dims[0], dims[1]};
  MM_MPI(MPI_Dims_create(nranks, 2, dims));
  /* MPI_Dims_create balances the ranks, blind to the grid: where its choice
   * does not fit (40 x 3 columns on 2 ranks: 1 x 2), the factorization that
   * fits with the shortest halo strips (px ny + py nx), the dimensions the
   * configuration fixes kept; none fits: its choice, refused below */
  if (!decomposition_fits(g, dims[1], dims[0])) {
    long best = -1;
    for (int px = 1; px <= nranks; px++) {
      const int py = nranks / px;
      if (nranks % px || (asked[1] && px != asked[1]) || (asked[0] && py != asked[0]) ||
          !decomposition_fits(g, px, py))
        continue;
      const long cost = (long)px * g->ny + (long)py * g->nx;
      if (best < 0 || cost < best) best = cost, dims[1] = px, dims[0] = py;
    }
  }
  g->py = dims[0];
  g->px = dims[1];
  /* named by the key to change, so that the message says where it is set
   * (mm_config_name_origin): ranks_x or ranks_y where the configuration
   * fixed the one that does not fit, else nx or ny */
  if (g->px > g->nx || g->py > g->ny) {
    const bool x = g->px > g->nx;                       /* else y */
    const bool fixed = x ? asked[1] > 0 : asked[0] > 0; /* by grid.ranks_x or _y */
    const char *key = x ? (fixed ? "ranks_x" : "nx") : (fixed ? "ranks_y" : "ny");
    const int value = x ? (fixed ? g->px : g->nx) : (fixed ? g->py : g->ny);
    return MM_ERROR(MM_ERR_INPUT,
                    "grid.%s = %d: decomposition %d x %d ranks does not fit the grid of %d x %d "
                    "columns (more ranks along %s than %s); %s",
                    key, value, g->px, g->py, g->nx, g->ny, x ? "x" : "y", x ? "columns" : "rows",
                    fixed ? "use fewer ranks along it" : "run on fewer ranks");
  }
  int periods[2] = {g->periodic_y, g->periodic_x};
  MM_MPI(MPI_Cart_create(comm, 2, dims, periods, 0, &g->cart));
  /* MPI errors on it come back as codes (MM_MPI), whatever comm had */
  MM_MPI(MPI_Comm_set_errhandler(g->cart, MPI_ERRORS_RETURN));
  MM_MPI(MPI_Comm_rank(g->cart, &g->rank));
  g->nranks = nranks;
  int coords[2];
  MM_MPI(MPI_Cart_coords(g->cart, g->rank, 2, coords));
  g->cy = coords[0];
  g->cx = coords[1];
  MM_MPI(MPI_Cart_shift(g->cart, 1, 1, &g->west, &g->east));
  MM_MPI(MPI_Cart_shift(g->cart, 0, 1, &g->south, &g->north));
  split(g->nx, g->px, g->cx, &g->i0, &g->nxl);
  split(g->ny, g->py, g->cy, &g->j0, &g->nyl);
  /* A halo strip must come from one neighbour: each block needs >= MM_HALO
   * columns in a direction where it has neighbours (or wraps onto itself). */
  int min_nx = g->nx / g->px, min_ny = g->ny / g->py;
  /* on one rank, a periodic direction wraps onto the block itself: fewer
   * ranks cannot help, only more cells or walls */
  MM_REQUIRE(min_nx >= MM_HALO || g->px > 1 || !g->periodic_x, MM_ERR_INPUT,
             "grid.nx = %d with grid.periodic_x = true: the halo of %d columns wraps around onto "
             "the block itself, which needs at least %d columns; use grid.nx >= %d or "
             "grid.periodic_x = false",
             g->nx, MM_HALO, MM_HALO, MM_HALO);
  MM_REQUIRE(min_ny >= MM_HALO || g->py > 1 || !g->periodic_y, MM_ERR_INPUT,
             "grid.ny = %d with grid.periodic_y = true: the halo of %d rows wraps around onto "
             "the block itself, which needs at least %d rows; use grid.ny >= %d or "
             "grid.periodic_y = false",
             g->ny, MM_HALO, MM_HALO, MM_HALO);
  /* what helps: another layout of these ranks where one fits, else fewer
   * ranks (7 ranks on 12 x 10 columns: 1 x 7 and 7 x 1 alike) */
  bool any_fits = false;
  for (int px = 1; px <= nranks && !any_fits; px++)
    any_fits = nranks % px == 0 && decomposition_fits(g, px, nranks / px);
  const char *axis = min_nx >= MM_HALO || (g->px == 1 && !g->periodic_x) ? "y" : "x";
  char remedy[160];
  if (any_fits)
    snprintf(remedy, sizeof remedy, "use fewer ranks in %s or set grid.ranks_%s", axis, axis);
  else
    snprintf(remedy, sizeof remedy,
             "no layout of %d ranks fits the grid of %d x %d columns: run on fewer ranks", nranks,
             g->nx, g->ny);
  MM_REQUIRE(min_nx >= MM_HALO || (g->px == 1 && !g->periodic_x), MM_ERR_INPUT,
             "grid.nx = %d over %d ranks in x gives blocks of %d columns; need at least %d (%s)",
             g->nx, g->px, min_nx, MM_HALO, remedy);
  MM_REQUIRE(min_ny >= MM_HALO || (g->py == 1 && !g->periodic_y), MM_ERR_INPUT,
             "grid.ny = %d over %d ranks in y gives blocks of %d rows; need at least %d (%s)",
             g->ny, g->py, min_ny, MM_HALO, remedy);

  MM_CHECK(mm_grid_check_memory(g, cfg));
  g->nxh = g->nxl + 2 * MM_HALO;
  g->nyh = g->nyl + 2 * MM_HALO;
  g->ncol_h = (size_t)g->nxh * (size_t)g->nyh;
  MM_ALLOC(g->kmt, g->ncol_h);
  MM_ALLOC(g->kmt_solve, g->ncol_h);
  for (int j = -MM_HALO; j < g->nyl + MM_HALO; j++)
    for (int i = -MM_HALO; i < g->nxl + MM_HALO; i++) {
      int kmt = mm_grid_kmt_global(cfg, g, g->i0 + i, g->j0 + j);
      size_t c = mm_col(g, i, j);
      g->kmt[c] = kmt < 0 ? 0 : kmt;
      bool inside = i >= 0 && i < g->nxl && j >= 0 && j < g->nyl;
      g->kmt_solve[c] = inside ? g->kmt[c] : 0;
    }
  return MM_OK;
}

void mm_grid_destroy(mm_grid *g) {
  free(g->h);
  free(g->z_w);
  free(g->z_t);
  free(g->dzw);
  free(g->vol);
  free(g->kmt);
  free(g->kmt_solve);
  if (g->cart != MPI_COMM_NULL) (void)MPI_Comm_free(&g->cart); /* unchecked: clean-up */
  memset(g, 0, sizeof *g);
  g->cart = MPI_COMM_NULL;
}

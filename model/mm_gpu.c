/* The orchestration of the GPU-resident time step (mm_gpu.h), written once
 * against the device table (mm_device.h): what is uploaded, which kernels
 * run in which order, which strips cross when, the graph boundaries, the
 * diagnostics' reduction and the copies for output, restart and crash files.
 *
 * One stream. Per step:
 *   begin: [frame strips D2H, event] [event, interior kernel, event]
 *          the host waits for the strips' event
 *   ...    the caller exchanges the halo with MPI
 *   end:   [halo strips H2D, frame kernel, mixing kernel, solve], with
 *          events between the phases: one graph launch (two graphs per
 *          halo path, one per parity of the step, as T and T* swap), or the
 *          operations one by one without graphs; then the host waits.
 *          Where the solver builds kappa_w from T*, S* itself
 *          (kappa_in_solve: mm_tdma_fused_mixing), there is no mixing kernel
 *          and kappa_w never goes to memory: the solve moves the 32 bytes
 *          per cell of T* and S* instead of the mixing kernel's 24 and the
 *          solve's 40. */
#include "mm_gpu.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_gpu_kernels.h"
#include "mm_settings.h"

_Static_assert(MM_GPU_TILE_K == MM_SETTING_TILE_LEVELS_MAX,
               "MINIMODEL_CUDA_TILE_LEVELS at most the levels a tile holds");

/* Events: before and after the interior kernel; before the halo copies in,
 * after them, after the frame kernel, after mixing, after the solve; the
 * frame strips are on the host. */
enum { EV_INTERIOR0, EV_INTERIOR1, EV_END0, EV_HALO1, EV_FRAME1, EV_MIXING1, EV_SOLVE1, EV_STRIPS };

/* One device array pair per tracer, swapped each step. */
struct mm_gpu {
  mm_gpu_setup s;
  const mm_device_backend *dev;
  void *ctx;
  size_t n;            /* ncol_h * nz */
  double *temp, *salt; /* T, S at the current step */
  double *temp_next, *salt_next;
  double *kappa_w, *ue, *vn, *g_dt, *inv_h, *vol;
  int *kmt, *kmt_solve;
  double *good_temp, *good_salt; /* the last good state (mm_gpu_keep_good) */
  mm_diag_part *parts;           /* [MM_GPU_DIAG_MAX_BLOCKS] per-block diagnostics */
  mm_diag_part *parts_host;      /* host copy */
  int registered;                /* host_temp, host_salt are registered: 0, 1 or 2 of them */
  void *graph[2][2];             /* [parity][stage] */
  int parity;                    /* steps done by this object, mod 2 */
  int kappa_in_solve;            /* the solve builds kappa_w (no mixing kernel) */
  long graph_launches;           /* graphs launched so far */
  long tile_launches;            /* tiled horizontal kernels queued so far */
  int tile_k, tile_x;            /* the levels and columns of their tiles */
  int tile_min_blocks;           /* the blocks per SM of their kernel (mm_gpu_tiles) */
  mm_cell_rects interior, frame, whole;
  mm_tdma_batch batch; /* the columns of the block, first to last */
  size_t first;        /* column of batch's first column */
};

/* Every device call: on failure, an MM_ERR_RUN with the device's message. */
#define DEV(call)                                                                                  \
  do {                                                                                             \
    if (call)                                                                                      \
      return MM_ERROR(MM_ERR_RUN, "GPU step (%s): %s", g->dev->name, g->dev->error(g->ctx));       \
  } while (0)

/* A device array of `bytes`, a copy of host (queued). */
static MM_NODISCARD mm_err upload(mm_gpu *g, void **dev, const void *host, size_t bytes) {
  DEV(g->dev->alloc(g->ctx, bytes ? bytes : 1, dev));
  if (bytes) DEV(g->dev->copy(g->ctx, *dev, host, bytes, MM_DEV_TO_DEVICE));
  return MM_OK;
}

/* Strips of T and S between device and host: out = 1 frame -> host. */
static MM_NODISCARD mm_err copy_strips(mm_gpu *g, int out) {
  const mm_gpu_setup *s = &g->s;
  const size_t pitch = s->pitch * sizeof(double);
  double *dev[2] = {g->temp, g->salt}, *host[2] = {s->host_temp, s->host_salt};
  for (int d = 0; d < 4; d++) {
    if (!s->neighbour[d]) continue;
    const size_t o = out ? s->send_off[d] : s->recv_off[d];
    for (int v = 0; v < 2; v++) {
      if (out)
        DEV(g->dev->copy_2d(g->ctx, host[v] + o, pitch, dev[v] + o, pitch,
                            s->width[d] * sizeof(double), s->height[d], MM_DEV_TO_HOST));
      else
        DEV(g->dev->copy_2d(g->ctx, dev[v] + o, pitch, host[v] + o, pitch,
                            s->width[d] * sizeof(double), s->height[d], MM_DEV_TO_DEVICE));
    }
  }
  return MM_OK;
}

/* The horizontal kernel of the rectangles r: the block interior in tiles
 * where asked for, else (and the frame) one thread per cell. */
static MM_NODISCARD mm_err horizontal(mm_gpu *g, const mm_cell_rects *r) {
  if (r->first[r->n] == 0) return MM_OK;
  mm_cell_hstep h = g->s.hstep;
  h.nz = g->s.nz;
  h.nxh = g->s.nxh;
  h.kmt = g->kmt;
  h.ue = g->ue;
  h.vn = g->vn;
  h.temp = g->temp;
  h.salt = g->salt;
  h.temp_next = g->temp_next;
  h.salt_next = g->salt_next;
  if (r == &g->interior && g->s.tiles && r->n == 1) {
    mm_gpu_tiles t;
    mm_gpu_tiles_of(&t, r->ib[0], r->ie[0], r->jb[0], r->je[0], g->s.nz, g->s.nxh, g->s.tile_levels,
                    g->s.tile_faces);
    if (g->s.tile_min_blocks) t.min_blocks = g->s.tile_min_blocks;
    DEV(g->dev->horizontal_tiles(g->ctx, &h, &t));
    g->tile_launches++;
    g->tile_k = t.tk, g->tile_x = t.tx, g->tile_min_blocks = t.min_blocks;
  } else {
    DEV(g->dev->horizontal(g->ctx, &h, r));
  }
  return MM_OK;
}

/* The fused solve of the block's columns: one batch from the first to the
 * last column; halo columns in between have depth 0. With kappa_w built
 * inside where kappa_in_solve (the mixing parameters of the setup), else
 * from kappa_w. Queued on the device's stream, or (queued = 0) at once. */
static MM_NODISCARD mm_err solve(mm_gpu *g, int queued) {
  const int nz = g->s.nz;
  const mm_tdma_geometry geo = {g->inv_h, g->g_dt};
  double *const rhs[2] = {g->temp_next + g->first * nz, g->salt_next + g->first * nz};
  const double *kappa = g->kappa_in_solve ? NULL : g->kappa_w + g->first * nz;
  const mm_cell_mix *x = &g->s.mix;
  const mm_tdma_mixing mix = {.alpha = x->alpha,
                              .beta = x->beta,
                              .kappa_v = x->kappa_v,
                              .kappa_mix = x->kappa_mix,
                              .convect = x->convect,
                              .top = x->q_top};
  const mm_tdma_mixing *with = g->kappa_in_solve ? &mix : NULL;
  if (queued) {
    DEV(g->dev->solve(g->ctx, g->s.solver, &g->batch, &geo, kappa, with, rhs, 2));
    return MM_OK;
  }
  const int rc = with ? mm_tdma_fused_mixing(g->s.solver, &g->batch, &geo, with, rhs)
                      : mm_tdma_fused(g->s.solver, &g->batch, &geo, kappa, rhs, 2);
  if (rc) {
    /* a device error's reason, where the device has one (error()) */
    const char *why = rc == MM_TDMA_EDEVICE ? g->dev->error(g->ctx) : "";
    return MM_ERROR(MM_ERR_RUN, "tridiagonal solve (%s) on the %s device failed: %s%s%s",
                    mm_tdma_backend_of(g->s.solver)->name, g->dev->name, mm_tdma_strerror(rc),
                    why && *why ? ": " : "", why ? why : "");
  }
  return MM_OK;
}

/* The second half of the step, queued on the stream (or captured). */
static MM_NODISCARD mm_err queue_end(mm_gpu *g, int stage) {
  DEV(g->dev->record(g->ctx, EV_END0));
  if (stage) MM_CHECK(copy_strips(g, 0));
  DEV(g->dev->record(g->ctx, EV_HALO1));
  MM_CHECK(horizontal(g, &g->frame));
  DEV(g->dev->record(g->ctx, EV_FRAME1));
  mm_cell_mix x = g->s.mix;
  x.nz = g->s.nz;
  x.kmt = g->kmt;
  x.temp_next = g->temp_next;
  x.salt_next = g->salt_next;
  x.kappa_w = g->kappa_w;
  if (!g->kappa_in_solve && g->whole.first[g->whole.n] > 0)
    DEV(g->dev->mixing(g->ctx, &x, &g->whole, g->s.nxh));
  DEV(g->dev->record(g->ctx, EV_MIXING1));
  MM_CHECK(solve(g, 1));
  DEV(g->dev->record(g->ctx, EV_SOLVE1));
  return MM_OK;
}

mm_err mm_gpu_create(const mm_gpu_setup *s, mm_gpu **out) {
  *out = NULL;
  mm_gpu *g = calloc(1, sizeof *g);
  if (!g) {
    return MM_ERROR(MM_ERR_RUN, "GPU step: out of host memory");
  }
  *out = g; /* the caller destroys what was built on error */
  g->s = *s;
  g->dev = s->device;
  g->ctx = s->ctx;
  /* the solver's solve that builds kappa_w: queued on the device's stream
   * where the device has memory of its own, run by the host's queue else */
  const mm_tdma_backend *be = mm_tdma_backend_of(s->solver);
  g->kappa_in_solve = s->kappa_in_solve && (g->dev->device_memory ? be->fused_mixing_async != NULL
                                                                  : be->fused_mixing != NULL);
  const int nz = s->nz;
  g->n = s->ncol_h * (size_t)nz;
  const size_t bytes = g->n * sizeof(double), nb = s->ncol_h * sizeof(int);
  const size_t lb = (size_t)nz * sizeof(double);
  /* kappa_w (only where the solve does not build it), the last good state
   * and the diagnostics' parts start as 0 */
  void *zero = calloc(1, bytes > sizeof(mm_diag_part) * MM_GPU_DIAG_MAX_BLOCKS
                             ? bytes
                             : sizeof(mm_diag_part) * MM_GPU_DIAG_MAX_BLOCKS);
  if (!zero) return MM_ERROR(MM_ERR_RUN, "GPU step: out of host memory");
  const bool failed =
      upload(g, (void **)&g->temp, s->host_temp, bytes) ||
      upload(g, (void **)&g->salt, s->host_salt, bytes) ||
      upload(g, (void **)&g->temp_next, s->host_temp, bytes) ||
      upload(g, (void **)&g->salt_next, s->host_salt, bytes) ||
      (!g->kappa_in_solve && upload(g, (void **)&g->kappa_w, zero, bytes)) ||
      upload(g, (void **)&g->ue, s->ue, bytes) || upload(g, (void **)&g->vn, s->vn, bytes) ||
      upload(g, (void **)&g->g_dt, s->g_dt, lb) || upload(g, (void **)&g->inv_h, s->inv_h, lb) ||
      upload(g, (void **)&g->vol, s->vol, lb) || upload(g, (void **)&g->kmt, s->kmt, nb) ||
      upload(g, (void **)&g->kmt_solve, s->kmt_solve, nb) ||
      upload(g, (void **)&g->good_temp, zero, bytes) ||
      upload(g, (void **)&g->good_salt, zero, bytes) ||
      upload(g, (void **)&g->parts, zero, MM_GPU_DIAG_MAX_BLOCKS * sizeof(mm_diag_part));
  /* the copies of `zero` are done before it is freed */
  const int synced = g->dev->synchronize(g->ctx);
  free(zero);
  if (failed) return mm_error_trace(MM_ERR_RUN, __FILE__, __LINE__);
  DEV(synced);
  DEV(g->dev->alloc_host(g->ctx, MM_GPU_DIAG_MAX_BLOCKS * sizeof(mm_diag_part),
                         (void **)&g->parts_host));
  DEV(g->dev->register_host(g->ctx, s->host_temp, bytes));
  g->registered = 1;
  DEV(g->dev->register_host(g->ctx, s->host_salt, bytes));
  g->registered = 2;
  mm_cell_rects_block(&g->interior, nz, s->nxl, s->nyl, MM_CELL_INTERIOR);
  mm_cell_rects_block(&g->frame, nz, s->nxl, s->nyl, MM_CELL_FRAME);
  mm_cell_rects_block(&g->whole, nz, s->nxl, s->nyl, MM_CELL_WHOLE);
  g->first = (size_t)MM_CELL_HALO * s->nxh + MM_CELL_HALO;
  const size_t last = (size_t)(s->nyl - 1 + MM_CELL_HALO) * s->nxh + (s->nxl - 1) + MM_CELL_HALO;
  g->batch = (mm_tdma_batch){last - g->first + 1, nz, g->kmt_solve + g->first};
  /* one synchronous solve of the work arrays, the same variant as the
   * step's: checks the depths once, sizes the solver's workspace and loads
   * its kernel before any capture (its result, in T* and S*, is replaced
   * by the horizontal kernels of the first step) */
  DEV(g->dev->synchronize(g->ctx));
  MM_CHECK(solve(g, 0));
  DEV(g->dev->synchronize(g->ctx));
  return MM_OK;
}

void mm_gpu_destroy(mm_gpu *g) {
  if (!g) return;
  const mm_device_backend *dev = g->dev;
  (void)dev->synchronize(g->ctx);
  for (int p = 0; p < 2; p++)
    for (int st = 0; st < 2; st++)
      if (g->graph[p][st]) dev->graph_destroy(g->ctx, g->graph[p][st]);
  if (g->registered >= 1) dev->unregister_host(g->ctx, g->s.host_temp);
  if (g->registered >= 2) dev->unregister_host(g->ctx, g->s.host_salt);
  void *mem[] = {g->temp, g->salt,      g->temp_next, g->salt_next, g->kappa_w,
                 g->ue,   g->vn,        g->g_dt,      g->inv_h,     g->vol,
                 g->kmt,  g->kmt_solve, g->good_temp, g->good_salt, g->parts};
  for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
    if (mem[i]) dev->free(g->ctx, mem[i]);
  if (g->parts_host) dev->free_host(g->ctx, g->parts_host);
  free(g);
}

mm_err mm_gpu_upload(mm_gpu *g) {
  const size_t bytes = g->n * sizeof(double);
  DEV(g->dev->copy(g->ctx, g->temp, g->s.host_temp, bytes, MM_DEV_TO_DEVICE));
  DEV(g->dev->copy(g->ctx, g->salt, g->s.host_salt, bytes, MM_DEV_TO_DEVICE));
  DEV(g->dev->synchronize(g->ctx));
  return MM_OK;
}

mm_err mm_gpu_download(mm_gpu *g) {
  const size_t bytes = g->n * sizeof(double);
  DEV(g->dev->copy(g->ctx, g->s.host_temp, g->temp, bytes, MM_DEV_TO_HOST));
  DEV(g->dev->copy(g->ctx, g->s.host_salt, g->salt, bytes, MM_DEV_TO_HOST));
  DEV(g->dev->synchronize(g->ctx));
  return MM_OK;
}

void mm_gpu_fields(mm_gpu *g, double **temp, double **salt) {
  *temp = g->temp;
  *salt = g->salt;
}

long mm_gpu_graph_launches(const mm_gpu *g) {
  return g->graph_launches;
}

int mm_gpu_horizontal_tiles(const mm_gpu *g, int *levels, int *columns, int *faces,
                            int *min_blocks) {
  if (levels) *levels = g->tile_launches > 0 ? g->tile_k : 0;
  if (columns) *columns = g->tile_launches > 0 ? g->tile_x : 0;
  if (faces) *faces = g->tile_launches > 0 ? g->s.tile_faces : 0;
  if (min_blocks) *min_blocks = g->tile_launches > 0 ? g->tile_min_blocks : 0;
  return g->tile_launches > 0;
}

int mm_gpu_kappa_in_solve(const mm_gpu *g) {
  return g->kappa_in_solve;
}

mm_err mm_gpu_step_begin(mm_gpu *g, int stage) {
  if (stage) {
    MM_CHECK(copy_strips(g, 1));
    DEV(g->dev->record(g->ctx, EV_STRIPS));
  }
  DEV(g->dev->record(g->ctx, EV_INTERIOR0));
  MM_CHECK(horizontal(g, &g->interior));
  DEV(g->dev->record(g->ctx, EV_INTERIOR1));
  /* the strips are on the host for MPI; with MPI on device memory the step
   * before is complete (mm_gpu_step_end waits) and the interior kernel
   * writes only T*, S* */
  if (stage) DEV(g->dev->wait(g->ctx, EV_STRIPS));
  return MM_OK;
}

mm_err mm_gpu_step_end(mm_gpu *g, int stage, mm_gpu_times *t) {
  const int p = g->parity, st = stage ? 1 : 0;
  if (g->s.use_graph) {
    if (!g->graph[p][st]) { /* capture this parity's second half once */
      DEV(g->dev->capture_begin(g->ctx));
      const mm_err failed = queue_end(g, stage);
      void *graph = NULL;
      const int ended = g->dev->capture_end(g->ctx, &graph);
      if ((failed != MM_OK || ended) && graph) g->dev->graph_destroy(g->ctx, graph);
      MM_CHECK(failed);
      DEV(ended);
      g->graph[p][st] = graph;
    }
    DEV(g->dev->launch(g->ctx, g->graph[p][st]));
    g->graph_launches++;
  } else {
    MM_CHECK(queue_end(g, stage));
  }
  DEV(g->dev->synchronize(g->ctx));
  if (t) {
    const mm_device_backend *d = g->dev;
    t->horizontal =
        d->elapsed(g->ctx, EV_INTERIOR0, EV_INTERIOR1) + d->elapsed(g->ctx, EV_HALO1, EV_FRAME1);
    t->halo = d->elapsed(g->ctx, EV_END0, EV_HALO1);
    t->mixing = d->elapsed(g->ctx, EV_FRAME1, EV_MIXING1);
    t->solve = d->elapsed(g->ctx, EV_MIXING1, EV_SOLVE1);
  }
  /* T*, S* become the current state */
  double *tt = g->temp, *ss = g->salt;
  g->temp = g->temp_next;
  g->salt = g->salt_next;
  g->temp_next = tt;
  g->salt_next = ss;
  g->parity ^= 1;
  return MM_OK;
}

mm_err mm_gpu_diagnostics(mm_gpu *g, mm_diag_part *part) {
  long blocks = (g->whole.first[g->whole.n] + MM_GPU_DIAG_THREADS - 1) / MM_GPU_DIAG_THREADS;
  if (blocks > MM_GPU_DIAG_MAX_BLOCKS) blocks = MM_GPU_DIAG_MAX_BLOCKS;
  if (blocks < 1) blocks = 1;
  const mm_dev_diag d = {g->whole, g->s.nz, g->s.nxh, g->kmt, g->temp,
                         g->salt,  g->vol,  g->parts, blocks};
  DEV(g->dev->diagnostics(g->ctx, &d));
  DEV(g->dev->copy(g->ctx, g->parts_host, g->parts, (size_t)blocks * sizeof(mm_diag_part),
                   MM_DEV_TO_HOST));
  DEV(g->dev->synchronize(g->ctx));
  mm_diag_part_init(part);
  for (long b = 0; b < blocks; b++)
    mm_diag_part_merge(part, &g->parts_host[b]);
  return MM_OK;
}

mm_err mm_gpu_keep_good(mm_gpu *g) {
  const size_t bytes = g->n * sizeof(double);
  DEV(g->dev->copy(g->ctx, g->good_temp, g->temp, bytes, MM_DEV_ON_DEVICE));
  DEV(g->dev->copy(g->ctx, g->good_salt, g->salt, bytes, MM_DEV_ON_DEVICE));
  /* done before the next step: with MPI on device memory, the next step's
   * halo exchange writes the halo of T and S outside the stream's order */
  DEV(g->dev->synchronize(g->ctx));
  return MM_OK;
}

mm_err mm_gpu_fetch_good(mm_gpu *g, double *temp, double *salt) {
  const size_t bytes = g->n * sizeof(double);
  DEV(g->dev->copy(g->ctx, temp, g->good_temp, bytes, MM_DEV_TO_HOST));
  DEV(g->dev->copy(g->ctx, salt, g->good_salt, bytes, MM_DEV_TO_HOST));
  DEV(g->dev->synchronize(g->ctx));
  return MM_OK;
}

/* The emulated device (solver.backend = emulated): the device table of
 * mm_device.h on the host, so that the whole GPU step, orchestration
 * included, runs in every build and every test suite. It is slow by design.
 *
 * What it emulates, and how it checks:
 *   - Memory. Device memory is host memory, allocated apart from the
 *     model's; a fresh allocation is filled with 0xff bytes (NaN for
 *     doubles, -1 for ints), as device memory starts with garbage. Every
 *     copy and every kernel operand is checked against the allocations: a
 *     "device" pointer that is not inside one, or a "host" pointer that is,
 *     is an error (on a GPU it would read or fault elsewhere).
 *   - Kernels. Each kernel runs its per-thread function (mm_gpu_kernels.h)
 *     over its whole index space, rounded up to whole blocks as on the GPU,
 *     one thread after another: in increasing thread order, or decreasing
 *     with MINIMODEL_EMULATED_THREADS=reverse (a kernel whose result depends
 *     on the order has a race). The diagnostics kernel's blocks reduce in
 *     the kernel's tree order.
 *   - The stream. Operations are queued and run only where the host waits
 *     (wait on an event, synchronize), in order, so that a host read before
 *     the wait it needs sees stale data, as on a GPU. An operation that
 *     fails while running (the solve) reports at that wait.
 *   - Graphs. Captured operations are recorded, with their arguments, and
 *     queued again at each launch; nothing runs at capture.
 *   - Events. A record takes the host clock when it runs.
 *   - The solve is the fused solve of the model's host solver (solver.tdma),
 *     run where the queue reaches it. (The `cuda` solver's warp kernel has
 *     its own host emulation, gpu_tdma_cuda_emu.)
 *   - MPI. Halo strips go through the host, as with an MPI that cannot take
 *     device memory; MINIMODEL_CUDA_AWARE_MPI=1 hands the device arrays to
 *     MPI instead, as with a CUDA-aware MPI.
 *   - Device errors. MINIMODEL_FAULT_DEVICE_OP=N fails the N-th call of a
 *     fallible operation (injected), so that every error path of the
 *     orchestration is tested (reliability.device_faults). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mm_device.h"
#include "mm_gpu_kernels.h"

typedef enum {
  OP_COPY,
  OP_COPY_2D,
  OP_HORIZONTAL,
  OP_HORIZONTAL_TILES,
  OP_MIXING,
  OP_DIAG,
  OP_SOLVE,
  OP_RECORD
} op_kind;

/* One queued operation, its arguments by value (as a kernel's are). */
typedef struct {
  op_kind kind;
  union {
    struct {
      void *dst;
      const void *src;
      size_t dpitch, spitch, width, height; /* a plain copy: one row of width bytes */
    } copy;
    struct {
      mm_cell_hstep h;
      mm_cell_rects r;
    } horizontal;
    struct {
      mm_cell_hstep h;
      mm_gpu_tiles t;
    } tiles;
    struct {
      mm_cell_mix x;
      mm_cell_rects r;
      long nxh;
    } mixing;
    mm_dev_diag diag;
    struct {
      mm_tdma *solver;
      mm_tdma_batch bt;
      mm_tdma_geometry geo;
      const double *kappa;
      mm_tdma_mixing mix; /* with_mix: kappa from the right-hand sides */
      int with_mix;
      double *rhs[MM_TDMA_MAX_RHS];
      int nrhs;
    } solve;
    int event;
  } u;
} op;

typedef struct {
  op *v;
  size_t n, cap;
} op_list;

typedef struct {
  char *p;
  size_t bytes;
} allocation;

typedef struct {
  op_list queue; /* queued, not yet run; queue.v[head..n) */
  size_t head;
  op_list *capture; /* the graph being captured, or NULL */
  allocation *mem;  /* device allocations */
  size_t nmem, capmem;
  double event_time[MM_DEV_EVENTS]; /* host clock when the record ran (s) */
  int reverse;                      /* run threads in decreasing order */
  int pending_error;                /* an operation failed while running */
  long fault_op;                    /* MINIMODEL_FAULT_DEVICE_OP on this rank: that call fails */
  long calls;                       /* calls of the table's fallible operations so far */
  char err[512];
  mm_gpu_tile_smem tile_smem;                   /* a block's shared memory (horizontal_tiles) */
  mm_gpu_tile_carry tile_carry[MM_GPU_THREADS]; /* its threads' registers carried between phases */
} emu;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(emu *e, const char *what) {
  snprintf(e->err, sizeof e->err, "emulated device: %s", what);
  return 1;
}

/* Fault injection (MINIMODEL_FAULT_DEVICE_OP=N, mm_settings.h): the N-th
 * call of a fallible operation of the table fails, as a device error would,
 * so that the tests reach every error path of the GPU step's orchestration
 * (inside a graph's capture included). A call that queues work fails as a
 * refused launch: nothing is queued. A wait or synchronize fails as queued
 * work that hit an error (a fault in a kernel): the work queued before it
 * is dropped, never run, as on a GPU whose context the error ended. */
static int injected(emu *e, const char *what) {
  if (!e->fault_op || ++e->calls != e->fault_op) return 0;
  char m[128];
  snprintf(m, sizeof m, "%s failed (call %ld) [injected fault]", what, e->calls);
  return fail(e, m);
}

/* Whether [p, p + bytes) lies inside one device allocation (1), outside all
 * of them (0), or straddles one (-1). */
static int where(const emu *e, const void *p, size_t bytes) {
  const uintptr_t a = (uintptr_t)p, b = a + (bytes ? bytes : 1);
  for (size_t i = 0; i < e->nmem; i++) {
    const uintptr_t lo = (uintptr_t)e->mem[i].p, hi = lo + e->mem[i].bytes;
    if (a >= lo && b <= hi) return 1;
    if (a < hi && b > lo) return -1;
  }
  return 0;
}

static int need_device(emu *e, const void *p, size_t bytes, const char *what) {
  if (p && where(e, p, bytes) == 1) return 0;
  char m[256];
  snprintf(m, sizeof m, "%s (%p, %zu bytes) is not inside device memory", what, p, bytes);
  return fail(e, m);
}

static int need_host(emu *e, const void *p, size_t bytes, const char *what) {
  if (p && where(e, p, bytes) == 0) return 0;
  char m[256];
  snprintf(m, sizeof m, "%s (%p, %zu bytes) is not host memory", what, p, bytes);
  return fail(e, m);
}

static int push(emu *e, const op *o) {
  op_list *l = e->capture ? e->capture : &e->queue;
  if (!e->capture && e->head == l->n) l->n = e->head = 0; /* all run: reuse the space */
  if (l->n == l->cap) {
    const size_t cap = l->cap ? 2 * l->cap : 64;
    op *v = realloc(l->v, cap * sizeof *v);
    if (!v) return fail(e, "out of host memory for the queue");
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = *o;
  return 0;
}

/* A kernel's launched threads: n rounded up to whole blocks. */
static long launched(long n, long block) {
  return (n + block - 1) / block * block;
}

/* The thread that runs i-th of n. */
static long nth(const emu *e, long i, long n) {
  return e->reverse ? n - 1 - i : i;
}

static void run_diag(const emu *e, const mm_dev_diag *d) {
  const long T = MM_GPU_DIAG_THREADS;
  mm_diag_part part[MM_GPU_DIAG_THREADS];
  for (long b = 0; b < d->blocks; b++) {
    for (long i = 0; i < T; i++) {
      const long t = nth(e, i, T);
      mm_gpu_diag_thread(&d->r, d->nz, d->nxh, d->kmt, d->temp, d->salt, d->vol, b * T + t,
                         d->blocks * T, &part[t]);
    }
    for (int s = MM_GPU_DIAG_THREADS / 2; s > 0; s /= 2) /* a barrier between levels */
      for (long i = 0; i < T; i++)
        mm_gpu_diag_tree_thread(part, s, (int)nth(e, i, T));
    d->parts[b] = part[0];
  }
}

/* The tiled horizontal kernel as a GPU runs it (mm_gpu_kernels.h): block
 * after block, each thread's part of a phase, a barrier between phases.
 * Shared memory and the threads' carried registers start as NaN in every
 * block, so that a value the kernel uses without having made it shows in
 * the result. MINIMODEL_EMULATED_THREADS=reverse runs the blocks, and the
 * threads of each, last first. */
static void run_tiles(emu *e, const mm_cell_hstep *h, const mm_gpu_tiles *t) {
  const long T = MM_GPU_THREADS, blocks = mm_gpu_tiles_blocks(t);
  mm_gpu_tile_smem *s = &e->tile_smem;
  for (long bi = 0; bi < blocks; bi++) {
    const long b = nth(e, bi, blocks); /* reversed too: a block must not write another's cells */
    memset(s, 0xff, sizeof *s);
    memset(e->tile_carry, 0xff, sizeof e->tile_carry);
    const int phases = mm_gpu_tile_phases(t, b);
    for (int ph = 0; ph < phases; ph++) /* a barrier after each */
      for (long i = 0; i < T; i++) {
        const int tid = (int)nth(e, i, T);
        mm_gpu_tile_phase(h, t, b, tid, ph, s, &e->tile_carry[tid]);
      }
  }
}

static void run_op(emu *e, const op *o) {
  switch (o->kind) {
  case OP_COPY:
  case OP_COPY_2D:
    for (size_t r = 0; r < o->u.copy.height; r++)
      memcpy((char *)o->u.copy.dst + r * o->u.copy.dpitch,
             (const char *)o->u.copy.src + r * o->u.copy.spitch, o->u.copy.width);
    break;
  case OP_HORIZONTAL: {
    const mm_cell_rects *r = &o->u.horizontal.r;
    const long n = launched(r->first[r->n], MM_GPU_THREADS);
    for (long i = 0; i < n; i++)
      mm_gpu_horizontal_thread(&o->u.horizontal.h, r, nth(e, i, n));
    break;
  }
  case OP_MIXING: {
    const mm_cell_rects *r = &o->u.mixing.r;
    const long n = launched(r->first[r->n], MM_GPU_THREADS);
    for (long i = 0; i < n; i++)
      mm_gpu_mixing_thread(&o->u.mixing.x, r, o->u.mixing.nxh, nth(e, i, n));
    break;
  }
  case OP_HORIZONTAL_TILES: run_tiles(e, &o->u.tiles.h, &o->u.tiles.t); break;
  case OP_DIAG: run_diag(e, &o->u.diag); break;
  case OP_SOLVE: {
    const int rc = o->u.solve.with_mix
                       ? mm_tdma_fused_mixing(o->u.solve.solver, &o->u.solve.bt, &o->u.solve.geo,
                                              &o->u.solve.mix, o->u.solve.rhs)
                       : mm_tdma_fused(o->u.solve.solver, &o->u.solve.bt, &o->u.solve.geo,
                                       o->u.solve.kappa, o->u.solve.rhs, o->u.solve.nrhs);
    if (rc && !e->pending_error) {
      char m[256];
      snprintf(m, sizeof m, "tridiagonal solve (%s) failed: %s",
               mm_tdma_backend_of(o->u.solve.solver)->name, mm_tdma_strerror(rc));
      fail(e, m);
      e->pending_error = 1;
    }
    break;
  }
  case OP_RECORD: e->event_time[o->u.event] = now(); break;
  }
}

/* Run the queue up to and including op `until` (an index into it). */
static int run_until(emu *e, size_t until) {
  while (e->head < e->queue.n && e->head <= until)
    run_op(e, &e->queue.v[e->head++]);
  if (e->pending_error) {
    e->pending_error = 0;
    return 1;
  }
  return 0;
}

/* ---- the table's operations ---- */

static int emu_available(int local_rank, char *why, size_t why_size) {
  (void)local_rank, (void)why, (void)why_size;
  return 1;
}

/* Host memory is the MPI library's own, but the emulated device stands for
 * one whose memory is not: through the host unless asked (MINIMODEL_CUDA_AWARE_MPI=1),
 * so that both halo paths run in CI. */
static int emu_mpi_takes_device_memory(int asked) {
  return asked == MM_ASK_ON;
}

static int emu_create(const mm_settings *env, int local_rank, void **ctx, char *msg, size_t len) {
  emu *e = calloc(1, sizeof *e);
  if (!e) {
    snprintf(msg, len, "emulated device: out of host memory");
    return 1;
  }
  const char *order = env->emulated_threads;
  if (order[0] && strcmp(order, "forward") && strcmp(order, "reverse")) {
    snprintf(msg, len, "MINIMODEL_EMULATED_THREADS = %s: expected forward or reverse", order);
    free(e);
    return 1;
  }
  e->reverse = !strcmp(order, "reverse");
  if (mm_fault_here(env, local_rank)) e->fault_op = env->fault.device_op;
  *ctx = e;
  return 0;
}

static void emu_destroy(void *ctx) {
  emu *e = ctx;
  if (!e) return;
  for (size_t i = 0; i < e->nmem; i++)
    free(e->mem[i].p);
  free(e->mem);
  free(e->queue.v);
  if (e->capture) free(e->capture->v);
  free(e->capture);
  free(e);
}

static const char *emu_error(void *ctx) {
  return ((emu *)ctx)->err;
}

static void emu_describe(void *ctx, char *out, size_t len) {
  const emu *e = ctx;
  snprintf(out, len, "emulated device (host, threads %s)", e->reverse ? "reversed" : "in order");
}

static int emu_alloc(void *ctx, size_t bytes, void **p) {
  emu *e = ctx;
  *p = NULL;
  if (injected(e, "alloc")) return 1;
  if (e->nmem == e->capmem) {
    const size_t cap = e->capmem ? 2 * e->capmem : 32;
    allocation *m = realloc(e->mem, cap * sizeof *m);
    if (!m) return fail(e, "out of host memory");
    e->mem = m;
    e->capmem = cap;
  }
  char *q = malloc(bytes ? bytes : 1);
  if (!q) return fail(e, "out of memory allocating device memory");
  memset(q, 0xff, bytes);
  e->mem[e->nmem++] = (allocation){q, bytes};
  *p = q;
  return 0;
}

static void emu_free(void *ctx, void *p) {
  emu *e = ctx;
  for (size_t i = 0; i < e->nmem; i++)
    if (e->mem[i].p == p) {
      free(p);
      e->mem[i] = e->mem[--e->nmem];
      return;
    }
}

static int emu_alloc_host(void *ctx, size_t bytes, void **p) {
  *p = NULL;
  if (injected(ctx, "alloc_host")) return 1;
  *p = malloc(bytes ? bytes : 1);
  return *p ? 0 : fail(ctx, "out of host memory");
}

static void emu_free_host(void *ctx, void *p) {
  (void)ctx;
  free(p);
}

static int emu_register_host(void *ctx, void *p, size_t bytes) {
  if (injected(ctx, "register_host")) return 1;
  return need_host(ctx, p, bytes, "registered host memory");
}

static void emu_unregister_host(void *ctx, void *p) {
  (void)ctx, (void)p;
}

/* Check both sides of a copy that spans `span` bytes on each side. */
static int check_copy(emu *e, void *dst, const void *src, size_t span, mm_dev_dir dir) {
  const int dst_dev = dir != MM_DEV_TO_HOST, src_dev = dir != MM_DEV_TO_DEVICE;
  if (dst_dev ? need_device(e, dst, span, "copy destination")
              : need_host(e, dst, span, "copy destination"))
    return 1;
  return src_dev ? need_device(e, src, span, "copy source")
                 : need_host(e, src, span, "copy source");
}

static int emu_copy(void *ctx, void *dst, const void *src, size_t bytes, mm_dev_dir dir) {
  emu *e = ctx;
  if (injected(e, "copy") || check_copy(e, dst, src, bytes, dir)) return 1;
  op o = {.kind = OP_COPY};
  o.u.copy.dst = dst, o.u.copy.src = src, o.u.copy.width = bytes, o.u.copy.height = 1;
  return push(e, &o);
}

static int emu_copy_2d(void *ctx, void *dst, size_t dpitch, const void *src, size_t spitch,
                       size_t width, size_t height, mm_dev_dir dir) {
  emu *e = ctx;
  if (injected(e, "copy_2d")) return 1;
  if (width > dpitch || width > spitch) return fail(e, "2-D copy wider than its pitch");
  if (height == 0 || width == 0) return fail(e, "2-D copy of nothing (0 rows or 0 bytes wide)");
  const size_t dspan = (height - 1) * dpitch + width, sspan = (height - 1) * spitch + width;
  if (check_copy(e, dst, src, dspan > sspan ? dspan : sspan, dir)) return 1;
  op o = {.kind = OP_COPY_2D};
  o.u.copy.dst = dst, o.u.copy.src = src, o.u.copy.dpitch = dpitch, o.u.copy.spitch = spitch;
  o.u.copy.width = width, o.u.copy.height = height;
  return push(e, &o);
}

static int emu_horizontal(void *ctx, const mm_cell_hstep *h, const mm_cell_rects *r) {
  emu *e = ctx;
  if (injected(e, "horizontal kernel")) return 1;
  const void *arrays[] = {h->kmt, h->ue, h->vn, h->temp, h->salt, h->temp_next, h->salt_next};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
    if (need_device(e, arrays[i], 1, "an operand of the horizontal kernel")) return 1;
  op o = {.kind = OP_HORIZONTAL};
  o.u.horizontal.h = *h, o.u.horizontal.r = *r;
  return push(e, &o);
}

static int emu_horizontal_tiles(void *ctx, const mm_cell_hstep *h, const mm_gpu_tiles *t) {
  emu *e = ctx;
  if (injected(e, "horizontal tiles kernel")) return 1;
  const void *arrays[] = {h->kmt, h->ue, h->vn, h->temp, h->salt, h->temp_next, h->salt_next};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
    if (need_device(e, arrays[i], 1, "an operand of the horizontal tiles kernel")) return 1;
  op o = {.kind = OP_HORIZONTAL_TILES};
  o.u.tiles.h = *h, o.u.tiles.t = *t;
  return push(e, &o);
}

static int emu_mixing(void *ctx, const mm_cell_mix *x, const mm_cell_rects *r, long nxh) {
  emu *e = ctx;
  if (injected(e, "mixing kernel")) return 1;
  const void *arrays[] = {x->kmt, x->temp_next, x->salt_next, x->kappa_w};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
    if (need_device(e, arrays[i], 1, "an operand of the mixing kernel")) return 1;
  op o = {.kind = OP_MIXING};
  o.u.mixing.x = *x, o.u.mixing.r = *r, o.u.mixing.nxh = nxh;
  return push(e, &o);
}

static int emu_diagnostics(void *ctx, const mm_dev_diag *d) {
  emu *e = ctx;
  if (injected(e, "diagnostics kernel")) return 1;
  const void *arrays[] = {d->kmt, d->temp, d->salt, d->vol};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
    if (need_device(e, arrays[i], 1, "an operand of the diagnostics kernel")) return 1;
  if (d->blocks < 1 || d->blocks > MM_GPU_DIAG_MAX_BLOCKS)
    return fail(e, "diagnostics kernel: number of blocks out of range");
  if (need_device(e, d->parts, (size_t)d->blocks * sizeof *d->parts, "diagnostics parts")) return 1;
  op o = {.kind = OP_DIAG};
  o.u.diag = *d;
  return push(e, &o);
}

static int emu_solve(void *ctx, mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                     const double *kappa, const mm_tdma_mixing *mix, double *const *rhs, int nrhs) {
  emu *e = ctx;
  if (injected(e, "solve")) return 1;
  if (nrhs < 1 || nrhs > MM_TDMA_MAX_RHS) return fail(e, "solve: bad number of right-hand sides");
  if (mix && (nrhs != 2 || kappa || !mm_tdma_backend_of(s)->fused_mixing))
    return fail(e, "solve: kappa from the right-hand sides needs two of them, no kappa and a "
                   "solver that builds it");
  const size_t n = bt->ncol * (size_t)bt->nz * sizeof(double);
  if (need_device(e, bt->depth, bt->ncol * sizeof(int), "solve: depths") ||
      (!mix && need_device(e, kappa, n, "solve: kappa")) ||
      need_device(e, geo->inv_h, (size_t)bt->nz * sizeof(double), "solve: inv_h") ||
      need_device(e, geo->g, (size_t)bt->nz * sizeof(double), "solve: g"))
    return 1;
  op o = {.kind = OP_SOLVE};
  for (int q = 0; q < nrhs; q++) {
    if (need_device(e, rhs[q], n, "solve: right-hand side")) return 1;
    o.u.solve.rhs[q] = rhs[q];
  }
  o.u.solve.solver = s, o.u.solve.bt = *bt, o.u.solve.geo = *geo, o.u.solve.kappa = kappa;
  if (mix) o.u.solve.mix = *mix, o.u.solve.with_mix = 1;
  o.u.solve.nrhs = nrhs;
  return push(e, &o);
}

static int emu_record(void *ctx, int ev) {
  emu *e = ctx;
  if (injected(e, "record")) return 1;
  if (ev < 0 || ev >= MM_DEV_EVENTS) return fail(e, "no such event");
  op o = {.kind = OP_RECORD};
  o.u.event = ev;
  return push(e, &o);
}

static int emu_wait(void *ctx, int ev) {
  emu *e = ctx;
  if (injected(e, "wait")) {
    e->head = e->queue.n; /* the queued work is lost */
    return 1;
  }
  if (e->capture) return fail(e, "waiting on an event while capturing a graph");
  /* the last record of ev still queued, if any */
  size_t until = e->head;
  int found = 0;
  for (size_t i = e->head; i < e->queue.n; i++)
    if (e->queue.v[i].kind == OP_RECORD && e->queue.v[i].u.event == ev) until = i, found = 1;
  return found ? run_until(e, until) : 0;
}

static double emu_elapsed(void *ctx, int a, int b) {
  const emu *e = ctx;
  return e->event_time[b] - e->event_time[a];
}

static void emu_graph_destroy(void *ctx, void *graph);

static int emu_capture_begin(void *ctx) {
  emu *e = ctx;
  if (injected(e, "capture_begin")) return 1;
  if (e->capture) return fail(e, "a graph is already being captured");
  e->capture = calloc(1, sizeof *e->capture);
  return e->capture ? 0 : fail(e, "out of host memory");
}

static int emu_capture_end(void *ctx, void **graph) {
  emu *e = ctx;
  *graph = e->capture;
  e->capture = NULL;
  if (*graph && injected(e, "capture_end")) { /* the capture ends, with no graph */
    emu_graph_destroy(e, *graph);
    *graph = NULL;
    return 1;
  }
  return *graph ? 0 : fail(e, "no graph is being captured");
}

static int emu_launch(void *ctx, void *graph) {
  emu *e = ctx;
  const op_list *g = graph;
  if (injected(e, "launch")) return 1;
  if (e->capture) return fail(e, "launching a graph while capturing one");
  for (size_t i = 0; i < g->n; i++)
    if (push(e, &g->v[i])) return 1;
  return 0;
}

static void emu_graph_destroy(void *ctx, void *graph) {
  (void)ctx;
  op_list *g = graph;
  if (g) free(g->v);
  free(g);
}

static int emu_synchronize(void *ctx) {
  emu *e = ctx;
  if (injected(e, "synchronize")) {
    e->head = e->queue.n; /* the queued work is lost */
    return 1;
  }
  if (e->capture) return fail(e, "synchronising while capturing a graph");
  return e->queue.n > e->head ? run_until(e, e->queue.n - 1) : 0;
}

const mm_device_backend mm_device_emulated = {
    .name = "emulated",
    .description = "the GPU step on the host, one kernel thread after another (slow; for tests)",
    .priority = 0,
    .device_memory = 0,
    .available = emu_available,
    .mpi_takes_device_memory = emu_mpi_takes_device_memory,
    .create = emu_create,
    .destroy = emu_destroy,
    .error = emu_error,
    .describe = emu_describe,
    .alloc = emu_alloc,
    .free = emu_free,
    .alloc_host = emu_alloc_host,
    .free_host = emu_free_host,
    .register_host = emu_register_host,
    .unregister_host = emu_unregister_host,
    .copy = emu_copy,
    .copy_2d = emu_copy_2d,
    .horizontal = emu_horizontal,
    .horizontal_tiles = emu_horizontal_tiles,
    .mixing = emu_mixing,
    .diagnostics = emu_diagnostics,
    .solve = emu_solve,
    .record = emu_record,
    .wait = emu_wait,
    .elapsed = emu_elapsed,
    .capture_begin = emu_capture_begin,
    .capture_end = emu_capture_end,
    .launch = emu_launch,
    .graph_destroy = emu_graph_destroy,
    .synchronize = emu_synchronize,
};

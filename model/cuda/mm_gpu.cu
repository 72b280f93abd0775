/* The GPU-resident time step: kernels and their orchestration (mm_gpu.h).
 *
 * Kernels, one thread per (column, level), consecutive threads on
 * consecutive levels of a column so that every load of the column-contiguous
 * arrays is coalesced:
 *   horizontal_kernel<scheme>  T*, S* of the cells of a set of rectangles
 *                              (mm_cell_horizontal)
 *   mixing_kernel              kappa_w and the surface flux (mm_cell_mixing)
 *   diag_kernel                per-block mm_diag_part, merged in shared memory
 * and the `cuda` tridiagonal backend's fused solve (solvers/, queued with
 * mm_tdma_fused_async). Built with --fmad=false and IEEE division like the
 * solvers, so the kernels round like the CPU.
 *
 * One stream. Per step: [frame strips D2H, event] [interior kernel] ... the
 * host exchanges the halo ... [halo strips H2D, frame kernel, mixing kernel,
 * solve] = one graph launch (two graphs, one per parity of the step, as T
 * and T* swap), with event records inside for the phase times. */
#include <cuda_runtime.h>
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_gpu.h"

namespace {

constexpr int kThreads = 256;

template <int SCHEME>
__global__ void __launch_bounds__(kThreads)
    horizontal_kernel(mm_cell_hstep h, const mm_cell_rects r) {
  const long tid = (long)blockIdx.x * blockDim.x + threadIdx.x;
  long col;
  int k;
  if (!mm_cell_rect_index(&r, h.nz, h.nxh, tid, &col, &k)) return;
  h.scheme = SCHEME; /* a constant inside mm_cell_horizontal */
  mm_cell_horizontal(&h, col, k);
}

__global__ void __launch_bounds__(kThreads)
    mixing_kernel(const mm_cell_mix x, const mm_cell_rects r, long nxh) {
  const long tid = (long)blockIdx.x * blockDim.x + threadIdx.x;
  long col;
  int k;
  if (!mm_cell_rect_index(&r, x.nz, nxh, tid, &col, &k)) return;
  mm_cell_mixing(&x, col, k);
}

__global__ void __launch_bounds__(MM_GPU_DIAG_THREADS)
    diag_kernel(const mm_cell_rects r, int nz, long nxh, const int *kmt, const double *temp,
                const double *salt, const double *vol, mm_diag_part *out) {
  __shared__ mm_diag_part part[MM_GPU_DIAG_THREADS];
  const int t = (int)threadIdx.x;
  const long nthreads = (long)gridDim.x * MM_GPU_DIAG_THREADS;
  mm_gpu_diag_thread(&r, nz, nxh, kmt, temp, salt, vol, (long)blockIdx.x * MM_GPU_DIAG_THREADS + t,
                     nthreads, &part[t]);
  __syncthreads();
  for (int s = MM_GPU_DIAG_THREADS / 2; s > 0; s /= 2) {
    if (t < s) mm_diag_part_merge(&part[t], &part[t + s]);
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = part[0];
}

long blocks_for(long threads, int per_block) {
  return (threads + per_block - 1) / per_block;
}

} // namespace

/* One device array pair per tracer, swapped each step. */
struct mm_gpu {
  mm_gpu_setup s;
  int nz;
  size_t n;            /* ncol_h * nz */
  double *temp, *salt; /* T, S at the current step */
  double *temp_next, *salt_next;
  double *kappa_w, *ue, *vn, *g_dt, *inv_h, *vol;
  int *kmt, *kmt_solve;
  double *good_temp, *good_salt; /* the last good state (mm_gpu_keep_good) */
  mm_diag_part *parts;           /* [MM_GPU_DIAG_MAX_BLOCKS] per-block diagnostics */
  mm_diag_part *parts_host;      /* pinned copy */
  int registered;                /* host_temp, host_salt are registered */
  cudaStream_t stream;
  cudaEvent_t strips_out; /* the frame strips are on the host */
  /* phase events: 0 before the interior kernel, 1 after; 2 before the halo
   * copies in, 3 after, 4 after the frame kernel, 5 after mixing, 6 after
   * the solve */
  cudaEvent_t ev[7];
  cudaGraphExec_t graph[2][2]; /* [parity][stage] */
  long parity;                 /* steps done by this object, mod 2 */
  mm_cell_rects interior, frame, whole;
};

#define GPU_CHECK(call)                                                                            \
  do {                                                                                             \
    const cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                       \
      (void)cudaGetLastError();                                                                    \
      snprintf(msg, len, "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));      \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

extern "C" int mm_gpu_available(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    return 0;
  }
  return 1;
}

extern "C" int mm_gpu_select_device(int local_rank, char *msg, size_t len) {
  int n = 0;
  GPU_CHECK(cudaGetDeviceCount(&n));
  if (n <= 0) {
    snprintf(msg, len, "no CUDA device");
    return 1;
  }
  GPU_CHECK(cudaSetDevice(local_rank % n));
  return 0;
}

extern "C" void mm_gpu_device_name(char *out, size_t len) {
  int dev = 0;
  cudaDeviceProp p;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    snprintf(out, len, "none");
    return;
  }
  snprintf(out, len, "%s (sm_%d%d, %zu MiB)", p.name, p.major, p.minor, p.totalGlobalMem >> 20);
}

extern "C" int mm_gpu_mpi_is_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return 0;
#endif
}

static int upload(double **dev, const void *host, size_t bytes, char *msg, size_t len) {
  GPU_CHECK(cudaMalloc((void **)dev, bytes ? bytes : 1));
  if (host)
    GPU_CHECK(cudaMemcpy(*dev, host, bytes, cudaMemcpyHostToDevice));
  else
    GPU_CHECK(cudaMemset(*dev, 0, bytes));
  return 0;
}

/* Strips of T and S between device and host: out = 1 frame -> host. */
static int copy_strips(mm_gpu *g, int out, char *msg, size_t len) {
  const mm_gpu_setup *s = &g->s;
  const size_t pitch = s->pitch * sizeof(double);
  double *dev[2] = {g->temp, g->salt}, *host[2] = {g->s.host_temp, g->s.host_salt};
  for (int d = 0; d < 4; d++) {
    if (!g->s.neighbour[d]) continue;
    for (int v = 0; v < 2; v++) {
      if (out) {
        const size_t o = s->send_off[d];
        GPU_CHECK(cudaMemcpy2DAsync(host[v] + o, pitch, dev[v] + o, pitch,
                                    s->width[d] * sizeof(double), s->height[d],
                                    cudaMemcpyDeviceToHost, g->stream));
      } else {
        const size_t o = s->recv_off[d];
        GPU_CHECK(cudaMemcpy2DAsync(dev[v] + o, pitch, host[v] + o, pitch,
                                    s->width[d] * sizeof(double), s->height[d],
                                    cudaMemcpyHostToDevice, g->stream));
      }
    }
  }
  return 0;
}

static mm_cell_hstep hstep_of(const mm_gpu *g) {
  mm_cell_hstep h = g->s.hstep;
  h.nz = g->nz;
  h.nxh = g->s.nxh;
  h.kmt = g->kmt;
  h.ue = g->ue;
  h.vn = g->vn;
  h.temp = g->temp;
  h.salt = g->salt;
  h.temp_next = g->temp_next;
  h.salt_next = g->salt_next;
  return h;
}

static int horizontal(mm_gpu *g, const mm_cell_rects *r, char *msg, size_t len) {
  const long n = r->first[r->n];
  if (n == 0) return 0;
  const mm_cell_hstep h = hstep_of(g);
  const unsigned blocks = (unsigned)blocks_for(n, kThreads);
  switch (h.scheme) {
  case MM_CELL_ADV_NONE:
    horizontal_kernel<MM_CELL_ADV_NONE><<<blocks, kThreads, 0, g->stream>>>(h, *r);
    break;
  case MM_CELL_ADV_UPWIND:
    horizontal_kernel<MM_CELL_ADV_UPWIND><<<blocks, kThreads, 0, g->stream>>>(h, *r);
    break;
  default:
    horizontal_kernel<MM_CELL_ADV_SUPERBEE><<<blocks, kThreads, 0, g->stream>>>(h, *r);
    break;
  }
  GPU_CHECK(cudaGetLastError());
  return 0;
}

/* Event record that also works inside a stream capture (an event node). */
static cudaError_t mark(mm_gpu *g, int i, int capturing) {
  return capturing ? cudaEventRecordWithFlags(g->ev[i], g->stream, cudaEventRecordExternal)
                   : cudaEventRecord(g->ev[i], g->stream);
}

/* The second half of the step, queued on the stream (or captured). */
static int queue_end(mm_gpu *g, int stage, int capturing, char *msg, size_t len) {
  GPU_CHECK(mark(g, 2, capturing));
  if (stage && copy_strips(g, 0, msg, len)) return 1;
  GPU_CHECK(mark(g, 3, capturing));
  if (horizontal(g, &g->frame, msg, len)) return 1;
  GPU_CHECK(mark(g, 4, capturing));
  mm_cell_mix x = g->s.mix;
  x.nz = g->nz;
  x.kmt = g->kmt;
  x.temp_next = g->temp_next;
  x.salt_next = g->salt_next;
  x.kappa_w = g->kappa_w;
  const long n = g->whole.first[g->whole.n];
  if (n > 0) {
    mixing_kernel<<<(unsigned)blocks_for(n, kThreads), kThreads, 0, g->stream>>>(x, g->whole,
                                                                                 g->s.nxh);
    GPU_CHECK(cudaGetLastError());
  }
  GPU_CHECK(mark(g, 5, capturing));
  /* one batch from the first to the last column of the block; halo columns
   * in between have depth 0 */
  const size_t first = (size_t)MM_CELL_HALO * g->s.nxh + MM_CELL_HALO;
  const size_t last =
      (size_t)(g->s.nyl - 1 + MM_CELL_HALO) * g->s.nxh + (g->s.nxl - 1) + MM_CELL_HALO;
  const mm_tdma_batch bt = {last - first + 1, g->nz, g->kmt_solve + first};
  const mm_tdma_geometry geo = {g->inv_h, g->g_dt};
  double *const rhs[2] = {g->temp_next + first * g->nz, g->salt_next + first * g->nz};
  const int rc = mm_tdma_fused_async(g->s.solver, &bt, &geo, g->kappa_w + first * g->nz, rhs, 2,
                                     (void *)g->stream);
  if (rc) {
    snprintf(msg, len, "tridiagonal solve (%s) on the GPU failed: %s",
             mm_tdma_backend_of(g->s.solver)->name, mm_tdma_strerror(rc));
    return 1;
  }
  GPU_CHECK(mark(g, 6, capturing));
  return 0;
}

extern "C" int mm_gpu_create(const mm_gpu_setup *s, mm_gpu **out, char *msg, size_t len) {
  *out = NULL;
  mm_gpu *g = (mm_gpu *)calloc(1, sizeof *g);
  if (!g) {
    snprintf(msg, len, "out of memory");
    return 1;
  }
  *out = g; /* the caller destroys what was built on error */
  g->s = *s;
  g->nz = s->nz;
  g->n = s->ncol_h * (size_t)s->nz;
  const size_t bytes = g->n * sizeof(double), nb = s->ncol_h * sizeof(int);
  if (!mm_tdma_backend_of(s->solver)->fused_async) {
    snprintf(msg, len, "solver.tdma = %s cannot be queued on a CUDA stream (use cuda or auto)",
             mm_tdma_backend_of(s->solver)->name);
    return 1;
  }
  GPU_CHECK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
  GPU_CHECK(cudaEventCreateWithFlags(&g->strips_out, cudaEventDisableTiming));
  for (int i = 0; i < 7; i++)
    GPU_CHECK(cudaEventCreate(&g->ev[i]));
  if (upload(&g->temp, s->host_temp, bytes, msg, len) ||
      upload(&g->salt, s->host_salt, bytes, msg, len) ||
      upload(&g->temp_next, s->host_temp, bytes, msg, len) ||
      upload(&g->salt_next, s->host_salt, bytes, msg, len) ||
      upload(&g->kappa_w, NULL, bytes, msg, len) || upload(&g->ue, s->ue, bytes, msg, len) ||
      upload(&g->vn, s->vn, bytes, msg, len) ||
      upload(&g->g_dt, s->g_dt, (size_t)s->nz * sizeof(double), msg, len) ||
      upload(&g->inv_h, s->inv_h, (size_t)s->nz * sizeof(double), msg, len) ||
      upload(&g->vol, s->vol, (size_t)s->nz * sizeof(double), msg, len) ||
      upload((double **)&g->kmt, s->kmt, nb, msg, len) ||
      upload((double **)&g->kmt_solve, s->kmt_solve, nb, msg, len) ||
      upload(&g->good_temp, NULL, bytes, msg, len) || upload(&g->good_salt, NULL, bytes, msg, len))
    return 1;
  GPU_CHECK(cudaMalloc((void **)&g->parts, MM_GPU_DIAG_MAX_BLOCKS * sizeof(mm_diag_part)));
  GPU_CHECK(cudaMallocHost((void **)&g->parts_host, MM_GPU_DIAG_MAX_BLOCKS * sizeof(mm_diag_part)));
  GPU_CHECK(cudaHostRegister(s->host_temp, bytes, cudaHostRegisterDefault));
  g->registered = 1;
  GPU_CHECK(cudaHostRegister(s->host_salt, bytes, cudaHostRegisterDefault));
  g->registered = 2;
  mm_cell_rects_block(&g->interior, s->nz, s->nxl, s->nyl, MM_CELL_INTERIOR);
  mm_cell_rects_block(&g->frame, s->nz, s->nxl, s->nyl, MM_CELL_FRAME);
  mm_cell_rects_block(&g->whole, s->nz, s->nxl, s->nyl, MM_CELL_WHOLE);
  /* one synchronous solve of the work arrays: checks the depths once and
   * sizes the solver's workspace before any capture */
  const size_t first = (size_t)MM_CELL_HALO * s->nxh + MM_CELL_HALO;
  const size_t last = (size_t)(s->nyl - 1 + MM_CELL_HALO) * s->nxh + (s->nxl - 1) + MM_CELL_HALO;
  const mm_tdma_batch bt = {last - first + 1, s->nz, g->kmt_solve + first};
  const mm_tdma_geometry geo = {g->inv_h, g->g_dt};
  double *const rhs[2] = {g->temp_next + first * s->nz, g->salt_next + first * s->nz};
  const int rc = mm_tdma_fused(s->solver, &bt, &geo, g->kappa_w + first * s->nz, rhs, 2);
  if (rc) {
    snprintf(msg, len, "tridiagonal solve (%s) on the GPU failed: %s",
             mm_tdma_backend_of(s->solver)->name, mm_tdma_strerror(rc));
    return 1;
  }
  GPU_CHECK(cudaDeviceSynchronize());
  return 0;
}

extern "C" void mm_gpu_destroy(mm_gpu *g) {
  if (!g) return;
  if (g->stream) (void)cudaStreamSynchronize(g->stream);
  for (int p = 0; p < 2; p++)
    for (int st = 0; st < 2; st++)
      if (g->graph[p][st]) (void)cudaGraphExecDestroy(g->graph[p][st]);
  if (g->registered >= 1) (void)cudaHostUnregister(g->s.host_temp);
  if (g->registered >= 2) (void)cudaHostUnregister(g->s.host_salt);
  void *dev[] = {g->temp, g->salt,      g->temp_next, g->salt_next, g->kappa_w,
                 g->ue,   g->vn,        g->g_dt,      g->inv_h,     g->vol,
                 g->kmt,  g->kmt_solve, g->good_temp, g->good_salt, g->parts};
  for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
    if (dev[i]) (void)cudaFree(dev[i]);
  if (g->parts_host) (void)cudaFreeHost(g->parts_host);
  for (int i = 0; i < 7; i++)
    if (g->ev[i]) (void)cudaEventDestroy(g->ev[i]);
  if (g->strips_out) (void)cudaEventDestroy(g->strips_out);
  if (g->stream) (void)cudaStreamDestroy(g->stream);
  (void)cudaGetLastError();
  free(g);
}

extern "C" int mm_gpu_upload(mm_gpu *g, char *msg, size_t len) {
  GPU_CHECK(cudaStreamSynchronize(g->stream));
  GPU_CHECK(cudaMemcpy(g->temp, g->s.host_temp, g->n * sizeof(double), cudaMemcpyHostToDevice));
  GPU_CHECK(cudaMemcpy(g->salt, g->s.host_salt, g->n * sizeof(double), cudaMemcpyHostToDevice));
  return 0;
}

extern "C" int mm_gpu_download(mm_gpu *g, char *msg, size_t len) {
  GPU_CHECK(cudaStreamSynchronize(g->stream));
  GPU_CHECK(cudaMemcpy(g->s.host_temp, g->temp, g->n * sizeof(double), cudaMemcpyDeviceToHost));
  GPU_CHECK(cudaMemcpy(g->s.host_salt, g->salt, g->n * sizeof(double), cudaMemcpyDeviceToHost));
  return 0;
}

extern "C" void mm_gpu_fields(mm_gpu *g, double **temp, double **salt) {
  *temp = g->temp;
  *salt = g->salt;
}

extern "C" int mm_gpu_step_begin(mm_gpu *g, int stage, char *msg, size_t len) {
  if (stage) {
    if (copy_strips(g, 1, msg, len)) return 1;
    GPU_CHECK(cudaEventRecord(g->strips_out, g->stream));
  }
  GPU_CHECK(cudaEventRecord(g->ev[0], g->stream));
  if (horizontal(g, &g->interior, msg, len)) return 1;
  GPU_CHECK(cudaEventRecord(g->ev[1], g->stream));
  /* with CUDA-aware MPI the caller sends from the device arrays: the step
   * before must be complete (it is: mm_gpu_step_end waits) */
  if (stage) GPU_CHECK(cudaEventSynchronize(g->strips_out));
  return 0;
}

static double elapsed(const mm_gpu *g, int a, int b) {
  float ms = 0.0f;
  if (cudaEventElapsedTime(&ms, g->ev[a], g->ev[b]) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0.0;
  }
  return 1e-3 * (double)ms;
}

extern "C" int mm_gpu_step_end(mm_gpu *g, int stage, mm_gpu_times *t, char *msg, size_t len) {
  const int p = (int)g->parity, st = stage ? 1 : 0;
  if (g->s.use_graph) {
    if (!g->graph[p][st]) { /* capture this parity's second half once */
      cudaGraph_t graph;
      GPU_CHECK(cudaStreamBeginCapture(g->stream, cudaStreamCaptureModeRelaxed));
      const int failed = queue_end(g, stage, 1, msg, len);
      const cudaError_t e = cudaStreamEndCapture(g->stream, &graph);
      if (failed) return 1;
      GPU_CHECK(e);
      const cudaError_t ei = cudaGraphInstantiate(&g->graph[p][st], graph, 0);
      (void)cudaGraphDestroy(graph);
      GPU_CHECK(ei);
    }
    GPU_CHECK(cudaGraphLaunch(g->graph[p][st], g->stream));
  } else if (queue_end(g, stage, 0, msg, len)) {
    return 1;
  }
  GPU_CHECK(cudaStreamSynchronize(g->stream));
  GPU_CHECK(cudaGetLastError());
  if (t) {
    t->horizontal = elapsed(g, 0, 1) + elapsed(g, 3, 4);
    t->halo = elapsed(g, 2, 3);
    t->mixing = elapsed(g, 4, 5);
    t->solve = elapsed(g, 5, 6);
  }
  /* T*, S* become the current state */
  double *tt = g->temp, *ss = g->salt;
  g->temp = g->temp_next;
  g->salt = g->salt_next;
  g->temp_next = tt;
  g->salt_next = ss;
  g->parity ^= 1;
  return 0;
}

extern "C" int mm_gpu_diagnostics(mm_gpu *g, mm_diag_part *part, char *msg, size_t len) {
  const long n = g->whole.first[g->whole.n];
  long blocks = blocks_for(n, MM_GPU_DIAG_THREADS);
  if (blocks > MM_GPU_DIAG_MAX_BLOCKS) blocks = MM_GPU_DIAG_MAX_BLOCKS;
  if (blocks < 1) blocks = 1;
  diag_kernel<<<(unsigned)blocks, MM_GPU_DIAG_THREADS, 0, g->stream>>>(
      g->whole, g->nz, g->s.nxh, g->kmt, g->temp, g->salt, g->vol, g->parts);
  GPU_CHECK(cudaGetLastError());
  GPU_CHECK(cudaMemcpyAsync(g->parts_host, g->parts, (size_t)blocks * sizeof(mm_diag_part),
                            cudaMemcpyDeviceToHost, g->stream));
  GPU_CHECK(cudaStreamSynchronize(g->stream));
  mm_diag_part_init(part);
  for (long b = 0; b < blocks; b++)
    mm_diag_part_merge(part, &g->parts_host[b]);
  return 0;
}

extern "C" int mm_gpu_keep_good(mm_gpu *g, char *msg, size_t len) {
  GPU_CHECK(cudaMemcpyAsync(g->good_temp, g->temp, g->n * sizeof(double), cudaMemcpyDeviceToDevice,
                            g->stream));
  GPU_CHECK(cudaMemcpyAsync(g->good_salt, g->salt, g->n * sizeof(double), cudaMemcpyDeviceToDevice,
                            g->stream));
  return 0;
}

extern "C" int mm_gpu_fetch_good(mm_gpu *g, double *temp, double *salt, char *msg, size_t len) {
  GPU_CHECK(cudaStreamSynchronize(g->stream));
  GPU_CHECK(cudaMemcpy(temp, g->good_temp, g->n * sizeof(double), cudaMemcpyDeviceToHost));
  GPU_CHECK(cudaMemcpy(salt, g->good_salt, g->n * sizeof(double), cudaMemcpyDeviceToHost));
  return 0;
}

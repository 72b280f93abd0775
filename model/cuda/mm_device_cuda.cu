/* The cuda device (solver.backend = cuda): the device table of mm_device.h
 * on an NVIDIA GPU, through the CUDA runtime.
 *
 * Kernels, one thread per (column, level), MM_GPU_THREADS per block; each
 * calls its per-thread function of mm_gpu_kernels.h (consecutive threads on
 * consecutive levels of a column, so every load of the column-contiguous
 * arrays is coalesced):
 *   horizontal_kernel<scheme>  T*, S* (mm_cell_horizontal); the advection
 *                              scheme is a template constant
 *   tiles_kernel<scheme, faces, min_blocks>  the same of a rectangle in tiles marched
 *                              through shared memory (mm_gpu_tile_*: blocks
 *                              of MM_GPU_THREADS threads, a barrier per row,
 *                              two where each face is computed once)
 *   mixing_kernel              kappa_w and the surface flux (mm_cell_mixing)
 *   diag_kernel                per-block mm_diag_part, merged in shared memory
 * and the solver's stream-ordered fused solve (mm_tdma_fused_async). Built
 * with --fmad=false and IEEE division like the solvers, so the kernels round
 * like the CPU.
 *
 * A context is one non-blocking stream and MM_DEV_EVENTS timing events; a
 * graph is a CUDA graph captured from that stream (events recorded inside
 * it become event nodes). */
#include <cuda_runtime.h>
#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_device.h"
#include "mm_gpu_kernels.h"

namespace {

template <int SCHEME>
__global__ void __launch_bounds__(MM_GPU_THREADS)
    horizontal_kernel(mm_cell_hstep h, __grid_constant__ const mm_cell_rects r) {
  h.scheme = SCHEME; /* a constant inside mm_cell_horizontal */
  mm_gpu_horizontal_thread(&h, &r, (long)blockIdx.x * blockDim.x + threadIdx.x);
}

/* The march of mm_gpu_kernels.h: its phases, a barrier after each. FACES:
 * mm_gpu_tiles's faces, a constant in each instance (the other way's code
 * and registers are not in it); MINB: its min_blocks, the blocks per SM the
 * registers are bounded for. */
template <int SCHEME, int FACES, int MINB>
__global__ void __launch_bounds__(MM_GPU_THREADS, MINB)
    tiles_kernel(mm_cell_hstep h, mm_gpu_tiles t) {
  __shared__ mm_gpu_tile_smem s;
  h.scheme = SCHEME;
  t.faces = FACES;
  const long b = (long)blockIdx.x;
  const int phases = mm_gpu_tile_phases(&t, b); /* the same for the whole block */
  mm_gpu_tile_carry c;                          /* registers */
  for (int ph = 0; ph < phases; ph++) {
    mm_gpu_tile_phase(&h, &t, b, (int)threadIdx.x, ph, &s, &c);
    __syncthreads();
  }
}

/* The tiles kernels of one MINB, every scheme and both faces */
#define TILES_KERNELS(MINB)                                                                        \
  (const void *)tiles_kernel<MM_CELL_ADV_NONE, 0, MINB>,                                           \
      (const void *)tiles_kernel<MM_CELL_ADV_UPWIND, 0, MINB>,                                     \
      (const void *)tiles_kernel<MM_CELL_ADV_SUPERBEE, 0, MINB>,                                   \
      (const void *)tiles_kernel<MM_CELL_ADV_NONE, 1, MINB>,                                       \
      (const void *)tiles_kernel<MM_CELL_ADV_UPWIND, 1, MINB>,                                     \
      (const void *)tiles_kernel<MM_CELL_ADV_SUPERBEE, 1, MINB>

__global__ void __launch_bounds__(MM_GPU_THREADS)
    mixing_kernel(const mm_cell_mix x, __grid_constant__ const mm_cell_rects r, long nxh) {
  mm_gpu_mixing_thread(&x, &r, nxh, (long)blockIdx.x * blockDim.x + threadIdx.x);
}

__global__ void __launch_bounds__(MM_GPU_DIAG_THREADS) diag_kernel(const mm_dev_diag d) {
  __shared__ mm_diag_part part[MM_GPU_DIAG_THREADS];
  const int t = (int)threadIdx.x;
  mm_gpu_diag_thread(&d.r, d.nz, d.nxh, d.kmt, d.temp, d.salt, d.vol,
                     (long)blockIdx.x * MM_GPU_DIAG_THREADS + t, d.blocks * MM_GPU_DIAG_THREADS,
                     &part[t]);
  __syncthreads();
  for (int s = MM_GPU_DIAG_THREADS / 2; s > 0; s /= 2) {
    mm_gpu_diag_tree_thread(part, s, t);
    __syncthreads();
  }
  if (t == 0) d.parts[blockIdx.x] = part[0];
}

struct Ctx {
  int device;
  size_t max_pitch; /* bytes: the longest row pitch of a 2-D copy (cudaDevAttrMaxPitch) */
  cudaStream_t stream;
  cudaEvent_t ev[MM_DEV_EVENTS];
  int capturing;
  char err[512];
};

unsigned blocks_for(long threads, int per_block) {
  return (unsigned)((threads + per_block - 1) / per_block);
}

int fail(Ctx *c, cudaError_t e, const char *what) {
  (void)cudaGetLastError(); /* clear a non-sticky error */
  snprintf(c->err, sizeof c->err, "%s: %s", what, cudaGetErrorString(e));
  return 1;
}

#define CK(c, call)                                                                                \
  do {                                                                                             \
    const cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) return fail((c), e_, #call);                                            \
  } while (0)

/* Before a launch: a non-sticky error that another library left in this
 * thread's last-error slot (a CUDA-aware MPI's pointer query, say) is
 * dropped, so that the check after the launch reads the launch's own. */
void drop_stale_error(void) {
  (void)cudaGetLastError();
}

cudaMemcpyKind kind_of(mm_dev_dir dir) {
  return dir == MM_DEV_TO_DEVICE ? cudaMemcpyHostToDevice
         : dir == MM_DEV_TO_HOST ? cudaMemcpyDeviceToHost
                                 : cudaMemcpyDeviceToDevice;
}

int cu_available(int local_rank, char *why, size_t why_size) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n <= 0) { /* no driver, a driver older than the runtime, no device */
    (void)cudaGetLastError();
    snprintf(why, why_size, "%s", e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    return 0;
  }
  /* the rank's own device (as cu_create picks it), before anything that
   * opens a context: cudaFuncGetAttributes opens one on the current device */
  cudaFuncAttributes fa; /* the kernels have an image for this device */
  e = cudaSetDevice(local_rank % n);
  if (e == cudaSuccess) e = cudaFuncGetAttributes(&fa, (const void *)mixing_kernel);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    snprintf(why, why_size, "device %d: %s", local_rank % n, cudaGetErrorString(e));
    return 0;
  }
  return 1;
}

int cu_mpi_takes_device_memory(int asked) {
  if (asked == MM_ASK_OFF) return 0;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return 0;
#endif
}

void cu_destroy(void *ctx) {
  Ctx *c = (Ctx *)ctx;
  if (!c) return;
  if (c->stream) (void)cudaStreamSynchronize(c->stream);
  for (int i = 0; i < MM_DEV_EVENTS; i++)
    if (c->ev[i]) (void)cudaEventDestroy(c->ev[i]);
  if (c->stream) (void)cudaStreamDestroy(c->stream);
  (void)cudaGetLastError();
  free(c);
}

int cu_create(const mm_settings *env, int local_rank, void **ctx, char *msg, size_t len) {
  (void)env;
  *ctx = NULL;
  Ctx *c = (Ctx *)calloc(1, sizeof *c);
  if (!c) {
    snprintf(msg, len, "out of host memory");
    return 1;
  }
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess && n <= 0) e = cudaErrorNoDevice;
  if (e == cudaSuccess) e = cudaSetDevice(c->device = local_rank % n);
  int max_pitch = 0;
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, c->device);
  c->max_pitch = max_pitch > 0 ? (size_t)max_pitch : 0;
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
  for (int i = 0; i < MM_DEV_EVENTS && e == cudaSuccess; i++)
    e = cudaEventCreate(&c->ev[i]);
  /* every kernel loaded now, not at its first launch (lazy loading, the
   * default since CUDA 12.2): the frame's kernel is first launched inside
   * the graph's capture, and a module loaded there depends on the driver */
  const void *const kernels[] = {(const void *)horizontal_kernel<MM_CELL_ADV_NONE>,
                                 (const void *)horizontal_kernel<MM_CELL_ADV_UPWIND>,
                                 (const void *)horizontal_kernel<MM_CELL_ADV_SUPERBEE>,
                                 TILES_KERNELS(MM_GPU_TILE_MIN_BLOCKS),
                                 TILES_KERNELS(4),
                                 (const void *)mixing_kernel,
                                 (const void *)diag_kernel};
  cudaFuncAttributes fa;
  for (size_t k = 0; k < sizeof kernels / sizeof kernels[0] && e == cudaSuccess; k++)
    e = cudaFuncGetAttributes(&fa, kernels[k]);
  if (e != cudaSuccess) {
    snprintf(msg, len, "CUDA device for local rank %d: %s", local_rank, cudaGetErrorString(e));
    cu_destroy(c);
    return 1;
  }
  *ctx = c;
  return 0;
}

const char *cu_error(void *ctx) {
  Ctx *c = (Ctx *)ctx;
  /* where no operation of this device failed, the CUDA error a solver's
   * MM_TDMA_EDEVICE left in the last-error slot (mm_tdma.h): the reason of
   * mm_gpu_create's synchronous solve */
  if (!c->err[0]) {
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) snprintf(c->err, sizeof c->err, "%s", cudaGetErrorString(e));
  }
  return c->err;
}

void cu_describe(void *ctx, char *out, size_t len) {
  const Ctx *c = (const Ctx *)ctx;
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, c->device) != cudaSuccess) {
    (void)cudaGetLastError();
    snprintf(out, len, "CUDA device %d", c->device);
    return;
  }
  snprintf(out, len, "%s (sm_%d%d, %zu MiB)", p.name, p.major, p.minor, p.totalGlobalMem >> 20);
}

int cu_alloc(void *ctx, size_t bytes, void **p) {
  CK((Ctx *)ctx, cudaMalloc(p, bytes));
  return 0;
}

void cu_free(void *ctx, void *p) {
  (void)ctx;
  (void)cudaFree(p);
}

int cu_alloc_host(void *ctx, size_t bytes, void **p) {
  CK((Ctx *)ctx, cudaMallocHost(p, bytes));
  return 0;
}

void cu_free_host(void *ctx, void *p) {
  (void)ctx;
  (void)cudaFreeHost(p);
}

int cu_register_host(void *ctx, void *p, size_t bytes) {
  CK((Ctx *)ctx, cudaHostRegister(p, bytes, cudaHostRegisterDefault));
  return 0;
}

void cu_unregister_host(void *ctx, void *p) {
  (void)ctx;
  (void)cudaHostUnregister(p);
  (void)cudaGetLastError();
}

int cu_copy(void *ctx, void *dst, const void *src, size_t bytes, mm_dev_dir dir) {
  Ctx *c = (Ctx *)ctx;
  CK(c, cudaMemcpyAsync(dst, src, bytes, kind_of(dir), c->stream));
  return 0;
}

int cu_copy_2d(void *ctx, void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
               size_t height, mm_dev_dir dir) {
  Ctx *c = (Ctx *)ctx;
  /* a row of the block (nxh columns of nz levels) longer than the device
   * copies in 2-D: said in words, not as cudaMemcpy2DAsync's invalid pitch */
  if (dpitch > c->max_pitch || spitch > c->max_pitch) {
    snprintf(c->err, sizeof c->err,
             "a halo strip's row pitch of %zu bytes is over this device's limit for 2-D copies "
             "(%zu bytes); more ranks in x make a rank's rows shorter",
             dpitch > spitch ? dpitch : spitch, c->max_pitch);
    return 1;
  }
  CK(c, cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind_of(dir), c->stream));
  return 0;
}

int cu_horizontal(void *ctx, const mm_cell_hstep *h, const mm_cell_rects *r) {
  Ctx *c = (Ctx *)ctx;
  const long n = r->first[r->n];
  if (n == 0) return 0;
  const unsigned blocks = blocks_for(n, MM_GPU_THREADS);
  drop_stale_error();
  switch (h->scheme) {
  case MM_CELL_ADV_NONE:
    horizontal_kernel<MM_CELL_ADV_NONE><<<blocks, MM_GPU_THREADS, 0, c->stream>>>(*h, *r);
    break;
  case MM_CELL_ADV_UPWIND:
    horizontal_kernel<MM_CELL_ADV_UPWIND><<<blocks, MM_GPU_THREADS, 0, c->stream>>>(*h, *r);
    break;
  default:
    horizontal_kernel<MM_CELL_ADV_SUPERBEE><<<blocks, MM_GPU_THREADS, 0, c->stream>>>(*h, *r);
    break;
  }
  CK(c, cudaGetLastError());
  return 0;
}

template <int FACES, int MINB>
void launch_tiles(unsigned blocks, cudaStream_t stream, const mm_cell_hstep *h,
                  const mm_gpu_tiles *t) {
  switch (h->scheme) {
  case MM_CELL_ADV_NONE:
    tiles_kernel<MM_CELL_ADV_NONE, FACES, MINB><<<blocks, MM_GPU_THREADS, 0, stream>>>(*h, *t);
    break;
  case MM_CELL_ADV_UPWIND:
    tiles_kernel<MM_CELL_ADV_UPWIND, FACES, MINB><<<blocks, MM_GPU_THREADS, 0, stream>>>(*h, *t);
    break;
  default:
    tiles_kernel<MM_CELL_ADV_SUPERBEE, FACES, MINB><<<blocks, MM_GPU_THREADS, 0, stream>>>(*h, *t);
    break;
  }
}

int cu_horizontal_tiles(void *ctx, const mm_cell_hstep *h, const mm_gpu_tiles *t) {
  Ctx *c = (Ctx *)ctx;
  const long n = mm_gpu_tiles_blocks(t);
  if (n == 0) return 0;
  if (n > 0x7fffffffL) {
    snprintf(c->err, sizeof c->err, "horizontal tiles: %ld blocks, more than a grid takes", n);
    return 1;
  }
  const unsigned blocks = (unsigned)n;
  /* the instances compiled: faces 0 or 1, MM_GPU_TILE_MIN_BLOCKS or 4
   * blocks per SM (mm_gpu_tiles) */
  const bool four = t->min_blocks == 4 && MM_GPU_TILE_MIN_BLOCKS != 4;
  drop_stale_error();
  if (t->faces)
    four ? launch_tiles<1, 4>(blocks, c->stream, h, t)
         : launch_tiles<1, MM_GPU_TILE_MIN_BLOCKS>(blocks, c->stream, h, t);
  else
    four ? launch_tiles<0, 4>(blocks, c->stream, h, t)
         : launch_tiles<0, MM_GPU_TILE_MIN_BLOCKS>(blocks, c->stream, h, t);
  CK(c, cudaGetLastError());
  return 0;
}

int cu_mixing(void *ctx, const mm_cell_mix *x, const mm_cell_rects *r, long nxh) {
  Ctx *c = (Ctx *)ctx;
  const long n = r->first[r->n];
  if (n == 0) return 0;
  drop_stale_error();
  mixing_kernel<<<blocks_for(n, MM_GPU_THREADS), MM_GPU_THREADS, 0, c->stream>>>(*x, *r, nxh);
  CK(c, cudaGetLastError());
  return 0;
}

int cu_diagnostics(void *ctx, const mm_dev_diag *d) {
  Ctx *c = (Ctx *)ctx;
  drop_stale_error();
  diag_kernel<<<(unsigned)d->blocks, MM_GPU_DIAG_THREADS, 0, c->stream>>>(*d);
  CK(c, cudaGetLastError());
  return 0;
}

int cu_solve(void *ctx, mm_tdma *s, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
             const double *kappa, const mm_tdma_mixing *mix, double *const *rhs, int nrhs) {
  Ctx *c = (Ctx *)ctx;
  int rc;
  if (mix) { /* as the emulated device: two right-hand sides and no kappa */
    double *const r2[2] = {rhs[0], nrhs > 1 ? rhs[1] : NULL};
    rc = nrhs == 2 && !kappa ? mm_tdma_fused_mixing_async(s, bt, geo, mix, r2, (void *)c->stream)
                             : MM_TDMA_EINVAL;
  } else {
    rc = mm_tdma_fused_async(s, bt, geo, kappa, rhs, nrhs, (void *)c->stream);
  }
  if (rc) { /* a CUDA error behind it is left for the caller (mm_tdma.h) */
    const cudaError_t e = cudaGetLastError();
    snprintf(c->err, sizeof c->err, "tridiagonal solve (%s) on the GPU: %s%s%s",
             mm_tdma_backend_of(s)->name, mm_tdma_strerror(rc), e != cudaSuccess ? ": " : "",
             e != cudaSuccess ? cudaGetErrorString(e) : "");
    return 1;
  }
  return 0;
}

int cu_record(void *ctx, int e) {
  Ctx *c = (Ctx *)ctx;
  /* inside a capture the record becomes an event node of the graph */
  CK(c, c->capturing ? cudaEventRecordWithFlags(c->ev[e], c->stream, cudaEventRecordExternal)
                     : cudaEventRecord(c->ev[e], c->stream));
  return 0;
}

int cu_wait(void *ctx, int e) {
  Ctx *c = (Ctx *)ctx;
  CK(c, cudaEventSynchronize(c->ev[e]));
  return 0;
}

double cu_elapsed(void *ctx, int a, int b) {
  Ctx *c = (Ctx *)ctx;
  float ms = 0.0f;
  if (cudaEventElapsedTime(&ms, c->ev[a], c->ev[b]) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0.0;
  }
  return 1e-3 * (double)ms;
}

int cu_capture_begin(void *ctx) {
  Ctx *c = (Ctx *)ctx;
  CK(c, cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeRelaxed));
  c->capturing = 1;
  return 0;
}

int cu_capture_end(void *ctx, void **graph) {
  Ctx *c = (Ctx *)ctx;
  *graph = NULL;
  c->capturing = 0;
  cudaGraph_t g;
  CK(c, cudaStreamEndCapture(c->stream, &g));
  cudaGraphExec_t exec;
  const cudaError_t e = cudaGraphInstantiate(&exec, g, 0);
  (void)cudaGraphDestroy(g);
  CK(c, e);
  *graph = (void *)exec;
  return 0;
}

int cu_launch(void *ctx, void *graph) {
  Ctx *c = (Ctx *)ctx;
  CK(c, cudaGraphLaunch((cudaGraphExec_t)graph, c->stream));
  return 0;
}

void cu_graph_destroy(void *ctx, void *graph) {
  (void)ctx;
  (void)cudaGraphExecDestroy((cudaGraphExec_t)graph);
}

/* The stream's errors are cudaStreamSynchronize's; the last-error slot is
 * not read here: every launch was checked when it was made, and an error
 * another library left there (MPI's, between the launches and this wait)
 * is not the step's. */
int cu_synchronize(void *ctx) {
  Ctx *c = (Ctx *)ctx;
  CK(c, cudaStreamSynchronize(c->stream));
  return 0;
}

} // namespace

extern "C" const mm_device_backend mm_device_cuda = {
    "cuda",
    "an NVIDIA GPU through the CUDA runtime: kernels, a stream, CUDA graphs",
    100, /* priority */
    1,   /* device_memory */
    cu_available,
    cu_mpi_takes_device_memory,
    cu_create,
    cu_destroy,
    cu_error,
    cu_describe,
    cu_alloc,
    cu_free,
    cu_alloc_host,
    cu_free_host,
    cu_register_host,
    cu_unregister_host,
    cu_copy,
    cu_copy_2d,
    cu_horizontal,
    cu_horizontal_tiles,
    cu_mixing,
    cu_diagnostics,
    cu_solve,
    cu_record,
    cu_wait,
    cu_elapsed,
    cu_capture_begin,
    cu_capture_end,
    cu_launch,
    cu_graph_destroy,
    cu_synchronize,
};

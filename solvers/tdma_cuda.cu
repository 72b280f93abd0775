/* cuda: the Thomas algorithm on the GPU, one warp per 32 adjacent columns,
 * one kernel launch per solve with the level loop inside it. The warp kernel
 * and its design (coalesced chunked tiles in shared memory, where c' and d'
 * live, depths) are in cuda/tdma_cuda_warp.h; the device-backend conventions
 * (device pointers, synchronous return, depth check) in
 * cuda/tdma_cuda_common.h.
 *
 * Tuning knobs (environment, read when a solver is created; for experiments
 * and tests, none is needed):
 *   MM_TDMA_CUDA_WARPS_PER_SM  warps per SM the shared memory must leave room
 *                              for (default 4): fewer keeps more of a
 *                              column on chip, more hides latency better; on
 *                              an H100, 4 was the fastest of 1, 2, 3, 4, 6, 8
 *                              for the plain and fused solves, and on an H200
 *                              (2026-11-30) 4 beat 2 and 8 for those and 8
 *                              for the step's solve, which builds kappa
 *                              inside (docs/performance.md, "GPU")
 *   MM_TDMA_CUDA_KT            levels per chunk, exactly (at most 32; default:
 *                              up to 4 warps per SM nz split evenly into
 *                              chunks of at most 32, 4 x 25 for nz = 100,
 *                              above chunks of 32, 32+32+32+4)
 *   MM_TDMA_CUDA_SLOTS         chunk slots per warp (default: from the above)
 *   MM_TDMA_CUDA_PREFETCH      1: the next chunk's loads in flight during a
 *                              chunk's sweep (double buffers of the per-chunk
 *                              arrays; default 0: on an H200 it helped only at
 *                              2 warps per SM, docs/performance.md "GPU") */
#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>

#include "mm_tdma.h"

#define MM_WDEV                 __device__ __forceinline__
#define MM_WARP_SYNC()          __syncwarp()
#define MM_COPY_ASYNC(dst, src) __pipeline_memcpy_async((dst), (src), sizeof(*(dst)))
#define MM_COPY_COMMIT()        __pipeline_commit()
#define MM_COPY_WAIT_PRIOR(n)   __pipeline_wait_prior(n)
#define MM_COPY_WAIT()          (__pipeline_commit(), __pipeline_wait_prior(0))
#include "cuda/tdma_cuda_common.h"
#include "cuda/tdma_cuda_warp.h"

namespace {

using mmcuda::Args;
using mmcuda::Plan;

template <typename T, int NRHS, bool FUSED, bool MIX = false>
__global__ void __launch_bounds__(4 * mmcuda::kWarp)
    tdma_kernel(const Args<T> p, int warps_per_block, unsigned warp_bytes) {
  extern __shared__ __align__(16) unsigned char mm_smem[];
  const int w = (int)(threadIdx.x / mmcuda::kWarp), lane = (int)(threadIdx.x % mmcuda::kWarp);
  const size_t task = (size_t)blockIdx.x * (size_t)warps_per_block + (size_t)w;
  mmcuda::warp_solve<T, NRHS, FUSED, MIX>(p, task, lane, mm_smem + (size_t)w * warp_bytes);
}

struct CudaCtx {
  int nz;
  size_t smem_sm, smem_block;
  int warps_per_sm, force_kt, force_slots, prefetch;
  mmcuda::Status st;
  mmcuda::DevBuf cpws;
};

int cuda_available(void) {
  static int cached = -1;
  if (cached < 0) cached = mmcuda::device_usable((const void *)tdma_kernel<double, 1, false>);
  return cached;
}

int cuda_create(void **ctx, int nz) {
  *ctx = NULL;
  CudaCtx *x = (CudaCtx *)calloc(1, sizeof *x);
  if (!x) return MM_TDMA_ENOMEM;
  x->nz = nz;
  int dev = 0, smem_sm = 0, smem_block = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&smem_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
          cudaSuccess ||
      mmcuda::status_create(&x->st) != MM_TDMA_OK) {
    (void)cudaGetLastError();
    free(x);
    return MM_TDMA_EDEVICE;
  }
  x->smem_sm = (size_t)smem_sm;
  x->smem_block = (size_t)smem_block;
  x->warps_per_sm = mmcuda::env_int("MM_TDMA_CUDA_WARPS_PER_SM"); /* 0: the defaults */
  x->force_kt = mmcuda::env_int("MM_TDMA_CUDA_KT");
  if (x->force_kt > mmcuda::kMaxKt) x->force_kt = mmcuda::kMaxKt;
  x->force_slots = mmcuda::env_int("MM_TDMA_CUDA_SLOTS");
  x->prefetch = mmcuda::env_int("MM_TDMA_CUDA_PREFETCH") == 1;
  *ctx = x;
  return MM_TDMA_OK;
}

void cuda_destroy(void *ctx) {
  CudaCtx *x = (CudaCtx *)ctx;
  if (!x) return;
  mmcuda::devbuf_free(&x->cpws);
  mmcuda::status_free(&x->st);
  free(x);
}

template <typename T, int NRHS, bool FUSED, bool MIX = false>
int launch(const Args<T> &p, const Plan &pl, cudaStream_t stream) {
  const void *kern = (const void *)tdma_kernel<T, NRHS, FUSED, MIX>;
  const size_t bytes = (size_t)pl.warps * pl.warp_bytes;
  if (bytes > 48 * 1024 && cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                (int)bytes) != cudaSuccess)
    return MM_TDMA_EDEVICE;
  if (cudaFuncSetAttribute(kern, cudaFuncAttributePreferredSharedMemoryCarveout,
                           cudaSharedmemCarveoutMaxShared) != cudaSuccess)
    (void)cudaGetLastError(); /* a hint only */
  const size_t tasks = (p.ncol + mmcuda::kWarp - 1) / mmcuda::kWarp;
  const size_t blocks = (tasks + (size_t)pl.warps - 1) / (size_t)pl.warps;
  if (blocks > (size_t)INT32_MAX) return MM_TDMA_ENOTSUP;
  /* a non-sticky error another library left in this thread's last-error
   * slot is dropped, so that the peek below reads the launch's own */
  (void)cudaGetLastError();
  tdma_kernel<T, NRHS, FUSED, MIX>
      <<<(unsigned)blocks, (unsigned)(pl.warps * mmcuda::kWarp), bytes, stream>>>(
          p, pl.warps, (unsigned)pl.warp_bytes);
  /* peeked, not cleared: a caller reads the reason (mm_tdma.h, EDEVICE) */
  return cudaPeekAtLastError() == cudaSuccess ? MM_TDMA_OK : MM_TDMA_EDEVICE;
}

template <typename T, bool FUSED>
int dispatch(const Args<T> &p, const Plan &pl, int nrhs, cudaStream_t stream = 0) {
  switch (nrhs) {
  case 1: return launch<T, 1, FUSED>(p, pl, stream);
  case 2: return launch<T, 2, FUSED>(p, pl, stream);
  case 3: return launch<T, 3, FUSED>(p, pl, stream);
  case 4: return launch<T, 4, FUSED>(p, pl, stream);
  case 5: return launch<T, 5, FUSED>(p, pl, stream);
  case 6: return launch<T, 6, FUSED>(p, pl, stream);
  case 7: return launch<T, 7, FUSED>(p, pl, stream);
  case 8: return launch<T, 8, FUSED>(p, pl, stream);
  default: return MM_TDMA_EINVAL;
  }
}
static_assert(MM_TDMA_MAX_RHS == 8, "dispatch() instantiates 1..8 right-hand sides");

/* The launch parameters of one call: plan, arguments, workspace. */
template <typename T, bool FUSED>
int prepare(CudaCtx *x, const mm_tdma_batch *bt, const T *a, const T *b, const T *c, const T *kappa,
            const T *g, const T *inv_h, T *const *rhs, int nrhs, bool mixing, Args<T> *out,
            Plan *out_plan) {
  Plan pl;
  const int warps_per_sm = mmcuda::warps_per_sm_for(x->warps_per_sm, mixing);
  if (mmcuda::mm_cuda_plan(bt->nz, nrhs, sizeof(T), FUSED, x->smem_sm, x->smem_block, warps_per_sm,
                           x->force_kt, x->force_slots, &pl, x->prefetch != 0))
    return MM_TDMA_ENOTSUP;
  Args<T> p = {};
  p.ncol = bt->ncol;
  p.nz = bt->nz;
  p.depth = bt->depth;
  p.a = a, p.b = b, p.c = c;
  p.kappa = kappa, p.g = g, p.inv_h = inv_h;
  for (int r = 0; r < nrhs; r++)
    p.rhs[r] = rhs[r];
  p.kt = pl.kt, p.stride = pl.stride, p.slots = pl.slots, p.prefetch = pl.prefetch;
  p.abort = x->st.dev;
  if (pl.slots < pl.chunks) { /* some chunks may spill c' */
    int rc = mmcuda::devbuf_reserve(&x->cpws, bt->ncol * (size_t)bt->nz * sizeof(T));
    if (rc) return rc;
    p.cpws = (T *)x->cpws.p;
  }
  *out = p;
  *out_plan = pl;
  return MM_TDMA_OK;
}

/* The fused solve with kappa from the right-hand sides (Args::mix). */
template <typename T>
int launch_mixing(Args<T> &, const Plan &, const mm_tdma_mixing &, cudaStream_t) {
  return MM_TDMA_EINVAL;
}
template <>
int launch_mixing<double>(Args<double> &p, const Plan &pl, const mm_tdma_mixing &mix,
                          cudaStream_t stream) {
  p.mix = mix;
  return launch<double, 2, true, true>(p, pl, stream);
}

/* One call: plan, workspace, depth check, solve, wait. mix: the fused solve
 * of two right-hand sides with kappa built inside (kappa NULL). */
template <typename T, bool FUSED>
int run(void *ctx, const mm_tdma_batch *bt, const T *a, const T *b, const T *c, const T *kappa,
        const T *g, const T *inv_h, T *const *rhs, int nrhs, const mm_tdma_mixing *mix = NULL) {
  CudaCtx *x = (CudaCtx *)ctx;
  if (nrhs < 1 || nrhs > MM_TDMA_MAX_RHS || bt->nz < 1) return MM_TDMA_EINVAL;
  if (bt->ncol == 0) return MM_TDMA_OK;
  Args<T> p;
  Plan pl;
  int rc = prepare<T, FUSED>(x, bt, a, b, c, kappa, g, inv_h, rhs, nrhs, mix != NULL, &p, &pl);
  if (rc) return rc;
  rc = mmcuda::queue_depth_check(&x->st, bt->depth, bt->ncol, bt->nz);
  if (!rc) rc = mix ? launch_mixing(p, pl, *mix, 0) : dispatch<T, FUSED>(p, pl, nrhs);
  const int rc2 = mmcuda::finish(&x->st);
  return rc ? rc : rc2;
}

int cuda_solve(void *ctx, const mm_tdma_batch *bt, const double *a, const double *b,
               const double *c, double *const *rhs, int nrhs) {
  return run<double, false>(ctx, bt, a, b, c, NULL, NULL, NULL, rhs, nrhs);
}
int cuda_solve_f(void *ctx, const mm_tdma_batch *bt, const float *a, const float *b, const float *c,
                 float *const *rhs, int nrhs) {
  return run<float, false>(ctx, bt, a, b, c, NULL, NULL, NULL, rhs, nrhs);
}
int cuda_fused(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo, const double *kappa,
               double *const *rhs, int nrhs) {
  return run<double, true>(ctx, bt, NULL, NULL, NULL, kappa, geo->g, geo->inv_h, rhs, nrhs);
}
int cuda_fused_f(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry_f *geo,
                 const float *kappa, float *const *rhs, int nrhs) {
  return run<float, true>(ctx, bt, NULL, NULL, NULL, kappa, geo->g, geo->inv_h, rhs, nrhs);
}

int cuda_fused_mixing(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                      const mm_tdma_mixing *mix, double *const rhs[2]) {
  if (!mix) return MM_TDMA_EINVAL;
  return run<double, true>(ctx, bt, NULL, NULL, NULL, NULL, geo->g, geo->inv_h, rhs, 2, mix);
}

/* A solve queued on `stream` (plain, fused, or fused with kappa built
 * inside when mix is given): the abort flag cleared (no depth check), then
 * the kernel; no wait. */
template <typename T, bool FUSED>
int queue(void *ctx, const mm_tdma_batch *bt, const T *a, const T *b, const T *c, const T *kappa,
          const T *g, const T *inv_h, const mm_tdma_mixing *mix, T *const *rhs, int nrhs,
          void *stream) {
  CudaCtx *x = (CudaCtx *)ctx;
  if (nrhs < 1 || nrhs > MM_TDMA_MAX_RHS || bt->nz < 1) return MM_TDMA_EINVAL;
  if (bt->ncol == 0) return MM_TDMA_OK;
  const cudaStream_t st = (cudaStream_t)stream;
  Args<T> p;
  Plan pl;
  int rc = prepare<T, FUSED>(x, bt, a, b, c, kappa, g, inv_h, rhs, nrhs, mix != NULL, &p, &pl);
  if (rc) return rc;
  if (cudaMemsetAsync(x->st.dev, 0, sizeof(int), st) != cudaSuccess) return MM_TDMA_EDEVICE;
  return mix ? launch_mixing(p, pl, *mix, st) : dispatch<T, FUSED>(p, pl, nrhs, st);
}
int cuda_fused_async(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                     const double *kappa, double *const *rhs, int nrhs, void *stream) {
  return queue<double, true>(ctx, bt, NULL, NULL, NULL, kappa, geo->g, geo->inv_h, NULL, rhs, nrhs,
                             stream);
}
int cuda_fused_mixing_async(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo,
                            const mm_tdma_mixing *mix, double *const rhs[2], void *stream) {
  if (!mix) return MM_TDMA_EINVAL;
  return queue<double, true>(ctx, bt, NULL, NULL, NULL, NULL, geo->g, geo->inv_h, mix, rhs, 2,
                             stream);
}
int cuda_solve_async(void *ctx, const mm_tdma_batch *bt, const double *a, const double *b,
                     const double *c, double *const *rhs, int nrhs, void *stream) {
  return queue<double, false>(ctx, bt, a, b, c, NULL, NULL, NULL, NULL, rhs, nrhs, stream);
}
int cuda_solve_f_async(void *ctx, const mm_tdma_batch *bt, const float *a, const float *b,
                       const float *c, float *const *rhs, int nrhs, void *stream) {
  return queue<float, false>(ctx, bt, a, b, c, NULL, NULL, NULL, NULL, rhs, nrhs, stream);
}

} // namespace

extern "C" const mm_tdma_backend mm_tdma_cuda = {
    "cuda",
    "GPU Thomas, one warp per 32 columns, coalesced shared-memory tiles (device pointers)",
    1, /* device_memory */
    1, /* exact: reference's arithmetic; bitwise equal on an H100 (gpu.tdma.backends) */
    cuda_available,
    cuda_create,
    cuda_destroy,
    cuda_solve,
    cuda_solve_f,
    cuda_fused,
    cuda_fused_f,
    cuda_fused_async,
    10, /* priority: auto's choice on the device */
    cuda_fused_mixing,
    cuda_fused_mixing_async,
    cuda_solve_async,
    cuda_solve_f_async,
    NULL, /* host_bytes: its workspace is in device memory */
};

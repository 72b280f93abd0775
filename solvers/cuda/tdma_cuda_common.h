/* Host-side pieces shared by the device backends (tdma_cuda.cu,
 * tdma_cusparse.cu): device detection, growable device buffers, the depth
 * check and the status word. CUDA C++; not part of the public API.
 *
 * Conventions of the device backends (see also mm_tdma.h):
 *   - every array argument is a device pointer: depth, a, b, c, kappa, the
 *     geometry arrays geo->inv_h and geo->g, and each rhs[r]; the structures
 *     themselves (mm_tdma_batch, mm_tdma_geometry) and the array `rhs` of
 *     nrhs pointers are host memory;
 *   - work is queued on the legacy default stream and the call returns when
 *     it is done (one 4-byte device-to-host copy of a status word per call),
 *     so the results are ready, and a bad depth is reported, on return; the
 *     *_async entries instead queue on the caller's stream, without the
 *     depth check, and return at once (mm_tdma.h);
 *   - a depth outside 0..nz is found by a check kernel before the solve,
 *     which then touches nothing: the batch is rejected whole (EINVAL). */
#ifndef MM_TDMA_CUDA_COMMON_H
#define MM_TDMA_CUDA_COMMON_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdlib.h>

#include "mm_tdma.h"

namespace mmcuda {

/* 1 if a CUDA device is there and `probe` (a kernel of the calling backend)
 * has an image for it; 0 otherwise (no driver, no device, wrong arch). The
 * sticky error state is left clean either way. */
inline int device_usable(const void *probe) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n <= 0) {
    (void)cudaGetLastError();
    return 0;
  }
  cudaFuncAttributes fa;
  if (cudaFuncGetAttributes(&fa, probe) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return 1;
}

/* A device buffer that only grows. */
struct DevBuf {
  void *p;
  size_t bytes;
};
inline int devbuf_reserve(DevBuf *b, size_t bytes) {
  if (bytes <= b->bytes) return MM_TDMA_OK;
  if (b->p) cudaFree(b->p);
  b->p = NULL;
  b->bytes = 0;
  if (cudaMalloc(&b->p, bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    b->p = NULL;
    return MM_TDMA_ENOMEM;
  }
  b->bytes = bytes;
  return MM_TDMA_OK;
}
inline void devbuf_free(DevBuf *b) {
  if (b->p) cudaFree(b->p);
  b->p = NULL;
  b->bytes = 0;
}

/* The status word of a call: set on the device, read back pinned. */
struct Status {
  int *dev;
  int *host;
};
inline int status_create(Status *s) {
  s->dev = NULL;
  s->host = NULL;
  if (cudaMalloc((void **)&s->dev, sizeof(int)) != cudaSuccess ||
      cudaMallocHost((void **)&s->host, sizeof(int)) != cudaSuccess) {
    (void)cudaGetLastError();
    if (s->dev) cudaFree(s->dev);
    s->dev = NULL;
    return MM_TDMA_EDEVICE;
  }
  *s->host = 0;
  return MM_TDMA_OK;
}
inline void status_free(Status *s) {
  if (s->dev) cudaFree(s->dev);
  if (s->host) cudaFreeHost(s->host);
  s->dev = NULL;
  s->host = NULL;
}

/* Sets *bad to 1 if any depth is outside 0..nz. */
static __global__ void check_depths_kernel(const int *depth, size_t ncol, int nz, int *bad) {
  const size_t step = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < ncol; i += step) {
    const int d = depth[i];
    if (d < 0 || d > nz) *bad = 1;
  }
}

/* Queues: status = 0, then the depth check. */
inline int queue_depth_check(const Status *s, const int *depth, size_t ncol, int nz) {
  (void)cudaGetLastError(); /* a stale error of another library, dropped (see tdma_cuda.cu) */
  if (cudaMemsetAsync(s->dev, 0, sizeof(int), 0) != cudaSuccess) return MM_TDMA_EDEVICE;
  size_t blocks = (ncol + 255) / 256;
  if (blocks > 1024) blocks = 1024;
  check_depths_kernel<<<(unsigned)blocks, 256>>>(depth, ncol, nz, s->dev);
  return cudaGetLastError() == cudaSuccess ? MM_TDMA_OK : MM_TDMA_EDEVICE;
}

/* Waits for the queued work; MM_TDMA_EINVAL if the depth check failed. */
inline int finish(const Status *s) {
  if (cudaMemcpyAsync(s->host, s->dev, sizeof(int), cudaMemcpyDeviceToHost, 0) != cudaSuccess ||
      cudaStreamSynchronize(0) != cudaSuccess) {
    (void)cudaGetLastError();
    return MM_TDMA_EDEVICE;
  }
  return *s->host ? MM_TDMA_EINVAL : MM_TDMA_OK;
}

/* A positive integer from the environment (tuning and tests), else 0. */
inline int env_int(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  char *end;
  long x = strtol(v, &end, 10);
  return *end == '\0' && x > 0 && x < 1 << 20 ? (int)x : 0;
}

} // namespace mmcuda

#endif

/* cusparse: cuSPARSE's batched tridiagonal solver gtsv2StridedBatch (cyclic
 * and parallel cyclic reduction, no pivoting), as the library baseline the
 * `cuda` backend is measured against. Not exact: its order of operations is
 * not Thomas's.
 *
 * gtsv2StridedBatch wants every system to have the same size m >= 3, the
 * first sub-diagonal and the last super-diagonal element 0, and overwrites
 * its right-hand side with the solution. So each call builds padded copies in
 * a workspace (one thread per element, coalesced): m = max(nz, 3) rows per
 * column; rows below a column's depth are identity rows (a = c = 0, b = 1,
 * d = 0), which decouple from the wet rows since a = 0 on the first identity
 * row and c = 0 on the last wet one; the fused operation builds the
 * coefficients with mm_col_coeffs on the way. Each right-hand side is packed,
 * solved (one gtsv2 call per right-hand side, the diagonals being read-only)
 * and unpacked into the wet levels only. Device-backend conventions as in
 * cuda/tdma_cuda_common.h. */
#include <cuda_runtime.h>
#include <cusparse.h>
#include <limits.h>
#include <stdlib.h>

#include "mm_tdma.h"
#include "mm_tdma_column.h"

#include "cuda/tdma_cuda_common.h"

namespace {

/* mm_col_coeffs of either precision under one name. */
__device__ __forceinline__ void coeffs(int k, int n, const double *kappa, const double *g,
                                       const double *inv_h, double *a, double *b, double *c) {
  mm_col_coeffs(k, n, kappa, g, inv_h, a, b, c);
}
__device__ __forceinline__ void coeffs(int k, int n, const float *kappa, const float *g,
                                       const float *inv_h, float *a, float *b, float *c) {
  mm_col_coeffs_f(k, n, kappa, g, inv_h, a, b, c);
}

/* Builds the padded diagonals of element i = col * m + k: from a, b, c, or
 * (kappa != NULL) from kappa and the geometry. */
template <typename T>
__global__ void pad_kernel(size_t ncol, int nz, int m, const int *depth, const T *a, const T *b,
                           const T *c, const T *kappa, const T *g, const T *inv_h, T *dl, T *d,
                           T *du) {
  const size_t n = ncol * (size_t)m, step = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const size_t col = i / (size_t)m;
    const int k = (int)(i - col * (size_t)m), dep = depth[col];
    if (k < dep) {
      const size_t gi = col * (size_t)nz + (size_t)k;
      T lo, di, up;
      if (kappa) {
        coeffs(k, dep, kappa + col * (size_t)nz, g, inv_h, &lo, &di, &up);
      } else {
        lo = k > 0 ? a[gi] : (T)0;
        di = b[gi];
        up = c[gi];
      }
      dl[i] = k > 0 ? lo : (T)0;
      d[i] = di;
      du[i] = k < dep - 1 ? up : (T)0;
    } else {
      dl[i] = (T)0;
      d[i] = (T)1;
      du[i] = (T)0;
    }
  }
}

/* x[col * m + k] = rhs[col * nz + k] on wet levels, 0 elsewhere. */
template <typename T>
__global__ void pack_kernel(size_t ncol, int nz, int m, const int *depth, const T *rhs, T *x) {
  const size_t n = ncol * (size_t)m, step = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const size_t col = i / (size_t)m;
    const int k = (int)(i - col * (size_t)m);
    x[i] = k < depth[col] ? rhs[col * (size_t)nz + (size_t)k] : (T)0;
  }
}

/* rhs[col * nz + k] = x[col * m + k] on wet levels only. */
template <typename T>
__global__ void unpack_kernel(size_t ncol, int nz, int m, const int *depth, const T *x, T *rhs) {
  const size_t n = ncol * (size_t)m, step = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    const size_t col = i / (size_t)m;
    const int k = (int)(i - col * (size_t)m);
    if (k < depth[col]) rhs[col * (size_t)nz + (size_t)k] = x[i];
  }
}

cusparseStatus_t gtsv_buffer(cusparseHandle_t h, int m, const double *dl, const double *d,
                             const double *du, const double *x, int batch, size_t *bytes) {
  return cusparseDgtsv2StridedBatch_bufferSizeExt(h, m, dl, d, du, x, batch, m, bytes);
}
cusparseStatus_t gtsv_buffer(cusparseHandle_t h, int m, const float *dl, const float *d,
                             const float *du, const float *x, int batch, size_t *bytes) {
  return cusparseSgtsv2StridedBatch_bufferSizeExt(h, m, dl, d, du, x, batch, m, bytes);
}
cusparseStatus_t gtsv(cusparseHandle_t h, int m, const double *dl, const double *d,
                      const double *du, double *x, int batch, void *buf) {
  return cusparseDgtsv2StridedBatch(h, m, dl, d, du, x, batch, m, buf);
}
cusparseStatus_t gtsv(cusparseHandle_t h, int m, const float *dl, const float *d, const float *du,
                      float *x, int batch, void *buf) {
  return cusparseSgtsv2StridedBatch(h, m, dl, d, du, x, batch, m, buf);
}

struct SpCtx {
  cusparseHandle_t handle;
  mmcuda::Status st;
  mmcuda::DevBuf diag; /* dl, d, du, x: 4 * ncol * m elements */
  mmcuda::DevBuf buf;  /* gtsv2 workspace */
};

int sp_available(void) {
  static int cached = -1;
  if (cached < 0) cached = mmcuda::device_usable((const void *)pack_kernel<double>);
  return cached;
}

int sp_create(void **ctx, int nz) {
  (void)nz;
  *ctx = NULL;
  SpCtx *x = (SpCtx *)calloc(1, sizeof *x);
  if (!x) return MM_TDMA_ENOMEM;
  if (mmcuda::status_create(&x->st) != MM_TDMA_OK) {
    free(x);
    return MM_TDMA_EDEVICE;
  }
  if (cusparseCreate(&x->handle) != CUSPARSE_STATUS_SUCCESS ||
      cusparseSetStream(x->handle, 0) != CUSPARSE_STATUS_SUCCESS) {
    if (x->handle) cusparseDestroy(x->handle);
    mmcuda::status_free(&x->st);
    free(x);
    return MM_TDMA_EDEVICE;
  }
  *ctx = x;
  return MM_TDMA_OK;
}

void sp_destroy(void *ctx) {
  SpCtx *x = (SpCtx *)ctx;
  if (!x) return;
  cusparseDestroy(x->handle);
  mmcuda::devbuf_free(&x->diag);
  mmcuda::devbuf_free(&x->buf);
  mmcuda::status_free(&x->st);
  free(x);
}

unsigned grid_for(size_t n) {
  size_t blocks = (n + 255) / 256;
  return (unsigned)(blocks > 65535 ? 65535 : blocks);
}

template <typename T>
int run(void *ctx, const mm_tdma_batch *bt, const T *a, const T *b, const T *c, const T *kappa,
        const T *g, const T *inv_h, T *const *rhs, int nrhs) {
  SpCtx *x = (SpCtx *)ctx;
  if (nrhs < 1 || nrhs > MM_TDMA_MAX_RHS || bt->nz < 1) return MM_TDMA_EINVAL;
  if (bt->ncol == 0) return MM_TDMA_OK;
  if (bt->ncol > (size_t)INT_MAX) return MM_TDMA_ENOTSUP;
  const int m = bt->nz < 3 ? 3 : bt->nz, batch = (int)bt->ncol;
  const size_t n = bt->ncol * (size_t)m;
  /* Reject a bad batch before anything is queued that writes. */
  int rc = mmcuda::queue_depth_check(&x->st, bt->depth, bt->ncol, bt->nz);
  if (!rc) rc = mmcuda::finish(&x->st);
  if (rc) return rc;
  if ((rc = mmcuda::devbuf_reserve(&x->diag, 4 * n * sizeof(T)))) return rc;
  T *dl = (T *)x->diag.p, *d = dl + n, *du = d + n, *xs = du + n;
  size_t bytes = 0;
  if (gtsv_buffer(x->handle, m, dl, d, du, xs, batch, &bytes) != CUSPARSE_STATUS_SUCCESS)
    return MM_TDMA_EDEVICE;
  if ((rc = mmcuda::devbuf_reserve(&x->buf, bytes ? bytes : 1))) return rc;
  const unsigned grid = grid_for(n);
  (void)cudaGetLastError(); /* a stale error of another library, dropped (see tdma_cuda.cu) */
  pad_kernel<T><<<grid, 256>>>(bt->ncol, bt->nz, m, bt->depth, a, b, c, kappa, g, inv_h, dl, d, du);
  if (cudaGetLastError() != cudaSuccess) return MM_TDMA_EDEVICE;
  for (int r = 0; r < nrhs; r++) {
    pack_kernel<T><<<grid, 256>>>(bt->ncol, bt->nz, m, bt->depth, rhs[r], xs);
    if (cudaGetLastError() != cudaSuccess) return MM_TDMA_EDEVICE;
    if (gtsv(x->handle, m, dl, d, du, xs, batch, x->buf.p) != CUSPARSE_STATUS_SUCCESS)
      return MM_TDMA_EDEVICE;
    unpack_kernel<T><<<grid, 256>>>(bt->ncol, bt->nz, m, bt->depth, xs, rhs[r]);
    if (cudaGetLastError() != cudaSuccess) return MM_TDMA_EDEVICE;
  }
  if (cudaStreamSynchronize(0) != cudaSuccess) {
    (void)cudaGetLastError();
    return MM_TDMA_EDEVICE;
  }
  return MM_TDMA_OK;
}

int sp_solve(void *ctx, const mm_tdma_batch *bt, const double *a, const double *b, const double *c,
             double *const *rhs, int nrhs) {
  return run<double>(ctx, bt, a, b, c, NULL, NULL, NULL, rhs, nrhs);
}
int sp_solve_f(void *ctx, const mm_tdma_batch *bt, const float *a, const float *b, const float *c,
               float *const *rhs, int nrhs) {
  return run<float>(ctx, bt, a, b, c, NULL, NULL, NULL, rhs, nrhs);
}
int sp_fused(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry *geo, const double *kappa,
             double *const *rhs, int nrhs) {
  return run<double>(ctx, bt, NULL, NULL, NULL, kappa, geo->g, geo->inv_h, rhs, nrhs);
}
int sp_fused_f(void *ctx, const mm_tdma_batch *bt, const mm_tdma_geometry_f *geo,
               const float *kappa, float *const *rhs, int nrhs) {
  return run<float>(ctx, bt, NULL, NULL, NULL, kappa, geo->g, geo->inv_h, rhs, nrhs);
}

} // namespace

extern "C" const mm_tdma_backend mm_tdma_cusparse = {
    "cusparse",
    "cuSPARSE gtsv2StridedBatch on identity-padded copies (device pointers)",
    1, /* device_memory */
    0, /* exact: cyclic reduction, not Thomas */
    sp_available,
    sp_create,
    sp_destroy,
    sp_solve,
    sp_solve_f,
    sp_fused,
    sp_fused_f,
    NULL, /* fused_async: the library call synchronises */
    0,    /* priority: a baseline, never auto's choice */
    NULL, /* fused_mixing */
    NULL, /* fused_mixing_async */
    NULL, /* solve_async */
    NULL, /* solve_f_async */
    NULL, /* host_bytes: its workspace is in device memory */
};

/* The GPU side of tdma-bench; see tdma_bench_cuda.h. Plain C on the CUDA
 * runtime API: no kernels of its own. */
#include "tdma_bench_cuda.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "tdma-bench: %s: %s\n", #call, cudaGetErrorString(e_));                      \
      rc = MM_TDMA_EDEVICE;                                                                        \
      goto done;                                                                                   \
    }                                                                                              \
  } while (0)

int mm_bench_gpu_usable(char *why, size_t len) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    snprintf(why, len, "no usable CUDA device (%s)", cudaGetErrorString(e));
    (void)cudaGetLastError();
    return 0;
  }
  if (n <= 0) {
    snprintf(why, len, "no CUDA device");
    return 0;
  }
  return 1;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Device-to-device copy bandwidth in GB/s, read + write bytes; 0 on error. */
static double copy_bandwidth(void) {
  static double cached = -1;
  if (cached >= 0) return cached;
  int rc = MM_TDMA_OK;
  void *x = NULL, *y = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  double best = 0;
  size_t free_b = 0, total_b = 0, bytes = (size_t)1 << 30;
  CK(cudaMemGetInfo(&free_b, &total_b));
  while (bytes > ((size_t)1 << 24) && 4 * bytes > free_b)
    bytes /= 2;
  CK(cudaMalloc(&x, bytes));
  CK(cudaMalloc(&y, bytes));
  CK(cudaMemset(x, 1, bytes));
  CK(cudaMemset(y, 2, bytes));
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice)); /* warm-up */
  for (int rep = 0; rep < 5; rep++) {
    float ms = 0;
    CK(cudaEventRecord(e0, 0));
    CK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, 0));
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    CK(cudaEventElapsedTime(&ms, e0, e1));
    const double gbps = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
    if (gbps > best) best = gbps;
  }
done:
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (x) cudaFree(x);
  if (y) cudaFree(y);
  cached = rc ? 0 : best;
  return cached;
}

static int call(mm_tdma *s, const mm_bench_gpu_problem *p, const int *depth, void *a, void *b,
                void *c, void *kappa, void *inv_h, void *g, void **rhs) {
  const mm_tdma_batch bt = {.ncol = p->ncol, .nz = p->nz, .depth = depth};
  if (p->single) {
    float *x[MM_TDMA_MAX_RHS];
    for (int q = 0; q < p->nrhs; q++)
      x[q] = rhs[q];
    if (p->fused) {
      const mm_tdma_geometry_f geo = {.inv_h = inv_h, .g = g};
      return mm_tdma_fused_f(s, &bt, &geo, kappa, x, p->nrhs);
    }
    return mm_tdma_solve_f(s, &bt, a, b, c, x, p->nrhs);
  }
  double *x[MM_TDMA_MAX_RHS];
  for (int q = 0; q < p->nrhs; q++)
    x[q] = rhs[q];
  if (p->fused) {
    const mm_tdma_geometry geo = {.inv_h = inv_h, .g = g};
    return mm_tdma_fused(s, &bt, &geo, kappa, x, p->nrhs);
  }
  return mm_tdma_solve(s, &bt, a, b, c, x, p->nrhs);
}

int mm_bench_gpu_run(const char *name, const mm_bench_gpu_problem *p, int repeats, int warm,
                     mm_bench_gpu_result *r) {
  memset(r, 0, sizeof *r);
  int rc = MM_TDMA_OK, dev = 0;
  mm_tdma *s = NULL;
  int *depth = NULL;
  void *a = NULL, *b = NULL, *c = NULL, *kappa = NULL, *inv_h = NULL, *g = NULL, *flush = NULL;
  void *rhs0[MM_TDMA_MAX_RHS] = {0}, *rhs[MM_TDMA_MAX_RHS] = {0};
  cudaEvent_t e0 = NULL, e1 = NULL;
  double *t = calloc((size_t)repeats, sizeof *t);
  const size_t es = p->single ? sizeof(float) : sizeof(double);
  const size_t n = p->ncol * (size_t)p->nz, bytes = n * es, gbytes = (size_t)p->nz * es;
  struct cudaDeviceProp prop;
  size_t flush_bytes = 0;
  if (!t) return MM_TDMA_ENOMEM;

  CK(cudaGetDevice(&dev));
  CK(cudaGetDeviceProperties(&prop, dev));
  snprintf(r->device, sizeof r->device, "%s", prop.name);
  CK(cudaMalloc((void **)&depth, p->ncol * sizeof(int)));
  CK(cudaMemcpy(depth, p->depth, p->ncol * sizeof(int), cudaMemcpyHostToDevice));
  if (p->fused) {
    CK(cudaMalloc(&kappa, bytes));
    CK(cudaMemcpy(kappa, p->kappa, bytes, cudaMemcpyHostToDevice));
  } else {
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMalloc(&c, bytes));
    CK(cudaMemcpy(a, p->a, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, p->b, bytes, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(c, p->c, bytes, cudaMemcpyHostToDevice));
  }
  CK(cudaMalloc(&inv_h, gbytes));
  CK(cudaMalloc(&g, gbytes));
  CK(cudaMemcpy(inv_h, p->inv_h, gbytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(g, p->g, gbytes, cudaMemcpyHostToDevice));
  for (int q = 0; q < p->nrhs; q++) {
    CK(cudaMalloc(&rhs0[q], bytes));
    CK(cudaMalloc(&rhs[q], bytes));
    CK(cudaMemcpy(rhs0[q], p->rhs0[q], bytes, cudaMemcpyHostToDevice));
  }
  if (!warm) {
    flush_bytes = 2 * (size_t)(prop.l2CacheSize > 0 ? prop.l2CacheSize : 64 << 20);
    CK(cudaMalloc(&flush, flush_bytes));
  }
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  rc = mm_tdma_create(name, p->nz, 1, &s);
  if (rc) goto done;
  for (int rep = -1; rep < repeats; rep++) { /* rep -1: warm-up */
    for (int q = 0; q < p->nrhs; q++)
      CK(cudaMemcpy(rhs[q], rhs0[q], bytes, cudaMemcpyDeviceToDevice));
    if (flush) CK(cudaMemset(flush, rep & 0xff, flush_bytes));
    CK(cudaDeviceSynchronize());
    float ms = 0;
    CK(cudaEventRecord(e0, 0));
    rc = call(s, p, depth, a, b, c, kappa, inv_h, g, rhs);
    CK(cudaEventRecord(e1, 0));
    CK(cudaEventSynchronize(e1));
    if (rc) goto done;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (rep >= 0) t[rep] = ms;
  }
  for (int q = 0; q < p->nrhs; q++)
    CK(cudaMemcpy(p->rhs[q], rhs[q], bytes, cudaMemcpyDeviceToHost));
  qsort(t, (size_t)repeats, sizeof *t, cmp_double);
  r->best_ms = t[0];
  r->median_ms = repeats % 2 ? t[repeats / 2] : 0.5 * (t[repeats / 2 - 1] + t[repeats / 2]);
  r->copy_gbps = copy_bandwidth();

done:
  if (s) mm_tdma_destroy(s);
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  void *all[] = {depth, a, b, c, kappa, inv_h, g, flush};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++)
    if (all[i]) cudaFree(all[i]);
  for (int q = 0; q < p->nrhs; q++) {
    if (rhs0[q]) cudaFree(rhs0[q]);
    if (rhs[q]) cudaFree(rhs[q]);
  }
  free(t);
  return rc;
}

/* The GPU side of tdma-bench (tdma_bench_cuda.c, built only with CUDA): runs
 * a device backend (`cuda`, `cusparse`) on the bench's host problem.
 *
 * Timing: the problem is copied to the device once; one warm-up call, then
 * `repeats` timed calls, each timed with CUDA events around the backend call
 * (which includes its per-call depth check and status read-back). Before
 * each call the right-hand sides are restored on the device and, unless
 * `warm`, a buffer of twice the L2 size is overwritten, so that the solver's
 * data comes from device memory. After the last call the solution is copied
 * back to the host, where tdma-bench computes the residual as for the CPU.
 *
 * Bandwidth floor: a device-to-device cudaMemcpy of a large buffer (1 GiB,
 * less on a small device), timed with events, best of 5, counted as read +
 * write bytes like the solve's bytes (and like STREAM). */
#ifndef MM_TDMA_BENCH_CUDA_H
#define MM_TDMA_BENCH_CUDA_H

#include <stddef.h>

#include "mm_tdma.h"

/* The bench's problem, host memory, elements of the working precision. */
typedef struct {
  size_t ncol;
  int nz, nrhs, single, fused;
  const int *depth;
  const void *a, *b, *c;         /* plain solve */
  const void *kappa, *inv_h, *g; /* fused solve */
  void *const *rhs0;             /* [nrhs] initial right-hand sides */
  void *const *rhs;              /* [nrhs] receive the solution of the last call */
} mm_bench_gpu_problem;

typedef struct {
  double best_ms, median_ms;
  double copy_gbps; /* device-to-device copy bandwidth (read + write bytes) */
  char device[256]; /* cudaDeviceProp.name */
} mm_bench_gpu_result;

/* 1 if a CUDA device is usable; else 0 with the reason in why. */
int mm_bench_gpu_usable(char *why, size_t len);

/* Runs device backend `name` on the problem; MM_TDMA_* status (a CUDA error
 * of the bench itself is MM_TDMA_EDEVICE, with a message on stderr). */
int mm_bench_gpu_run(const char *name, const mm_bench_gpu_problem *p, int repeats, int warm,
                     mm_bench_gpu_result *r);

#endif

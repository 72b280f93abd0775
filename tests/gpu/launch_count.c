/* liblaunch_count.so: counts the CUDA runtime calls that queue work on the
 * device (kernel launches, graph launches, memsets, asynchronous copies) of
 * the process it is preloaded into, and appends one line to the file named
 * by MINIMODEL_LAUNCH_COUNT (or stderr) at exit:
 *   kernel K graph G memset M copy C copy2d D
 * For machines without Nsight Systems (scripts/gpu-check): the difference of
 * two runs of N and 2N steps over N is the steady step's count.
 *
 *   LD_PRELOAD=build/tests/gpu/liblaunch_count.so MINIMODEL_LAUNCH_COUNT=f build/minimodel ...
 *
 * The symbols carry libcudart's version (launch_count.map.in), so that the
 * program's versioned references bind to them; each forwards to the next
 * definition (RTLD_NEXT). A process that made none of these calls (the MPI
 * library's helper processes) writes nothing. */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* The launch entry point of nvcc's <<<>>> (crt/device_functions.h). */
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                               size_t shared, cudaStream_t stream);

static long n_kernel, n_graph, n_memset, n_copy, n_copy2d;

static void report(void) {
  if (!(n_kernel + n_graph + n_memset + n_copy + n_copy2d)) return;
  const char *path = getenv("MINIMODEL_LAUNCH_COUNT");
  FILE *f = path && *path ? fopen(path, "a") : stderr;
  if (!f) return;
  fprintf(f, "kernel %ld graph %ld memset %ld copy %ld copy2d %ld\n", n_kernel, n_graph, n_memset,
          n_copy, n_copy2d);
  if (f != stderr) fclose(f);
}

__attribute__((constructor)) static void start(void) {
  atexit(report);
}

#define NEXT(name)                                                                                 \
  static __typeof__(&name) next;                                                                   \
  if (!next) *(void **)&next = dlsym(RTLD_NEXT, #name)

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void **args,
                               size_t shared, cudaStream_t stream) {
  NEXT(__cudaLaunchKernel);
  n_kernel++;
  return next(kernel, grid, block, args, shared, stream);
}

cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t shared,
                             cudaStream_t stream) {
  NEXT(cudaLaunchKernel);
  n_kernel++;
  return next(func, grid, block, args, shared, stream);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  NEXT(cudaGraphLaunch);
  n_graph++;
  return next(exec, stream);
}

cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t stream) {
  NEXT(cudaMemsetAsync);
  n_memset++;
  return next(p, value, bytes, stream);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind,
                            cudaStream_t stream) {
  NEXT(cudaMemcpyAsync);
  n_copy++;
  return next(dst, src, bytes, kind, stream);
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind,
                              cudaStream_t stream) {
  NEXT(cudaMemcpy2DAsync);
  n_copy2d++;
  return next(dst, dpitch, src, spitch, width, height, kind, stream);
}

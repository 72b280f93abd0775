/* Calls each CUDA runtime entry point that liblaunch_count.so counts, once
 * (the calls may fail: without a device they return errors, which do not
 * matter here). Run under LD_PRELOAD, the counter must report
 * "kernel 1 graph 1 memset 1 copy 1 copy2d 1". */
#include <cuda_runtime_api.h>

#include <stdio.h>

int main(void) {
  static char a[64], b[64];
  void *args[1] = {NULL};
  const dim3 one = {1, 1, 1};
  (void)cudaLaunchKernel((const void *)a, one, one, args, 0, 0);
  (void)cudaGraphLaunch(NULL, 0);
  (void)cudaMemsetAsync(a, 0, sizeof a, 0);
  (void)cudaMemcpyAsync(a, b, sizeof a, cudaMemcpyHostToHost, 0);
  (void)cudaMemcpy2DAsync(a, 8, b, 8, 8, 2, cudaMemcpyHostToHost, 0);
  (void)cudaGetLastError();
  puts("probe done");
  return 0;
}

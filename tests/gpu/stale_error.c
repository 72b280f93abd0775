/* libstale_error.so: after each MPI_Waitall and MPI_Allreduce of the process
 * it is preloaded into, leaves a non-sticky CUDA error in the calling
 * thread's last-error slot (cudaErrorInvalidDevice, from cudaSetDevice of a
 * device that is not there), as a CUDA-aware MPI's pointer query may. The
 * calls reach the MPI library through its profiling interface (PMPI_*).
 * At exit, appends "planted N" to the file named by MINIMODEL_STALE_COUNT
 * (nothing from a process that planted none), so that a test can tell the
 * errors were there.
 *
 *   mpirun -x LD_PRELOAD=build/tests/gpu/libstale_error.so build/minimodel ...
 */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long planted;

static void report(void) {
  const char *path = getenv("MINIMODEL_STALE_COUNT");
  if (!planted || !path || !*path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  fprintf(f, "planted %ld\n", planted);
  fclose(f);
}

__attribute__((constructor)) static void start(void) {
  atexit(report);
}

static void plant(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return;
  if (cudaSetDevice(n) == cudaErrorInvalidDevice && cudaPeekAtLastError() == cudaErrorInvalidDevice)
    planted++;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  const int rc = PMPI_Waitall(count, requests, statuses);
  plant();
  return rc;
}

int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  const int rc = PMPI_Allreduce(send, recv, count, type, op, comm);
  plant();
  return rc;
}

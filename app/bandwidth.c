/* The memory bandwidth the phases are compared with (mm_bandwidth.h). */
#include "mm_bandwidth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Doubles per array of the probe: 64 MiB, far more than any cache. */
#define MM_PROBE_N       ((size_t)8 << 20)
#define MM_PROBE_REPEATS 5

mm_err mm_bandwidth_probe(MPI_Comm comm, double *gbps) {
  *gbps = 0.0;
  double *a = malloc(MM_PROBE_N * sizeof *a), *b = malloc(MM_PROBE_N * sizeof *b),
         *c = malloc(MM_PROBE_N * sizeof *c);
  int ok = a && b && c, all = 0;
  MM_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm));
  if (!all) {
    free(a), free(b), free(c);
    return MM_ERROR(MM_ERR_RUN, "--bandwidth probe: out of memory for its %zu MB arrays",
                    3 * MM_PROBE_N * sizeof(double) >> 20);
  }
  /* first touch by the threads that use the data */
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < MM_PROBE_N; i++)
    a[i] = 0.0, b[i] = 1.0, c[i] = 2.0;
  /* every rank at once, as in a time step: the node's bandwidth is the
   * bytes of all ranks over the slowest rank's time, best of the repeats */
  double best = INFINITY;
  for (int r = 0; r < MM_PROBE_REPEATS; r++) {
    MM_MPI(MPI_Barrier(comm));
    const double t0 = MPI_Wtime();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < MM_PROBE_N; i++)
      a[i] = b[i] + 3.0 * c[i];
    double dt = MPI_Wtime() - t0, slowest = 0.0;
    MM_MPI(MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm));
    if (slowest < best) best = slowest;
  }
  volatile double sink = a[MM_PROBE_N / 2]; /* the triad is used */
  (void)sink;
  free(a), free(b), free(c);
  int nranks;
  MM_MPI(MPI_Comm_size(comm, &nranks));
  /* STREAM's count: 24 bytes per element (read b and c, write a) */
  *gbps = best > 0.0 ? 24.0 * (double)MM_PROBE_N * nranks / best / 1e9 : 0.0;
  return MM_OK;
}

double mm_phase_bytes_per_cell(mm_phase p, bool gpu, bool kappa_in_solve) {
  switch (p) {
  case MM_PHASE_HORIZONTAL: return gpu || kappa_in_solve ? 48.0 : 56.0;
  case MM_PHASE_MIXING: return gpu && !kappa_in_solve ? 24.0 : 0.0;
  case MM_PHASE_SOLVE: return kappa_in_solve ? 32.0 : 40.0;
  case MM_PHASE_DIAGNOSTICS: return 16.0;
  case MM_PHASE_STEP: return 80.0;
  default: return 0.0;
  }
}

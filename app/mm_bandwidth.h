/* Memory traffic of the phases of a step, and the bandwidth they are
 * compared with (docs/performance.md, "Bandwidth of the phases").
 *
 * Bytes per wet cell (8-byte values) each phase must move at least, as the
 * step is built:
 *   horizontal   read T, S, ue, vn; write T*, S* (48); on the CPU with a
 *                solver without mm_tdma_fused_mixing also kappa_w, which
 *                it then computes per column (56)
 *   mixing       GPU with a mixing kernel: read T*, S*, write kappa_w (24);
 *                0 where the solve builds kappa (kappa_in_solve) and on the
 *                CPU (part of horizontal or of the solve)
 *   solve        read T*, S*; write T, S (32) where the solver builds kappa
 *                inside the solve (kappa_in_solve, mm_model.h); else also
 *                read kappa_w (40)
 *   diagnostics  read T, S (16), per call
 *   step         the floor of the whole step: read T, S, ue, vn and write
 *                T*, S* in the horizontal part, read T*, S* and write T, S
 *                in the vertical part (80): what the CPU step with kappa
 *                inside the solve moves
 *   halo, output no floor (messages and files, not memory) */
#ifndef MM_BANDWIDTH_H
#define MM_BANDWIDTH_H

#include <mpi.h>
#include <stdbool.h>

#include "mm_error.h"
#include "mm_timer.h"

/* Bytes per wet cell per step (diagnostics: per call) of phase p; 0 for the
 * phases without a floor. gpu: the GPU step's phases; kappa_in_solve: kappa
 * built inside the solve (CPU or GPU step). */
double mm_phase_bytes_per_cell(mm_phase p, bool gpu, bool kappa_in_solve);

/* A short STREAM-like triad on every rank at once (collective, with the
 * OpenMP threads of each rank): the node's memory bandwidth in GB/s
 * (10^9 bytes per second, STREAM's count of 24 bytes per element). About
 * 200 MB per rank and a fraction of a second. */
MM_NODISCARD mm_err mm_bandwidth_probe(MPI_Comm comm, double *gbps);

#endif

/* Halo exchange of whole columns with non-blocking sends and receives.
 * The stencils are a cross (x and y separately), so no corners are needed:
 * x strips (MM_HALO columns of each interior row) and y strips (MM_HALO
 * interior rows, each one contiguous block) go out at once. */
#ifndef MM_HALO_H
#define MM_HALO_H

#include <stdbool.h>

#include "mm_grid.h"

#define MM_HALO_MAX_FIELDS 4

typedef struct {
  MPI_Comm comm;
  MPI_Datatype xstrip, ystrip; /* MM_HALO columns x nyl rows; nxl columns x MM_HALO rows */
  int east, west, north, south;
  /* The strips of direction d (0 west, 1 east, 2 south, 3 north), each
   * height[d] rows of width[d] elements, rows `pitch` elements apart:
   * off_send[d] is the first element of what the neighbour there needs (in
   * the frame of the block), off_recv[d] the first of what it sends (in the
   * halo). The MPI types above are these; the GPU step copies them. */
  size_t off_send[4], off_recv[4];
  size_t width[4], height[4], pitch;
  MPI_Request req[8 * MM_HALO_MAX_FIELDS];
  int nreq;
  bool fail_next; /* fault injection: the next exchange's first send to a neighbour fails (count -1)
                   */
} mm_halo;

MM_NODISCARD mm_err mm_halo_create(const mm_grid *g, mm_halo *h);
void mm_halo_destroy(mm_halo *h);
/* Post the exchange of nfield column-contiguous fields (each ncol_h * nz).
 * A send or receive that cannot be posted ends the run: the neighbours would
 * wait for its message for ever, before any agreement could stop them. The
 * rank prints the error (rank, the MPI call and MPI's message) and calls
 * MPI_Abort with exit status 1, after posting all the others. */
MM_NODISCARD mm_err mm_halo_start(mm_halo *h, double *const *fields, int nfield);
/* Wait for the exchange posted by mm_halo_start. */
MM_NODISCARD mm_err mm_halo_finish(mm_halo *h);

#endif

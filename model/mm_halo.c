#include "mm_halo.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

mm_err mm_halo_create(const mm_grid *g, mm_halo *h) {
  memset(h, 0, sizeof *h);
  h->comm = g->cart;
  h->west = g->west;
  h->east = g->east;
  h->south = g->south;
  h->north = g->north;
  const int nz = g->nz;
  h->pitch = (size_t)g->nxh * (size_t)nz;
  for (int d = 0; d < 2; d++) { /* x strips: for each of the nyl rows, MM_HALO columns */
    h->width[d] = (size_t)MM_HALO * (size_t)nz;
    h->height[d] = (size_t)g->nyl;
  }
  for (int d = 2; d < 4; d++) { /* y strips: MM_HALO rows of the nxl columns */
    h->width[d] = (size_t)g->nxl * (size_t)nz;
    h->height[d] = MM_HALO;
  }
  /* MPI counts and strides are int: a rank's strip beyond that would be
   * cut without a word */
  MM_REQUIRE(h->pitch <= INT_MAX && h->width[2] <= INT_MAX, MM_ERR_INPUT,
             "a rank's block of %d x %d columns of %d levels is too large for MPI's int counts: "
             "use more ranks",
             g->nxl, g->nyl, nz);
  const int pitch = (int)h->pitch;
  MM_MPI(MPI_Type_vector((int)h->height[0], (int)h->width[0], pitch, MPI_DOUBLE, &h->xstrip));
  MM_MPI(MPI_Type_commit(&h->xstrip));
  MM_MPI(MPI_Type_vector((int)h->height[2], (int)h->width[2], pitch, MPI_DOUBLE, &h->ystrip));
  MM_MPI(MPI_Type_commit(&h->ystrip));
  /* what goes west is our first interior columns; it fills the east halo of
   * the west neighbour, and so on */
  h->off_send[0] = mm_col(g, 0, 0) * nz;
  h->off_send[1] = mm_col(g, g->nxl - MM_HALO, 0) * nz;
  h->off_send[2] = mm_col(g, 0, 0) * nz;
  h->off_send[3] = mm_col(g, 0, g->nyl - MM_HALO) * nz;
  h->off_recv[0] = mm_col(g, -MM_HALO, 0) * nz;
  h->off_recv[1] = mm_col(g, g->nxl, 0) * nz;
  h->off_recv[2] = mm_col(g, 0, -MM_HALO) * nz;
  h->off_recv[3] = mm_col(g, 0, g->nyl) * nz;
  return MM_OK;
}

void mm_halo_destroy(mm_halo *h) {
  if (h->xstrip) (void)MPI_Type_free(&h->xstrip); /* unchecked: clean-up */
  if (h->ystrip) (void)MPI_Type_free(&h->ystrip); /* unchecked: clean-up */
  memset(h, 0, sizeof *h);
}

mm_err mm_halo_start(mm_halo *h, double *const *fields, int nfield) {
  MM_REQUIRE(nfield <= MM_HALO_MAX_FIELDS && h->nreq == 0, MM_ERR_RUN,
             "halo exchange of %d fields (at most %d, none in flight)", nfield, MM_HALO_MAX_FIELDS);
  const int nbr[4] = {h->west, h->east, h->south, h->north};
  /* the message received from direction d was sent towards opposite(d) */
  const int opposite[4] = {1, 0, 3, 2};
  int count = h->fail_next ? -1 : 1; /* fault injection: MPI_ERR_COUNT, to a neighbour */
  h->fail_next = false;
  mm_err err = MM_OK;
  /* every call is made, a failed one with its request null, so that the
   * neighbours get all that can be sent */
  for (int f = 0; f < nfield; f++)
    for (int d = 0; d < 4; d++) {
      MPI_Datatype t = d < 2 ? h->xstrip : h->ystrip;
      int tag_recv = 4 * f + opposite[d], tag_send = 4 * f + d;
      MPI_Request *r = &h->req[h->nreq++];
      mm_err e =
          MM_MPI_ERR(MPI_Irecv(fields[f] + h->off_recv[d], 1, t, nbr[d], tag_recv, h->comm, r));
      if (e != MM_OK) *r = MPI_REQUEST_NULL;
      if (err == MM_OK) err = e;
      r = &h->req[h->nreq++];
      const int n = nbr[d] == MPI_PROC_NULL ? 1 : count;
      e = MM_MPI_ERR(MPI_Isend(fields[f] + h->off_send[d], n, t, nbr[d], tag_send, h->comm, r));
      if (e != MM_OK) *r = MPI_REQUEST_NULL;
      if (err == MM_OK) err = e;
      if (nbr[d] != MPI_PROC_NULL) count = 1;
    }
  if (err != MM_OK) {
    int rank = -1;
    (void)MPI_Comm_rank(h->comm, &rank); /* unchecked: for the message only */
    fprintf(stderr,
            "minimodel: error (rank %d): %s; its neighbours wait for the halo it could not "
            "exchange: the run is ended (MPI_Abort, exit status %d)\n",
            rank, mm_error_message(), MM_ERR_RUN);
    fflush(stderr);
    MPI_Abort(h->comm, MM_ERR_RUN); /* unchecked: does not return */
  }
  return err;
}

mm_err mm_halo_finish(mm_halo *h) {
  const int nreq = h->nreq;
  h->nreq = 0;
  MM_MPI(MPI_Waitall(nreq, h->req, MPI_STATUSES_IGNORE));
  return MM_OK;
}

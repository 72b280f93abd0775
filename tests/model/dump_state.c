/* Run a configuration and write the global state and diagnostics as raw
 * doubles, for bitwise comparisons between runs (decomposition invariance).
 * usage: dump_state CONFIG.ini OUT.bin [SECTION.KEY=VALUE...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_model_private.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 3) {
    fprintf(stderr, "usage: dump_state CONFIG.ini OUT.bin [S.K=V...]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  mm_config_override ovr[16];
  int n_ovr = 0;
  for (int a = 3; a < argc && n_ovr < 16; a++)
    ovr[n_ovr++].text = argv[a];
  mm_config cfg;
  mm_model *m = NULL;
  if (mm_config_load(&cfg, argv[1], ovr, n_ovr) != MM_OK ||
      mm_model_create(&cfg, MPI_COMM_WORLD, &m) != MM_OK) {
    fprintf(stderr, "dump_state: %s\n", mm_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  /* DUMP_STATE_STREAM=1: T* and S* written with non-temporal stores, as on
   * grids larger than the cache (mm_model_private.h, stream_next), which
   * the test grids are not */
  const char *stream = getenv("DUMP_STATE_STREAM");
  if (stream && strcmp(stream, "1") == 0) {
    if (!m->kappa_in_solve) {
      fprintf(stderr, "dump_state: DUMP_STATE_STREAM needs a solver with kappa in the solve\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    m->stream_next = 1;
  }
  for (long s = 0; s < cfg.run_steps; s++)
    if (mm_model_step(m, NULL) != MM_OK) {
      fprintf(stderr, "dump_state: %s\n", mm_error_message());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  mm_diag d;
  if (mm_model_diagnostics(m, &d) != MM_OK) {
    fprintf(stderr, "dump_state: %s\n", mm_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const mm_grid *g = &m->grid;
  const int nz = g->nz;
  /* pack the block: header (i0, j0, nxl, nyl) then T and S of each column */
  const size_t nb = (size_t)g->nxl * g->nyl * nz;
  double *block = malloc((4 + 2 * nb) * sizeof *block);
  block[0] = g->i0;
  block[1] = g->j0;
  block[2] = g->nxl;
  block[3] = g->nyl;
  size_t p = 4;
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++) {
      memcpy(block + p, m->temp + mm_col(g, i, j) * nz, nz * sizeof(double));
      memcpy(block + p + nb, m->salt + mm_col(g, i, j) * nz, nz * sizeof(double));
      p += nz;
    }
  int count = (int)(4 + 2 * nb), *counts = NULL, *displs = NULL;
  double *all = NULL;
  if (g->rank == 0) {
    counts = malloc(g->nranks * sizeof *counts);
    displs = malloc(g->nranks * sizeof *displs);
  }
  MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, g->cart);
  size_t total = 0;
  if (g->rank == 0) {
    for (int r = 0; r < g->nranks; r++)
      displs[r] = (int)total, total += counts[r];
    all = malloc(total * sizeof *all);
  }
  MPI_Gatherv(block, count, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, g->cart);
  if (g->rank == 0) {
    const size_t ng = (size_t)g->nx * g->ny * nz;
    double *glob = calloc(2 * ng, sizeof *glob);
    for (int r = 0; r < g->nranks; r++) {
      const double *b = all + displs[r];
      const int i0 = (int)b[0], j0 = (int)b[1], nxl = (int)b[2], nyl = (int)b[3];
      const size_t bn = (size_t)nxl * nyl * nz;
      size_t q = 4;
      for (int j = 0; j < nyl; j++)
        for (int i = 0; i < nxl; i++) {
          const size_t c = ((size_t)(j0 + j) * g->nx + (i0 + i)) * nz;
          memcpy(glob + c, b + q, nz * sizeof(double));
          memcpy(glob + ng + c, b + q + bn, nz * sizeof(double));
          q += nz;
        }
    }
    const double diag[6] = {d.heat_content, d.salt_content, d.temp_min,
                            d.temp_max,     d.salt_min,     d.salt_max};
    FILE *f = fopen(argv[2], "wb");
    if (!f || fwrite(glob, sizeof *glob, 2 * ng, f) != 2 * ng ||
        fwrite(diag, sizeof *diag, 6, f) != 6 || fclose(f) != 0) {
      fprintf(stderr, "dump_state: cannot write %s\n", argv[2]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("dump_state: %d ranks (%d x %d) x %d threads, heat %.17g salt %.17g, stores %s\n",
           g->nranks, g->px, g->py, m->nthreads, d.heat_content, d.salt_content,
           m->stream_next ? "streamed" : "cached");
    free(glob);
    free(all);
    free(counts);
    free(displs);
  }
  free(block);
  mm_model_destroy(m);
  MPI_Finalize();
  return 0;
}

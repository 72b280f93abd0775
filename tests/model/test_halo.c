/* Halo exchange on an odd number of ranks with periodic and walled edges:
 * every halo cell holds its owner's value, or 0 beyond a wall. */
#include "mm_halo.h"
#include "mm_test.h"

static double code(int ig, int jg, int k) {
  return 1000.0 * ig + jg + 1e-3 * k + 0.5;
}

static void check(int rx, int ry, int px, int py) {
  mm_config cfg;
  char ini[512];
  snprintf(ini, sizeof ini,
           "[grid]\nnx = 13\nny = 11\nnz = 3\nranks_x = %d\nranks_y = %d\nperiodic_x = %s\n"
           "periodic_y = %s\n",
           rx, ry, px ? "true" : "false", py ? "true" : "false");
  if (mm_config_load_string(&cfg, "halo", ini, NULL, 0) != MM_OK) {
    fprintf(stderr, "%s\n", mm_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  mm_grid g;
  mm_halo h;
  if (mm_grid_create(&cfg, MPI_COMM_WORLD, &g) != MM_OK || mm_halo_create(&g, &h) != MM_OK) {
    fprintf(stderr, "%s\n", mm_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int nz = g.nz;
  double *f = calloc(g.ncol_h * nz, sizeof *f);
  for (int j = 0; j < g.nyl; j++)
    for (int i = 0; i < g.nxl; i++)
      for (int k = 0; k < nz; k++)
        f[mm_col(&g, i, j) * nz + k] = code(g.i0 + i, g.j0 + j, k);
  double *fields[1] = {f};
  TEST_OK(mm_halo_start(&h, fields, 1));
  TEST_OK(mm_halo_finish(&h));
  int bad = 0;
  for (int j = -MM_HALO; j < g.nyl + MM_HALO; j++)
    for (int i = -MM_HALO; i < g.nxl + MM_HALO; i++) {
      const int in_x = i >= 0 && i < g.nxl, in_y = j >= 0 && j < g.nyl;
      if (in_x == in_y && !(in_x && in_y)) continue; /* corners are not exchanged */
      int ig = g.i0 + i, jg = g.j0 + j, outside = 0;
      if (ig < 0 || ig >= g.nx) {
        if (px)
          ig = (ig + g.nx) % g.nx;
        else
          outside = 1;
      }
      if (jg < 0 || jg >= g.ny) {
        if (py)
          jg = (jg + g.ny) % g.ny;
        else
          outside = 1;
      }
      for (int k = 0; k < nz; k++) {
        const double expect = outside ? 0.0 : code(ig, jg, k);
        if (f[mm_col(&g, i, j) * nz + k] != expect) bad++;
      }
    }
  TEST_CHECK(bad == 0, "ranks %dx%d periodic %d/%d: %d wrong halo values on rank %d", rx, ry, px,
             py, bad, g.rank);
  free(f);
  mm_halo_destroy(&h);
  mm_grid_destroy(&g);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  for (int px = 0; px <= 1; px++)
    for (int py = 0; py <= 1; py++) {
      check(n, 1, px, py);
      check(1, n, px, py);
    }
  int total = 0;
  MPI_Allreduce(&mm_test_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return total ? 1 : 0;
}

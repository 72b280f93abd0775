/* Monotonicity: superbee advection of a step-shaped tracer creates no new
 * extrema (uniform flow in a periodic channel, and a gyre over a bowl). */
#include "test_model_common.h"

static void check(const char *flow, const char *bathy, const char *periodic, double dt) {
  char ini[1024];
  snprintf(ini, sizeof ini,
           "[run]\ndt = %g\n[grid]\nnx = 32\nny = 24\nnz = 3\ndx = 10000\ndy = 10000\n"
           "depth = 300\nbathymetry = %s\n%s\n[physics]\nkappa_v = 0\nkappa_h = 0\n"
           "advection = superbee\nflow = %s\nflow_speed = 0.5\n[initial]\npattern = step\n"
           "t_surface = 10\nt_bottom = 2\n",
           dt, bathy, periodic, flow);
  mm_model *m = test_model(ini, MPI_COMM_WORLD);
  mm_diag d0, d;
  TEST_OK(mm_model_diagnostics(m, &d0));
  double lo = d0.temp_min, hi = d0.temp_max, moved = 0.0;
  for (int s = 0; s < 150; s++) {
    test_steps(m, 1);
    TEST_OK(mm_model_diagnostics(m, &d));
    const double eps = 1e-12 * (hi - lo);
    TEST_CHECK(d.temp_min >= lo - eps && d.temp_max <= hi + eps,
               "%s/%s step %d: [%.17g, %.17g] outside [%g, %g]", flow, bathy, s + 1, d.temp_min,
               d.temp_max, lo, hi);
    if (d.temp_min < lo - eps || d.temp_max > hi + eps) break;
  }
  /* the front moved and was smoothed: values strictly between the bounds */
  const mm_grid *g = &m->grid;
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++) {
      const double v = m->temp[mm_col(g, i, j) * g->nz];
      if (g->kmt[mm_col(g, i, j)] > 0 && v > lo + 0.01 && v < hi - 0.01) moved = 1.0;
    }
  double any = 0.0;
  MPI_Allreduce(&moved, &any, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  TEST_CHECK(any > 0.0, "%s/%s: the step did not move", flow, bathy);
  mm_model_destroy(m);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  check("uniform", "flat", "periodic_x = true", 4000.0);
  check("gyre", "bowl", "", 1000.0);
  check("gyre", "seamount", "", 1200.0);
  return test_finish();
}

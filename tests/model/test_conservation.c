/* Conservation: with no surface flux the heat and salt content stay constant
 * to 1e-13 relative over 100 steps with flow, bathymetry and convection; with
 * a flux the heat content changes by Q x wet area x time. */
#include "test_model_common.h"

static const char *base =
    "[run]\ndt = 3600\n[grid]\nnx = 24\nny = 20\nnz = 12\ndx = 20000\ndy = 20000\n"
    "depth = 3000\ndz_surface = 50\nbathymetry = %s\n[physics]\nkappa_v = 1e-5\n"
    "kappa_convect = 0.5\nkappa_h = 100\nadvection = %s\nflow = gyre\nflow_speed = 0.3\n"
    "[forcing]\nheat_flux = %g\n[initial]\npattern = stratified\n";

static void check(const char *bathy, const char *adv, double q) {
  char ini[1024];
  snprintf(ini, sizeof ini, base, bathy, adv, q);
  mm_model *m = test_model(ini, MPI_COMM_WORLD);
  mm_diag d0, d1;
  TEST_OK(mm_model_diagnostics(m, &d0));
  const int steps = 100;
  test_steps(m, steps);
  TEST_OK(mm_model_diagnostics(m, &d1));
  /* wet surface area */
  const mm_grid *g = &m->grid;
  long wet = 0, gwet = 0;
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++)
      wet += g->kmt[mm_col(g, i, j)] > 0;
  MPI_Allreduce(&wet, &gwet, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  const double expected = q * (double)gwet * g->dx * g->dy * m->cfg.run_dt * steps;
  const double dh = d1.heat_content - d0.heat_content;
  const double ds = d1.salt_content - d0.salt_content;
  if (q == 0.0) {
    TEST_CHECK(fabs(dh) <= 1e-13 * fabs(d0.heat_content), "%s/%s: heat drift %.3e relative", bathy,
               adv, dh / d0.heat_content);
  } else {
    TEST_CHECK(fabs(dh - expected) <= 1e-9 * fabs(expected),
               "%s/%s: heat change %.15e, flux integral %.15e (rel %.3e)", bathy, adv, dh, expected,
               (dh - expected) / expected);
  }
  TEST_CHECK(fabs(ds) <= 1e-13 * fabs(d0.salt_content), "%s/%s: salt drift %.3e relative", bathy,
             adv, ds / d0.salt_content);
  /* and the state did change: the test is not vacuous */
  TEST_CHECK(d1.temp_max != d0.temp_max || d1.temp_min != d0.temp_min, "state did not evolve");
  mm_model_destroy(m);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  check("bowl", "superbee", 0.0);
  check("seamount", "upwind", 0.0);
  check("slope", "superbee", 0.0);
  check("bowl", "superbee", -200.0);
  check("flat", "upwind", 150.0);
  return test_finish();
}

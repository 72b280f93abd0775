/* The stability limit of the explicit horizontal step (docs/physics.md,
 * "Stability of the explicit part"), advection and diffusion together, for
 * each advection scheme, dx != dy, the flow's own face transports:
 *   - where it has a closed form (a uniform channel flow, pure diffusion) the
 *     largest dt the check accepts (found by bisection) is that value;
 *   - at that dt the run is accepted and keeps the maximum principle (a step
 *     pattern never leaves its initial bounds) over many steps;
 *   - a dt a little above it is refused (exit status 2), and the dt the
 *     message suggests is accepted and within 1e-5 of the limit;
 *   - for upwind and none the limit is sharp: 5 % beyond it (the check
 *     bypassed) the maximum principle fails. */
#include <string.h>

#include "test_model_common.h"

typedef struct {
  const char *name;
  const char *advection, *flow, *bathymetry;
  int periodic_x;
  double dx, dy, kappa_h, speed;
  double expect; /* the closed-form largest stable dt (s), 0 where none */
  int sharp;     /* the bound is the von Neumann limit: 5 % beyond it fails */
} scase;

static int config_of(const scase *c, double dt, mm_config *cfg) {
  char ini[1024];
  snprintf(ini, sizeof ini,
           "[run]\ndt = %.17g\n[grid]\nnx = 32\nny = 24\nnz = 3\ndx = %.17g\ndy = %.17g\n"
           "depth = 300\nbathymetry = %s\nperiodic_x = %s\n[physics]\nkappa_v = 1e-4\n"
           "kappa_h = %.17g\nadvection = %s\nflow = %s\nflow_speed = %.17g\n[initial]\n"
           "pattern = step\nt_surface = 10\nt_bottom = 2\n",
           dt, c->dx, c->dy, c->bathymetry, c->periodic_x ? "true" : "false", c->kappa_h,
           c->advection, c->flow, c->speed);
  if (mm_config_load_string(cfg, "test", ini, NULL, 0) == MM_OK) return 1;
  fprintf(stderr, "%s: config: %s\n", c->name, mm_error_message());
  return 0;
}

/* mm_model_create at dt: MM_OK and the model, or the error (message in msg). */
static MM_NODISCARD mm_err create(const scase *c, double dt, mm_model **m, char *msg, size_t len) {
  mm_config cfg;
  *m = NULL;
  if (!config_of(c, dt, &cfg)) return MM_ERR_INPUT;
  mm_err err = mm_model_create(&cfg, MPI_COMM_WORLD, m);
  snprintf(msg, len, "%s", err == MM_OK ? "" : mm_error_message());
  mm_error_clear();
  if (err != MM_OK) {
    mm_model_destroy(*m);
    *m = NULL;
  }
  return err;
}

/* Steps of the model; returns 1 while T stays within [lo, hi] (to round-off). */
static int stays_within(mm_model *m, int steps, double lo, double hi, int *at) {
  mm_diag d;
  const double eps = 1e-12 * (hi - lo);
  for (int s = 0; s < steps; s++) {
    test_steps(m, 1);
    TEST_OK(mm_model_diagnostics(m, &d));
    if (d.nonfinite || d.temp_min < lo - eps || d.temp_max > hi + eps) {
      *at = s + 1;
      return 0;
    }
  }
  return 1;
}

/* Whether the check accepts dt. */
static int accepts(const scase *c, double dt) {
  char msg[2048];
  mm_model *m = NULL;
  const int ok = create(c, dt, &m, msg, sizeof msg) == MM_OK;
  mm_model_destroy(m);
  return ok;
}

/* The largest dt the check accepts, to 1e-12 relative, by bisection (0 if
 * it accepts no dt between 1 s and 1e8 s, the largest run.dt, or every
 * one). The bracket starts from the dt the refusal of 1e8 s suggests when
 * that brackets the limit, else from [1 s, 1e8 s]. */
static double accepted_limit(const scase *c) {
  char msg[2048];
  mm_model *m = NULL;
  double lo = 1.0, hi = 1e8;
  if (!accepts(c, lo) || create(c, hi, &m, msg, sizeof msg) == MM_OK) {
    mm_model_destroy(m);
    return 0.0;
  }
  const char *use = strstr(msg, "use run.dt <= ");
  const double s = use ? strtod(use + strlen("use run.dt <= "), NULL) : 0.0;
  if (s > lo && s < hi && accepts(c, s) && !accepts(c, s * (1.0 + 2e-5)))
    lo = s, hi = s * (1.0 + 2e-5);
  while (hi - lo > 1e-12 * hi) {
    const double mid = 0.5 * (lo + hi);
    if (accepts(c, mid))
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

static void check(const scase *c) {
  char msg[2048];
  mm_model *m = NULL;
  const double limit = accepted_limit(c);
  TEST_CHECK(limit > 1.0, "%s: no limit between 1 s and 1e8 s", c->name);
  if (!(limit > 1.0)) return;
  if (c->expect > 0.0)
    TEST_CHECK(fabs(limit - c->expect) <= 1e-9 * c->expect,
               "%s: largest stable dt %.17g, expected %.17g", c->name, limit, c->expect);

  /* at the limit: accepted, and no new extrema over 200 steps */
  mm_err err = create(c, limit, &m, msg, sizeof msg);
  TEST_CHECK(err == MM_OK, "%s: dt = %.17g (the limit) refused: %s", c->name, limit, msg);
  if (err == MM_OK) {
    mm_diag d0;
    TEST_OK(mm_model_diagnostics(m, &d0));
    int at = 0;
    TEST_CHECK(stays_within(m, 200, d0.temp_min, d0.temp_max, &at),
               "%s: at the limit T leaves [%g, %g] at step %d", c->name, d0.temp_min, d0.temp_max,
               at);
    if (c->sharp) {
      /* the same step 5 % beyond the limit, the check bypassed: the weight
       * of the cell itself is negative, and the maximum principle fails */
      mm_model_destroy(m);
      TEST_OK(create(c, limit, &m, msg, sizeof msg));
      m->dt_area *= 1.05;
      TEST_CHECK(!stays_within(m, 400, d0.temp_min, d0.temp_max, &at),
                 "%s: 5 %% beyond the limit T still within its bounds: the limit is not sharp",
                 c->name);
    }
    mm_model_destroy(m);
  }

  /* just above the limit: refused, with a dt that passes */
  const double above = limit * (1.0 + 1e-9);
  err = create(c, above, &m, msg, sizeof msg);
  TEST_CHECK(err == MM_ERR_INPUT, "%s: dt = %.17g (above the limit) accepted", c->name, above);
  const char *use = strstr(msg, "use run.dt <= ");
  TEST_CHECK(use != NULL, "%s: no dt suggested: %s", c->name, msg);
  if (!use) return;
  const double suggested = strtod(use + strlen("use run.dt <= "), NULL);
  TEST_CHECK(suggested <= limit && suggested >= limit * (1.0 - 1e-5),
             "%s: suggested %.17g for the limit %.17g", c->name, suggested, limit);
  err = create(c, suggested, &m, msg, sizeof msg);
  TEST_CHECK(err == MM_OK, "%s: the suggested dt %.17g is refused: %s", c->name, suggested, msg);
  mm_model_destroy(m);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const double dx = 10000.0, dy = 6000.0, u = 0.5, kh = 400.0;
  const double area = dx * dy;
  const scase cases[] = {
      /* a uniform channel flow: transport u dy out of every cell, 4 wet
       * faces away from the walls */
      {"superbee uniform", "superbee", "uniform", "flat", 1, dx, dy, 0.0, u, dx / u, 0},
      {"upwind uniform + diffusion", "upwind", "uniform", "flat", 1, dx, dy, kh, u,
       area / (u * dy + 2.0 * (kh * dy / dx) + 2.0 * (kh * dx / dy)), 1},
      {"none, diffusion", "none", "none", "flat", 0, dx, dy, kh, 0.0,
       area / (2.0 * (kh * dy / dx) + 2.0 * (kh * dx / dy)), 1},
      /* superbee with diffusion: the root of x (2 O + D) - x^2 O^2 = 1 */
      {"superbee uniform + diffusion", "superbee", "uniform", "flat", 1, dx, dy, kh, u, 0.0, 0},
      /* gyres over land: coastal jets, faces dry at depth */
      {"superbee gyre bowl + diffusion", "superbee", "gyre", "bowl", 0, dx, dy, kh, u, 0.0, 0},
      {"upwind gyre seamount + diffusion", "upwind", "gyre", "seamount", 0, dy, dx, kh, u, 0.0, 0},
      {"superbee gyre slope", "superbee", "gyre", "slope", 0, dx, dy, 0.0, u, 0.0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    check(&cases[i]);
  /* superbee with diffusion in the channel: the closed form of the root */
  {
    const double O = u * dy, D = 2.0 * (kh * dy / dx) + 2.0 * (kh * dx / dy);
    const double a = 2.0 * O + D, x = (a - sqrt(a * a - 4.0 * O * O)) / (2.0 * O * O);
    const double limit = accepted_limit(&cases[3]);
    TEST_CHECK(fabs(limit - x * area) <= 1e-9 * x * area,
               "superbee + diffusion: largest stable dt %.17g, expected %.17g", limit, x * area);
  }
  return test_finish();
}

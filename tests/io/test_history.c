/* History file: written by 1, 2, 4 ranks (any decomposition, optional
 * deflate), read back on rank 0 with the serial netCDF API: every value of
 * every record, _FillValue on land, dimensions, coordinates and attributes.
 *
 * usage: test_history SECTION.KEY=VALUE ...   (output.dir, run.name, grid.ranks_x, ...) */
#include "io_test.h"

enum { IO_TEST_RECORDS = 3 };
#define IO_TEST_VERSION "test-1.2.3"

/* Text attribute name of var equals want. */
static bool att_is(int nc, int var, const char *name, const char *want) {
  size_t len = 0;
  if (nc_inq_attlen(nc, var, name, &len) != NC_NOERR) return false;
  char *text = calloc(len + 1, 1);
  bool same = text && nc_get_att_text(nc, var, name, text) == NC_NOERR && strcmp(text, want) == 0;
  free(text);
  return same;
}

/* Text attribute name of var contains part. */
static bool att_has(int nc, int var, const char *name, const char *part) {
  size_t len = 0;
  if (nc_inq_attlen(nc, var, name, &len) != NC_NOERR) return false;
  char *text = calloc(len + 1, 1);
  bool has = text && nc_get_att_text(nc, var, name, text) == NC_NOERR && strstr(text, part);
  free(text);
  return has;
}

static int varid(int nc, const char *name) {
  int id = -1;
  TEST_CHECK(nc_inq_varid(nc, name, &id) == NC_NOERR, "variable %s missing", name);
  return id;
}

static size_t dimlen(int nc, const char *name) {
  int id = -1;
  size_t len = 0;
  TEST_CHECK(nc_inq_dimid(nc, name, &id) == NC_NOERR, "dimension %s missing", name);
  IO_NC(nc_inq_dimlen(nc, id, &len));
  return len;
}

/* The diagnostics of record r (made-up values, exactly representable). */
static mm_diag record_diag(int r) {
  mm_diag d = {0};
  d.step = 10L * (r + 1);
  d.time = 6000.0 * (r + 1);
  d.heat_content = 1.5e21 + 1e15 * r;
  d.salt_content = 2.25e18 - 1e12 * r;
  d.temp_min = -1.0 - r;
  d.temp_max = 30.0 + r;
  d.salt_min = 34.0 - r;
  d.salt_max = 36.0 + r;
  return d;
}

/* Check a 4-D field against the analytic values, fill on land. */
static void check_field(int nc, const char *name, const mm_config *cfg, const mm_grid *g,
                        double scale, double offset, const char *units, const char *std_name) {
  const int var = varid(nc, name);
  const size_t nx = (size_t)g->nx, ny = (size_t)g->ny, nz = (size_t)g->nz;
  const size_t n = IO_TEST_RECORDS * nz * ny * nx;
  double *v = malloc(n * sizeof *v);
  IO_NC(nc_get_var_double(nc, var, v));
  int *kmt = malloc(ny * nx * sizeof *kmt); /* expected kmt of every column */
  for (int j = 0; j < g->ny; j++)
    for (int i = 0; i < g->nx; i++)
      kmt[(size_t)j * nx + (size_t)i] = mm_grid_kmt_global(cfg, g, i, j);
  long wrong = 0, land = 0;
  for (int r = 0; r < IO_TEST_RECORDS; r++)
    for (int k = 0; k < g->nz; k++)
      for (int j = 0; j < g->ny; j++)
        for (int i = 0; i < g->nx; i++) {
          const double got = v[(((size_t)r * nz + (size_t)k) * ny + (size_t)j) * nx + (size_t)i];
          const bool wet = k < kmt[(size_t)j * nx + (size_t)i];
          const double want = wet ? io_test_value(i, j, k, scale, offset + r) : NC_FILL_DOUBLE;
          land += !wet;
          if (got != want && wrong++ < 5)
            TEST_CHECK(got == want, "%s[%d][%d][%d][%d] = %.17g, expected %.17g", name, r, k, j, i,
                       got, want);
        }
  TEST_CHECK(wrong == 0, "%s: %ld wrong values", name, wrong);
  TEST_CHECK(land > 0, "%s: the test grid has no land", name);
  free(v);
  free(kmt);

  double fill = 0;
  IO_NC(nc_get_att_double(nc, var, "_FillValue", &fill));
  char fill_text[32];
  snprintf(fill_text, sizeof fill_text, "%.15g", fill);
  TEST_CHECK(fill == NC_FILL_DOUBLE && strcmp(fill_text, "9.96920996838687e+36") == 0,
             "%s:_FillValue = %s", name, fill_text);
  TEST_CHECK(att_is(nc, var, "units", units), "%s:units", name);
  TEST_CHECK(att_is(nc, var, "standard_name", std_name), "%s:standard_name", name);

  /* chunks: one record, at most about 4 MiB; deflate as configured */
  int storage = -1, shuffle = -1, deflate = -1, level = -1;
  size_t chunk[4] = {0};
  IO_NC(nc_inq_var_chunking(nc, var, &storage, chunk));
  TEST_CHECK(storage == NC_CHUNKED && chunk[0] == 1 && chunk[1] == nz && chunk[2] >= 1 &&
                 chunk[2] <= ny && chunk[3] >= 1 && chunk[3] <= nx,
             "%s: chunks (%zu, %zu, %zu, %zu)", name, chunk[0], chunk[1], chunk[2], chunk[3]);
  const size_t bytes = chunk[1] * chunk[2] * chunk[3] * sizeof(double);
  TEST_CHECK(bytes <= ((size_t)4 << 20), "%s: chunk of %zu bytes", name, bytes);
  if (nz * ny * nx * sizeof(double) > ((size_t)4 << 20))
    TEST_CHECK(chunk[2] < ny, "%s: a record over 4 MiB is not split in y", name);
  IO_NC(nc_inq_var_deflate(nc, var, &shuffle, &deflate, &level));
  TEST_CHECK(deflate == (cfg->deflate > 0), "%s: deflate %d, configured %ld", name, deflate,
             cfg->deflate);
  if (cfg->deflate > 0) TEST_CHECK(level == cfg->deflate, "%s: deflate level %d", name, level);
}

/* Horizontal coordinate name: n cell centres (i + 0.5) d (m) and the
 * attributes of axis; c has room for n values. */
static void check_horizontal(int nc, const char *name, int n, double d, const char *axis,
                             const char *std_name, double *c) {
  const int v = varid(nc, name);
  IO_NC(nc_get_var_double(nc, v, c));
  for (int i = 0; i < n; i++)
    TEST_CHECK(c[i] == (i + 0.5) * d, "%s[%d] = %g", name, i, c[i]);
  TEST_CHECK(att_is(nc, v, "units", "m") && att_is(nc, v, "axis", axis) &&
                 att_is(nc, v, "standard_name", std_name),
             "%s attributes", name);
}

static void check_file(const char *path, const mm_config *cfg, const mm_grid *g) {
  int nc = -1;
  int s = nc_open(path, NC_NOWRITE, &nc);
  TEST_CHECK(s == NC_NOERR, "%s: %s", path, nc_strerror(s));
  if (s != NC_NOERR) return;

  /* dimensions */
  TEST_CHECK(dimlen(nc, "time") == IO_TEST_RECORDS, "time");
  TEST_CHECK(dimlen(nc, "z") == (size_t)g->nz, "z");
  TEST_CHECK(dimlen(nc, "y") == (size_t)g->ny, "y");
  TEST_CHECK(dimlen(nc, "x") == (size_t)g->nx, "x");
  TEST_CHECK(dimlen(nc, "nv") == 2, "nv");
  int unlimited = -1, time_dim = -1;
  IO_NC(nc_inq_unlimdim(nc, &unlimited));
  IO_NC(nc_inq_dimid(nc, "time", &time_dim));
  TEST_CHECK(unlimited == time_dim, "time is not the unlimited dimension");

  /* global attributes */
  char decomposition[32], source[64];
  IO_TEST_FMT(decomposition, "%dx%d", g->px, g->py);
  IO_TEST_FMT(source, "minimodel %s", IO_TEST_VERSION);
  TEST_CHECK(att_is(nc, NC_GLOBAL, "Conventions", "CF-1.8"), "Conventions");
  TEST_CHECK(att_has(nc, NC_GLOBAL, "title", cfg->run_name), "title");
  TEST_CHECK(att_is(nc, NC_GLOBAL, "source", source), "source");
  TEST_CHECK(att_has(nc, NC_GLOBAL, "history", "Z: created by minimodel"), "history");
  TEST_CHECK(att_is(nc, NC_GLOBAL, "decomposition", decomposition), "decomposition %s",
             decomposition);
  char *configuration = mm_config_to_string(cfg);
  TEST_CHECK(att_is(nc, NC_GLOBAL, "configuration", configuration), "configuration");
  TEST_CHECK(att_has(nc, NC_GLOBAL, "configuration", "bathymetry = bowl"), "configuration");
  free(configuration);
  int ranks = 0;
  IO_NC(nc_get_att_int(nc, NC_GLOBAL, "mpi_ranks", &ranks));
  TEST_CHECK(ranks == g->nranks, "mpi_ranks = %d", ranks);

  /* coordinates */
  double *c = malloc((size_t)(g->nx + g->ny + 2 * g->nz + 2) * sizeof *c);
  check_horizontal(nc, "x", g->nx, g->dx, "X", "projection_x_coordinate", c);
  check_horizontal(nc, "y", g->ny, g->dy, "Y", "projection_y_coordinate", c);
  int v = varid(nc, "z");
  IO_NC(nc_get_var_double(nc, v, c));
  for (int k = 0; k < g->nz; k++)
    TEST_CHECK(c[k] == g->z_t[k], "z[%d] = %g", k, c[k]);
  TEST_CHECK(att_is(nc, v, "units", "m") && att_is(nc, v, "positive", "down") &&
                 att_is(nc, v, "axis", "Z") && att_is(nc, v, "standard_name", "depth") &&
                 att_is(nc, v, "bounds", "z_bnds"),
             "z attributes");
  v = varid(nc, "z_bnds");
  IO_NC(nc_get_var_double(nc, v, c));
  for (int k = 0; k < g->nz; k++)
    TEST_CHECK(c[2 * k] == g->z_w[k] && c[2 * k + 1] == g->z_w[k + 1], "z_bnds[%d]", k);
  /* CF 7.1: a boundary variable takes the attributes of its coordinate */
  size_t att_len = 0;
  TEST_CHECK(nc_inq_attlen(nc, v, "units", &att_len) == NC_ENOTATT &&
                 nc_inq_attlen(nc, v, "long_name", &att_len) == NC_ENOTATT,
             "z_bnds has units or a long_name of its own");
  v = varid(nc, "time");
  IO_NC(nc_get_var_double(nc, v, c));
  for (int r = 0; r < IO_TEST_RECORDS; r++)
    TEST_CHECK(c[r] == record_diag(r).time, "time[%d] = %g", r, c[r]);
  char time_units[MM_STR_MAX + 16];
  snprintf(time_units, sizeof time_units, "seconds since %s", cfg->start_date);
  TEST_CHECK(att_is(nc, v, "units", time_units) && att_is(nc, v, "axis", "T") &&
                 att_is(nc, v, "standard_name", "time") && att_is(nc, v, "calendar", "standard"),
             "time attributes (CF: seconds since run.start_date, standard_name, calendar)");
  free(c);

  /* per-record scalars */
  int steps[IO_TEST_RECORDS];
  IO_NC(nc_get_var_int(nc, varid(nc, "step"), steps));
  static const char *const diag_names[] = {"heat_content", "salt_content", "temp_min",
                                           "temp_max",     "salt_min",     "salt_max"};
  static const char *const diag_units[] = {"J", "kg", "degC", "degC", "g/kg", "g/kg"};
  for (int r = 0; r < IO_TEST_RECORDS; r++) {
    const mm_diag d = record_diag(r);
    TEST_CHECK(steps[r] == d.step, "step[%d] = %d", r, steps[r]);
    const double want[] = {d.heat_content, d.salt_content, d.temp_min,
                           d.temp_max,     d.salt_min,     d.salt_max};
    for (int q = 0; q < 6; q++) {
      double got = 0;
      const size_t at = (size_t)r;
      IO_NC(nc_get_var1_double(nc, varid(nc, diag_names[q]), &at, &got));
      TEST_CHECK(got == want[q], "%s[%d] = %.17g", diag_names[q], r, got);
      if (r == 0)
        TEST_CHECK(att_is(nc, varid(nc, diag_names[q]), "units", diag_units[q]), "%s:units",
                   diag_names[q]);
    }
  }

  /* kmt */
  int *kmt = malloc((size_t)g->nx * (size_t)g->ny * sizeof *kmt);
  IO_NC(nc_get_var_int(nc, varid(nc, "kmt"), kmt));
  for (int j = 0; j < g->ny; j++)
    for (int i = 0; i < g->nx; i++)
      TEST_CHECK(kmt[j * g->nx + i] == mm_grid_kmt_global(cfg, g, i, j), "kmt[%d][%d] = %d", j, i,
                 kmt[j * g->nx + i]);
  free(kmt);

  check_field(nc, "temp", cfg, g, 1.0, 0.0, "degC", "sea_water_potential_temperature");
  check_field(nc, "salt", cfg, g, -0.001, 35.0, "g/kg", "sea_water_salinity");
  IO_NC(nc_close(nc));
}

int main(int argc, char **argv) {
  mm_config cfg;
  mm_grid g;
  io_test_start(&argc, &argv, &cfg, &g);

  mm_history *h = NULL;
  mm_err err =
      mm_history_create(&g, &cfg, &(mm_io_origin){IO_TEST_VERSION, "minimodel test.ini"}, &h);
  TEST_CHECK(err == MM_OK && h, "create: %s", mm_error_message());
  for (int r = 0; err == MM_OK && r < IO_TEST_RECORDS; r++) {
    double *temp = io_test_field(&g, 1.0, r), *salt = io_test_field(&g, -0.001, 35.0 + r);
    const mm_diag d = record_diag(r);
    err = mm_history_write(h, &g, temp, salt, &d);
    TEST_CHECK(err == MM_OK, "write %d: %s", r, mm_error_message());
    free(temp);
    free(salt);
  }
  err = mm_history_close(h);
  TEST_CHECK(err == MM_OK, "close: %s", mm_error_message());
  TEST_CHECK(mm_history_close(NULL) == MM_OK, "close(NULL)");

  MPI_Barrier(MPI_COMM_WORLD);
  if (g.rank == 0) {
    char path[2 * MM_STR_MAX + 8];
    IO_TEST_FMT(path, "%s/%s.nc", cfg.output_dir, cfg.run_name);
    check_file(path, &cfg, &g);
  }
  return io_test_finish(&g);
}

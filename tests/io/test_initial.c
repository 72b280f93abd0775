/* Initial-state file: read from NetCDF-4 and classic files (land ignored,
 * set to 0), refused with MM_ERR_INPUT on every rank for other dimensions,
 * dimensions not named (z, y, x) in this order (on a cubic grid, (x, y, z)
 * would otherwise be read transposed), a missing variable, a non-finite or
 * missing (fill, missing_value, outside valid_min, valid_max or valid_range:
 * CF) wet value, a valid range that is malformed, values packed with scale_factor /
 * add_offset, units other than degrees Celsius and g/kg (or practical
 * salinity; "1" with another standard_name is a mass fraction), coordinate
 * variables z, y, x that are not the model's levels (positive down) and
 * increasing, a missing file.
 *
 * usage: test_initial output.dir=DIR [SECTION.KEY=VALUE ...] */
#include <unistd.h>

#include "io_test.h"
#include "nc_util.h"

/* What make_file puts in the file. */
typedef enum {
  GOOD,          /* temp, salt on (nz, ny, nx), NaN on land */
  EXTRA_LEVEL,   /* (nz + 1, ny, nx) */
  FLAT,          /* temp of (ny, nx) */
  NO_SALT,       /* temp only */
  NAN_WET,       /* NaN in one wet cell of salt */
  FILL_WET,      /* one wet cell of temp never written (the fill value) */
  TRANSPOSED,    /* dimensions named (x, y, z), of lengths (nz, ny, nx) */
  OTHER_NAMES,   /* dimensions named (depth, lat, lon) */
  PACKED,        /* salt stored as short with scale_factor, add_offset (CF packing) */
  OFFSET_ONLY,   /* temp with add_offset alone */
  IDENTITY,      /* temp with scale_factor = 1, add_offset = 0: values as stored */
  UNITS_OK,      /* temp in "degree_Celsius", salt in "g kg-1" */
  UNITS_SALT,    /* salt in "kg kg-1" (a mass fraction, 1000 times too small) */
  UNITS_TEMP,    /* temp in "degF" */
  MISSING_WET,   /* one wet cell of temp equal to its missing_value */
  UNITS_STR,     /* temp's units "°C" as an NC_STRING (netCDF4-python's non-ASCII text) */
  MISSING_TWO,   /* temp's missing_value {-99, -98}, one wet cell -98 */
  COORDS,        /* coordinate variables z (the model's level centres, as float,
                    positive = "down"), y and x increasing; salt in "1" with
                    standard_name sea_water_practical_salinity */
  Z_UP,          /* z = -(level centres), positive = "up" */
  Z_FLIPPED,     /* z from the floor up: the level centres in reverse order */
  Z_OTHER,       /* z on other levels (the centres times 1.01) */
  Y_FLIPPED,     /* y decreasing (rows north to south) */
  X_REPEATED,    /* x not increasing: x[2] = x[1] */
  SALT_FRACTION, /* salt in "1" with standard_name sea_water_salinity: kg/kg */
  VALID_IN,      /* temp's valid_min -1, valid_max 20000: every value inside */
  VALID_OUT,     /* temp's valid_range [-1, 20000], one wet cell 20001 (CF: missing) */
  VALID_BOTH,    /* temp's valid_range beside valid_max */
  VALID_F32,     /* temp as float, its valid_max 20000.3 a double, one wet cell the
                    float nearest it (20000.30078): at the bound, read */
  UNITS_PADDED,  /* temp's units "degC" padded with NULs to 200 bytes (a fixed-length
                    string of a Fortran writer): read */
  UNITS_NUL,     /* temp's units "degC", a NUL, "degF": not one text */
} file_kind;

/* The wet cell made bad by NAN_WET and FILL_WET: the middle column, level 1. */
static void bad_cell(const mm_config *cfg, const mm_grid *g, int *i, int *j, int *k) {
  *i = g->nx / 2;
  *j = g->ny / 2;
  *k = 1;
  TEST_CHECK(mm_grid_kmt_global(cfg, g, *i, *j) > 1, "bad cell is land");
}

/* Rank 0 writes path (cmode: NC_NETCDF4 or NC_64BIT_OFFSET). */
static void make_file(const char *path, int cmode, file_kind kind, const mm_config *cfg,
                      const mm_grid *g) {
  const int nz = g->nz + (kind == EXTRA_LEVEL), ny = g->ny, nx = g->nx;
  int nc, dz, dy, dx, vt, vs = -1;
  IO_NC(nc_create(path, cmode | NC_CLOBBER, &nc));
  static const char *const names[3][3] = {
      {"z", "y", "x"}, {"x", "y", "z"}, {"depth", "lat", "lon"}};
  const char *const *name = names[kind == TRANSPOSED ? 1 : kind == OTHER_NAMES ? 2 : 0];
  IO_NC(nc_def_dim(nc, name[0], (size_t)nz, &dz));
  IO_NC(nc_def_dim(nc, name[1], (size_t)ny, &dy));
  IO_NC(nc_def_dim(nc, name[2], (size_t)nx, &dx));
  const int dims[3] = {dz, dy, dx};
  IO_NC(kind == FLAT
            ? nc_def_var(nc, "temp", NC_DOUBLE, 2, dims + 1, &vt)
            : nc_def_var(nc, "temp", kind == VALID_F32 ? NC_FLOAT : NC_DOUBLE, 3, dims, &vt));
  if (kind != NO_SALT)
    IO_NC(nc_def_var(nc, "salt", kind == PACKED ? NC_SHORT : NC_DOUBLE, 3, dims, &vs));
  const double scale = 0.001, offset = 35.0; /* salt = 35 + 0.001 * stored */
  if (kind == PACKED) {
    IO_NC(nc_put_att_double(nc, vs, "scale_factor", NC_DOUBLE, 1, &scale));
    IO_NC(nc_put_att_double(nc, vs, "add_offset", NC_DOUBLE, 1, &offset));
  }
  if (kind == OFFSET_ONLY) IO_NC(nc_put_att_double(nc, vt, "add_offset", NC_DOUBLE, 1, &offset));
  if (kind == IDENTITY) {
    const double one = 1.0, zero = 0.0;
    IO_NC(nc_put_att_double(nc, vt, "scale_factor", NC_DOUBLE, 1, &one));
    IO_NC(nc_put_att_double(nc, vt, "add_offset", NC_FLOAT, 1, &zero));
  }
  const char *const t_units = kind == UNITS_TEMP ? "degF"
                              : kind == UNITS_OK ? "degree_Celsius"
                                                 : NULL;
  const char *const s_units = kind == UNITS_SALT ? "kg kg-1" : kind == UNITS_OK ? "g kg-1" : NULL;
  if (t_units) IO_NC(nc_put_att_text(nc, vt, "units", strlen(t_units), t_units));
  if (s_units) IO_NC(nc_put_att_text(nc, vs, "units", strlen(s_units), s_units));
  const double missing = -99.0, missing_two[2] = {-99.0, -98.0};
  if (kind == MISSING_WET)
    IO_NC(nc_put_att_double(nc, vt, "missing_value", NC_DOUBLE, 1, &missing));
  if (kind == MISSING_TWO)
    IO_NC(nc_put_att_double(nc, vt, "missing_value", NC_DOUBLE, 2, missing_two));
  const double valid_range[2] = {-1.0, 20000.0};
  if (kind == VALID_IN) {
    IO_NC(nc_put_att_double(nc, vt, "valid_min", NC_DOUBLE, 1, &valid_range[0]));
    IO_NC(nc_put_att_double(nc, vt, "valid_max", NC_DOUBLE, 1, &valid_range[1]));
  }
  if (kind == VALID_OUT || kind == VALID_BOTH)
    IO_NC(nc_put_att_double(nc, vt, "valid_range", NC_DOUBLE, 2, valid_range));
  if (kind == VALID_BOTH)
    IO_NC(nc_put_att_double(nc, vt, "valid_max", NC_DOUBLE, 1, &valid_range[1]));
  const double f32_max = 20000.3; /* (float)20000.3 = 20000.30078 > 20000.3 */
  if (kind == VALID_F32) IO_NC(nc_put_att_double(nc, vt, "valid_max", NC_DOUBLE, 1, &f32_max));
  if (kind == UNITS_PADDED || kind == UNITS_NUL) {
    char units[200] = "degC";
    if (kind == UNITS_NUL) memcpy(units + 5, "degF", 4);
    IO_NC(nc_put_att_text(nc, vt, "units", kind == UNITS_NUL ? 9 : sizeof units, units));
  }
  if (kind == UNITS_STR) {
    const char *celsius = "\xc2\xb0"
                          "C";
    IO_NC(nc_put_att_string(nc, vt, "units", 1, &celsius));
  }
  const bool coords = kind == COORDS || kind == Z_UP || kind == Z_FLIPPED || kind == Z_OTHER ||
                      kind == Y_FLIPPED || kind == X_REPEATED;
  int vz = -1, vy = -1, vx = -1;
  if (coords) {
    IO_NC(nc_def_var(nc, "z", NC_FLOAT, 1, &dz, &vz));
    IO_NC(nc_def_var(nc, "y", NC_DOUBLE, 1, &dy, &vy));
    IO_NC(nc_def_var(nc, "x", NC_DOUBLE, 1, &dx, &vx));
    const char *positive = kind == Z_UP ? "up" : "down";
    IO_NC(nc_put_att_text(nc, vz, "positive", strlen(positive), positive));
  }
  if (kind == COORDS || kind == SALT_FRACTION) {
    const char *standard = kind == COORDS ? "sea_water_practical_salinity" : "sea_water_salinity";
    IO_NC(nc_put_att_text(nc, vs, "units", 1, "1"));
    IO_NC(nc_put_att_text(nc, vs, "standard_name", strlen(standard), standard));
  }
  IO_NC(nc_enddef(nc));
  if (coords) {
    double *z = malloc((size_t)nz * sizeof *z), *y = malloc((size_t)ny * sizeof *y),
           *x = malloc((size_t)nx * sizeof *x);
    for (int k = 0; k < nz; k++) {
      const double zt = g->z_t[kind == Z_FLIPPED ? nz - 1 - k : k];
      z[k] = kind == Z_UP ? -zt : kind == Z_OTHER ? 1.01 * zt : zt;
    }
    for (int j = 0; j < ny; j++)
      y[j] = (kind == Y_FLIPPED ? ny - j - 0.5 : j + 0.5) * 1000.0;
    for (int i = 0; i < nx; i++)
      x[i] = (kind == X_REPEATED && i == 2 ? 1 : i) * 1000.0;
    IO_NC(nc_put_var_double(nc, vz, z));
    IO_NC(nc_put_var_double(nc, vy, y));
    IO_NC(nc_put_var_double(nc, vx, x));
    free(z);
    free(y);
    free(x);
  }

  double *t = malloc((size_t)nz * ny * nx * sizeof *t),
         *s = malloc((size_t)nz * ny * nx * sizeof *s);
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        const size_t e = ((size_t)k * ny + j) * nx + i;
        const bool wet = k < mm_grid_kmt_global(cfg, g, i, j);
        t[e] = wet ? io_test_value(i, j, k, 1.0, 0.0) : NAN;
        s[e] = wet ? io_test_value(i, j, k, -0.001, 35.0) : NAN;
      }
  int bi, bj, bk;
  bad_cell(cfg, g, &bi, &bj, &bk);
  const size_t bad = ((size_t)bk * ny + bj) * nx + bi;
  if (kind == NAN_WET) s[bad] = NAN;
  if (kind == FILL_WET) t[bad] = NC_FILL_DOUBLE;
  if (kind == MISSING_WET) t[bad] = missing;
  if (kind == MISSING_TWO) t[bad] = missing_two[1];
  if (kind == VALID_OUT) t[bad] = valid_range[1] + 1.0;
  if (kind == VALID_F32) t[bad] = f32_max;
  if (kind == PACKED) /* what a packing writer stores; land 0 */
    for (size_t e = 0; e < (size_t)nz * ny * nx; e++)
      s[e] = isnan(s[e]) ? 0.0 : round((s[e] - offset) / scale);
  IO_NC(nc_put_var_double(nc, vt, t));
  if (vs >= 0) IO_NC(nc_put_var_double(nc, vs, s));
  IO_NC(nc_close(nc));
  free(t);
  free(s);
}

static void expect_read(const mm_config *cfg, const mm_grid *g, const char *path) {
  double *t = io_test_field(g, 0.0, 99.0), *s = io_test_field(g, 0.0, 99.0);
  mm_err err = mm_initial_read(g, &(mm_settings){0}, path, t, s);
  TEST_CHECK(err == MM_OK, "%s: %s", path, mm_error_message());
  /* wet cells: the values make_file wrote */
  double *want_t = io_test_field(g, 1.0, 0.0), *want_s = io_test_field(g, -0.001, 35.0);
  const long wrong = io_test_state_wrong(g, t, s, want_t, want_s, false);
  TEST_CHECK(wrong == 0, "%s: rank %d: %ld wrong values", path, g->rank, wrong);
  (void)cfg;
  free(t);
  free(s);
  free(want_t);
  free(want_s);
}

static void expect_refused(const mm_grid *g, const char *path, const char *const *words) {
  double *t = io_test_field(g, 0.0, 99.0), *s = io_test_field(g, 0.0, 99.0);
  mm_error_clear();
  mm_err err = mm_initial_read(g, &(mm_settings){0}, path, t, s);
  TEST_CHECK(err == MM_ERR_INPUT, "rank %d: %s: code %d, '%s'", g->rank, path, err,
             mm_error_message());
  TEST_CHECK(io_test_message_has(words), "rank %d: %s: message '%s' lacks '%s'", g->rank, path,
             mm_error_message(), words[0]);
  if (g->rank == 0) printf("refused as expected: %s\n", mm_error_message());
  mm_error_clear();
  free(t);
  free(s);
}

int main(int argc, char **argv) {
  mm_config cfg;
  mm_grid g;
  io_test_start(&argc, &argv, &cfg, &g);

  static const struct {
    const char *name;
    int cmode;
    file_kind kind;
  } files[] = {
      {"good4.nc", NC_NETCDF4, GOOD},
      {"good_classic.nc", NC_64BIT_OFFSET, GOOD},
      {"extra_level.nc", NC_NETCDF4, EXTRA_LEVEL},
      {"flat.nc", NC_NETCDF4, FLAT},
      {"no_salt.nc", NC_NETCDF4, NO_SALT},
      {"nan_wet.nc", NC_64BIT_OFFSET, NAN_WET},
      {"fill_wet.nc", NC_NETCDF4, FILL_WET},
      {"other_names.nc", NC_NETCDF4, OTHER_NAMES},
      {"packed.nc", NC_NETCDF4, PACKED},
      {"offset_only.nc", NC_64BIT_OFFSET, OFFSET_ONLY},
      {"identity.nc", NC_NETCDF4, IDENTITY},
      {"units_ok.nc", NC_NETCDF4, UNITS_OK},
      {"units_salt.nc", NC_NETCDF4, UNITS_SALT},
      {"units_temp.nc", NC_64BIT_OFFSET, UNITS_TEMP},
      {"missing_wet.nc", NC_NETCDF4, MISSING_WET},
      {"units_str.nc", NC_NETCDF4, UNITS_STR},
      {"missing_two.nc", NC_NETCDF4, MISSING_TWO},
      {"coords.nc", NC_NETCDF4, COORDS},
      {"z_up.nc", NC_64BIT_OFFSET, Z_UP},
      {"z_flipped.nc", NC_NETCDF4, Z_FLIPPED},
      {"z_other.nc", NC_NETCDF4, Z_OTHER},
      {"y_flipped.nc", NC_NETCDF4, Y_FLIPPED},
      {"x_repeated.nc", NC_NETCDF4, X_REPEATED},
      {"salt_fraction.nc", NC_NETCDF4, SALT_FRACTION},
      {"valid_in.nc", NC_NETCDF4, VALID_IN},
      {"valid_out.nc", NC_64BIT_OFFSET, VALID_OUT},
      {"valid_both.nc", NC_NETCDF4, VALID_BOTH},
      {"valid_f32.nc", NC_NETCDF4, VALID_F32},
      {"units_padded.nc", NC_NETCDF4, UNITS_PADDED},
      {"units_nul.nc", NC_64BIT_OFFSET, UNITS_NUL},
      {"good_cdf1.nc", NC_CLASSIC_MODEL, GOOD},
      {"good_cdf5.nc", NC_64BIT_DATA, GOOD},
  };
  enum { NFILES = sizeof files / sizeof files[0] };
  char path[NFILES][2 * MM_STR_MAX];
  for (int f = 0; f < NFILES; f++) {
    IO_TEST_FMT(path[f], "%s/%s", cfg.output_dir, files[f].name);
    if (g.rank == 0) make_file(path[f], files[f].cmode, files[f].kind, &cfg, &g);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  expect_read(&cfg, &g, path[0]);
  expect_read(&cfg, &g, path[1]);
  expect_refused(&g, path[2],
                 (const char *const[]){"extra_level.nc", "temp", "expected dimensions",
                                       "(z, y, x) = (5, 9, 13)", "found 3: (z = 6, y = 9, x = 13)",
                                       NULL});
  expect_refused(&g, path[3], (const char *const[]){"flat.nc", "found 2: (y = 9, x = 13)", NULL});
  expect_refused(&g, path[4], (const char *const[]){"no_salt.nc", "missing variable 'salt'", NULL});
  expect_refused(
      &g, path[5],
      (const char *const[]){"nan_wet.nc", "salt", "not finite", "(i=6, j=4, k=1)", NULL});
  expect_refused(&g, path[6], (const char *const[]){"fill_wet.nc", "_FillValue", NULL});
  expect_refused(&g, path[7],
                 (const char *const[]){"other_names.nc", "temp has dimensions (depth, lat, lon)",
                                       "expected (z, y, x)", NULL});
  /* packed values would be read as stored (the library does not unpack) */
  expect_refused(
      &g, path[8],
      (const char *const[]){"packed.nc", "salt is packed", "the attribute scale_factor", NULL});
  expect_refused(
      &g, path[9],
      (const char *const[]){"offset_only.nc", "temp is packed", "the attribute add_offset", NULL});
  expect_read(&cfg, &g, path[10]); /* packing that changes nothing */
  /* units: read where they are the model's, refused where the values would
   * be read in another unit; missing_value marks missing data as _FillValue */
  expect_read(&cfg, &g, path[11]);
  expect_refused(&g, path[12],
                 (const char *const[]){"units_salt.nc", "salt has units = 'kg kg-1'",
                                       "expected g/kg or practical salinity", NULL});
  expect_refused(&g, path[13],
                 (const char *const[]){"units_temp.nc", "temp has units = 'degF'",
                                       "expected degrees Celsius", NULL});
  expect_refused(&g, path[14],
                 (const char *const[]){"missing_wet.nc", "temp = -99", "(i=6, j=4, k=1)",
                                       "the missing_value (missing data)", NULL});
  expect_read(&cfg, &g, path[15]);
  expect_refused(&g, path[16],
                 (const char *const[]){"missing_two.nc", "temp = -98", "(i=6, j=4, k=1)",
                                       "the missing_value (missing data)", NULL});

  /* coordinate variables: the model's levels (as float) and increasing y, x
   * are read; a file upside down, on other levels or flipped north-south is
   * refused, as is a salinity that CF's names make a mass fraction */
  expect_read(&cfg, &g, path[17]);
  expect_refused(&g, path[18],
                 (const char *const[]){"z_up.nc", "z has positive = 'up'", "surface", NULL});
  expect_refused(
      &g, path[19],
      (const char *const[]){"z_flipped.nc", "z[0] = ", "other levels, or upside down", NULL});
  expect_refused(&g, path[20], (const char *const[]){"z_other.nc", "z[0] = ", "grid.nz", NULL});
  expect_refused(
      &g, path[21],
      (const char *const[]){"y_flipped.nc", "y[1] = ", "does not increase", "south", NULL});
  expect_refused(
      &g, path[22],
      (const char *const[]){"x_repeated.nc", "x[2] = ", "does not increase", "west", NULL});
  expect_refused(&g, path[23],
                 (const char *const[]){"salt_fraction.nc", "units = '1'",
                                       "standard_name = 'sea_water_salinity'", "mass fraction",
                                       NULL});
  /* CF: a value outside valid_min, valid_max or valid_range is missing data */
  expect_read(&cfg, &g, path[24]);
  expect_refused(&g, path[25],
                 (const char *const[]){"valid_out.nc", "temp = 20001", "(i=6, j=4, k=1)",
                                       "outside valid_range = [-1, 20000] (missing data)", NULL});
  expect_refused(&g, path[26],
                 (const char *const[]){
                     "valid_both.nc", "attribute valid_range beside valid_min or valid_max", NULL});
  /* ... compared as values of the field's type: a float field's value at its
   * double valid_max (the float nearest it) is inside (it was refused) */
  {
    double *t = io_test_field(&g, 0.0, 99.0), *s = io_test_field(&g, 0.0, 99.0);
    const mm_err err = mm_initial_read(&g, &(mm_settings){0}, path[27], t, s);
    TEST_CHECK(err == MM_OK, "%s: %s", path[27], mm_error_message());
    free(t);
    free(s);
  }
  /* a text attribute padded with NULs is the text before them; one with a
   * NUL inside is not one text */
  expect_read(&cfg, &g, path[28]);
  expect_refused(&g, path[29],
                 (const char *const[]){"units_nul.nc", "temp: attribute units is not a text",
                                       "no NUL inside", NULL});

  /* on a cubic grid, a file in another order has the right lengths: only the
   * names tell that it would be read transposed */
  {
    mm_config c6;
    mm_grid g6;
    io_test_config(&c6, argc, argv, 3,
                   (const char *const[]){"grid.nx=6", "grid.ny=6", "grid.nz=6"});
    io_test_grid(&c6, &g6);
    char cubic[2][2 * MM_STR_MAX];
    IO_TEST_FMT(cubic[0], "%s/cubic.nc", cfg.output_dir);
    IO_TEST_FMT(cubic[1], "%s/cubic_transposed.nc", cfg.output_dir);
    if (g6.rank == 0) {
      make_file(cubic[0], NC_NETCDF4, GOOD, &c6, &g6);
      make_file(cubic[1], NC_64BIT_OFFSET, TRANSPOSED, &c6, &g6);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_read(&c6, &g6, cubic[0]);
    expect_refused(&g6, cubic[1],
                   (const char *const[]){"cubic_transposed.nc", "temp has dimensions (x, y, z)",
                                         "expected (z, y, x)", NULL});
    mm_grid_destroy(&g6);
  }
  char missing[2 * MM_STR_MAX];
  IO_TEST_FMT(missing, "%s/does_not_exist.nc", cfg.output_dir);
  expect_refused(
      &g, missing,
      (const char *const[]){"does_not_exist.nc", "cannot open", "No such file or directory", NULL});

  /* the last rank alone cannot open its file: every rank refuses */
  if (g.nranks > 1)
    expect_refused(&g, g.rank == g.nranks - 1 ? missing : path[0],
                   (const char *const[]){"does_not_exist.nc", "cannot open", NULL});

  /* classic files cut short (a copy that did not finish): libnetcdf read
   * the data they lack as zeros or fill values, without an error, and the
   * run started from them; CDF-1, CDF-2 and CDF-5, one byte short and half
   * their data short */
  expect_read(&cfg, &g, path[NFILES - 2]);
  expect_read(&cfg, &g, path[NFILES - 1]);
  const int classic[3] = {NFILES - 2, 1, NFILES - 1};
  for (int c = 0; c < 3; c++) {
    struct stat st;
    TEST_CHECK(stat(path[classic[c]], &st) == 0, "%s: %s", path[classic[c]], strerror(errno));
    const long whole = (long)st.st_size, data = (long)(2 * sizeof(double)) * g.nx * g.ny * g.nz;
    const long keep[2] = {whole - 1, whole - data / 2};
    for (int k = 0; k < 2; k++) {
      char cut[2 * MM_STR_MAX + 16];
      IO_TEST_FMT(cut, "%s.cut%d", path[classic[c]], k);
      if (g.rank == 0) {
        FILE *in = fopen(path[classic[c]], "rb"), *out = fopen(cut, "wb");
        TEST_CHECK(in && out, "%s: cannot copy", cut);
        for (long b = 0; b < keep[k]; b++)
          fputc(fgetc(in), out);
        fclose(in);
        fclose(out);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      expect_refused(&g, cut, (const char *const[]){".cut", "cut short", "variable 'salt'", NULL});
    }
  }
  /* a record variable's data: numrecs records of recsize bytes (the check
   * reads the header alone: mm_io_check_classic) */
  if (g.rank == 0) {
    char rec[2 * MM_STR_MAX + 16];
    IO_TEST_FMT(rec, "%s/records.nc", cfg.output_dir);
    int nc, dt, dx, va, vb;
    IO_NC(nc_create(rec, NC_CLOBBER, &nc));
    IO_NC(nc_def_dim(nc, "time", NC_UNLIMITED, &dt));
    IO_NC(nc_def_dim(nc, "x", 5, &dx));
    IO_NC(nc_def_var(nc, "a", NC_SHORT, 2, (int[]){dt, dx}, &va));
    IO_NC(nc_def_var(nc, "b", NC_DOUBLE, 2, (int[]){dt, dx}, &vb));
    IO_NC(nc_enddef(nc));
    short a[3][5] = {{0}};
    double b[3][5] = {{0}};
    IO_NC(nc_put_vara_short(nc, va, (size_t[]){0, 0}, (size_t[]){3, 5}, &a[0][0]));
    IO_NC(nc_put_vara_double(nc, vb, (size_t[]){0, 0}, (size_t[]){3, 5}, &b[0][0]));
    IO_NC(nc_close(nc));
    mm_error_clear();
    TEST_CHECK(mm_io_check_classic(rec) == MM_OK, "records.nc: %s", mm_error_message());
    struct stat st;
    TEST_CHECK(stat(rec, &st) == 0 && truncate(rec, st.st_size - 1) == 0, "records.nc: truncate");
    TEST_CHECK(mm_io_check_classic(rec) == MM_ERR_INPUT &&
                   strstr(mm_error_message(), "variable 'b' up to byte"),
               "records.nc one byte short: '%s'", mm_error_message());
    printf("refused as expected: %s\n", mm_error_message());
    mm_error_clear();
  }

  char text[2 * MM_STR_MAX];
  IO_TEST_FMT(text, "%s/text.nc", cfg.output_dir);
  io_test_write_text(text, "temp = 1\nsalt = 35\n");
  expect_refused(&g, text,
                 (const char *const[]){"text.nc", "cannot open", "Unknown file format", NULL});

  return io_test_finish(&g);
}

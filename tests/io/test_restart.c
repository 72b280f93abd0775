/* Restart and crash files: bitwise round trip, atomic replacement through
 * the .tmp file, and refusal (MM_ERR_INPUT on every rank, with the reason in
 * the message) of a file for another grid, another configuration, another
 * land mask, dimensions in another order than (z, y, x), a truncated file, a
 * text file, a missing file, a missing attribute and a non-finite value.
 *
 * usage: test_restart output.dir=DIR [SECTION.KEY=VALUE ...]   (3 ranks) */
#include "io_test.h"

#include <unistd.h>

static char out_dir[MM_STR_MAX];

#define path_of(path, name, suffix) IO_TEST_FMT(path, "%s/%s%s", out_dir, name, suffix)

/* Rank 0 writes the first bytes bytes of src to dst (all bytes: -1). */
static void copy_head(const char *src, const char *dst, long bytes) {
  FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
  TEST_CHECK(in && out, "copy %s -> %s", src, dst);
  if (in && out) {
    fseek(in, 0, SEEK_END);
    const long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    const long n = bytes < 0 ? size : bytes;
    char *buf = malloc((size_t)size);
    TEST_CHECK(fread(buf, 1, (size_t)size, in) == (size_t)size, "read %s", src);
    TEST_CHECK(fwrite(buf, 1, (size_t)n, out) == (size_t)n, "write %s", dst);
    free(buf);
  }
  if (in) fclose(in);
  if (out) fclose(out);
}

/* Read path and expect MM_ERR_INPUT on this rank with all words in the message. */
static void expect_refused(const mm_grid *g, const mm_config *cfg, const char *path,
                           const char *const *words) {
  double *t = io_test_field(g, 0.0, 1.0), *s = io_test_field(g, 0.0, 1.0);
  long step = -1;
  double time = -1.0;
  mm_error_clear();
  mm_err err = mm_restart_read(g, cfg, path, t, s, &step, &time);
  TEST_CHECK(err == MM_ERR_INPUT, "rank %d: %s: code %d, message '%s'", g->rank, path, err,
             mm_error_message());
  TEST_CHECK(io_test_message_has(words), "rank %d: %s: message '%s' lacks '%s'", g->rank, path,
             mm_error_message(), words[0]);
  TEST_CHECK(step == -1 && time == -1.0, "step/time set on a refused file");
  if (g->rank == 0) printf("refused as expected: %s\n", mm_error_message());
  mm_error_clear();
  free(t);
  free(s);
}

/* Read path (expect success) and compare with (temp, salt) bitwise: wet
 * cells equal, land 0, halo untouched. */
static void expect_state(const mm_grid *g, const mm_config *cfg, const char *path,
                         const double *temp, const double *salt, long want_step, double want_time) {
  double *t = io_test_field(g, 0.0, 12345.0), *s = io_test_field(g, 0.0, 12345.0);
  long step = -1;
  double time = -1.0;
  mm_err err = mm_restart_read(g, cfg, path, t, s, &step, &time);
  TEST_CHECK(err == MM_OK, "read %s: %s", path, mm_error_message());
  TEST_CHECK(step == want_step && time == want_time, "step %ld time %g", step, time);
  const long wrong = io_test_state_wrong(g, t, s, temp, salt, true);
  TEST_CHECK(wrong == 0, "rank %d: %ld values differ after the round trip", g->rank, wrong);
  free(t);
  free(s);
}

/* A configuration like cfg with extra overrides; its grid in *g2. */
static void other_case(int argc, char **argv, const char *a, const char *b, mm_config *cfg2) {
  const char *const extra[2] = {a, b};
  io_test_config(cfg2, argc, argv, b ? 2 : 1, extra);
}

/* The restart of (temp, salt) at step and time of case `name`, a configuration
 * like cfg with run.name=name and the override `set` (or none): written, its
 * configuration in *cfg2, its path in path. */
static void written_case(int argc, char **argv, const char *name, const char *set, const mm_grid *g,
                         const double *temp, const double *salt, long step, double time,
                         mm_config *cfg2, char (*path)[2 * MM_STR_MAX]) {
  char run_name[MM_STR_MAX];
  IO_TEST_FMT(run_name, "run.name=%s", name);
  other_case(argc, argv, run_name, set, cfg2);
  TEST_CHECK(mm_restart_write(g, cfg2, NULL, temp, salt, step, time) == MM_OK, "%s",
             mm_error_message());
  path_of(*path, name, ".restart.nc");
}

int main(int argc, char **argv) {
  mm_config cfg;
  mm_grid g;
  io_test_start(&argc, &argv, &cfg, &g);
  IO_TEST_FMT(out_dir, "%s", cfg.output_dir);
  /* fractions that are not exact in binary: the round trip must keep every bit */
  double *temp = io_test_field(&g, 1.0 / 3.0, 0.1), *salt = io_test_field(&g, -1e-3 / 7.0, 35.0);
  char path[2 * MM_STR_MAX], tmp[2 * MM_STR_MAX + 8], other[2 * MM_STR_MAX];
  IO_TEST_FMT(path, "%s/%s.restart.nc", cfg.output_dir, cfg.run_name);
  IO_TEST_FMT(tmp, "%s.tmp", path);

  /* (e) atomic write: afterwards the .tmp file is gone, the restart is there */
  mm_err err = mm_restart_write(&g, &cfg, NULL, temp, salt, 42, 25200.0);
  TEST_CHECK(err == MM_OK, "restart write: %s", mm_error_message());
  TEST_CHECK(io_test_exists(path), "rank %d: %s missing after the write", g.rank, path);
  TEST_CHECK(!io_test_exists(tmp), "rank %d: %s left behind", g.rank, tmp);

  /* round trip, bitwise; then a second write replaces the first */
  expect_state(&g, &cfg, path, temp, salt, 42, 25200.0);
  double *temp2 = io_test_field(&g, 0.5, -2.0);
  err = mm_restart_write(&g, &cfg, NULL, temp2, salt, 43, 25800.0);
  TEST_CHECK(err == MM_OK, "second restart write: %s", mm_error_message());
  TEST_CHECK(!io_test_exists(tmp), "%s left behind", tmp);
  expect_state(&g, &cfg, path, temp2, salt, 43, 25800.0);

  /* crash file: the same layout, readable as a restart */
  err = mm_crash_write(&g, &cfg, NULL, temp, salt, 7, 4200.0);
  TEST_CHECK(err == MM_OK, "crash write: %s", mm_error_message());
  path_of(other, cfg.run_name, ".crash.nc");
  TEST_CHECK(io_test_exists(other), "%s missing", other);
  expect_state(&g, &cfg, other, temp, salt, 7, 4200.0);

  /* another grid (nz differs) */
  {
    mm_config c2;
    other_case(argc, argv, "grid.nz=6", "run.name=other_grid", &c2);
    mm_grid g2;
    io_test_grid(&c2, &g2);
    double *t2 = io_test_field(&g2, 1.0, 0.0);
    TEST_CHECK(mm_restart_write(&g2, &c2, NULL, t2, t2, 1, 600.0) == MM_OK, "%s",
               mm_error_message());
    path_of(other, "other_grid", ".restart.nc");
    expect_refused(
        &g, &cfg, other,
        (const char *const[]){"another grid", "other_grid.restart.nc", "nz differs", NULL});
    free(t2);
    mm_grid_destroy(&g2);
  }
  /* another configuration (same grid, another diffusivity) */
  {
    mm_config c2;
    written_case(argc, argv, "other_cfg", "physics.kappa_v=2e-5", &g, temp, salt, 1, 600.0, &c2,
                 &other);
    expect_refused(&g, &cfg, other,
                   (const char *const[]){"written for another configuration", "config_hash", NULL});
    /* keys outside the hash (output.*, solver.*, run.steps) do not matter */
    other_case(argc, argv, "run.steps=999", "solver.tdma=reference", &c2);
    expect_state(&g, &c2, path, temp2, salt, 43, 25800.0);
  }
  /* a truncated file: the first half of the bytes */
  path_of(other, "truncated", ".restart.nc");
  if (g.rank == 0) {
    struct stat st;
    stat(path, &st);
    copy_head(path, other, (long)st.st_size / 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_refused(&g, &cfg, other, (const char *const[]){"truncated.restart.nc", "truncated", NULL});
  /* a text file named .nc */
  path_of(other, "text", ".nc");
  io_test_write_text(other, "[run]\nname = not netcdf at all\n");
  expect_refused(&g, &cfg, other, (const char *const[]){"text.nc", "not a NetCDF", NULL});
  /* an empty file */
  path_of(other, "empty", ".nc");
  io_test_write_text(other, "");
  expect_refused(&g, &cfg, other, (const char *const[]){"empty.nc", "not a NetCDF", NULL});
  /* a missing file */
  path_of(other, "missing", ".restart.nc");
  expect_refused(&g, &cfg, other,
                 (const char *const[]){"missing.restart.nc", "cannot open",
                                       "No such file or directory", NULL});
  /* a missing attribute */
  {
    mm_config c2;
    written_case(argc, argv, "no_hash", NULL, &g, temp, salt, 1, 600.0, &c2, &other);
    if (g.rank == 0) {
      int nc;
      IO_NC(nc_open(other, NC_WRITE, &nc));
      IO_NC(nc_redef(nc));
      IO_NC(nc_del_att(nc, NC_GLOBAL, "config_hash"));
      IO_NC(nc_close(nc));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_refused(&g, &cfg, other,
                   (const char *const[]){"missing attribute", "config_hash", NULL});
  }
  /* every text attribute as one NC_STRING (as h5netcdf, and netCDF4-python's
   * setncattr_string, write text): read (config_hash was "not a string"),
   * the checksums still checked */
  {
    mm_config c2;
    written_case(argc, argv, "strings", NULL, &g, temp, salt, 7, 4200.0, &c2, &other);
    if (g.rank == 0) {
      int nc, nvars;
      IO_NC(nc_open(other, NC_WRITE, &nc));
      IO_NC(nc_redef(nc));
      IO_NC(nc_inq_nvars(nc, &nvars));
      int converted = 0;
      for (int v = NC_GLOBAL; v < nvars; v++) {
        int natts;
        IO_NC(nc_inq_varnatts(nc, v, &natts));
        char names[64][NC_MAX_NAME + 1]; /* the text ones: rewriting renumbers them */
        int n_text = 0;
        for (int a = 0; a < natts && n_text < 64; a++) {
          nc_type type;
          IO_NC(nc_inq_attname(nc, v, a, names[n_text]));
          IO_NC(nc_inq_atttype(nc, v, names[n_text], &type));
          n_text += type == NC_CHAR;
        }
        for (int a = 0; a < n_text; a++) {
          size_t len;
          IO_NC(nc_inq_attlen(nc, v, names[a], &len));
          char *text = calloc(len + 1, 1);
          IO_NC(nc_get_att_text(nc, v, names[a], text));
          IO_NC(nc_del_att(nc, v, names[a]));
          IO_NC(nc_put_att_string(nc, v, names[a], 1, (const char **)&text));
          free(text);
          converted++;
        }
      }
      TEST_CHECK(converted >= 8, "%d text attributes made NC_STRING", converted);
      IO_NC(nc_close(nc));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_state(&g, &c2, other, temp, salt, 7, 4200.0);
    if (g.rank == 0) { /* ... and checked: a checksum of NC_STRING changed */
      int nc, var;
      const char *zero = "0000000000000000";
      IO_NC(nc_open(other, NC_WRITE, &nc));
      IO_NC(nc_inq_varid(nc, "salt", &var));
      IO_NC(nc_redef(nc));
      IO_NC(nc_del_att(nc, var, "checksum"));
      IO_NC(nc_put_att_string(nc, var, "checksum", 1, &zero));
      IO_NC(nc_close(nc));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_refused(&g, &c2, other,
                   (const char *const[]){"salt does not match its checksum",
                                         "the file says 0000000000000000", NULL});
  }
  /* another land mask: one kmt value changed */
  {
    mm_config c2;
    written_case(argc, argv, "bad_kmt", NULL, &g, temp, salt, 1, 600.0, &c2, &other);
    if (g.rank == 0) {
      int nc, var, kmt = 0;
      const size_t at[2] = {(size_t)g.ny / 2, (size_t)g.nx - 1}; /* a coastal column */
      IO_NC(nc_open(other, NC_WRITE, &nc));
      IO_NC(nc_inq_varid(nc, "kmt", &var));
      IO_NC(nc_get_var1_int(nc, var, at, &kmt));
      kmt = kmt > 0 ? kmt - 1 : 1;
      IO_NC(nc_put_var1_int(nc, var, at, &kmt));
      IO_NC(nc_close(nc));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_refused(&g, &cfg, other, (const char *const[]){"land mask", "kmt(i=12", NULL});
  }
  /* on a cubic grid, dimensions in another order have the right lengths:
   * only their names tell that the file would be read transposed */
  {
    mm_config c6;
    mm_grid g6;
    io_test_config(&c6, argc, argv, 4,
                   (const char *const[]){"grid.nx=6", "grid.ny=6", "grid.nz=6", "run.name=cubic"});
    io_test_grid(&c6, &g6);
    double *t6 = io_test_field(&g6, 1.0, 0.0), *s6 = io_test_field(&g6, -1e-3, 35.0);
    TEST_CHECK(mm_restart_write(&g6, &c6, NULL, t6, s6, 3, 1800.0) == MM_OK, "%s",
               mm_error_message());
    path_of(other, "cubic", ".restart.nc");
    expect_state(&g6, &c6, other, t6, s6, 3, 1800.0);
    if (g6.rank == 0) { /* (z, y, x) renamed (x, y, z) */
      int nc, dz, dx;
      IO_NC(nc_open(other, NC_WRITE, &nc));
      IO_NC(nc_redef(nc));
      IO_NC(nc_inq_dimid(nc, "z", &dz));
      IO_NC(nc_inq_dimid(nc, "x", &dx));
      IO_NC(nc_rename_dim(nc, dz, "swap"));
      IO_NC(nc_rename_dim(nc, dx, "z"));
      IO_NC(nc_rename_dim(nc, dz, "x"));
      IO_NC(nc_close(nc));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    expect_refused(&g6, &c6, other,
                   (const char *const[]){"cubic.restart.nc", "temp has dimensions (x, y, z)",
                                         "expected (z, y, x)", NULL});
    free(t6);
    free(s6);
    mm_grid_destroy(&g6);
  }
  /* a non-finite value in a wet cell of the last rank's block */
  {
    mm_config c2;
    other_case(argc, argv, "run.name=nan", NULL, &c2);
    double *bad = io_test_field(&g, 1.0, 0.0);
    if (g.rank == g.nranks - 1) {
      size_t c = mm_col(&g, 0, 0); /* the deepest column of the block */
      for (int j = 0; j < g.nyl; j++)
        for (int i = 0; i < g.nxl; i++)
          if (g.kmt[mm_col(&g, i, j)] > g.kmt[c]) c = mm_col(&g, i, j);
      TEST_CHECK(g.kmt[c] > 1, "no column of the block has two wet levels");
      bad[c * (size_t)g.nz + 1] = NAN;
    }
    TEST_CHECK(mm_restart_write(&g, &c2, NULL, bad, salt, 1, 600.0) == MM_OK, "%s",
               mm_error_message());
    path_of(other, "nan", ".restart.nc");
    expect_refused(&g, &cfg, other, (const char *const[]){"nan.restart.nc", "not finite", NULL});
    free(bad);
  }

  free(temp);
  free(temp2);
  free(salt);
  return io_test_finish(&g);
}

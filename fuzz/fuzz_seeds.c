/* Writes the seed corpus of the file-reader harnesses, generated rather than
 * committed as binaries:
 *
 *   fuzz_seeds DIR    ->  DIR/restart/   restart files for the fuzz grid: valid,
 *                                        NaN in a wet cell, another configuration
 *                         DIR/initial/   initial-state files: NetCDF-4 (a restart
 *                                        file), classic CDF-1, 64-bit offset with
 *                                        float, CDF-5 with int and _FillValue,
 *                                        other dimensions, salt missing
 *
 * All on the grid of fuzz_common.h, so that mutations start from files that
 * get deep into the readers. */
#include <math.h>
#include <netcdf.h>
#include <sys/stat.h>

#include "fuzz_common.h"

#define NC(call)                                                                                   \
  do {                                                                                             \
    int s_ = (call);                                                                               \
    if (s_ != NC_NOERR) {                                                                          \
      fprintf(stderr, "fuzz_seeds: %s:%d: %s\n", __FILE__, __LINE__, nc_strerror(s_));             \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static void fill_state(const mm_grid *g, double *t, double *s) {
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++)
      for (int k = 0; k < g->nz; k++) {
        const size_t e = mm_col(g, i, j) * (size_t)g->nz + (size_t)k;
        const int wet = k < g->kmt[mm_col(g, i, j)];
        t[e] = wet ? 10.0 + i + 0.1 * j - 0.5 * k : 0.0;
        s[e] = wet ? 35.0 - 0.01 * k : 0.0;
      }
}

static void restart_seed(const mm_config *base, const char *dir, const char *name, bool nan) {
  mm_config cfg = *base;
  snprintf(cfg.output_dir, sizeof cfg.output_dir, "%s", dir);
  snprintf(cfg.run_name, sizeof cfg.run_name, "%s", name);
  fill_state(&fuzz_grid, fuzz_temp, fuzz_salt);
  if (nan) fuzz_temp[mm_col(&fuzz_grid, 3, 2) * (size_t)fuzz_grid.nz] = NAN;
  if (mm_restart_write(&fuzz_grid, &cfg, NULL, fuzz_temp, fuzz_salt, 7, 7 * cfg.run_dt) != MM_OK) {
    fprintf(stderr, "fuzz_seeds: %s\n", mm_error_message());
    exit(1);
  }
}

typedef enum { SEED_OK, SEED_OTHER_DIMS, SEED_NO_SALT } seed_kind;

/* A serial NetCDF file (cmode: classic formats) with temp of type tt and
 * salt of type ts on (nz, ny, nx), land as NaN or, with fill, _FillValue. */
static void initial_seed(const char *path, int cmode, nc_type tt, nc_type ts, bool fill,
                         seed_kind kind) {
  const mm_grid *g = &fuzz_grid;
  const int nz = g->nz + (kind == SEED_OTHER_DIMS), ny = g->ny, nx = g->nx;
  int nc, d[3], vt, vs = -1;
  NC(nc_create(path, cmode | NC_CLOBBER, &nc));
  NC(nc_def_dim(nc, "z", (size_t)nz, &d[0]));
  NC(nc_def_dim(nc, "y", (size_t)ny, &d[1]));
  NC(nc_def_dim(nc, "x", (size_t)nx, &d[2]));
  NC(nc_def_var(nc, "temp", tt, 3, d, &vt));
  if (kind != SEED_NO_SALT) NC(nc_def_var(nc, "salt", ts, 3, d, &vs));
  const double fv = -999.0;
  if (fill) {
    NC(nc_put_att_double(nc, vt, "_FillValue", tt, 1, &fv));
    if (vs >= 0) NC(nc_put_att_double(nc, vs, "_FillValue", ts, 1, &fv));
  }
  NC(nc_put_att_text(nc, vt, "units", 4, "degC"));
  NC(nc_enddef(nc));
  double *t = malloc((size_t)nz * ny * nx * sizeof *t),
         *s = malloc((size_t)nz * ny * nx * sizeof *s);
  if (!t || !s) exit(1);
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        const size_t e = ((size_t)k * ny + j) * nx + i;
        const int wet = k < mm_grid_kmt_global(&fuzz_cfg, g, i, j);
        t[e] = wet ? 10.0 + i + 0.1 * j - 0.5 * k : fill ? fv : NAN;
        s[e] = wet ? 35.0 - k : fill ? fv : NAN;
      }
  NC(nc_put_var_double(nc, vt, t));
  if (vs >= 0) NC(nc_put_var_double(nc, vs, s));
  NC(nc_close(nc));
  free(t);
  free(s);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fuzz_seeds DIR\n");
    return 2;
  }
  fuzz_setup(&argc, &argv);
  char restart[512], initial[512], path[600];
  snprintf(restart, sizeof restart, "%s/restart", argv[1]);
  snprintf(initial, sizeof initial, "%s/initial", argv[1]);
  mkdir(argv[1], 0777);
  mkdir(restart, 0777);
  mkdir(initial, 0777);

  restart_seed(&fuzz_cfg, restart, "valid", false);
  restart_seed(&fuzz_cfg, restart, "nan", true);
  mm_config other = fuzz_cfg;
  other.kappa_v *= 2.0; /* another config_hash */
  restart_seed(&other, restart, "other_config", false);

  restart_seed(&fuzz_cfg, initial, "netcdf4", false); /* a restart file is an initial file */
  snprintf(path, sizeof path, "%s/cdf1.nc", initial);
  initial_seed(path, 0, NC_DOUBLE, NC_DOUBLE, false, SEED_OK);
  snprintf(path, sizeof path, "%s/cdf2_float.nc", initial);
  initial_seed(path, NC_64BIT_OFFSET, NC_FLOAT, NC_FLOAT, true, SEED_OK);
  snprintf(path, sizeof path, "%s/cdf5_int.nc", initial);
  initial_seed(path, NC_64BIT_DATA, NC_DOUBLE, NC_INT, true, SEED_OK);
  snprintf(path, sizeof path, "%s/other_dims.nc", initial);
  initial_seed(path, 0, NC_DOUBLE, NC_DOUBLE, false, SEED_OTHER_DIMS);
  snprintf(path, sizeof path, "%s/no_salt.nc", initial);
  initial_seed(path, 0, NC_DOUBLE, NC_DOUBLE, false, SEED_NO_SALT);

  mm_grid_destroy(&fuzz_grid);
  free(fuzz_temp);
  free(fuzz_salt);
  MPI_Finalize();
  return 0;
}

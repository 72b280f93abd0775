/* The initial-state file `initial.file` (docs/output.md): temp and salt of
 * dimensions (z, y, x), named so and in this order, of lengths exactly
 * (nz, ny, nx), any NetCDF format. Each rank opens the
 * file on its own (serial API: classic files cannot be opened in parallel
 * without PnetCDF) and reads its block; the ranks then agree. */
#include "mm_io.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "nc_util.h"

/* "(name = len, ...)" of the dimensions of a variable, for messages. */
static void mm_dims_text(int nc, int nd, const int *dims, char *text, size_t size) {
  size_t used = (size_t)snprintf(text, size, "(");
  for (int d = 0; d < nd && used < size; d++) {
    char name[NC_MAX_NAME + 1] = "?";
    size_t len = 0;
    nc_inq_dim(nc, dims[d], name, &len);
    used += (size_t)snprintf(text + used, size - used, "%s%s = %zu", d ? ", " : "", name, len);
  }
  if (used < size) snprintf(text + used, size - used, ")");
}

/* Read field `name` of the open file into dst (model layout, land 0) through
 * buf (one field of the block in file order). */
static MM_NODISCARD mm_err mm_initial_field(int nc, const char *p, const mm_grid *g,
                                            const char *name, double *buf, double *dst) {
  int var;
  int s = nc_inq_varid(nc, name, &var);
  MM_REQUIRE(s != NC_ENOTVAR, MM_ERR_INPUT,
             "%s: missing variable '%s' (initial.file needs temp and salt on (z, y, x))", p, name);
  if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, name, s);

  int nd = 0, dims[NC_MAX_VAR_DIMS];
  nc_type type;
  s = nc_inq_var(nc, var, NULL, &type, &nd, dims, NULL);
  if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, name, s);
  MM_REQUIRE(type != NC_CHAR && type != NC_STRING && type <= NC_UINT64, MM_ERR_INPUT,
             "%s: variable '%s' is not numeric", p, name);

  /* the names first: on a cubic grid (x, y, z) has the right lengths */
  static const char *const order[3] = {"z", "y", "x"};
  MM_CHECK(mm_io_check_dim_names(nc, p, var, name, 3, order));
  MM_CHECK(mm_io_check_unpacked(nc, p, var, name));
  const size_t want[3] = {(size_t)g->nz, (size_t)g->ny, (size_t)g->nx};
  bool same = nd == 3;
  for (int d = 0; same && d < 3; d++) {
    size_t len = 0;
    s = nc_inq_dimlen(nc, dims[d], &len);
    if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, name, s);
    same = len == want[d];
  }
  if (!same) {
    char found[256];
    mm_dims_text(nc, nd, dims, found, sizeof found);
    return MM_ERROR(MM_ERR_INPUT,
                    "%s: %s: expected dimensions (z, y, x) = (%zu, %zu, %zu), found %d: %s", p,
                    name, want[0], want[1], want[2], nd, found);
  }

  /* a wet value equal to the fill value is missing data */
  double fill;
  const double *reject = &fill;
  if (nc_get_att_double(nc, var, "_FillValue", &fill) != NC_NOERR) {
    if (type == NC_DOUBLE)
      fill = NC_FILL_DOUBLE;
    else if (type == NC_FLOAT)
      fill = (double)NC_FILL_FLOAT;
    else
      reject = NULL;
  }

  if (!dst) return MM_OK; /* metadata only (mm_initial_check) */
  const size_t start[3] = {0, (size_t)g->j0, (size_t)g->i0};
  const size_t count[3] = {(size_t)g->nz, (size_t)g->nyl, (size_t)g->nxl};
  s = nc_get_vara_double(nc, var, start, count, buf);
  if (s != NC_NOERR)
    return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p,
                      strcmp(name, "temp") ? "reading salt" : "reading temp", s);
  const mm_io_bad bad = mm_io_unpack(g, buf, reject, dst);
  MM_REQUIRE(!bad.found, MM_ERR_INPUT, "%s: %s = %g at wet cell (i=%d, j=%d, k=%d): %s", p, name,
             bad.value, bad.i, bad.j, bad.k,
             bad.found == 1 ? "not finite" : "the _FillValue (missing data)");
  return MM_OK;
}

mm_err mm_initial_read(const mm_grid *g, const mm_settings *env, const char *path, double *temp,
                       double *salt) {
  /* a damaged classic header before libnetcdf trusts its counts, then a
   * crash or a hang of the libraries on the metadata, in a child process */
  mm_err perr = mm_agree(g->cart, mm_io_check_classic(path));
  if (perr == MM_OK) perr = mm_io_probe(g->cart, env, path);
  if (perr != MM_OK) return perr;
  const size_t n = (size_t)g->nz * (size_t)g->nyl * (size_t)g->nxl; /* block elements */
  /* without fields (mm_initial_check) only the metadata is checked */
  double *buf = temp ? malloc(n * sizeof *buf) : NULL;
  mm_err err = MM_OK;
  int nc = -1;
  bool open = false;
  if (temp && !buf)
    err = MM_ERROR(MM_ERR_RUN, "%s: out of memory (%zu bytes)", path, n * sizeof *buf);
  if (err == MM_OK) {
    int s = nc_open(path, NC_NOWRITE, &nc);
    if (s != NC_NOERR)
      err = mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, path,
                       "cannot open (missing, unreadable or not NetCDF)", s);
    open = s == NC_NOERR;
  }
  if (err == MM_OK) err = mm_initial_field(nc, path, g, "temp", buf, temp);
  if (err == MM_OK) err = mm_initial_field(nc, path, g, "salt", buf, salt);
  if (open) nc_close(nc);
  free(buf);
  return mm_agree(g->cart, err);
}

mm_err mm_initial_check(MPI_Comm comm, const mm_config *cfg, const char *path) {
  mm_grid shape;
  MM_CHECK(mm_io_shape(cfg, comm, &shape));
  return mm_initial_read(&shape, &cfg->env, path, NULL, NULL);
}

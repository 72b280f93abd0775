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

/* The most values of a missing_value attribute (CF allows a vector). */
#define MM_MISSING_MAX 8

/* The units a field may have, written as CF and common practice spell
 * them; compared with case, blanks, '_', '.' and '^' taken out. A field
 * without the attribute (or with an empty one) is taken in these units. */
static const char *const mm_temp_units[] = {
    "degc", "degreec", "degreesc", "degreecelsius", "degreescelsius", "celsius", "c", "°c", NULL};
static const char *const mm_salt_units[] = {"g/kg",
                                            "gkg-1",
                                            "gperkg",
                                            "psu",
                                            "pss-78",
                                            "pss78",
                                            "1e-3",
                                            "0.001",
                                            "1",
                                            "ppt",
                                            "‰",
                                            "practicalsalinityunit",
                                            "practicalsalinityunits",
                                            NULL};

/* temp in degrees Celsius, salt in g/kg or on the practical salinity scale:
 * a field in other units (K, degF, kg/kg) is refused, not read as if it
 * were in these (the values are not converted). */
static MM_NODISCARD mm_err mm_initial_units(int nc, const char *p, int var, const char *name) {
  nc_type type;
  size_t len = 0;
  if (nc_inq_att(nc, var, "units", &type, &len) != NC_NOERR) return MM_OK;
  char units[128] = "", key[128];
  bool text = false;
  if (type == NC_CHAR && len < sizeof units) {
    text = nc_get_att_text(nc, var, "units", units) == NC_NOERR;
  } else if (type == NC_STRING && len == 1) { /* as netCDF4-python writes non-ASCII text */
    char *str = NULL;
    if (nc_get_att_string(nc, var, "units", &str) == NC_NOERR && str &&
        strlen(str) < sizeof units) {
      snprintf(units, sizeof units, "%s", str);
      text = true;
    }
    if (str) nc_free_string(1, &str);
  }
  MM_REQUIRE(text, MM_ERR_INPUT, "%s: %s: attribute units is not a text of under 128 characters", p,
             name);
  size_t k = 0;
  for (const unsigned char *c = (const unsigned char *)units; *c; c++)
    if (*c != ' ' && *c != '_' && *c != '.' && *c != '^')
      key[k++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
  key[k] = '\0';
  if (k == 0) return MM_OK;
  const bool temp = !strcmp(name, "temp");
  if (!temp && !strcmp(units, "0.001")) return MM_OK; /* its '.' taken out would be 0001 */
  for (const char *const *u = temp ? mm_temp_units : mm_salt_units; *u; u++)
    if (!strcmp(key, *u)) return MM_OK;
  return MM_ERROR(MM_ERR_INPUT,
                  "%s: %s has units = '%s': expected %s (values are read as they are, not "
                  "converted)",
                  p, name, units,
                  temp ? "degrees Celsius (degC)" : "g/kg or practical salinity (g/kg, psu, 1)");
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

  MM_CHECK(mm_initial_units(nc, p, var, name));

  /* a wet value equal to the fill value (the type's default where the
   * attribute is absent, for double and float) or to missing_value (CF's
   * other mark of missing data) is missing data */
  double reject[1 + MM_MISSING_MAX];
  const char *reject_name[1 + MM_MISSING_MAX];
  int n_reject = 0;
  if (nc_get_att_double(nc, var, "_FillValue", &reject[0]) == NC_NOERR) {
    reject_name[n_reject++] = "the _FillValue";
  } else if (type == NC_DOUBLE || type == NC_FLOAT) {
    reject[0] = type == NC_DOUBLE ? NC_FILL_DOUBLE : (double)NC_FILL_FLOAT;
    reject_name[n_reject++] = "the _FillValue";
  }
  size_t n_missing = 0;
  nc_type missing_type;
  if (nc_inq_att(nc, var, "missing_value", &missing_type, &n_missing) == NC_NOERR) {
    MM_REQUIRE(n_missing >= 1 && n_missing <= MM_MISSING_MAX && missing_type != NC_CHAR &&
                   missing_type != NC_STRING &&
                   nc_get_att_double(nc, var, "missing_value", &reject[n_reject]) == NC_NOERR,
               MM_ERR_INPUT, "%s: %s: attribute missing_value is not 1 to %d numbers", p, name,
               MM_MISSING_MAX);
    for (size_t m = 0; m < n_missing; m++)
      reject_name[n_reject++] = "the missing_value";
  }

  if (!dst) return MM_OK; /* metadata only (mm_initial_check) */
  const size_t start[3] = {0, (size_t)g->j0, (size_t)g->i0};
  const size_t count[3] = {(size_t)g->nz, (size_t)g->nyl, (size_t)g->nxl};
  s = nc_get_vara_double(nc, var, start, count, buf);
  if (s != NC_NOERR)
    return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p,
                      strcmp(name, "temp") ? "reading salt" : "reading temp", s);
  const mm_io_bad bad = mm_io_unpack(g, buf, reject, n_reject, dst);
  MM_REQUIRE(!bad.found, MM_ERR_INPUT, "%s: %s = %g at wet cell (i=%d, j=%d, k=%d): %s%s", p, name,
             bad.value, bad.i, bad.j, bad.k,
             bad.found == 1 ? "not finite" : reject_name[bad.found >= 2 ? bad.found - 2 : 0],
             bad.found == 1 ? "" : " (missing data)");
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

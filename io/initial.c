/* The initial-state file `initial.file` (docs/output.md): temp and salt of
 * dimensions (z, y, x), named so and in this order, of lengths exactly
 * (nz, ny, nx), any NetCDF format. Each rank opens the
 * file on its own (serial API: classic files cannot be opened in parallel
 * without PnetCDF) and reads its block; the ranks then agree. */
#include "mm_io.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "layout.h"
#include "nc_dims.h"
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

/* Attribute `att` of var as text into buf (size bytes, NUL-terminated):
 * NC_CHAR, or one NC_STRING as netCDF4-python writes non-ASCII text. 0:
 * read; 1: absent; -1: present but not such a text, too long, or with a NUL
 * inside (NULs at its end are dropped). */
static int mm_att_text(int nc, int var, const char *att, char *buf, size_t size) {
  int status;
  const mm_nc_text got = mm_nc_att_text_in(nc, var, att, buf, size, &status);
  return got == MM_NC_TEXT_READ ? 0 : got == MM_NC_TEXT_ABSENT ? 1 : -1;
}

/* CF's valid range of var: valid_range (two numbers), or valid_min and
 * valid_max (one number each; either may be absent). Into valid[2] (the
 * infinities where absent) and text (what names it in a message, "" for
 * none). A malformed one (text, a wrong count, a range whose ends are out
 * of order or not finite, valid_range beside valid_min or valid_max) is
 * refused: the field's missing data could not be told. */
static MM_NODISCARD mm_err mm_initial_valid_range(int nc, const char *p, int var, const char *name,
                                                  double valid[2], char *text, size_t size) {
  static const char *const atts[3] = {"valid_range", "valid_min", "valid_max"};
  bool has[3];
  for (int a = 0; a < 3; a++) {
    nc_type type;
    size_t len = 0;
    has[a] = nc_inq_att(nc, var, atts[a], &type, &len) == NC_NOERR;
    if (!has[a]) continue;
    const size_t want = a == 0 ? 2 : 1;
    double v[2] = {0.0, 0.0};
    MM_REQUIRE(len == want && type != NC_CHAR && type != NC_STRING && type <= NC_UINT64 &&
                   nc_get_att_double(nc, var, atts[a], v) == NC_NOERR && isfinite(v[0]) &&
                   isfinite(v[a == 0 ? 1 : 0]),
               MM_ERR_INPUT, "%s: %s: attribute %s is not %s", p, name, atts[a],
               a == 0 ? "two finite numbers" : "one finite number");
    if (a == 0) valid[0] = v[0], valid[1] = v[1];
    if (a == 1) valid[0] = v[0];
    if (a == 2) valid[1] = v[0];
  }
  MM_REQUIRE(!has[0] || (!has[1] && !has[2]), MM_ERR_INPUT,
             "%s: %s: attribute valid_range beside valid_min or valid_max (CF: one or the other)",
             p, name);
  MM_REQUIRE(valid[0] <= valid[1], MM_ERR_INPUT,
             "%s: %s: its valid range [%g, %g] is empty: every value would be missing data", p,
             name, valid[0], valid[1]);
  if (has[0])
    snprintf(text, size, "valid_range = [%g, %g]", valid[0], valid[1]);
  else if (has[1] && has[2])
    snprintf(text, size, "valid_min = %g, valid_max = %g", valid[0], valid[1]);
  else if (has[1] || has[2])
    snprintf(text, size, "%s = %g", has[1] ? "valid_min" : "valid_max",
             has[1] ? valid[0] : valid[1]);
  return MM_OK;
}

/* temp in degrees Celsius, salt in g/kg or on the practical salinity scale:
 * a field in other units (K, degF, kg/kg) is refused, not read as if it
 * were in these (the values are not converted). */
static MM_NODISCARD mm_err mm_initial_units(int nc, const char *p, int var, const char *name) {
  char units[128], key[128];
  const int got = mm_att_text(nc, var, "units", units, sizeof units);
  if (got == 1) return MM_OK;
  const bool text = got == 0;
  MM_REQUIRE(text, MM_ERR_INPUT,
             "%s: %s: attribute units is not a text (of under 128 characters, no NUL inside)", p,
             name);
  size_t k = 0;
  for (const unsigned char *c = (const unsigned char *)units; *c; c++)
    if (*c != ' ' && *c != '_' && *c != '.' && *c != '^')
      key[k++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
  key[k] = '\0';
  if (k == 0) return MM_OK;
  const bool temp = !strcmp(name, "temp");
  if (!temp && !strcmp(units, "0.001")) return MM_OK; /* its '.' taken out would be 0001 */
  if (!temp && !strcmp(key, "1")) {
    /* CF: "1" is practical salinity's unit, and a mass fraction's: with any
     * standard_name but sea_water_practical_salinity, S is in kg/kg, 1000
     * times smaller than the model's g/kg, and would pass the range check */
    char standard[128];
    const int named = mm_att_text(nc, var, "standard_name", standard, sizeof standard);
    if (named == -1 ||
        (named == 0 && standard[0] && strcmp(standard, "sea_water_practical_salinity")))
      return MM_ERROR(MM_ERR_INPUT,
                      "%s: salt has units = '1' and standard_name = '%s': in CF that is a mass "
                      "fraction (kg/kg, 1000 times smaller than g/kg); expected g/kg, or units "
                      "= '1' with standard_name = 'sea_water_practical_salinity' (values are "
                      "read as they are, not converted)",
                      p, named == 0 ? standard : "(not text)");
    return MM_OK;
  }
  for (const char *const *u = temp ? mm_temp_units : mm_salt_units; *u; u++)
    if (!strcmp(key, *u)) return MM_OK;
  return MM_ERROR(MM_ERR_INPUT,
                  "%s: %s has units = '%s': expected %s (values are read as they are, not "
                  "converted)",
                  p, name, units,
                  temp ? "degrees Celsius (degC)" : "g/kg or practical salinity (g/kg, psu, 1)");
}

/* The coordinate variable `name` of the open file (a numeric variable of
 * that name on the one dimension of that name, of length n), where it has
 * one: *found, and its values into v. */
static MM_NODISCARD mm_err mm_initial_coord(int nc, const char *p, const char *name, size_t n,
                                            double *v, int *var, bool *found) {
  *found = false;
  if (nc_inq_varid(nc, name, var) != NC_NOERR) return MM_OK;
  int nd = 0, dim = -1;
  nc_type type;
  char dim_name[NC_MAX_NAME + 1] = "";
  size_t len = 0;
  if (nc_inq_varndims(nc, *var, &nd) != NC_NOERR || nd != 1 ||
      nc_inq_var(nc, *var, NULL, &type, NULL, &dim, NULL) != NC_NOERR ||
      nc_inq_dim(nc, dim, dim_name, &len) != NC_NOERR || strcmp(dim_name, name) != 0 || len != n ||
      type == NC_CHAR || type == NC_STRING || type > NC_UINT64)
    return MM_OK; /* not a coordinate variable of the dimension the fields use */
  const int s = nc_get_var_double(nc, *var, v);
  if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, name, s);
  *found = true;
  return MM_OK;
}

/* Where the file has coordinate variables, they must be the model's
 * orientation and levels: z the depths of the level centres z_t (m, positive
 * down, from the surface), y and x increasing. The fields are read by index,
 * so a file whose levels run up from the floor, or lie at other depths, or
 * whose rows run north to south, would otherwise be taken upside down, or on
 * the wrong levels, without a word. */
static MM_NODISCARD mm_err mm_initial_coords(int nc, const char *p, const mm_grid *g) {
  const double *z_t = g->z_t; /* NULL: the levels are not checked */
  const size_t most =
      (size_t)(g->nx > g->ny ? (g->nx > g->nz ? g->nx : g->nz) : (g->ny > g->nz ? g->ny : g->nz));
  double *v = malloc(most * sizeof *v);
  MM_REQUIRE(v, MM_ERR_RUN, "%s: out of memory (%zu bytes)", p, most * sizeof *v);
  mm_err err = MM_OK;
  int var = -1;
  bool found = false;
  err = mm_initial_coord(nc, p, "z", (size_t)g->nz, v, &var, &found);
  if (err == MM_OK && found) {
    char positive[16];
    const int got = mm_att_text(nc, var, "positive", positive, sizeof positive);
    if (got == -1 || (got == 0 && strcasecmp(positive, "down") != 0))
      err = MM_ERROR(MM_ERR_INPUT,
                     "%s: z has positive = '%s': the fields are read with level 0 at the surface "
                     "and depth positive down, as the model's z (positive = \"down\"): write "
                     "the file so",
                     p, got == 0 ? positive : "(not text)");
    for (int k = 0; err == MM_OK && z_t && k < g->nz; k++)
      if (!(fabs(v[k] - z_t[k]) <= 1e-6 * fabs(z_t[k]) + 1e-6))
        err = MM_ERROR(MM_ERR_INPUT,
                       "%s: z[%d] = %.9g, but level %d of this configuration is centred at %.9g "
                       "m depth (grid.nz, grid.depth, grid.dz_surface): the file is on other "
                       "levels, or upside down; the values are read by level, not interpolated",
                       p, k, v[k], k, z_t[k]);
  }
  static const char *const horizontal[2] = {"y", "x"};
  for (int d = 0; d < 2 && err == MM_OK; d++) {
    const int n = d == 0 ? g->ny : g->nx;
    err = mm_initial_coord(nc, p, horizontal[d], (size_t)n, v, &var, &found);
    for (int i = 1; err == MM_OK && found && i < n; i++)
      if (!(v[i] > v[i - 1]))
        err = MM_ERROR(MM_ERR_INPUT,
                       "%s: %s[%d] = %.9g does not increase from %s[%d] = %.9g: the fields are "
                       "read with index 0 at the %s edge, as the model's %s",
                       p, horizontal[d], i, v[i], horizontal[d], i - 1, v[i - 1],
                       d == 0 ? "south" : "west", horizontal[d]);
  }
  free(v);
  return err;
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
  s = nc_inq_vartype(nc, var, &type);
  if (s == NC_NOERR) s = mm_nc_var_dims(nc, var, &nd, dims);
  MM_REQUIRE(s != NC_EMAXDIMS, MM_ERR_INPUT,
             "%s: %s has %d dimensions, more than netCDF's limit of %d; expected (z, y, x)", p,
             name, nd, NC_MAX_VAR_DIMS);
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

  /* CF: a value outside valid_min, valid_max or valid_range is missing
   * data too (values as stored: the field is not packed) */
  double valid[2] = {-INFINITY, INFINITY};
  char valid_text[96] = "";
  MM_CHECK(mm_initial_valid_range(nc, p, var, name, valid, valid_text, sizeof valid_text));
  /* the marks as values of the field's own type: a float field's values
   * are floats, and a double attribute (netCDF4-python writes a Python
   * float so) that is not one would never equal its mark, or would put
   * the field's own maximum outside its valid_max (CF: of the field's type) */
  if (type == NC_FLOAT) {
    for (int r = 0; r < n_reject; r++)
      reject[r] = (double)(float)reject[r];
    for (int e = 0; e < 2; e++)
      if (isfinite(valid[e])) valid[e] = (double)(float)valid[e];
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
  if (valid_text[0])
    for (int j = 0; j < g->nyl; j++)
      for (int i = 0; i < g->nxl; i++) {
        const size_t c = mm_col(g, i, j);
        for (int k = 0; k < g->kmt[c]; k++) {
          const double v = dst[c * (size_t)g->nz + (size_t)k];
          MM_REQUIRE(v >= valid[0] && v <= valid[1], MM_ERR_INPUT,
                     "%s: %s = %g at wet cell (i=%d, j=%d, k=%d): outside %s (missing data)", p,
                     name, v, g->i0 + i, g->j0 + j, k, valid_text);
        }
      }
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
      err = mm_io_open_fail(MM_ERR_INPUT, __FILE__, __LINE__, path,
                            "cannot open (missing, unreadable or not NetCDF)", s);
    open = s == NC_NOERR;
  }
  if (err == MM_OK) err = mm_initial_coords(nc, path, g);
  if (err == MM_OK) err = mm_initial_field(nc, path, g, "temp", buf, temp);
  if (err == MM_OK) err = mm_initial_field(nc, path, g, "salt", buf, salt);
  if (open) nc_close(nc);
  free(buf);
  return mm_agree(g->cart, err);
}

mm_err mm_initial_check(MPI_Comm comm, const mm_config *cfg, const char *path) {
  mm_grid shape;
  MM_CHECK(mm_io_shape(cfg, comm, &shape));
  const size_t nz = (size_t)cfg->nz;
  double *levels = malloc((3 * nz + 1) * sizeof *levels); /* h, z_w, z_t (m) */
  mm_err err = levels ? MM_OK : MM_ERROR(MM_ERR_RUN, "out of memory (%zu levels)", nz);
  if (err == MM_OK) mm_grid_levels(cfg, levels, levels + nz, levels + 2 * nz + 1);
  err = mm_agree(comm, err);
  shape.z_t = levels + 2 * nz + 1;
  if (err == MM_OK) err = mm_initial_read(&shape, &cfg->env, path, NULL, NULL);
  free(levels);
  return err;
}

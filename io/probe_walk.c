/* mm_io_probe_walk: the test read of an input file's metadata
 * (probe_walk.h). */
#include <stdlib.h>

#include <netcdf.h>

#include "nc_dims.h"
#include "probe_walk.h"

/* Bytes of one value of an atomic netCDF type; 0 for user-defined types. */
static size_t type_size(nc_type t) {
  switch (t) {
  case NC_BYTE:
  case NC_UBYTE:
  case NC_CHAR: return 1;
  case NC_SHORT:
  case NC_USHORT: return 2;
  case NC_INT:
  case NC_UINT:
  case NC_FLOAT: return 4;
  case NC_INT64:
  case NC_UINT64:
  case NC_DOUBLE: return 8;
  case NC_STRING: return sizeof(char *);
  default: return 0;
  }
}

/* Every attribute of variable var (NC_GLOBAL: of the file), values read;
 * one that fails does not stop the others. 1 when any failed. */
static int walk_atts(int nc, int var, int natts) {
  int bad = 0;
  for (int a = 0; a < natts; a++) {
    char name[NC_MAX_NAME + 1];
    nc_type type;
    size_t len;
    if (nc_inq_attname(nc, var, a, name) || nc_inq_att(nc, var, name, &type, &len)) {
      bad = 1;
      continue;
    }
    const size_t size = type_size(type);
    if (!size || len == 0 || len > ((size_t)16 << 20) / size) continue;
    void *buf = malloc(len * size);
    if (!buf) return 1;
    const int s = nc_get_att(nc, var, name, buf);
    if (s == NC_NOERR && type == NC_STRING) nc_free_string(len, buf);
    free(buf);
    bad |= s != NC_NOERR;
  }
  return bad;
}

int mm_io_probe_walk(const char *path) {
  int nc, ndims = 0, nvars = 0, ngatts = 0, unlim;
  if (nc_open(path, NC_NOWRITE, &nc)) return MM_PROBE_REFUSED;
  int bad = nc_inq(nc, &ndims, &nvars, &ngatts, &unlim) != NC_NOERR;
  for (int d = 0; d < ndims; d++) {
    char name[NC_MAX_NAME + 1];
    size_t len;
    bad |= nc_inq_dim(nc, d, name, &len) != NC_NOERR;
  }
  bad |= walk_atts(nc, NC_GLOBAL, ngatts);
  for (int v = 0; v < nvars; v++) {
    char name[NC_MAX_NAME + 1];
    nc_type type;
    int nd = 0, natts = 0, dims[NC_MAX_VAR_DIMS];
    if (nc_inq_var(nc, v, name, &type, NULL, NULL, &natts) != NC_NOERR) {
      bad = 1;
      continue;
    }
    if (mm_nc_var_dims(nc, v, &nd, dims) != NC_NOERR) bad = 1, nd = 0;
    /* the reader's own lookups: by name, and the names of its dimensions */
    int id = -1;
    bad |= nc_inq_varid(nc, name, &id) != NC_NOERR;
    for (int d = 0; d < nd; d++) {
      char dim[NC_MAX_NAME + 1];
      size_t len;
      bad |= nc_inq_dim(nc, dims[d], dim, &len) != NC_NOERR;
    }
    bad |= walk_atts(nc, v, natts);
  }
  return nc_close(nc) || bad ? MM_PROBE_REFUSED : MM_PROBE_READ;
}

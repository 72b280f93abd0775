/* The dimensions of a netCDF variable, bounded. nc_inq_var writes as many
 * dimension ids as the file gives, and a classic-format file may give more
 * than NC_MAX_VAR_DIMS, by which every reader sizes its array (the library
 * reads such a file; the readers' stacks were overwritten). Only netCDF
 * here: also in minimodel-probe. */
#ifndef MM_NC_DIMS_H
#define MM_NC_DIMS_H

#include <netcdf.h>

/* The number of var's dimensions into *nd and their ids into
 * dims[NC_MAX_VAR_DIMS]; NC_EMAXDIMS, nothing written to dims, where var
 * has more. A netCDF status. */
static inline int mm_nc_var_dims(int nc, int var, int *nd, int *dims) {
  const int s = nc_inq_varndims(nc, var, nd);
  if (s != NC_NOERR) return s;
  if (*nd < 0 || *nd > NC_MAX_VAR_DIMS) return NC_EMAXDIMS;
  return nc_inq_vardimid(nc, var, dims);
}

#endif

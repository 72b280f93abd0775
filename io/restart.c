/* Restart and crash files (docs/output.md): the bitwise state temp, salt on
 * (z, y, x), 0 on land, with kmt and the attributes step, time, config_hash,
 * nx, ny, nz. Written in parallel to `<file>.tmp`, then renamed: a write
 * that fails leaves the old file in place. Its room is reserved first
 * (mm_io_reserve); a write that fails inside the netCDF/HDF5 libraries all
 * the same leaves the .tmp open in them, untouched, and removed by name
 * (mm_io_files_left_open). */
#include "mm_io.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout.h"
#include "nc_dims.h"
#include "nc_util.h"

/* Variable ids of a state file. */
typedef struct {
  int temp, salt, kmt;
} mm_state_vars;

/* Each field's two checksums, attributes of 16 hexadecimal digits, written
 * with every state file and checked when one is read, so that a file
 * changed or damaged after it was written is refused, not run from:
 *   checksum:         the sum, modulo 2^64, of the bit patterns of all its
 *                     values as stored (a double's 64 bits, an int's 32 as
 *                     an unsigned number): a value changed;
 *   checksum_ordered: the sum, modulo 2^64, of mm_mix64(bits ^
 *                     mm_mix64(n)) over its values, n a value's index in
 *                     the field as stored (C order: z, y, x; y, x for kmt):
 *                     values swapped or moved, and values negated in pairs
 *                     (each adds 2^63 to its bits), which leave the plain
 *                     sum as it was.
 * Integer sums do not depend on their order, so the ranks' parts add up to
 * the same checksums on any decomposition. A file without an attribute
 * (written before it) is read without that check. */
#define MM_CHECKSUM_ATT         "checksum"
#define MM_CHECKSUM_ORDERED_ATT "checksum_ordered"
enum { MM_NSUMS = 6 }; /* temp, salt, kmt: plain, then ordered */

/* SplitMix64's output function (Steele, Lea and Flood 2014) of x: each bit
 * of x flips about half the bits of the result, not linearly */
static uint64_t mm_mix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15u;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

/* A value's term in checksum_ordered: its bits mixed with its place */
static uint64_t ordered_term(uint64_t bits, uint64_t at) {
  return mm_mix64(bits ^ mm_mix64(at));
}

/* This rank's parts of a 3-D field's sums: buf is its block as stored, (z,
 * y, x) of nz x nyl x nxl (mm_io_pack) */
static void sum_doubles(const mm_grid *g, const double *buf, uint64_t *plain, uint64_t *ordered) {
  uint64_t s = 0, w = 0;
  size_t at = 0;
  for (int k = 0; k < g->nz; k++)
    for (int j = 0; j < g->nyl; j++) {
      const uint64_t row =
          ((uint64_t)k * (uint64_t)g->ny + (uint64_t)(g->j0 + j)) * (uint64_t)g->nx +
          (uint64_t)g->i0;
      for (int i = 0; i < g->nxl; i++, at++) {
        uint64_t u;
        memcpy(&u, &buf[at], sizeof u);
        s += u;
        w += ordered_term(u, row + (uint64_t)i);
      }
    }
  *plain = s;
  *ordered = w;
}
/* and of kmt, (y, x) of nyl x nxl */
static void sum_ints(const mm_grid *g, const int *kmt, uint64_t *plain, uint64_t *ordered) {
  uint64_t s = 0, w = 0;
  size_t at = 0;
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++, at++) {
      const uint64_t u = (uint32_t)kmt[at];
      s += u;
      w += ordered_term(u, (uint64_t)(g->j0 + j) * (uint64_t)g->nx + (uint64_t)(g->i0 + i));
    }
  *plain = s;
  *ordered = w;
}
/* The checksums of all ranks' parts (collective). */
static MM_NODISCARD mm_err sum_ranks(MPI_Comm comm, uint64_t part[MM_NSUMS],
                                     uint64_t all[MM_NSUMS]) {
  return MM_MPI_ERR(MPI_Allreduce(part, all, MM_NSUMS, MPI_UINT64_T, MPI_SUM, comm));
}

/* Define mode of a state file (this rank alone; the same on every rank). */
static MM_NODISCARD mm_err mm_state_define(int nc, const char *p, const mm_grid *g,
                                           const mm_config *cfg, const mm_io_origin *origin,
                                           const char *created, const char *kind, long step,
                                           double time, const uint64_t sums[MM_NSUMS],
                                           mm_state_vars *v) {
  mm_err err = MM_OK;
  int d_z = -1, d_y = -1, d_x = -1;
#define DEF(what, call) MM_NC_LOCAL(err, MM_ERR_RUN, p, what, call)
  DEF("defining dimension z", nc_def_dim(nc, "z", (size_t)g->nz, &d_z));
  DEF("defining dimension y", nc_def_dim(nc, "y", (size_t)g->ny, &d_y));
  DEF("defining dimension x", nc_def_dim(nc, "x", (size_t)g->nx, &d_x));
  const int dims3[3] = {d_z, d_y, d_x}, dims2[2] = {d_y, d_x};
  DEF("defining temp", nc_def_var(nc, "temp", NC_DOUBLE, 3, dims3, &v->temp));
  DEF("defining salt", nc_def_var(nc, "salt", NC_DOUBLE, 3, dims3, &v->salt));
  DEF("defining kmt", nc_def_var(nc, "kmt", NC_INT, 2, dims2, &v->kmt));
  /* every value is written: contiguous, no fill pass */
  const int vars[3] = {v->temp, v->salt, v->kmt};
  for (int i = 0; i < 3; i++) {
    DEF("setting storage", nc_def_var_chunking(nc, vars[i], NC_CONTIGUOUS, NULL));
    DEF("setting storage", nc_def_var_fill(nc, vars[i], NC_NOFILL, NULL));
  }
  DEF("writing attributes",
      mm_io_put_texts(nc, v->temp,
                      (const char *const[]){"units", "degC", "long_name", "potential temperature",
                                            "standard_name", "sea_water_potential_temperature",
                                            NULL}));
  DEF("writing attributes",
      mm_io_put_texts(nc, v->salt,
                      (const char *const[]){"units", "g/kg", "long_name", "salinity",
                                            "standard_name", "sea_water_salinity", NULL}));
  DEF("writing attributes",
      mm_io_put_texts(nc, v->kmt,
                      (const char *const[]){"units", "1", "long_name",
                                            "number of wet levels; 0 = land", "standard_name",
                                            "model_level_number_at_sea_floor", NULL}));
  for (int i = 0; i < 3; i++) {
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, sums[i]);
    DEF("writing attributes", nc_put_att_text(nc, vars[i], MM_CHECKSUM_ATT, 16, hex));
    snprintf(hex, sizeof hex, "%016" PRIx64, sums[3 + i]);
    DEF("writing attributes", nc_put_att_text(nc, vars[i], MM_CHECKSUM_ORDERED_ATT, 16, hex));
  }
  /* CF global attributes */
  char title[MM_STR_MAX + 64], source[MM_STR_MAX + 32];
  snprintf(title, sizeof title, "minimodel %s state of %s at step %ld", kind, cfg->run_name, step);
  snprintf(source, sizeof source, "minimodel %s", mm_io_origin_version(origin));
  char *history = mm_io_history_line(created, "written by", origin);
  if (!history && err == MM_OK) err = MM_ERROR(MM_ERR_RUN, "%s: out of memory", p);
  /* the resolved configuration: a continuation with another one is refused
   * naming every key that differs */
  char *configuration = mm_config_to_string(cfg);
  if (!configuration && err == MM_OK) err = MM_ERROR(MM_ERR_RUN, "%s: out of memory", p);
  DEF("writing attributes",
      mm_io_put_texts(nc, NC_GLOBAL,
                      (const char *const[]){"Conventions", "CF-1.8", "title", title, "source",
                                            source, "history", history ? history : "",
                                            "configuration", configuration ? configuration : "",
                                            NULL}));
  free(history);
  free(configuration);

  char hash[17];
  mm_io_hash_text(cfg, hash);
  const long long step_ll = step;
  const int nx = g->nx, ny = g->ny, nz = g->nz;
  DEF("writing attributes", nc_put_att_longlong(nc, NC_GLOBAL, "step", NC_INT64, 1, &step_ll));
  DEF("writing attributes", nc_put_att_double(nc, NC_GLOBAL, "time", NC_DOUBLE, 1, &time));
  DEF("writing attributes", nc_put_att_text(nc, NC_GLOBAL, "config_hash", 16, hash));
  DEF("writing attributes", nc_put_att_int(nc, NC_GLOBAL, "nx", NC_INT, 1, &nx));
  DEF("writing attributes", nc_put_att_int(nc, NC_GLOBAL, "ny", NC_INT, 1, &ny));
  DEF("writing attributes", nc_put_att_int(nc, NC_GLOBAL, "nz", NC_INT, 1, &nz));
#undef DEF
  return err;
}

/* The written file on the disk (fsync) before it is renamed over the last
 * complete one, so that a crash of the machine cannot leave a renamed file
 * whose data never reached the disk. */
static MM_NODISCARD mm_err flush_to_disk(const char *path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MM_ERROR(MM_ERR_RUN, "%s: cannot open to flush: %s", path, strerror(errno));
  const int rc = fsync(fd) == 0 || errno == EINVAL ? 0 : errno; /* EINVAL: no fsync there */
  close(fd);
  return rc ? MM_ERROR(MM_ERR_RUN, "%s: cannot flush to disk: %s", path, strerror(rc)) : MM_OK;
}

/* The rename on the disk (fsync of the directory): best effort, a file
 * system may not sync directories; the file in place is complete either
 * way, the old one or the new. */
static void flush_directory(const char *dir) {
  const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)fsync(fd); /* unchecked: best effort (above) */
  close(fd);
}

/* Write the state to final_path via final_path.tmp (collective). */
static MM_NODISCARD mm_err mm_state_write(const mm_grid *g, const mm_config *cfg,
                                          const mm_io_origin *origin, const double *temp,
                                          const double *salt, long step, double time,
                                          const char *suffix, const char *kind) {
  char path[MM_IO_PATH_MAX], tmp[MM_IO_PATH_MAX + 8];
  MM_CHECK(mm_io_path(path, cfg, suffix)); /* the same on every rank */
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  MPI_Comm comm;
  MM_CHECK(mm_io_comm(g->cart, &comm));

  const size_t n = (size_t)g->nz * (size_t)g->nyl * (size_t)g->nxl; /* block elements */
  double *buf = malloc(n * sizeof *buf);                            /* one field, file order */
  int *kmt = malloc((size_t)g->nyl * (size_t)g->nxl * sizeof *kmt); /* kmt block */
  mm_err err = MM_OK;
  if (!buf || !kmt)
    err = MM_ERROR(MM_ERR_RUN, "%s: out of memory (%zu bytes)", tmp, n * sizeof *buf);
  if (err == MM_OK) err = mm_io_check_dir(cfg->output_dir, path);
  err = mm_agree(comm, err);
  char created[32] = "";
  if (err == MM_OK) err = mm_io_creation_time(comm, g->rank, created);
  const double cells = (double)g->nx * (double)g->ny; /* columns */
  const double bytes =
      cells * ((double)g->nz * 2.0 * sizeof(double) + sizeof(int)) + MM_IO_SPACE_MARGIN;
  if (err == MM_OK) err = mm_io_check_space(comm, cfg->output_dir, bytes, tmp);
  if (err == MM_OK) err = mm_io_check_inodes(comm, cfg->output_dir, true, tmp, MM_IO_FDS_LATER);
  /* whatever stands at the .tmp name is removed first (rank 0, before any
   * rank creates it): the libraries would write through a link there into
   * the file it names, which the rename then would not replace */
  if (err == MM_OK) {
    mm_err removed = MM_OK;
    /* (a directory there stays, for the create to refuse as usual) */
    if (g->rank == 0 && unlink(tmp) != 0 && errno != ENOENT && errno != EISDIR)
      removed = MM_ERROR(MM_ERR_RUN,
                         "%s: cannot create: what stands at the name cannot be "
                         "removed: %s",
                         tmp, strerror(errno));
    err = mm_agree(comm, removed);
  }
  if (err != MM_OK) goto done;

  int nc = -1;
  int s = nc_create_par(tmp, NC_NETCDF4 | NC_CLOBBER, comm, MPI_INFO_NULL, &nc);
  if (s != NC_NOERR) err = mm_io_create_fail(MM_ERR_RUN, __FILE__, __LINE__, tmp, s);
  err = mm_agree(comm, err);
  if (err != MM_OK) {
    if (s == NC_NOERR)
      nc_close(nc); /* opened here, failed elsewhere */
    else if (g->rank == 0)
      mm_io_remove_mpi_lock(tmp); /* Open MPI's, left by the open that failed */
    goto remove_tmp;              /* made, perhaps, before the failure */
  }

  mm_state_vars v = {-1, -1, -1};
  /* the checksums of the fields as they will be stored (temp, salt, kmt) */
  uint64_t part[MM_NSUMS], sums[MM_NSUMS] = {0};
  mm_io_pack(g, temp, 0.0, buf);
  sum_doubles(g, buf, &part[0], &part[3]);
  mm_io_pack(g, salt, 0.0, buf);
  sum_doubles(g, buf, &part[1], &part[4]);
  mm_io_pack_kmt(g, kmt);
  sum_ints(g, kmt, &part[2], &part[5]);
  err = mm_agree(comm, sum_ranks(comm, part, sums));
  if (err == MM_OK) err = mm_io_reserve(comm, &cfg->env, tmp, bytes, NULL);
  if (err == MM_OK)
    err = mm_agree(comm,
                   mm_state_define(nc, tmp, g, cfg, origin, created, kind, step, time, sums, &v));
  if (err != MM_OK) /* the file left open, untouched (mm_io_files_left_open): a disk
                     * that filled between the check of its room and the reservation
                     * failed HDF5's first writes, and its abort then crashed (SIGSEGV)
                     * or left the ranks waiting for ever */
    goto remove_tmp;
  /* from the header on: each collective call, then the ranks agree, so
   * that after a failure inside the libraries no rank makes one more call */
  bool broken = false;
#define PUT(what, call)                                                                            \
  do {                                                                                             \
    if (err == MM_OK) {                                                                            \
      MM_NC_WRITE(err, tmp, cfg->output_dir, what, call);                                          \
      err = mm_agree(comm, err);                                                                   \
      broken = err != MM_OK;                                                                       \
    }                                                                                              \
  } while (0)
  PUT("cannot write the header", nc_enddef(nc));
  if (err == MM_OK) {
    const int vars[3] = {v.temp, v.salt, v.kmt};
    for (int i = 0; i < 3; i++)
      MM_NC_LOCAL(err, MM_ERR_RUN, tmp, "setting collective access",
                  nc_var_par_access(nc, vars[i], NC_COLLECTIVE));
    err = mm_agree(comm, err);
  }
  if (err == MM_OK) {
    const size_t start[3] = {0, (size_t)g->j0, (size_t)g->i0};
    const size_t count[3] = {(size_t)g->nz, (size_t)g->nyl, (size_t)g->nxl};
    mm_io_pack_kmt(g, kmt);
    PUT("writing kmt", nc_put_vara_int(nc, v.kmt, start + 1, count + 1, kmt));
    mm_io_pack(g, temp, 0.0, buf);
    PUT("writing temp", nc_put_vara_double(nc, v.temp, start, count, buf));
    mm_io_pack(g, salt, 0.0, buf);
    PUT("writing salt", nc_put_vara_double(nc, v.salt, start, count, buf));
    /* fault injection for tests (mm_settings.h): the fault rank dies here,
     * the .tmp half written and not renamed */
    if (!strcmp(suffix, ".restart.nc") && cfg->env.fault.kill_now &&
        mm_fault_here(&cfg->env, g->rank))
      raise(SIGKILL);
  }
#undef PUT
  /* closed unless a write failed inside the libraries: the close would then
   * fail too, and leave HDF5 with the id of a freed file */
  if (!broken) {
    mm_err close_err = MM_OK;
    MM_NC_COLL(close_err, MM_ERR_RUN, tmp, "cannot close", nc_close(nc));
    close_err = mm_agree(comm, close_err);
    if (err == MM_OK) err = close_err;
    if (err == MM_OK) err = mm_io_trim(comm, tmp, NULL);
  }
  if (err != MM_OK) goto remove_tmp;

  /* Every rank has closed the file (the agreement above is a barrier):
   * rank 0 renames it over the old one; the agreement after the rename is
   * the final barrier, so no rank goes on before the file is in place. */
  err = MM_MPI_ERR(MPI_Barrier(comm));
  if (err == MM_OK && g->rank == 0) err = flush_to_disk(tmp);
  if (err == MM_OK && g->rank == 0 && rename(tmp, path) != 0)
    err = MM_ERROR(MM_ERR_RUN, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
  if (err == MM_OK && g->rank == 0) flush_directory(cfg->output_dir);
  err = mm_agree(comm, err);
  if (err == MM_OK) goto done;

remove_tmp:
  if (g->rank == 0) unlink(tmp); /* no half-written file left behind (a directory stays) */
done:
  free(buf);
  free(kmt);
  (void)MPI_Comm_free(&comm); /* unchecked: clean-up */
  return err;
}

mm_err mm_restart_write(const mm_grid *g, const mm_config *cfg, const mm_io_origin *origin,
                        const double *temp, const double *salt, long step, double time) {
  return mm_state_write(g, cfg, origin, temp, salt, step, time, ".restart.nc", "restart");
}

mm_err mm_crash_write(const mm_grid *g, const mm_config *cfg, const mm_io_origin *origin,
                      const double *temp, const double *salt, long step, double time) {
  return mm_state_write(g, cfg, origin, temp, salt, step, time, ".crash.nc", "last good (crash)");
}

/* ---------------------------------------------------------------- reading */

/* Id of variable name, or MM_ERR_INPUT "missing variable". */
static MM_NODISCARD mm_err mm_find_var(int nc, const char *p, const char *name, int *var) {
  int s = nc_inq_varid(nc, name, var);
  MM_REQUIRE(s != NC_ENOTVAR, MM_ERR_INPUT, "%s: not a restart file: missing variable '%s'", p,
             name);
  if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, name, s);
  return MM_OK;
}

/* A global attribute of one value of a numeric type: its length, or
 * "missing attribute". */
static MM_NODISCARD mm_err mm_find_att(int nc, const char *p, const char *name, size_t *len) {
  nc_type type;
  int s = nc_inq_att(nc, NC_GLOBAL, name, &type, len);
  MM_REQUIRE(s != NC_ENOTATT, MM_ERR_INPUT, "%s: not a restart file: missing attribute '%s'", p,
             name);
  if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, name, s);
  MM_REQUIRE(type != NC_CHAR && type != NC_STRING && *len == 1, MM_ERR_INPUT,
             "%s: attribute '%s' is not a single number", p, name);
  return MM_OK;
}

/* The global text attribute name into out (max_len + 1 bytes): NC_CHAR, or
 * one NC_STRING (as h5netcdf and netCDF4-python's setncattr_string write
 * text), of 1 to max_len characters and no NUL inside (mm_nc_att_text); or
 * "missing attribute". */
static MM_NODISCARD mm_err mm_restart_text(int nc, const char *p, const char *name, size_t max_len,
                                           char *out) {
  int status;
  const mm_nc_text got = mm_nc_att_text_in(nc, NC_GLOBAL, name, out, max_len + 1, &status);
  MM_REQUIRE(got != MM_NC_TEXT_ABSENT, MM_ERR_INPUT,
             "%s: not a restart file: missing attribute '%s'", p, name);
  if (got == MM_NC_TEXT_FAILED)
    return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, name, status);
  MM_REQUIRE(got != MM_NC_TEXT_NO_MEMORY, MM_ERR_RUN, "%s: out of memory", p);
  MM_REQUIRE(got == MM_NC_TEXT_READ && out[0], MM_ERR_INPUT,
             "%s: attribute '%s' is not a string of at most %zu characters", p, name, max_len);
  return MM_OK;
}

/* The shape of a variable: exactly ndims dimensions, named (z, y, x) or
 * (y, x) in this order, of lengths want[], type `type`; a grid mismatch
 * names the dimensions that differ. */
static MM_NODISCARD mm_err mm_check_shape(int nc, const char *p, int var, const char *name,
                                          nc_type type, int ndims, const int *want) {
  static const char *const grid_names[3] = {"nz", "ny", "nx"};
  const char *const *names = grid_names + (3 - ndims); /* (nz, ny, nx) or (ny, nx) */
  int nd = 0, dims[NC_MAX_VAR_DIMS];
  nc_type t;
  int s = nc_inq_vartype(nc, var, &t);
  if (s == NC_NOERR) s = mm_nc_var_dims(nc, var, &nd, dims);
  MM_REQUIRE(s != NC_EMAXDIMS, MM_ERR_INPUT,
             "%s: %s has %d dimensions, more than netCDF's limit of %d; expected %d", p, name, nd,
             NC_MAX_VAR_DIMS, ndims);
  if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, name, s);
  MM_REQUIRE(nd == ndims, MM_ERR_INPUT, "%s: %s has %d dimensions, expected %d", p, name, nd,
             ndims);
  MM_REQUIRE(t == type, MM_ERR_INPUT, "%s: %s is not of type %s", p, name,
             type == NC_DOUBLE ? "double" : "int");
  static const char *const order[3] = {"z", "y", "x"};
  MM_CHECK(mm_io_check_dim_names(nc, p, var, name, ndims, order + (3 - ndims)));
  MM_CHECK(mm_io_check_unpacked(nc, p, var, name));
  size_t len[3] = {0, 0, 0};
  char differ[64] = "";
  int n_differ = 0;
  for (int d = 0; d < nd; d++) {
    s = nc_inq_dimlen(nc, dims[d], &len[d]);
    if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, name, s);
    if (len[d] != (size_t)want[d]) {
      size_t used = strlen(differ);
      snprintf(differ + used, sizeof differ - used, "%s%s", n_differ ? ", " : "", names[d]);
      n_differ++;
    }
  }
  if (n_differ == 0) return MM_OK;
  if (nd == 3)
    return MM_ERROR(MM_ERR_INPUT,
                    "%s: written for another grid: %s is (nz, ny, nx) = (%zu, %zu, %zu), this grid "
                    "(%d, %d, %d): %s %s",
                    p, name, len[0], len[1], len[2], want[0], want[1], want[2], differ,
                    n_differ > 1 ? "differ" : "differs");
  return MM_ERROR(MM_ERR_INPUT,
                  "%s: written for another grid: %s is (ny, nx) = (%zu, %zu), this grid (%d, %d): "
                  "%s %s",
                  p, name, len[0], len[1], want[0], want[1], differ,
                  n_differ > 1 ? "differ" : "differs");
}

/* Everything of the file but the fields (this rank alone; the same result on
 * every rank, as all read the same file). */
static MM_NODISCARD mm_err mm_state_inquire(int nc, const char *p, const mm_grid *g,
                                            const mm_config *cfg, mm_state_vars *v, long *step,
                                            double *time) {
  MM_CHECK(mm_find_var(nc, p, "temp", &v->temp));
  MM_CHECK(mm_find_var(nc, p, "salt", &v->salt));
  MM_CHECK(mm_find_var(nc, p, "kmt", &v->kmt));
  const int grid3[3] = {g->nz, g->ny, g->nx};
  MM_CHECK(mm_check_shape(nc, p, v->temp, "temp", NC_DOUBLE, 3, grid3));
  MM_CHECK(mm_check_shape(nc, p, v->salt, "salt", NC_DOUBLE, 3, grid3));
  MM_CHECK(mm_check_shape(nc, p, v->kmt, "kmt", NC_INT, 2, grid3 + 1));

  size_t len;
  const char *const sizes[3] = {"nz", "ny", "nx"};
  for (int d = 0; d < 3; d++) {
    int value;
    MM_CHECK(mm_find_att(nc, p, sizes[d], &len));
    int s = nc_get_att_int(nc, NC_GLOBAL, sizes[d], &value);
    if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, sizes[d], s);
    MM_REQUIRE(value == grid3[d], MM_ERR_INPUT,
               "%s: written for another grid: attribute %s = %d, this grid %d", p, sizes[d], value,
               grid3[d]);
  }

  char want[17], have[33] = "";
  mm_io_hash_text(cfg, want);
  MM_CHECK(mm_restart_text(nc, p, "config_hash", 32, have));
  if (strcmp(have, want) != 0) {
    /* name the keys, from the configuration the file records */
    char diff[1024] = "", *text = NULL;
    size_t clen = 0;
    int status;
    if (mm_nc_att_text(nc, NC_GLOBAL, "configuration", &text, &clen, &status) == MM_NC_TEXT_READ &&
        (clen >= (1u << 20) || mm_config_solution_diff(cfg, text, diff, sizeof diff) <= 0))
      diff[0] = '\0';
    free(text);
    return MM_ERROR(MM_ERR_INPUT,
                    "%s: written for another configuration (config_hash %s, this configuration "
                    "%s): %s",
                    p, have, want, diff[0] ? diff : "a key that determines the solution differs");
  }

  long long step_ll;
  MM_CHECK(mm_find_att(nc, p, "step", &len));
  /* as a double first: a step of 2.5 would be read as 2, NaN as the least
   * long long */
  double step_d;
  int s = nc_get_att_double(nc, NC_GLOBAL, "step", &step_d);
  if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, "step", s);
  MM_REQUIRE(isfinite(step_d) && step_d == floor(step_d), MM_ERR_INPUT,
             "%s: attribute step = %g is not a whole number of steps", p, step_d);
  s = nc_get_att_longlong(nc, NC_GLOBAL, "step", &step_ll);
  if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, "step", s);
  MM_REQUIRE(step_ll >= 0 && step_ll <= 1000000000LL && step_d == (double)step_ll, MM_ERR_INPUT,
             "%s: attribute step = %lld is out of range", p, step_ll);
  MM_CHECK(mm_find_att(nc, p, "time", &len));
  s = nc_get_att_double(nc, NC_GLOBAL, "time", time);
  if (s != NC_NOERR) return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, "time", s);
  MM_REQUIRE(isfinite(*time), MM_ERR_INPUT, "%s: attribute time = %g is not finite", p, *time);
  /* the model's time is step x run.dt (run.dt is the file's: config_hash);
   * a step changed by hand (the fields' checksums do not cover it) would
   * relabel the state. Within a relative 1e-9: a file written out as text
   * and back (ncdump, ncgen) keeps 15 digits. */
  const double expect = (double)step_ll * cfg->run_dt;
  MM_REQUIRE(fabs(*time - expect) <= 1e-9 * fmax(fabs(expect), cfg->run_dt), MM_ERR_INPUT,
             "%s: attribute time = %.17g s is not step x run.dt = %lld x %g s = %.17g s: the "
             "attributes were changed; continue from a restart file as the model wrote it",
             p, *time, step_ll, cfg->run_dt, expect);
  *step = (long)step_ll;
  return MM_OK;
}

/* Variable var's checksum attribute: *present 0 where it has none (a file
 * written before checksums), else its value in *want; anything but 16
 * hexadecimal digits is refused. */
static MM_NODISCARD mm_err read_checksum(int nc, const char *p, int var, const char *name,
                                         const char *att, bool *present, uint64_t *want) {
  char *text = NULL;
  size_t n = 0;
  int status;
  *present = false;
  const mm_nc_text got = mm_nc_att_text(nc, var, att, &text, &n, &status);
  const bool ok = got == MM_NC_TEXT_READ && n == 16 && strspn(text, "0123456789abcdef") == 16;
  if (ok) *want = strtoull(text, NULL, 16);
  free(text);
  if (got == MM_NC_TEXT_ABSENT) return MM_OK;
  if (got == MM_NC_TEXT_FAILED)
    return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, name, status);
  MM_REQUIRE(got != MM_NC_TEXT_NO_MEMORY, MM_ERR_RUN, "%s: out of memory", p);
  MM_REQUIRE(ok, MM_ERR_INPUT, "%s: %s's attribute %s is not 16 hexadecimal digits", p, name, att);
  *present = true;
  return MM_OK;
}

/* A bad value found in a field, as an error on this rank. */
static MM_NODISCARD mm_err mm_bad_value(const char *p, const char *name, mm_io_bad bad) {
  return MM_ERROR(MM_ERR_INPUT, "%s: %s = %g at wet cell (i=%d, j=%d, k=%d): %s", p, name,
                  bad.value, bad.i, bad.j, bad.k,
                  bad.found == 1 ? "not finite" : "the _FillValue (missing data)");
}

mm_err mm_restart_read(const mm_grid *g, const mm_config *cfg, const char *path, double *temp,
                       double *salt, long *step, double *time) {
  const char *p = path;
  /* refuse what is not a whole HDF5 file before the collective open */
  mm_err err = mm_agree(g->cart, mm_io_check_hdf5(p));
  if (err == MM_OK) err = mm_io_probe(g->cart, &cfg->env, p); /* a crash or a hang in libhdf5 */
  if (err == MM_OK) {                                         /* MPI-IO's lock file beside it */
    char dir[MM_IO_PATH_MAX];
    mm_io_dir_of(p, dir, sizeof dir);
    err = mm_io_check_inodes(g->cart, dir, false, p, MM_IO_FDS_FIRST);
  }
  if (err != MM_OK) return err;

  MPI_Comm comm;
  MM_CHECK(mm_io_comm(g->cart, &comm));
  int nc = -1;
  int s = nc_open_par(p, NC_NOWRITE, comm, MPI_INFO_NULL, &nc);
  if (s != NC_NOERR)
    err = mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p,
                     "cannot open (unreadable, not NetCDF-4 or damaged)", s);
  err = mm_agree(comm, err);
  if (err != MM_OK) {
    if (s == NC_NOERR) nc_close(nc); /* opened here, failed elsewhere */
    (void)MPI_Comm_free(&comm);      /* unchecked: clean-up */
    return err;
  }

  mm_state_vars v = {-1, -1, -1};
  long step_file = 0;
  double time_file = 0.0; /* s */
  err = mm_agree(comm, mm_state_inquire(nc, p, g, cfg, &v, &step_file, &time_file));

  const size_t n = (size_t)g->nz * (size_t)g->nyl * (size_t)g->nxl;
  double *buf = NULL;
  int *kmt = NULL;
  if (err == MM_OK && temp) { /* no fields: metadata only (mm_restart_check) */
    buf = malloc(n * sizeof *buf);
    kmt = malloc((size_t)g->nyl * (size_t)g->nxl * sizeof *kmt);
    if (!buf || !kmt) err = MM_ERROR(MM_ERR_RUN, "%s: out of memory (%zu bytes)", p, n * 8);
    const int vars[3] = {v.temp, v.salt, v.kmt};
    for (int i = 0; i < 3; i++)
      MM_NC_LOCAL(err, MM_ERR_INPUT, p, "setting collective access",
                  nc_var_par_access(nc, vars[i], NC_COLLECTIVE));
    err = mm_agree(comm, err);
  }
  if (err == MM_OK && temp) {
    const size_t start[3] = {0, (size_t)g->j0, (size_t)g->i0};
    const size_t count[3] = {(size_t)g->nz, (size_t)g->nyl, (size_t)g->nxl};
    /* the land mask must be this grid's */
    int s_kmt = nc_get_vara_int(nc, v.kmt, start + 1, count + 1, kmt);
    if (s_kmt != NC_NOERR)
      err = mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, "reading kmt (truncated?)", s_kmt);
    for (int j = 0; s_kmt == NC_NOERR && err == MM_OK && j < g->nyl; j++)
      for (int i = 0; i < g->nxl; i++) {
        const int here = g->kmt[mm_col(g, i, j)], there = kmt[(size_t)j * g->nxl + i];
        if (here != there) {
          err = MM_ERROR(MM_ERR_INPUT,
                         "%s: written for another land mask: kmt(i=%d, j=%d) is %d in the file, "
                         "%d on this grid",
                         p, g->i0 + i, g->j0 + j, there, here);
          break;
        }
      }
    /* the fields; every rank makes both reads */
    const char *names[3] = {"temp", "salt", "kmt"};
    const int ids[3] = {v.temp, v.salt, v.kmt};
    double *dst[2] = {temp, salt};
    uint64_t part[MM_NSUMS] = {0}, sums[MM_NSUMS] = {0};
    if (s_kmt == NC_NOERR) sum_ints(g, kmt, &part[2], &part[5]);
    for (int f = 0; f < 2; f++) {
      int sf = nc_get_vara_double(nc, ids[f], start, count, buf);
      if (sf != NC_NOERR && err == MM_OK)
        err = mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p,
                         f ? "reading salt (truncated?)" : "reading temp (truncated?)", sf);
      if (err != MM_OK) continue;
      sum_doubles(g, buf, &part[f], &part[3 + f]);
      mm_io_bad bad = mm_io_unpack(g, buf, NULL, 0, dst[f]);
      if (bad.found) err = mm_bad_value(p, names[f], bad);
    }
    err = mm_agree(comm, err);
    /* the fields as the file holds them against their checksums (after the
     * checks above, whose messages say more where they apply) */
    if (err == MM_OK) err = mm_agree(comm, sum_ranks(comm, part, sums));
    bool plain_checked[3] = {false, false, false}; /* the field's plain sum was there, and held */
    for (int c = 0; c < MM_NSUMS && err == MM_OK; c++) {
      const int f = c % 3;
      const char *att = c < 3 ? MM_CHECKSUM_ATT : MM_CHECKSUM_ORDERED_ATT;
      bool present = false;
      uint64_t want = 0;
      err = read_checksum(nc, p, ids[f], names[f], att, &present, &want);
      if (err == MM_OK && present && want != sums[c])
        err = MM_ERROR(MM_ERR_INPUT,
                       "%s: %s does not match its %s (the file says %016" PRIx64
                       ", its values give %016" PRIx64 "): the file was damaged or changed after "
                       "it was written%s",
                       p, names[f], att, want, sums[c],
                       c >= 3 && plain_checked[f]
                           ? " (values moved, swapped or negated in pairs: their sum is as written)"
                           : "");
      if (c < 3) plain_checked[f] = present;
    }
    err = mm_agree(comm, err);
  }
  mm_err close_err = MM_OK;
  MM_NC_COLL(close_err, MM_ERR_INPUT, p, "cannot close", nc_close(nc));
  close_err = mm_agree(comm, close_err);
  if (err == MM_OK) err = close_err;
  free(buf);
  free(kmt);
  (void)MPI_Comm_free(&comm); /* unchecked: clean-up */
  if (err == MM_OK) {
    *step = step_file;
    *time = time_file;
  }
  return err;
}

mm_err mm_restart_check(MPI_Comm comm, const mm_config *cfg, const char *path, long *step) {
  mm_grid shape;
  MM_CHECK(mm_io_shape(cfg, comm, &shape));
  double time = 0.0; /* s */
  return mm_restart_read(&shape, cfg, path, NULL, NULL, step, &time);
}

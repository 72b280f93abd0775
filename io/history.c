/* The history file `<output.dir>/<run.name>.nc` (docs/output.md): NetCDF-4,
 * CF-1.8, written in parallel, each rank its own hyperslab, collective
 * MPI-IO. A run continued from a restart appends to the history it finds.
 *
 * A write that fails: the room of every write is reserved first
 * (mm_io_reserve), so that a full disk or a file-size limit refuses the
 * reservation and the file stays as the last record left it, and closes
 * normally. A write that fails inside the libraries all the same leaves the
 * file open and untouched ("broken"): each record is flushed (nc_sync), so
 * the file on disk holds every record before, while HDF5's close would
 * write a partial state over it (docs/reliability.md). */
#include "mm_io.h"

#include <fcntl.h>
#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "nc_dims.h"
#include "nc_util.h"

/* Target size of a temp/salt chunk (bytes): one record, split in y (and in x
 * only when one row of levels is already larger). */
#define MM_HISTORY_CHUNK_BYTES ((size_t)4 << 20)

/* The per-record diagnostics: variable name, units, long_name, field of mm_diag. */
static const struct {
  const char *name, *units, *long_name;
  size_t offset;
} mm_diag_vars[] = {
    {"heat_content", "J", "heat content rho0 cp sum(T dV) over wet cells",
     offsetof(mm_diag, heat_content)},
    {"salt_content", "kg", "salt content rho0 sum(S/1000 dV) over wet cells",
     offsetof(mm_diag, salt_content)},
    {"temp_min", "degC", "minimum of temperature over wet cells", offsetof(mm_diag, temp_min)},
    {"temp_max", "degC", "maximum of temperature over wet cells", offsetof(mm_diag, temp_max)},
    {"salt_min", "g/kg", "minimum of salinity over wet cells", offsetof(mm_diag, salt_min)},
    {"salt_max", "g/kg", "maximum of salinity over wet cells", offsetof(mm_diag, salt_max)},
};
enum { MM_NDIAG = sizeof mm_diag_vars / sizeof mm_diag_vars[0] };

struct mm_history {
  MPI_Comm comm; /* the grid's ranks without topology (mm_io_comm) */
  int rank;      /* this rank in comm; rank 0 writes the 1-D variables */
  int ncid;      /* the open file */
  int var_time, var_step, var_temp, var_salt;
  int var_x, var_y, var_z, var_z_bnds, var_kmt;
  int var_diag[MM_NDIAG];    /* ids of mm_diag_vars */
  size_t nrec;               /* records in the file */
  long last_step;            /* step of the last record; -1 for none */
  bool started;              /* this run started the file (it held no record before) */
  bool broken;               /* a write failed inside the libraries: the file is
                                left open and no call is made on it any more */
  double *buf;               /* one field of the block in file order, [nz * nyl * nxl] at least */
  double record_bytes;       /* size of one record uncompressed, with room for metadata */
  mm_io_seen seen;           /* the file its first reservation found (rank 0) */
  char dir[MM_STR_MAX];      /* output.dir, for the free-space check */
  mm_settings env;           /* the run's settings (fault injection) */
  char path[MM_IO_PATH_MAX]; /* the file, for messages */
};

/* Split n into the fewest parts of at most max_part (>= 1), all about equal:
 * the length of a part. */
static size_t mm_even_part(size_t n, size_t max_part) {
  if (max_part < 1) max_part = 1;
  const size_t parts = (n + max_part - 1) / max_part;
  return (n + parts - 1) / parts;
}

/* Chunk of a temp/salt record (1, nz, cy, cx) of at most about
 * MM_HISTORY_CHUNK_BYTES, split evenly in y (and in x when one row of
 * columns is larger than that already). */
static void mm_history_chunk(const mm_grid *g, size_t chunk[4]) {
  const size_t column = (size_t)g->nz * sizeof(double); /* bytes of one column */
  const size_t row = column * (size_t)g->nx;            /* bytes of one y row */
  size_t cy, cx = (size_t)g->nx;
  if (row <= MM_HISTORY_CHUNK_BYTES) {
    cy = mm_even_part((size_t)g->ny, MM_HISTORY_CHUNK_BYTES / row);
  } else {
    cy = 1;
    cx = mm_even_part((size_t)g->nx, MM_HISTORY_CHUNK_BYTES / column);
  }
  chunk[0] = 1;
  chunk[1] = (size_t)g->nz;
  chunk[2] = cy;
  chunk[3] = cx;
}

/* Everything of define mode (this rank alone; every rank makes the same calls).
 * created: creation time, ISO 8601 UTC, the same on every rank. */
static MM_NODISCARD mm_err mm_history_define(mm_history *h, const mm_grid *g, const mm_config *cfg,
                                             const mm_io_origin *origin, const char *created,
                                             long start_step) {
  mm_err err = MM_OK;
  const int nc = h->ncid;
  const char *p = h->path;
  int d_time = -1, d_z = -1, d_y = -1, d_x = -1, d_nv = -1;
#define DEF(what, call) MM_NC_LOCAL(err, MM_ERR_RUN, p, what, call)
  DEF("defining dimension time", nc_def_dim(nc, "time", NC_UNLIMITED, &d_time));
  DEF("defining dimension z", nc_def_dim(nc, "z", (size_t)g->nz, &d_z));
  DEF("defining dimension y", nc_def_dim(nc, "y", (size_t)g->ny, &d_y));
  DEF("defining dimension x", nc_def_dim(nc, "x", (size_t)g->nx, &d_x));
  DEF("defining dimension nv", nc_def_dim(nc, "nv", 2, &d_nv));

  /* CF time: seconds since run.start_date, the model time of step 0 */
  char time_units[MM_STR_MAX + 16];
  snprintf(time_units, sizeof time_units, "seconds since %s", cfg->start_date);
  DEF("defining time", mm_io_def_var(nc, "time", NC_DOUBLE, 1, &d_time, &h->var_time,
                                     (const char *const[]){"units", time_units, "standard_name",
                                                           "time", "long_name", "time", "calendar",
                                                           mm_config_calendar_name(cfg->calendar),
                                                           "axis", "T", NULL}));
  DEF("defining x",
      mm_io_def_var(nc, "x", NC_DOUBLE, 1, &d_x, &h->var_x,
                    (const char *const[]){"units", "m", "long_name", "x of cell centres", "axis",
                                          "X", "standard_name", "projection_x_coordinate", NULL}));
  DEF("defining y",
      mm_io_def_var(nc, "y", NC_DOUBLE, 1, &d_y, &h->var_y,
                    (const char *const[]){"units", "m", "long_name", "y of cell centres", "axis",
                                          "Y", "standard_name", "projection_y_coordinate", NULL}));
  DEF("defining z",
      mm_io_def_var(nc, "z", NC_DOUBLE, 1, &d_z, &h->var_z,
                    (const char *const[]){"units", "m", "long_name", "depth of cell centres",
                                          "positive", "down", "axis", "Z", "standard_name", "depth",
                                          "bounds", "z_bnds", NULL}));
  DEF("defining z_bnds",
      mm_io_def_var(nc, "z_bnds", NC_DOUBLE, 2, (const int[]){d_z, d_nv}, &h->var_z_bnds,
                    (const char *const[]){NULL})); /* CF 7.1: the attributes of z */
  DEF("defining kmt", mm_io_def_var(nc, "kmt", NC_INT, 2, (const int[]){d_y, d_x}, &h->var_kmt,
                                    (const char *const[]){
                                        "units", "1", "long_name", "number of wet levels; 0 = land",
                                        "standard_name", "model_level_number_at_sea_floor", NULL}));

  /* temp, salt: one record per chunk, optional deflate. _FillValue on land,
   * written with every record; no fill of new chunks, which parallel HDF5
   * writes in a collective call of its own (H5D__chunk_allocate): a rank
   * that fails there leaves the others waiting in its barrier. */
  const int dims4[4] = {d_time, d_z, d_y, d_x};
  size_t chunk[4];
  mm_history_chunk(g, chunk);
  const double fill = MM_IO_FILL;
  DEF("defining temp",
      mm_io_def_var(nc, "temp", NC_DOUBLE, 4, dims4, &h->var_temp,
                    (const char *const[]){"units", "degC", "long_name", "potential temperature",
                                          "standard_name", "sea_water_potential_temperature",
                                          NULL}));
  DEF("defining salt",
      mm_io_def_var(nc, "salt", NC_DOUBLE, 4, dims4, &h->var_salt,
                    (const char *const[]){"units", "g/kg", "long_name", "salinity", "standard_name",
                                          "sea_water_salinity", NULL}));
  const int fields[2] = {h->var_temp, h->var_salt};
  for (int f = 0; f < 2; f++) {
    DEF("setting chunks", nc_def_var_chunking(nc, fields[f], NC_CHUNKED, chunk));
    DEF("setting _FillValue", nc_def_var_fill(nc, fields[f], NC_NOFILL, &fill));
    DEF("setting _FillValue", nc_put_att_double(nc, fields[f], "_FillValue", NC_DOUBLE, 1, &fill));
    if (cfg->deflate > 0)
      DEF("setting deflate", nc_def_var_deflate(nc, fields[f], 1, 1, (int)cfg->deflate));
  }

  DEF("defining step",
      mm_io_def_var(nc, "step", NC_INT, 1, &d_time, &h->var_step,
                    (const char *const[]){"units", "1", "long_name",
                                          "time-step number of the record", NULL}));
  for (int v = 0; v < MM_NDIAG; v++)
    DEF("defining diagnostics",
        mm_io_def_var(nc, mm_diag_vars[v].name, NC_DOUBLE, 1, &d_time, &h->var_diag[v],
                      (const char *const[]){"units", mm_diag_vars[v].units, "long_name",
                                            mm_diag_vars[v].long_name, NULL}));
  /* the 1-D record variables: every value written, no fill of new chunks either */
  DEF("setting no fill", nc_def_var_fill(nc, h->var_time, NC_NOFILL, NULL));
  DEF("setting no fill", nc_def_var_fill(nc, h->var_step, NC_NOFILL, NULL));
  for (int v = 0; v < MM_NDIAG; v++)
    DEF("setting no fill", nc_def_var_fill(nc, h->var_diag[v], NC_NOFILL, NULL));

  /* global attributes */
  char title[MM_STR_MAX + 32], source[MM_STR_MAX + 32];
  char decomposition[32];
  snprintf(title, sizeof title, "minimodel history of %s", cfg->run_name);
  snprintf(source, sizeof source, "minimodel %s", mm_io_origin_version(origin));
  char *history = mm_io_history_line(created, "created by", origin);
  if (!history && err == MM_OK) err = MM_ERROR(MM_ERR_RUN, "%s: out of memory", p);
  snprintf(decomposition, sizeof decomposition, "%dx%d", g->px, g->py);
  char *configuration = mm_config_to_string(cfg);
  if (!configuration && err == MM_OK)
    err = MM_ERROR(MM_ERR_RUN, "%s: out of memory formatting the configuration", p);
  DEF("writing global attributes",
      mm_io_put_texts(nc, NC_GLOBAL,
                      (const char *const[]){"Conventions", "CF-1.8", "title", title, "source",
                                            source, "history", history ? history : "",
                                            "configuration", configuration ? configuration : "",
                                            "decomposition", decomposition, NULL}));
  DEF("writing global attributes",
      nc_put_att_int(nc, NC_GLOBAL, "mpi_ranks", NC_INT, 1, &g->nranks));
  /* which runs may append (mm_history_continue): the configuration hash of
   * the restart files, and the step of the state the history starts from */
  char hash[17];
  mm_io_hash_text(cfg, hash);
  const long long start = start_step;
  DEF("writing global attributes", nc_put_att_text(nc, NC_GLOBAL, "config_hash", 16, hash));
  DEF("writing global attributes",
      nc_put_att_longlong(nc, NC_GLOBAL, "start_step", NC_INT64, 1, &start));
  free(configuration);
  free(history);
#undef DEF
  return err;
}

/* Collective access for every variable (this rank alone; the same on every
 * rank), then the ranks agree: an error stops all before a collective write. */
static MM_NODISCARD mm_err mm_history_collective(mm_history *h) {
  mm_err err = MM_OK;
  const int vars[] = {h->var_time, h->var_step, h->var_temp,   h->var_salt, h->var_x,
                      h->var_y,    h->var_z,    h->var_z_bnds, h->var_kmt};
  for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++)
    MM_NC_LOCAL(err, MM_ERR_RUN, h->path, "setting collective access",
                nc_var_par_access(h->ncid, vars[v], NC_COLLECTIVE));
  for (int v = 0; v < MM_NDIAG; v++)
    MM_NC_LOCAL(err, MM_ERR_RUN, h->path, "setting collective access",
                nc_var_par_access(h->ncid, h->var_diag[v], NC_COLLECTIVE));
  return mm_agree(h->comm, err);
}

/* Write x, y, z, z_bnds (rank 0, the others take part with nothing) and each
 * rank's block of kmt; collective. */
static MM_NODISCARD mm_err mm_history_write_static(mm_history *h, const mm_grid *g) {
  mm_err err = MM_OK;
  const int nc = h->ncid;
  const char *p = h->path;
  const bool root = h->rank == 0;
  err = mm_history_collective(h);
  if (err != MM_OK) return err;

  /* coordinates: rank 0 only, from h->buf (at least nx, ny and 2 nz long) */
  const size_t zero = 0, n_x = root ? (size_t)g->nx : 0, n_y = root ? (size_t)g->ny : 0;
  const size_t n_z = root ? (size_t)g->nz : 0;
  double *c = h->buf;
  for (size_t i = 0; i < n_x; i++)
    c[i] = ((double)i + 0.5) * g->dx;
  MM_NC_COLL(err, MM_ERR_RUN, p, "writing x", nc_put_vara_double(nc, h->var_x, &zero, &n_x, c));
  for (size_t j = 0; j < n_y; j++)
    c[j] = ((double)j + 0.5) * g->dy;
  MM_NC_COLL(err, MM_ERR_RUN, p, "writing y", nc_put_vara_double(nc, h->var_y, &zero, &n_y, c));
  MM_NC_COLL(err, MM_ERR_RUN, p, "writing z",
             nc_put_vara_double(nc, h->var_z, &zero, &n_z, g->z_t));
  for (size_t k = 0; k < n_z; k++) {
    c[2 * k] = g->z_w[k];
    c[2 * k + 1] = g->z_w[k + 1];
  }
  const size_t start2[2] = {0, 0}, count2[2] = {n_z, 2};
  MM_NC_COLL(err, MM_ERR_RUN, p, "writing z_bnds",
             nc_put_vara_double(nc, h->var_z_bnds, start2, count2, c));

  /* kmt: each rank its block, packed into the front of h->buf */
  int *kmt = (int *)(void *)h->buf;
  mm_io_pack_kmt(g, kmt);
  const size_t start_k[2] = {(size_t)g->j0, (size_t)g->i0};
  const size_t count_k[2] = {(size_t)g->nyl, (size_t)g->nxl};
  MM_NC_COLL(err, MM_ERR_RUN, p, "writing kmt",
             nc_put_vara_int(nc, h->var_kmt, start_k, count_k, kmt));
  return mm_agree(h->comm, err);
}

static void mm_history_free(mm_history *h) {
  if (!h) return;
  if (h->comm != MPI_COMM_NULL) (void)MPI_Comm_free(&h->comm); /* unchecked: clean-up */
  free(h->buf);
  free(h);
}

/* The handle of the history of cfg on g: path, buffer, sizes; output.dir
 * must exist. The ranks agree; on error *out is NULL. */
static MM_NODISCARD mm_err mm_history_alloc(const mm_grid *g, const mm_config *cfg,
                                            mm_history **out) {
  *out = NULL;
  mm_history *h = calloc(1, sizeof *h);
  MPI_Comm comm = MPI_COMM_NULL;
  mm_err err = mm_io_comm(g->cart, &comm);
  if (err != MM_OK) {
    free(h);
    return err;
  }
  if (!h) {
    err = MM_ERROR(MM_ERR_RUN, "out of memory creating the history file");
  } else {
    h->comm = comm;
    h->rank = g->rank;
    h->ncid = -1;
    h->last_step = -1;
    /* one field of the block; also holds coordinates and kmt at creation */
    size_t n = (size_t)g->nz * (size_t)g->nyl * (size_t)g->nxl;
    size_t n_static = (size_t)(g->nx > g->ny ? g->nx : g->ny);
    if (n_static < 2 * (size_t)g->nz) n_static = 2 * (size_t)g->nz;
    if (n < n_static) n = n_static;
    snprintf(h->dir, sizeof h->dir, "%s", cfg->output_dir);
    h->env = cfg->env;
    const double cells = (double)g->nx * (double)g->ny * (double)g->nz;
    h->record_bytes = 2.0 * cells * sizeof(double) + MM_IO_SPACE_MARGIN;
    err = mm_io_path(h->path, cfg, ".nc");
    if (err == MM_OK && !(h->buf = malloc(n * sizeof *h->buf)))
      err = MM_ERROR(MM_ERR_RUN, "%s: out of memory (%zu bytes)", h->path, n * sizeof *h->buf);
    if (err == MM_OK) err = mm_io_check_dir(cfg->output_dir, h->path);
  }
  err = mm_agree(comm, err);
  if (err != MM_OK) {
    if (h)
      mm_history_free(h);
    else
      (void)MPI_Comm_free(&comm); /* unchecked: clean-up */
    return err;
  }
  *out = h;
  return MM_OK;
}

/* The journal of a removal of records: `<history>.drop`, written before
 * the removal with the history's size then, and removed after it (a run
 * killed in between leaves it; mm_history_undo_drop). */
static void mm_history_journal(const char *p, char *out, size_t size) {
  snprintf(out, size, "%s.drop", p);
}

/* Create the file, replacing an old one: header, coordinates, kmt; its
 * records start after start_step. */
static MM_NODISCARD mm_err mm_history_new(const mm_grid *g, const mm_config *cfg,
                                          const mm_io_origin *origin, long start_step,
                                          mm_history **out) {
  mm_history *h = NULL;
  MM_CHECK(mm_history_alloc(g, cfg, &h));
  const MPI_Comm comm = h->comm;
  const char *p = h->path;
  /* header: coordinates, kmt, the configuration text */
  const double header = (double)g->nx * (double)g->ny * sizeof(int) + MM_IO_SPACE_MARGIN;
  mm_err err = mm_io_check_space(comm, h->dir, header, p);
  if (err == MM_OK) err = mm_io_check_inodes(comm, h->dir, true, p, MM_IO_FDS_FIRST);
  if (err != MM_OK) {
    mm_history_free(h);
    return err;
  }

  char created[32];
  err = mm_io_creation_time(comm, g->rank, created);
  if (err != MM_OK) {
    mm_history_free(h);
    return err;
  }

  /* An earlier history at the name is removed, not written over (rank 0,
   * before any rank creates the file): another name of it (a hard link, a
   * copy kept by `ln`) keeps the earlier run's records, and a reader that
   * has it open (xarray, ncview, `tee`) reads that file, not this one
   * growing. Written through: a symbolic link at the name (its target is
   * where the user keeps the history), and a file that cannot be removed. */
  struct stat old;
  if (g->rank == 0 && lstat(p, &old) == 0 && S_ISREG(old.st_mode))
    (void)unlink(p);  /* unchecked: where it fails, the create replaces the file in place */
  if (g->rank == 0) { /* and the journal of a removal of its records (not of this file's) */
    char journal[MM_IO_PATH_MAX + 8];
    mm_history_journal(p, journal, sizeof journal);
    (void)unlink(journal);
  }
  err = mm_agree(comm, MM_OK); /* (every rank after the removal) */
  bool opened = false;
  if (err == MM_OK) {
    const int s = nc_create_par(p, NC_NETCDF4 | NC_CLOBBER, comm, MPI_INFO_NULL, &h->ncid);
    opened = s == NC_NOERR;
    if (!opened) err = mm_io_create_fail(MM_ERR_RUN, __FILE__, __LINE__, p, s);
    err = mm_agree(comm, err);
  }
  if (err != MM_OK) {
    if (opened)
      nc_close(h->ncid); /* opened here, failed elsewhere */
    else if (g->rank == 0)
      mm_io_remove_mpi_lock(p); /* Open MPI's, left by the open that failed */
    struct stat st;             /* made empty before the failure: not left behind */
    if (g->rank == 0 && lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) unlink(p);
    mm_history_free(h);
    return err;
  }

  err = mm_io_reserve(comm, &h->env, p, header, &h->seen); /* and the file seen */
  if (err == MM_OK) err = mm_agree(comm, mm_history_define(h, g, cfg, origin, created, start_step));
  if (err != MM_OK) { /* the file left open, untouched (mm_io_files_left_open), as in
                       * mm_state_write, and removed: it holds no record */
    if (g->rank == 0 && lstat(p, &old) == 0 && S_ISREG(old.st_mode)) (void)unlink(p);
    mm_history_free(h);
    return err;
  }
  MM_NC_COLL(err, MM_ERR_RUN, p, "cannot write the header", nc_enddef(h->ncid));
  err = mm_agree(comm, err);
  if (err == MM_OK) err = mm_history_write_static(h, g);
  if (err != MM_OK) { /* a write failed inside the libraries: the file stays open,
                       * untouched, as after a record's (mm_io_files_left_open) */
    mm_history_free(h);
    return err;
  }
  h->started = true;
  *out = h;
  return MM_OK;
}

mm_err mm_history_create(const mm_grid *g, const mm_config *cfg, const mm_io_origin *origin,
                         mm_history **out) {
  *out = NULL;
  return mm_history_new(g, cfg, origin, 0, out);
}

/* ------------------------------------------------ continuing a history */

/* How a refused history is left, for every message of refusal. */
#define MM_HISTORY_LEFT "; the history is left as it is: move it away or set another output.dir"

/* What the check of an existing history found (rank 0; then sent to all). */
typedef struct {
  long long keep;      /* records at or before the restart step: kept */
  long long nrec;      /* records in the file */
  long long last_kept; /* step of the last record kept; -1 for none */
} mm_history_found;

/* The configuration hash of an open history into have (33 bytes): its
 * config_hash, or for a history written before it carried one, the hash of
 * its configuration text. */
static MM_NODISCARD mm_err mm_history_hash(int nc, const char *p, char have[33]) {
  char *text = NULL;
  size_t n = 0;
  int status;
  mm_nc_text got = mm_nc_att_text_in(nc, NC_GLOBAL, "config_hash", have, 33, &status);
  if (got != MM_NC_TEXT_ABSENT) {
    if (got == MM_NC_TEXT_FAILED)
      return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, "config_hash", status);
    MM_REQUIRE(got != MM_NC_TEXT_NO_MEMORY, MM_ERR_RUN, "%s: out of memory", p);
    MM_REQUIRE(got == MM_NC_TEXT_READ && have[0], MM_ERR_INPUT,
               "%s: attribute config_hash is not a string" MM_HISTORY_LEFT, p);
    return MM_OK;
  }
  got = mm_nc_att_text(nc, NC_GLOBAL, "configuration", &text, &n, &status);
  if (got == MM_NC_TEXT_FAILED)
    return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, "configuration", status);
  MM_REQUIRE(got != MM_NC_TEXT_NO_MEMORY, MM_ERR_RUN, "%s: out of memory", p);
  MM_REQUIRE(got == MM_NC_TEXT_READ, MM_ERR_INPUT,
             "%s: not a minimodel history: neither config_hash nor configuration" MM_HISTORY_LEFT,
             p);
  mm_config c;
  mm_err err = mm_config_load_string(&c, p, text, NULL, 0);
  free(text);
  if (err != MM_OK) {
    mm_error_clear();
    return MM_ERROR(
        MM_ERR_INPUT,
        "%s: its configuration attribute does not read as a configuration" MM_HISTORY_LEFT, p);
  }
  mm_io_hash_text(&c, have);
  return MM_OK;
}

/* The text attribute name of the time variable var into att (size bytes,
 * NUL-terminated): true when it is there as text (mm_nc_att_text) that fits,
 * with no NUL inside. A calendar that
 * is not there reads as CF's default, "standard" (histories of older
 * versions). */
static bool mm_history_time_att(int nc, int var, const char *name, char *att, size_t size) {
  int status;
  const mm_nc_text got = mm_nc_att_text_in(nc, var, name, att, size, &status);
  const bool standard = got == MM_NC_TEXT_ABSENT && strcmp(name, "calendar") == 0;
  if (standard) snprintf(att, size, "standard");
  return got == MM_NC_TEXT_READ || standard;
}

/* date (a run.start_date's form) into out with its time: a date with no
 * time is at 00:00:00. */
static void mm_history_date_at_time(const char *date, char *out, size_t size) {
  snprintf(out, size, "%s%s", date, strlen(date) == 10 ? " 00:00:00" : "");
}

/* The refusal of a history whose time axis is the run's at other dates: the
 * format for the history's file, the attribute's value there, the run's
 * value (want, a format of one %s) and the key's value. */
#define MM_HISTORY_OTHER_DATES(att, want, key)                                                     \
  "%s: time has " att " = '%s', this run '" want "' (" key " = %s): the records appended would "   \
  "be read at other dates; continue with the " key " of the history, or start a new "              \
  "one" MM_HISTORY_LEFT

/* The checks of mm_history_check on the open file nc. */
static MM_NODISCARD mm_err mm_history_check_open(int nc, const char *p, const mm_grid *g,
                                                 const mm_config *cfg, long step, const mm_diag *at,
                                                 mm_history_found *f) {
  /* every variable of a history; temp and salt on (time, z, y, x) */
  static const char *const names[] = {"time", "step", "temp",   "salt", "x",
                                      "y",    "z",    "z_bnds", "kmt"};
  int unlim = -1, var = -1;
  MM_REQUIRE(nc_inq_unlimdim(nc, &unlim) == NC_NOERR && unlim >= 0, MM_ERR_INPUT,
             "%s: not a minimodel history: no record dimension" MM_HISTORY_LEFT, p);
  for (size_t v = 0; v < sizeof names / sizeof names[0] + MM_NDIAG; v++) {
    const char *name = v < sizeof names / sizeof names[0]
                           ? names[v]
                           : mm_diag_vars[v - sizeof names / sizeof names[0]].name;
    MM_REQUIRE(nc_inq_varid(nc, name, &var) == NC_NOERR, MM_ERR_INPUT,
               "%s: not a minimodel history: no variable %s" MM_HISTORY_LEFT, p, name);
  }
  const int want[3] = {g->nz, g->ny, g->nx};
  for (int field = 0; field < 2; field++) {
    const char *name = field ? "salt" : "temp";
    int nd = 0, dims[NC_MAX_VAR_DIMS];
    size_t len[4] = {0, 0, 0, 0};
    nc_inq_varid(nc, name, &var);
    MM_REQUIRE(
        mm_nc_var_dims(nc, var, &nd, dims) == NC_NOERR && nd == 4 && dims[0] == unlim, MM_ERR_INPUT,
        "%s: not a minimodel history: %s is not on (time, z, y, x)" MM_HISTORY_LEFT, p, name);
    for (int d = 1; d < 4; d++)
      nc_inq_dimlen(nc, dims[d], &len[d]);
    MM_REQUIRE(len[1] == (size_t)want[0] && len[2] == (size_t)want[1] && len[3] == (size_t)want[2],
               MM_ERR_INPUT,
               "%s: the history of another grid: %s is (nz, ny, nx) = (%zu, %zu, %zu), this grid "
               "(%d, %d, %d)" MM_HISTORY_LEFT,
               p, name, len[1], len[2], len[3], want[0], want[1], want[2]);
  }

  char have[33] = "", hash[17];
  MM_CHECK(mm_history_hash(nc, p, have));
  mm_io_hash_text(cfg, hash);
  MM_REQUIRE(strcmp(have, hash) == 0, MM_ERR_INPUT,
             "%s: the history of another configuration (config_hash %s, this configuration %s): "
             "a key that determines the solution differs" MM_HISTORY_LEFT,
             p, have, hash);

  /* the time axis: records appended under another run.start_date or
   * run.calendar (keys that do not change the solution, so not in the hash)
   * would be read at other dates than the run's; a date with no time is at
   * 00:00:00 (mm_config_date_problem's forms) */
  nc_inq_varid(nc, "time", &var);
  char units[MM_STR_MAX + 16], calendar[MM_STR_MAX + 16];
  char date_have[MM_STR_MAX + 16] = "", date_want[MM_STR_MAX + 16];
  const bool units_read = mm_history_time_att(nc, var, "units", units, sizeof units);
  if (units_read && !strncmp(units, "seconds since ", 14))
    mm_history_date_at_time(units + 14, date_have, sizeof date_have);
  mm_history_date_at_time(cfg->start_date, date_want, sizeof date_want);
  MM_REQUIRE(date_have[0] && strcmp(date_have, date_want) == 0, MM_ERR_INPUT,
             MM_HISTORY_OTHER_DATES("units", "seconds since %s", "run.start_date"), p,
             units_read ? units : "(none)", cfg->start_date, cfg->start_date);
  const char *const calendar_want = mm_config_calendar_name(cfg->calendar);
  const bool calendar_read = mm_history_time_att(nc, var, "calendar", calendar, sizeof calendar);
  MM_REQUIRE(calendar_read && strcmp(calendar, calendar_want) == 0, MM_ERR_INPUT,
             MM_HISTORY_OTHER_DATES("calendar", "%s", "run.calendar"), p,
             calendar_read ? calendar : "(none)", calendar_want, calendar_want);

  /* the steps of the records, in increasing order */
  int nd = 0, dims[NC_MAX_VAR_DIMS];
  nc_type type;
  size_t n = 0;
  nc_inq_varid(nc, "step", &var);
  MM_REQUIRE(nc_inq_vartype(nc, var, &type) == NC_NOERR &&
                 mm_nc_var_dims(nc, var, &nd, dims) == NC_NOERR && nd == 1 && dims[0] == unlim &&
                 type == NC_INT,
             MM_ERR_INPUT,
             "%s: not a minimodel history: step is not an int on (time)" MM_HISTORY_LEFT, p);
  nc_inq_dimlen(nc, unlim, &n);
  int *steps = malloc((n ? n : 1) * sizeof *steps);
  MM_REQUIRE(steps, MM_ERR_RUN, "%s: out of memory (%zu bytes)", p, n * sizeof *steps);
  int s = n ? nc_get_var_int(nc, var, steps) : NC_NOERR;
  size_t keep = 0, order = 0; /* order: the first record out of order, n for none */
  for (order = 0; s == NC_NOERR && order < n; order++)
    if (order > 0 && steps[order] <= steps[order - 1]) break;
  if (s != NC_NOERR) { /* steps[] not read: not looked at */
    free(steps);
    return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, "reading step", s);
  }
  for (keep = 0; keep < n && steps[keep] <= step; keep++) {
  }
  const long long last = keep > 0 ? steps[keep - 1] : -1;
  free(steps);
  MM_REQUIRE(
      order == n, MM_ERR_INPUT,
      "%s: damaged: the steps of records %zu and %zu are not in increasing order" MM_HISTORY_LEFT,
      p, order - 1, order);

  /* the step it started from (0 for a history without the attribute) */
  long long start = 0;
  size_t len = 0;
  if (nc_inq_att(nc, NC_GLOBAL, "start_step", &type, &len) == NC_NOERR) {
    MM_REQUIRE(len == 1 && type != NC_CHAR && type != NC_STRING &&
                   nc_get_att_longlong(nc, NC_GLOBAL, "start_step", &start) == NC_NOERR,
               MM_ERR_INPUT, "%s: attribute start_step is not a number" MM_HISTORY_LEFT, p);
    MM_REQUIRE(start >= 0, MM_ERR_INPUT,
               "%s: attribute start_step = %lld is negative: not a step of a run" MM_HISTORY_LEFT,
               p, start);
  }
  /* the history attribute, to which the run adds a line: text (one
   * NC_STRING as well, as netCDF4-python writes non-ASCII text) */
  size_t n_history = 0;
  if (nc_inq_att(nc, NC_GLOBAL, "history", &type, &n_history) == NC_NOERR)
    MM_REQUIRE(type == NC_CHAR || (type == NC_STRING && n_history == 1), MM_ERR_INPUT,
               "%s: attribute history is not a text (the run adds a line to it)" MM_HISTORY_LEFT,
               p);
  const char *from = cfg->initial_restart;
  MM_REQUIRE(start <= step, MM_ERR_INPUT,
             "%s: starts at step %lld, after the restart step %ld (initial.restart = %s): the "
             "records before are missing" MM_HISTORY_LEFT,
             p, start, step, from);
  /* the last record before the restart step that output.interval asks for */
  const long interval = cfg->output_interval;
  const long due = interval > 0 ? step / interval * interval : 0;
  if (due >= 1 && due > start && last < due) {
    char holds[64] = "holds no record";
    if (last >= 0) snprintf(holds, sizeof holds, "holds the records up to step %lld", last);
    return MM_ERROR(MM_ERR_INPUT,
                    "%s: %s, but the run continues from step %ld (initial.restart = %s): the "
                    "record of step %ld is missing" MM_HISTORY_LEFT,
                    p, holds, step, from, due);
  }
  /* its record of the restart step, where it has one, holds the restart's
   * state: the diagnostics, equal (sums that no decomposition changes);
   * another run's restart (another initial state, which
   * config_hash does not count) has others */
  for (int v = 0; at && last == step && v < MM_NDIAG; v++) {
    const double want = *(const double *)((const char *)at + mm_diag_vars[v].offset);
    double have = 0;
    const size_t rec = keep - 1;
    int dv = -1;
    int st = nc_inq_varid(nc, mm_diag_vars[v].name, &dv);
    if (st == NC_NOERR) st = nc_get_var1_double(nc, dv, &rec, &have);
    if (st != NC_NOERR)
      return mm_nc_fail(MM_ERR_INPUT, __FILE__, __LINE__, p, mm_diag_vars[v].name, st);
    MM_REQUIRE(have == want, MM_ERR_INPUT, /* (a signed zero of a min or max is no other state) */
               "%s: its record of step %ld has %s = %.17g, the state of the restart file "
               "(initial.restart = %s) %.17g: the restart is of another run (another initial "
               "state?)" MM_HISTORY_LEFT,
               p, step, mm_diag_vars[v].name, have, cfg->initial_restart, want);
  }
  f->keep = (long long)keep;
  f->nrec = (long long)n;
  f->last_kept = last;
  return MM_OK;
}

/* Whether the history at p is this case's (grid and configuration) and
 * holds the records up to the restart step `step` (rank 0 alone, read only):
 * MM_ERR_INPUT naming what does not fit. */
static MM_NODISCARD mm_err mm_history_check(const char *p, const mm_grid *g, const mm_config *cfg,
                                            long step, const mm_diag *at, mm_history_found *f) {
  if (mm_fault_is(&cfg->env, cfg->env.fault.read_hang, "history", g->rank)) { /* fault injection */
    fprintf(stderr, "minimodel: reading %s [injected fault: the read never ends]\n", p);
    fflush(stderr); /* the tests wait for this line */
    for (;;)
      sleep(1); /* a read that never ends: the watch ends the rank */
  }
  int nc = -1;
  int s = nc_open(p, NC_NOWRITE, &nc);
  if (s != NC_NOERR)
    return mm_io_open_fail(MM_ERR_INPUT, __FILE__, __LINE__, p,
                           "cannot open the history to continue it (unreadable or damaged)", s);
  mm_err err = mm_history_check_open(nc, p, g, cfg, step, at, f);
  nc_close(nc);
  return err;
}

/* Rank 0, before a continuation looks at its history: a journal left by a
 * run killed while it removed records undoes the cut of the file that
 * HDF5 made (mm_io_undo_cut), and goes; the removal is made again. */
static MM_NODISCARD mm_err mm_history_undo_drop(const char *p) {
  char journal[MM_IO_PATH_MAX + 8];
  mm_history_journal(p, journal, sizeof journal);
  FILE *f = fopen(journal, "r");
  if (!f) return MM_OK;
  long long before = -1;
  unsigned long long dev = 0, ino = 0;
  const bool read = fscanf(f, "size before %lld device %llu inode %llu", &before, &dev, &ino) == 3;
  fclose(f);
  /* only the file the removal was made in (a history put there since is
   * not lengthened) */
  struct stat st;
  if (read && before > 0 && stat(p, &st) == 0 && (unsigned long long)st.st_dev == dev &&
      (unsigned long long)st.st_ino == ino)
    MM_CHECK(mm_io_undo_cut(p, before));
  (void)unlink(journal); /* unchecked: the next removal writes it anew */
  return MM_OK;
}

/* Cut every record variable of the history at p to its first `keep`
 * records (rank 0 alone, while no rank has the file open): the records after
 * the restart step `step`, from a run that went further. netCDF has no call
 * for it; netCDF-4 takes the length of the record dimension from the
 * extents of the HDF5 datasets. */
static MM_NODISCARD mm_err mm_history_drop(const char *p, long long keep, long step) {
  /* the journal first, on disk before the file is touched */
  char journal[MM_IO_PATH_MAX + 8];
  mm_history_journal(p, journal, sizeof journal);
  struct stat st;
  MM_REQUIRE(stat(p, &st) == 0, MM_ERR_RUN, "%s: cannot look at it: %s", p, strerror(errno));
  /* a file of its own (what stood at the name removed: never written
   * through a link) */
  (void)unlink(journal);
  const int fd = open(journal, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  FILE *j = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (fd >= 0 && !j) close(fd);
  bool written = j && fprintf(j,
                              "size before %lld device %llu inode %llu\n"
                              "records after step %ld removed\n",
                              (long long)st.st_size, (unsigned long long)st.st_dev,
                              (unsigned long long)st.st_ino, step) > 0;
  written = j && fflush(j) == 0 && fsync(fileno(j)) == 0 && written;
  if (j && fclose(j) != 0) written = false;
  if (!written) {
    const int e = errno;
    (void)unlink(journal);
    return MM_ERROR(MM_ERR_RUN, "%s: cannot write the journal of the removal of its records: %s",
                    journal, strerror(e));
  }
  int nc = -1, nvars = 0, unlim = -1;
  int s = nc_open(p, NC_NOWRITE, &nc);
  if (s == NC_NOERR) s = nc_inq_nvars(nc, &nvars);
  if (s == NC_NOERR) s = nc_inq_unlimdim(nc, &unlim);
  char(*names)[NC_MAX_NAME + 1] = NULL;
  int n = 0;
  if (s == NC_NOERR && !(names = calloc((size_t)nvars + 1, sizeof *names))) s = NC_ENOMEM;
  for (int v = 0; s == NC_NOERR && v < nvars; v++) {
    int nd = 0, dims[NC_MAX_VAR_DIMS];
    s = nc_inq_varname(nc, v, names[n]);
    if (s == NC_NOERR) s = mm_nc_var_dims(nc, v, &nd, dims);
    if (s == NC_NOERR && nd >= 1 && dims[0] == unlim) n++;
  }
  if (nc >= 0) nc_close(nc);
  mm_err err = MM_OK;
  if (s != NC_NOERR) {
    err = mm_nc_fail(MM_ERR_RUN, __FILE__, __LINE__, p, "reading the record variables", s);
  } else {
    bool ok = true;
    const hid_t file = H5Fopen(p, H5F_ACC_RDWR, H5P_DEFAULT);
    ok = file >= 0;
    for (int v = 0; ok && v < n; v++) {
      const hid_t set = H5Dopen2(file, names[v], H5P_DEFAULT);
      const hid_t space = set >= 0 ? H5Dget_space(set) : -1;
      hsize_t dims[H5S_MAX_RANK];
      const int rank = space >= 0 ? H5Sget_simple_extent_dims(space, dims, NULL) : -1;
      if (rank >= 1 && dims[0] > (hsize_t)keep) {
        dims[0] = (hsize_t)keep;
        ok = H5Dset_extent(set, dims) >= 0;
      } else {
        ok = rank >= 1;
      }
      if (space >= 0) H5Sclose(space);
      if (set >= 0) H5Dclose(set);
    }
    if (file >= 0 && H5Fclose(file) < 0) ok = false;
    if (!ok)
      err = MM_ERROR(MM_ERR_RUN, "%s: cannot remove the records after step %ld (HDF5 error)", p,
                     step);
  }
  free(names);
  /* done: the journal goes (left where the removal failed, for the next
   * run to look at the file) */
  if (err == MM_OK) (void)unlink(journal);
  return err;
}

/* The history attribute of an open file as text (to free; *n bytes, NULs
 * inside kept, those at its end dropped, then a NUL): NC_CHAR, or one
 * NC_STRING, as netCDF4-python writes non-ASCII text; "" where there is
 * none. NULL and a message in err for any other type (which
 * mm_history_check refuses before the file is written). */
static char *mm_history_text(int nc, const char *p, size_t *n, mm_err *err) {
  char *text = NULL;
  int status = NC_NOERR;
  *err = MM_OK;
  switch (mm_nc_att_text(nc, NC_GLOBAL, "history", &text, n, &status)) {
  case MM_NC_TEXT_READ: return text;
  case MM_NC_TEXT_ABSENT: return calloc(1, 1);
  case MM_NC_TEXT_NOT_TEXT:
    *err = MM_ERROR(MM_ERR_INPUT, "%s: attribute history is not a text" MM_HISTORY_LEFT, p);
    return NULL;
  case MM_NC_TEXT_NO_MEMORY: *err = MM_ERROR(MM_ERR_RUN, "%s: out of memory", p); return NULL;
  case MM_NC_TEXT_FAILED: break;
  }
  *err = mm_nc_fail(MM_ERR_RUN, __FILE__, __LINE__, p, "reading history", status);
  return NULL;
}

/* One line more in the history attribute (CF): when and from which step the
 * run continued (collective, the file open). Written back as NC_CHAR (UTF-8
 * bytes kept), also where it was one NC_STRING. */
static MM_NODISCARD mm_err mm_history_note(mm_history *h, long step, const mm_io_origin *origin) {
  char created[32];
  MM_CHECK(mm_io_creation_time(h->comm, h->rank, created));
  const int nc = h->ncid;
  char what[64];
  snprintf(what, sizeof what, "continued from step %ld by", step);
  mm_err err = MM_OK;
  size_t n_old = 0;
  char *old = mm_history_text(nc, h->path, &n_old, &err);
  char *line = old ? mm_io_history_line(created, what, origin) : NULL;
  const size_t n_line = line ? strlen(line) : 0, size = n_old + n_line + 2;
  char *text = line ? malloc(size) : NULL;
  if (err == MM_OK && !text)
    err = MM_ERROR(MM_ERR_RUN, "%s: out of memory (%zu bytes)", h->path, size);
  size_t n_text = 0; /* old, a newline where there is one, the line */
  if (err == MM_OK) {
    memcpy(text, old, n_old);
    n_text = n_old;
    if (n_old) text[n_text++] = '\n';
    memcpy(text + n_text, line, n_line + 1);
    n_text += n_line;
  }
  free(old);
  free(line);
  err = mm_agree(h->comm, err);
  if (err == MM_OK) {
    nc_type type = NC_CHAR;
    size_t len = 0;
    const bool string =
        nc_inq_att(nc, NC_GLOBAL, "history", &type, &len) == NC_NOERR && type != NC_CHAR;
    MM_NC_COLL(err, MM_ERR_RUN, h->path, "cannot write the header", nc_redef(nc));
    if (string)
      MM_NC_COLL(err, MM_ERR_RUN, h->path, "writing history", nc_del_att(nc, NC_GLOBAL, "history"));
    MM_NC_COLL(err, MM_ERR_RUN, h->path, "writing history",
               nc_put_att_text(nc, NC_GLOBAL, "history", n_text, text));
    MM_NC_COLL(err, MM_ERR_RUN, h->path, "cannot write the header", nc_enddef(nc));
    err = mm_agree(h->comm, err);
  }
  free(text);
  return err;
}

/* Open the checked history to append (collective): variable ids, one line
 * more in its history attribute, collective access. */
static MM_NODISCARD mm_err mm_history_reopen(mm_history *h, const mm_io_origin *origin, long step,
                                             const mm_history_found *f) {
  const char *p = h->path;
  MM_CHECK(mm_io_check_inodes(h->comm, h->dir, false, p, MM_IO_FDS_FIRST));
  mm_err err = MM_OK;
  int s = nc_open_par(p, NC_WRITE, h->comm, MPI_INFO_NULL, &h->ncid);
  if (s != NC_NOERR)
    err = mm_nc_fail(MM_ERR_RUN, __FILE__, __LINE__, p, "cannot open to append", s);
  err = mm_agree(h->comm, err);
  if (err != MM_OK) {
    if (s == NC_NOERR) nc_close(h->ncid); /* opened here, failed elsewhere */
    return err;
  }
  const struct {
    const char *name;
    int *id;
  } vars[] = {{"time", &h->var_time}, {"step", &h->var_step},     {"temp", &h->var_temp},
              {"salt", &h->var_salt}, {"x", &h->var_x},           {"y", &h->var_y},
              {"z", &h->var_z},       {"z_bnds", &h->var_z_bnds}, {"kmt", &h->var_kmt}};
  for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++)
    MM_NC_LOCAL(err, MM_ERR_RUN, p, vars[v].name, nc_inq_varid(h->ncid, vars[v].name, vars[v].id));
  for (int v = 0; v < MM_NDIAG; v++)
    MM_NC_LOCAL(err, MM_ERR_RUN, p, mm_diag_vars[v].name,
                nc_inq_varid(h->ncid, mm_diag_vars[v].name, &h->var_diag[v]));
  err = mm_agree(h->comm, err);
  if (err == MM_OK) err = mm_io_check_space(h->comm, h->dir, MM_IO_SPACE_MARGIN, p);
  if (err == MM_OK) err = mm_io_reserve(h->comm, &h->env, p, MM_IO_SPACE_MARGIN, &h->seen);
  if (err == MM_OK) err = mm_history_note(h, step, origin);
  if (err == MM_OK) err = mm_history_collective(h);
  if (err != MM_OK) {
    nc_close(h->ncid);
    return err;
  }
  h->nrec = (size_t)f->keep;
  h->last_step = (long)f->last_kept;
  return MM_OK;
}

mm_err mm_history_continue(const mm_grid *g, const mm_config *cfg, const mm_io_origin *origin,
                           long step, const mm_diag *at, const mm_io_read_watch *watch,
                           mm_history **out) {
  *out = NULL;
  mm_history *h = NULL;
  MM_CHECK(mm_history_alloc(g, cfg, &h));
  const char *p = h->path;
  /* none (a new output.dir, or a link to a history not made yet, which a
   * new history is written through, as in a run from the start): one that
   * starts at the restart step; a link that cannot be followed for another
   * reason (a loop) is there, and the read below says why */
  struct stat st;
  int exists = h->rank == 0 && (stat(p, &st) == 0 || (errno != ENOENT && lstat(p, &st) == 0));
  mm_err berr = MM_MPI_ERR(MPI_Bcast(&exists, 1, MPI_INT, 0, h->comm));
  if (berr != MM_OK) {
    mm_history_free(h);
    return berr;
  }
  if (!exists) {
    mm_history_free(h);
    return mm_history_new(g, cfg, origin, step, out);
  }

  /* a removal of records that a killed run left half made, undone first */
  mm_err undo = mm_agree(h->comm, h->rank == 0 ? mm_history_undo_drop(p) : MM_OK);
  if (undo != MM_OK) {
    mm_history_free(h);
    return undo;
  }

  /* read as an input file first: refused as it is, never written. The test
   * read and the check are rank 0's, under the watch (the test read also
   * has its own time limit and watch for a stop); the other ranks wait for
   * them under a watch for a stop signal, so that a signal to any rank ends
   * the run, and the rank that holds the case's lock releases it */
  mm_err err = mm_agree(h->comm, mm_io_check_hdf5(p));
  mm_history_found f = {0, 0, -1};
  if (err == MM_OK) {
    if (watch) watch->start(watch->ctx, p, h->rank == 0);
    err = mm_io_probe(h->comm, &h->env, p);
    if (err == MM_OK)
      err = mm_agree(h->comm, h->rank == 0 ? mm_history_check(p, g, cfg, step, at, &f) : MM_OK);
    if (watch) watch->stop(watch->ctx);
  }
  if (err == MM_OK) err = MM_MPI_ERR(MPI_Bcast(&f, 3, MPI_LONG_LONG, 0, h->comm));
  /* a history this run may not write (its mode, a read-only file system):
   * refused with the file system's reason (netCDF says "HDF error") */
  if (err == MM_OK) {
    const int e = h->rank == 0 && access(p, W_OK) != 0 ? errno : 0;
    err = mm_agree(h->comm,
                   e ? MM_ERROR(MM_ERR_INPUT,
                                "%s: cannot append to it: %s (a run continued from a "
                                "restart appends to the history of its case)" MM_HISTORY_LEFT,
                                p, strerror(e))
                     : MM_OK);
  }
  /* records after the restart step, from a run that went further: removed,
   * to be written anew; but first what may refuse the writes (inodes, space,
   * the reservation, which also opens the file to write), so that a
   * continuation refused there leaves them */
  if (err == MM_OK && f.keep < f.nrec) {
    err = mm_io_check_inodes(h->comm, h->dir, false, p, MM_IO_FDS_FIRST);
    if (err == MM_OK) err = mm_io_check_space(h->comm, h->dir, MM_IO_SPACE_MARGIN, p);
    if (err == MM_OK) err = mm_io_reserve(h->comm, &h->env, p, MM_IO_SPACE_MARGIN, NULL);
    if (err == MM_OK)
      err = mm_agree(h->comm, h->rank == 0 ? mm_history_drop(p, f.keep, step) : MM_OK);
  }
  if (err == MM_OK) err = mm_history_reopen(h, origin, step, &f);
  if (err != MM_OK) {
    mm_history_free(h);
    return err;
  }
  *out = h;
  return MM_OK;
}

/* ------------------------------------------------------------- records */

bool mm_history_started(const mm_history *h) {
  return h && h->started;
}

mm_err mm_history_write(mm_history *h, const mm_grid *g, const double *temp, const double *salt,
                        const mm_diag *d) {
  const int nc = h->ncid;
  const char *p = h->path;
  MM_REQUIRE(!h->broken, MM_ERR_RUN, "%s: not written after a failed write", p);
  /* room for the record, reserved: a full disk or a file-size limit refuses
   * it here, and the file stays as the last record left it */
  mm_err err = mm_io_check_space(h->comm, h->dir, h->record_bytes, p);
  if (err == MM_OK) err = mm_io_reserve(h->comm, &h->env, p, h->record_bytes, &h->seen);
  if (err != MM_OK) return err;
  /* the next record; a record of a step the file holds replaces it (a run
   * continued at its last step writes that state once more) */
  const size_t rec = h->nrec > 0 && d->step == h->last_step ? h->nrec - 1 : h->nrec;
  /* Each collective call, then the ranks agree: after a failure inside the
   * libraries no rank makes one more call on the file. */
#define PUT(what, call)                                                                            \
  do {                                                                                             \
    if (err == MM_OK) {                                                                            \
      MM_NC_WRITE(err, p, h->dir, what, call);                                                     \
      err = mm_agree(h->comm, err);                                                                \
    }                                                                                              \
  } while (0)
  /* 1-D variables: rank 0 writes the record, the others take part with nothing */
  const size_t one = h->rank == 0 ? 1 : 0;
  const double time = d->time; /* s */
  const int step = (int)d->step;
  PUT("writing time", nc_put_vara_double(nc, h->var_time, &rec, &one, &time));
  PUT("writing step", nc_put_vara_int(nc, h->var_step, &rec, &one, &step));
  for (int v = 0; v < MM_NDIAG; v++) {
    double value;
    memcpy(&value, (const char *)d + mm_diag_vars[v].offset, sizeof value);
    PUT("writing diagnostics", nc_put_vara_double(nc, h->var_diag[v], &rec, &one, &value));
  }

  /* temp, salt: each rank its block, one put each */
  const size_t start[4] = {rec, 0, (size_t)g->j0, (size_t)g->i0};
  const size_t count[4] = {1, (size_t)g->nz, (size_t)g->nyl, (size_t)g->nxl};
  mm_io_pack(g, temp, MM_IO_FILL, h->buf);
  PUT("writing temp", nc_put_vara_double(nc, h->var_temp, start, count, h->buf));
  mm_io_pack(g, salt, MM_IO_FILL, h->buf);
  PUT("writing salt", nc_put_vara_double(nc, h->var_salt, start, count, h->buf));
  /* flushed, so that the file on disk holds every record so far (a killed
   * run, a later failed write) */
  PUT("flushing", nc_sync(nc));
#undef PUT
  if (err != MM_OK) {
    h->broken = true; /* see the top of this file */
    return err;
  }
  h->nrec = rec + 1;
  h->last_step = d->step;
  return MM_OK;
}

void mm_history_abandon(mm_history *h) {
  if (h) h->broken = true;
}

mm_err mm_history_close(mm_history *h) {
  if (!h) return MM_OK;
  mm_err err = MM_OK;
  /* on a file system that turned read-only under the run (ext4 after an
   * error), the close cannot write its metadata: it failed on one rank and
   * left the others waiting in it; the file is left as after a failed
   * write, holding every record before (each flushed) */
  if (!h->broken && mm_io_read_only(h->comm, h->path)) {
    h->broken = true;
    err = MM_ERROR(MM_ERR_RUN,
                   "%s: the file system is now read-only: the history is left as its last record "
                   "left it, not closed",
                   h->path);
  }
  /* a broken file stays open, untouched (mm_io_files_left_open) */
  if (!h->broken) {
    MM_NC_COLL(err, MM_ERR_RUN, h->path, "cannot close", nc_close(h->ncid));
    err = mm_agree(h->comm, err);
    if (err == MM_OK) err = mm_io_trim(h->comm, h->path, &h->seen);
  }
  mm_history_free(h);
  return err;
}

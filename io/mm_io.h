/* File input and output (docs/output.md): the history file, restart and
 * crash files, and the initial-state file, all NetCDF-4.
 *
 * Every function here is collective over the grid's communicator g->cart and
 * returns the same mm_err on every rank: each phase (open, define, write,
 * close) ends with an agreement of the ranks (MPI_Allreduce of the error code),
 * and all ranks then go on or stop together, so a failure on one rank never
 * leaves the others waiting in a collective. The message of the lowest failing
 * rank is copied to the ranks that did not fail, so rank 0 can report it.
 *
 * Errors: MM_ERR_RUN for a file that cannot be created or written (missing or
 * unwritable directory, full disk), MM_ERR_INPUT for an input file that is
 * refused (missing, not NetCDF, truncated, another grid or configuration,
 * non-finite values). Messages name the file.
 *
 * Fields are passed in the model's memory layout (model/mm_grid.h): column-
 * contiguous with halo, element [mm_col(g, i, j) * nz + k]. Only the rank's
 * own block is written or read; the halo is neither read nor changed. */
#ifndef MM_IO_H
#define MM_IO_H

#include <stdbool.h>
#include <sys/stat.h>

#include "mm_config.h"
#include "mm_diag.h"
#include "mm_error.h"
#include "mm_grid.h"

/* ------------------------------------------------------------- history */

/* An open history file `<output.dir>/<run.name>.nc`. */
typedef struct mm_history mm_history;

/* Who wrote a file, for its `source` and `history` attributes: minimodel's
 * version (--version) and the command line. NULL, or NULL members, when not
 * known ("unknown", no command). */
typedef struct {
  const char *version;
  const char *command;
} mm_io_origin;

/* Create the history file (replacing an old one) and write everything that
 * does not change in time: dimensions, coordinates, kmt, attributes.
 * output.dir must exist. The origin goes into the `source` attribute
 * ("minimodel <version>") and the `history` attribute (the time, the version
 * and the command line). On error *out is NULL. */
MM_NODISCARD mm_err mm_history_create(const mm_grid *g, const mm_config *cfg,
                                      const mm_io_origin *origin, mm_history **out);

/* A watch over a read that may never end (libhdf5 can loop on a damaged
 * file): start(ctx, path, reads) before it, stop(ctx) after it, on every
 * rank: reads true on the rank that reads, false on a rank that waits for
 * that read. The run's read watchdog (app/run.c) ends the rank when the read
 * takes too long (the reading rank) or a stop signal came (any rank). The
 * reads it watches only read. */
typedef struct {
  void (*start)(void *ctx, const char *path, bool reads);
  void (*stop)(void *ctx);
  void *ctx;
} mm_io_read_watch;

/* The history of a run continued from a restart at step `step`
 * (initial.restart). Where `<output.dir>/<run.name>.nc` exists, it is opened
 * to append, after checking that it is this case's (grid, configuration
 * hash) and holds the records up to `step`: every record output.interval
 * asks for, up to `step`, since the step the history started from. Its
 * records after `step`, from a run that went further, are removed, to be
 * written anew. A history that does not fit (or cannot be read) is refused
 * with MM_ERR_INPUT and left as it is; so is one whose record of `step`
 * has other diagnostics than `at` (those of the restart's state; NULL: not
 * checked): a restart of another run, say of another initial state, which
 * config_hash does not tell. Whatever may refuse to write the history (no
 * inodes, no space, no reservation, no permission) is asked before its
 * records after `step` are removed. Where there is none, one is created as
 * by mm_history_create, starting at `step`. The check's read of the
 * existing history runs under `watch` (NULL: none). On error *out is NULL. */
MM_NODISCARD mm_err mm_history_continue(const mm_grid *g, const mm_config *cfg,
                                        const mm_io_origin *origin, long step, const mm_diag *at,
                                        const mm_io_read_watch *watch, mm_history **out);

/* Whether this run started the history at h (mm_history_create, or
 * mm_history_continue where the case had none), so that its first record is
 * the state the run starts from (output.initial_record). */
bool mm_history_started(const mm_history *h);

/* Append one record: d->time, d->step, the diagnostics of d, and the rank's
 * block of temp and salt (degC, g/kg), _FillValue on land; a record of a step
 * the file already holds (its last) is replaced. The room is reserved first
 * (a full disk or a file-size limit: MM_ERR_RUN, the file as the last record
 * left it); each record is flushed. After a write that failed all the same,
 * inside the netCDF/HDF5 libraries, the file is left open and untouched, and
 * holds every record before (mm_io_files_left_open). */
MM_NODISCARD mm_err mm_history_write(mm_history *h, const mm_grid *g, const double *temp,
                                     const double *salt, const mm_diag *d);

/* Leave the file to whoever else writes it now (the case's lock was lost):
 * no call is made on it any more, mm_history_close does not close it, and
 * the run ends without the libraries' clean-up (mm_io_files_left_open), so
 * that nothing of this run's is flushed into it. */
void mm_history_abandon(mm_history *h);

/* Close the file and free h (collective; does nothing for h == NULL). */
MM_NODISCARD mm_err mm_history_close(mm_history *h);

/* ------------------------------------------------------ restart, crash */

/* Write `<output.dir>/<run.name>.restart.nc`: first to `.restart.nc.tmp`,
 * then renamed over the old file once every rank has closed it. temp, salt
 * at step `step`, model time `time` (s). The room is reserved first; on any
 * failure the old file stays in place and the .tmp is removed. */
MM_NODISCARD mm_err mm_restart_write(const mm_grid *g, const mm_config *cfg,
                                     const mm_io_origin *origin, const double *temp,
                                     const double *salt, long step, double time);

/* Read the restart file `path` written for this grid and configuration into
 * the rank's block of temp and salt (land 0, halo untouched); *step and *time
 * (s) are the step and time of the state. MM_ERR_INPUT when the file is
 * missing, unreadable, not NetCDF-4, truncated, lacks a variable or attribute,
 * was written for another grid (dimensions) or configuration (config_hash) or
 * land mask (kmt), or holds non-finite values in wet cells. */
MM_NODISCARD mm_err mm_restart_read(const mm_grid *g, const mm_config *cfg, const char *path,
                                    double *temp, double *salt, long *step, double *time);

/* Check the restart file `path` without reading its fields (collective over
 * comm): the checks of mm_restart_read that need no data (readable,
 * NetCDF-4, variables, this grid's dimensions, this configuration's hash);
 * *step is the step of the state. With temp and salt NULL, mm_restart_read
 * does the same. */
MM_NODISCARD mm_err mm_restart_check(MPI_Comm comm, const mm_config *cfg, const char *path,
                                     long *step);

/* Write `<output.dir>/<run.name>.crash.nc`, the same layout as a restart file:
 * the last good state before a run stopped. */
MM_NODISCARD mm_err mm_crash_write(const mm_grid *g, const mm_config *cfg,
                                   const mm_io_origin *origin, const double *temp,
                                   const double *salt, long step, double time);

/* ------------------------------------------------------------- the end */

/* Whether the netCDF/HDF5 libraries still hold a file on some rank of comm
 * (collective): a file left open after a write failed inside the libraries,
 * or one whose close failed. MPI_Finalize must then not run, for it has
 * HDF5 close that file: HDF5 would write a partial state over the records
 * the file holds, and HDF5 1.10 crashes (SIGSEGV in H5F__close_cb) on the id
 * of a file whose close failed. */
bool mm_io_files_left_open(MPI_Comm comm);

/* Open MPI's MPI-IO keeps, while a file is open, a lock file
 * `<file>-<job>-<pid>.lock` beside it, removed at close. A process that
 * ends without closing the file (a read the watchdog ends, a file left open
 * above) removes the one of path with its own pid (that of the
 * communicator's rank 0 names it), so that nothing is left beside the
 * user's files. */
void mm_io_remove_mpi_lock(const char *path);

/* The same for the process `pid` (another rank's: its rank 0's lock files,
 * removed by a rank that ends the run for it, app/mm_file_watch.h). */
void mm_io_remove_mpi_lock_of(const char *path, long pid);

/* What the file at path (st: its stat, links followed) is where it is not
 * a regular file that can hold data, for a message: "a FIFO", "a character
 * device", "a directory", "a file of /proc"...; NULL for a regular file. */
const char *mm_io_file_kind(const char *path, const struct stat *st);

/* mm_io_remove_mpi_lock for every file the libraries still hold (rank 0 of
 * the files' communicator, as the run ends without closing them). */
void mm_io_remove_left_locks(void);

/* ------------------------------------------------------------- initial */

/* Seconds an input file (initial.file, initial.restart) may take to read:
 * MINIMODEL_READ_TIMEOUT when set (0 or not a number: no limit, returns 0),
 * else 600 s plus 1 s per 20 MB of the file. */
double mm_io_read_timeout(const mm_settings *env, const char *path);

/* Read `temp` and `salt` of dimensions exactly (nz, ny, nx) from the NetCDF
 * file `path` (any NetCDF format) into the rank's block; land set to 0.
 * MM_ERR_INPUT for a missing or unreadable file, a missing variable, other
 * dimensions, or a non-finite (or _FillValue) value in a wet cell. */
MM_NODISCARD mm_err mm_initial_read(const mm_grid *g, const mm_settings *env, const char *path,
                                    double *temp, double *salt);

/* Check the initial file `path` for this configuration's grid without
 * reading its fields (collective over comm): the checks of mm_initial_read
 * that need no data (readable, NetCDF, temp and salt, dimensions). With temp
 * and salt NULL, mm_initial_read does the same. */
MM_NODISCARD mm_err mm_initial_check(MPI_Comm comm, const mm_config *cfg, const char *path);

/* The directory of path into dir (size bytes): "." for a bare name, "/"
 * for a file in the root. */
void mm_io_dir_of(const char *path, char *dir, size_t size);

#endif

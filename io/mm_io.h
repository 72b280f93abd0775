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

#include "mm_config.h"
#include "mm_diag.h"
#include "mm_error.h"
#include "mm_grid.h"

/* ------------------------------------------------------------- history */

/* An open history file `<output.dir>/<run.name>.nc`. */
typedef struct mm_history mm_history;

/* Create the history file (replacing an old one) and write everything that
 * does not change in time: dimensions, coordinates, kmt, attributes.
 * output.dir must exist. version goes into the `source` attribute
 * ("minimodel <version>"). On error *out is NULL. */
mm_err mm_history_create(const mm_grid *g, const mm_config *cfg, const char *version,
                         mm_history **out);

/* Append one record: d->time, d->step, the diagnostics of d, and the rank's
 * block of temp and salt (degC, g/kg), _FillValue on land. */
mm_err mm_history_write(mm_history *h, const mm_grid *g, const double *temp, const double *salt,
                        const mm_diag *d);

/* Close the file and free h (collective; does nothing for h == NULL). */
mm_err mm_history_close(mm_history *h);

/* ------------------------------------------------------ restart, crash */

/* Write `<output.dir>/<run.name>.restart.nc`: first to `.restart.nc.tmp`,
 * then renamed over the old file once every rank has closed it. temp, salt
 * at step `step`, model time `time` (s). */
mm_err mm_restart_write(const mm_grid *g, const mm_config *cfg, const double *temp,
                        const double *salt, long step, double time);

/* Read the restart file `path` written for this grid and configuration into
 * the rank's block of temp and salt (land 0, halo untouched); *step and *time
 * (s) are the step and time of the state. MM_ERR_INPUT when the file is
 * missing, unreadable, not NetCDF-4, truncated, lacks a variable or attribute,
 * was written for another grid (dimensions) or configuration (config_hash) or
 * land mask (kmt), or holds non-finite values in wet cells. */
mm_err mm_restart_read(const mm_grid *g, const mm_config *cfg, const char *path, double *temp,
                       double *salt, long *step, double *time);

/* Check the restart file `path` without reading its fields (collective over
 * comm): the checks of mm_restart_read that need no data (readable,
 * NetCDF-4, variables, this grid's dimensions, this configuration's hash);
 * *step is the step of the state. With temp and salt NULL, mm_restart_read
 * does the same. */
mm_err mm_restart_check(MPI_Comm comm, const mm_config *cfg, const char *path, long *step);

/* Write `<output.dir>/<run.name>.crash.nc`, the same layout as a restart file:
 * the last good state before a run stopped. */
mm_err mm_crash_write(const mm_grid *g, const mm_config *cfg, const double *temp,
                      const double *salt, long step, double time);

/* ------------------------------------------------------------- initial */

/* Read `temp` and `salt` of dimensions exactly (nz, ny, nx) from the NetCDF
 * file `path` (any NetCDF format) into the rank's block; land set to 0.
 * MM_ERR_INPUT for a missing or unreadable file, a missing variable, other
 * dimensions, or a non-finite (or _FillValue) value in a wet cell. */
/* Seconds an input file (initial.file, initial.restart) may take to read:
 * MINIMODEL_READ_TIMEOUT when set (0 or not a number: no limit, returns 0),
 * else 600 s plus 1 s per 20 MB of the file. */
double mm_io_read_timeout(const char *path);

mm_err mm_initial_read(const mm_grid *g, const char *path, double *temp, double *salt);

/* Check the initial file `path` for this configuration's grid without
 * reading its fields (collective over comm): the checks of mm_initial_read
 * that need no data (readable, NetCDF, temp and salt, dimensions). With temp
 * and salt NULL, mm_initial_read does the same. */
mm_err mm_initial_check(MPI_Comm comm, const mm_config *cfg, const char *path);

#endif

/* The files of the cases of one invocation, checked before any case runs,
 * and the lock that keeps two runs of one case from writing the same files
 * (docs/reliability.md, "Outputs"). */
#ifndef MM_OUTPUTS_H
#define MM_OUTPUTS_H

#include <limits.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

#include "mm_config.h"
#include "mm_error.h"

/* Before any case runs (collective over comm; rank 0 looks at the file
 * system, the ranks agree), MM_ERR_INPUT with a message naming the case:
 *  - two cases that would write one file (`<output.dir>/<run.name>` and a
 *    suffix: .nc, .restart.nc, .crash.nc, their .tmp, .timing.json, .lock),
 *    output.dir compared as a real path also where it does not exist yet;
 *  - a case whose initial.file or initial.restart is one of its own output
 *    files, which the run would replace (only initial.restart = its own
 *    restart file is allowed: continuing in place, the file is read whole
 *    before the first restart write replaces it);
 *  - an input file that fails mm_run_check_inputs (exists, is readable, has
 *    this grid's dimensions; a restart file also this configuration's hash
 *    and a step within run.steps). An input that an earlier case of the
 *    invocation writes is checked when its case reads it.
 *  - a configuration file that is a file a case writes (its resolved
 *    configuration run again is allowed where the run would write the same
 *    text into it: the case reproduced, not changed);
 *  - an output.dir that cannot be one (mm_output_dir_problem);
 *  - a chain (a case continues from an earlier case's restart file) from a
 *    case that writes no restart file.
 * files[c] names case c in messages. chain[c] (n of them) is set to the
 * earlier case whose restart file case c continues from, -1 for none. */
MM_NODISCARD mm_err mm_cases_check(const mm_config *cfgs, const char *const *files, int n,
                                   MPI_Comm comm, int *chain);

/* Before a run (not a dry run, which writes no file; collective, rank 0
 * looks), MM_ERR_INPUT naming the case where one of its output files is
 * rank 0's standard output or error, or the launcher's (mm_output_owner):
 * the run's own output would go into its history (written in place, also
 * through a link) or lock file, or a log would be lost with a file renamed
 * over its one name (`minimodel c.ini > output/c.timing.json`). */
MM_NODISCARD mm_err mm_streams_check(const mm_config *cfgs, const char *const *files, int n,
                                     MPI_Comm comm);

/* What keeps dir from being an output directory, or NULL: a file that is
 * not a directory, a symbolic link to nothing (its target named), a loop of
 * links, a path through something that is not a directory, a dir that does
 * not exist in a folder where this process may not make one (no write
 * permission, a read-only file system, a file system that makes no folder:
 * /proc, /sys; found by making a folder ".minimodel-probe-XXXXXX" there
 * and removing it at once). A dir that does not exist is
 * otherwise fine (the run creates it, not its parents, which an earlier
 * case may make). The message may be written into buf[size]. */
const char *mm_output_dir_problem(const char *dir, char *buf, size_t size);

/* The folder that holds dir (dir without its last name and the slashes
 * after it; "." for a name alone), into parent[size]. */
void mm_output_dir_parent(const char *dir, char *parent, size_t size);

/* A new file at `tmp` (a case's `.tmp`, renamed into place once written),
 * opened for writing: whatever stood at that name, a link included, is
 * removed first, and the file is made anew (O_EXCL, O_NOFOLLOW), so that
 * nothing a link there names is written. NULL with errno set on failure. */
FILE *mm_output_tmp_open(const char *tmp);

/* An exclusive lock on the outputs of a case: flock(2) on
 * `<output.dir>/<run.name>.lock`, held by rank 0 from before the first file
 * of the case is written until it has ended. A lock dies with its process,
 * so a lock file left by a killed run does not block. */
typedef struct {
  int fd;                         /* the locked file on rank 0; -1 elsewhere or unlocked */
  char path[2 * MM_STR_MAX + 16]; /* <output.dir>/<run.name>.lock */
  /* where the history is a symbolic link to another file (written through
   * it): the lock beside that file, its name with .lock for .nc, which a
   * case writing it under its own name holds; -1 and "" else */
  int history_fd;
  char history_path[PATH_MAX + 16];
} mm_output_lock;

/* Take the lock (collective over comm; output.dir must exist). A case that
 * another run holds: MM_ERR_INPUT naming the lock file and the process
 * holding it (its pid and host, as written in the file). A file system
 * without locks: a warning, and the case runs unlocked. */
MM_NODISCARD mm_err mm_output_lock_create(const mm_config *cfg, MPI_Comm comm,
                                          mm_output_lock *lock);

/* Whether the lock file is still at its name (collective over comm; rank
 * 0 looks): removed or replaced while the run holds it (a user tidying
 * "stale" locks), another run of the case could take the outputs.
 * MM_ERR_RUN naming it, checked before every record and restart. */
MM_NODISCARD mm_err mm_output_lock_check(const mm_output_lock *lock, MPI_Comm comm);

/* Remove the lock file, when it is still the one locked, and release the
 * lock (rank 0; nothing elsewhere). */
void mm_output_lock_destroy(mm_output_lock *lock);

#endif

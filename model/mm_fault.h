/* Fault injection for the reliability tests (tests/reliability,
 * docs/reliability.md). Every hook does nothing unless its environment
 * variable is set; none is meant for production runs.
 *
 *   MINIMODEL_FAULT_RANK=R            the rank where a fault happens (default 0)
 *   MINIMODEL_FAULT_NAN_STEP=N        after step N, a NaN in temp at the first wet
 *                                     cell (k = 0) of rank R's block (app/run.c)
 *   MINIMODEL_FAULT_ALLOC=WHAT        on rank R an allocation fails: `model` (the
 *                                     state in mm_model_create) or `last_good`
 *                                     (the copy of the last good state, app/run.c)
 *   MINIMODEL_FAULT_OPEN=WHAT         on rank R a file cannot be opened: `history`,
 *                                     `restart` (written) or `initial` (read):
 *                                     that rank alone gets a path that does not
 *                                     exist (app/run.c)
 *   MINIMODEL_FAULT_SOLVE_STEP=N      the tridiagonal solve of step N fails on
 *                                     rank R alone (model/mm_model.c)
 *   MINIMODEL_FAULT_MPI_STEP=N        an MPI call of step N fails on every rank
 *                                     (an MPI_Allreduce of count -1:
 *                                     MPI_ERR_COUNT; model/mm_model.c)
 *   MINIMODEL_FAULT_KILL_IN_RESTART=N rank R raises SIGKILL in the middle of the
 *                                     N-th restart write: the .tmp file exists,
 *                                     half written, not yet renamed (io/restart.c)
 *   MINIMODEL_FAULT_NO_RESERVE=1      no file space is reserved before a write
 *                                     (io/nc_util.c, mm_io_reserve), so that a
 *                                     full disk or a file-size limit makes the
 *                                     write itself fail, inside netCDF/HDF5
 */
#ifndef MM_FAULT_H
#define MM_FAULT_H

#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Integer value of environment variable name; `off` when unset or not a number. */
static inline long mm_fault_env(const char *name, long off) {
  const char *v = getenv(name);
  if (!v || !*v) return off;
  char *end = NULL;
  long x = strtol(v, &end, 10);
  return *end ? off : x;
}

/* Whether this rank is the one where faults happen. */
static inline bool mm_fault_here(int rank) {
  return rank == (int)mm_fault_env("MINIMODEL_FAULT_RANK", 0);
}

/* Whether fault `var` = `what` is asked for on this rank. */
static inline bool mm_fault_is(const char *var, const char *what, int rank) {
  const char *v = getenv(var);
  return v && !strcmp(v, what) && mm_fault_here(rank);
}

/* Count the restart writes of this process; die in the N-th one. */
static inline void mm_fault_kill_in_restart(int rank) {
  static long count = 0;
  const long n = mm_fault_env("MINIMODEL_FAULT_KILL_IN_RESTART", 0);
  if (n > 0 && ++count == n && mm_fault_here(rank)) raise(SIGKILL);
}

#endif

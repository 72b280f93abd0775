/* One case of a run: set-up, the time loop with its output schedule, and the
 * report. */
#ifndef MM_RUN_H
#define MM_RUN_H

#include <stdbool.h>

#include "mm_config.h"
#include "mm_diag.h"
#include "mm_signal.h"
#include "mm_timer.h"

typedef struct {
  bool quiet;
  bool dry_run;
  const char *version;
  const char *command;          /* the command line, for the output files' history */
  double bandwidth_gbps;        /* memory bandwidth the phases are compared with; 0: none */
  const char *bandwidth_source; /* "given" (--bandwidth GBPS) or "probe" (--bandwidth probe) */
} mm_run_options;

/* What a case reports for the summary line. */
typedef struct {
  long steps;
  double wall_s;
  double points_per_s;
  double solve_share;
  mm_diag last;
  char history[2 * MM_STR_MAX + 8]; /* <output.dir>/<run.name>.nc */
  int restart_written;              /* 1: the case wrote a restart file */
} mm_run_summary;

MM_NODISCARD mm_err mm_run_case(const mm_config *cfg, const mm_run_options *opt, MPI_Comm comm,
                                mm_run_summary *summary);

/* The text of `<output.dir>/<run.name>.resolved.ini`: every key of the case
 * as resolved, after two comment lines; malloc'd, NULL when out of memory. */
char *mm_run_resolved_text(const mm_config *cfg);

/* mm_agree (mm_error.h), and in the same reduction *signo = the largest
 * signal number any rank has received (mm_signal_received). */
static inline MM_NODISCARD mm_err mm_agree_with_signal(MPI_Comm comm, mm_err err, int *signo) {
  return mm_agree_with(comm, err, mm_signal_received(), signo);
}

/* The model's own checks of a case without running it (collective over
 * comm): the model is built and destroyed, so that the decomposition, the
 * memory, the bathymetry and flow, the stability of run.dt, the solver and
 * the device are checked as the run checks them. */
MM_NODISCARD mm_err mm_run_check_model(const mm_config *cfg, MPI_Comm comm);

/* The input files of a case, checked without reading their data (collective
 * over comm, under the read watchdog): with `file`, initial.file
 * (mm_initial_check); with `restart`, initial.restart (mm_restart_check)
 * and its step within run.steps, given in *restart_step (left as it is
 * without `restart`). MM_ERR_INPUT naming the file. */
MM_NODISCARD mm_err mm_run_check_inputs(const mm_config *cfg, bool file, bool restart,
                                        MPI_Comm comm, long *restart_step);

#endif

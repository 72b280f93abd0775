/* Progress while running and the timing report at the end of a case. */
#ifndef MM_REPORT_H
#define MM_REPORT_H

#include <stdbool.h>

#include "mm_model.h"
#include "mm_run.h"
#include "mm_timer.h"

typedef struct {
  bool on;       /* rank 0 and not --quiet */
  bool tty;      /* live bar (stdout is a terminal) or periodic lines */
  long every;    /* steps between lines when not a tty */
  long total;    /* run.steps */
  long first;    /* step the run started from */
  double last_draw; /* wall time of the last bar update (s) */
  long points;   /* grid points per step (global) */
} mm_progress;

void mm_progress_init(mm_progress *p, const mm_config *cfg, bool on, long first_step);
void mm_progress_update(mm_progress *p, const mm_model *m, double elapsed_s);
void mm_progress_finish(mm_progress *p);

/* Gather the phase timers across ranks; on rank 0 print the table and write
 * <output.dir>/<run.name>.timing.json. Fills summary figures. */
mm_err mm_report_write(const mm_model *m, const mm_timers *t, bool quiet, mm_run_summary *sum);

#endif

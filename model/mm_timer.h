/* Phase timers of a time step (issue: profiling). Wall-clock, MPI_Wtime;
 * NVTX ranges with the same names when built with CUDA. */
#ifndef MM_TIMER_H
#define MM_TIMER_H

#include <stddef.h>

typedef enum {
  MM_PHASE_HALO,
  MM_PHASE_HORIZONTAL,
  MM_PHASE_MIXING,
  MM_PHASE_SOLVE,
  MM_PHASE_DIAGNOSTICS,
  MM_PHASE_OUTPUT,
  MM_PHASE_STEP,
  MM_NPHASES
} mm_phase;

typedef struct {
  double total[MM_NPHASES]; /* s, summed over the run */
  long calls[MM_NPHASES];
  double started[MM_NPHASES];
  int running[MM_NPHASES];
  /* per-step record, every `stride`-th step */
  long stride;
  size_t n_steps, cap_steps;
  long *step_id;
  double *step_s, *solve_s;
  double solve_at_step_start; /* total[SOLVE] when the current step began */
} mm_timers;

const char *mm_phase_name(mm_phase p);
void mm_timers_init(mm_timers *t, long stride);
void mm_timers_free(mm_timers *t);
void mm_timer_start(mm_timers *t, mm_phase p);
void mm_timer_stop(mm_timers *t, mm_phase p);
/* Add seconds measured elsewhere (GPU events) to phase p as one call. */
void mm_timer_add(mm_timers *t, mm_phase p, double seconds);
/* Mark the beginning and end of step number `step` (records per_step). */
void mm_timers_step_begin(mm_timers *t);
void mm_timers_step_end(mm_timers *t, long step);

#endif

#include "mm_timer.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#ifdef MINIMODEL_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

static const char *const mm_phase_names[MM_NPHASES] = {
    "halo", "horizontal", "mixing", "solve", "diagnostics", "output", "step"};

const char *mm_phase_name(mm_phase p) {
  return mm_phase_names[p];
}

void mm_timers_init(mm_timers *t, long stride) {
  memset(t, 0, sizeof *t);
  t->stride = stride > 0 ? stride : 1;
}

void mm_timers_free(mm_timers *t) {
  free(t->step_id);
  free(t->step_s);
  free(t->solve_s);
  memset(t, 0, sizeof *t);
}

void mm_timer_start(mm_timers *t, mm_phase p) {
  if (!t) return;
#ifdef MINIMODEL_HAVE_NVTX
  nvtxRangePushA(mm_phase_names[p]);
#endif
  t->started[p] = MPI_Wtime();
  t->running[p] = 1;
}

void mm_timer_stop(mm_timers *t, mm_phase p) {
  if (!t || !t->running[p]) return;
  t->total[p] += MPI_Wtime() - t->started[p];
  t->calls[p]++;
  t->running[p] = 0;
#ifdef MINIMODEL_HAVE_NVTX
  nvtxRangePop();
#endif
}

void mm_timer_add(mm_timers *t, mm_phase p, double seconds) {
  if (!t) return;
  t->total[p] += seconds;
  t->calls[p]++;
}

void mm_timers_step_begin(mm_timers *t) {
  if (!t) return;
  t->solve_at_step_start = t->total[MM_PHASE_SOLVE];
  mm_timer_start(t, MM_PHASE_STEP);
}

void mm_timers_step_end(mm_timers *t, long step) {
  if (!t) return;
  double before = t->total[MM_PHASE_STEP];
  mm_timer_stop(t, MM_PHASE_STEP);
  if (step % t->stride != 0) return;
  if (t->n_steps == t->cap_steps) {
    size_t cap = t->cap_steps ? 2 * t->cap_steps : 1024;
    long *id = realloc(t->step_id, cap * sizeof *id);
    if (id) t->step_id = id;
    double *s = realloc(t->step_s, cap * sizeof *s);
    if (s) t->step_s = s;
    double *v = realloc(t->solve_s, cap * sizeof *v);
    if (v) t->solve_s = v;
    if (!id || !s || !v) return; /* keep what fits; the totals stay right */
    t->cap_steps = cap;
  }
  t->step_id[t->n_steps] = step;
  t->step_s[t->n_steps] = t->total[MM_PHASE_STEP] - before;
  t->solve_s[t->n_steps] = t->total[MM_PHASE_SOLVE] - t->solve_at_step_start;
  t->n_steps++;
}

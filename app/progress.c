#include <stdio.h>
#include <unistd.h>

#include "mm_report.h"

void mm_progress_init(mm_progress *p, const mm_config *cfg, bool on, long first_step) {
  p->on = on;
  p->tty = on && isatty(STDOUT_FILENO);
  p->total = cfg->run_steps;
  p->first = first_step;
  long remaining = cfg->run_steps - first_step;
  p->every = cfg->progress_interval > 0 ? cfg->progress_interval
                                        : (remaining >= 10 ? remaining / 10 : 1);
  p->last_draw = -1.0;
  p->points = cfg->nx * cfg->ny * cfg->nz;
}

void mm_progress_update(mm_progress *p, const mm_model *m, double elapsed) {
  if (!p->on) return;
  const long done = m->step - p->first, todo = p->total - p->first;
  const bool last = m->step == p->total;
  if (p->tty) {
    if (!last && elapsed - p->last_draw < 0.1) return;
    p->last_draw = elapsed;
  } else if (!last && done % p->every != 0) {
    return;
  }
  const double eta = done > 0 ? elapsed / done * (double)(todo - done) : 0.0;
  const double rate = elapsed > 0 ? (double)done * (double)p->points / elapsed : 0.0;
  if (p->tty) {
    enum { WIDTH = 30 };
    const int fill = todo > 0 ? (int)(WIDTH * done / todo) : WIDTH;
    char bar[WIDTH + 1];
    for (int i = 0; i < WIDTH; i++) bar[i] = i < fill ? '#' : '.';
    bar[WIDTH] = '\0';
    printf("\r[%s] step %ld/%ld  t = %.4g s  wall %.1f s  ETA %.1f s  %.3g points/s ", bar,
           m->step, p->total, m->time, elapsed, eta, rate);
  } else {
    printf("step %ld/%ld  t = %.6g s  wall %.2f s  ETA %.1f s  %.3g points/s\n", m->step,
           p->total, m->time, elapsed, eta, rate);
  }
  fflush(stdout);
}

void mm_progress_finish(mm_progress *p) {
  if (p->on && p->tty) {
    printf("\n");
    fflush(stdout);
  }
}

#include "mm_watch_clock.h"

#include <time.h>

double mm_monotonic_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void mm_watch_clock_begin(mm_watch_clock *c, double start) {
  c->last = start;
  c->stopped = 0.0;
}

double mm_watch_clock_at(mm_watch_clock *c, double now) {
  if (now - c->last > MM_WATCH_CLOCK_GAP_S) c->stopped += now - c->last;
  c->last = now;
  return now - c->stopped;
}

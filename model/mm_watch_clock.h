/* The clock of the watches that end a call that does not return (the read
 * watchdog, app/run.c; the file watch, app/file_watch.c; the wait for the
 * test read, io/probe.c): seconds of the monotonic clock less the time the
 * process was stopped. The monotonic clock goes on while a process is
 * stopped (SIGSTOP, or SIGTSTP: Ctrl-Z, a batch system's suspend of a job),
 * so a run suspended for longer than a limit, during a write, was ended as
 * a stalled file system when it was resumed.
 *
 * A watch looks at the clock often (every 0.05 s or less). A look that
 * comes more than MM_WATCH_CLOCK_GAP_S after the one before found the
 * process stopped between them (or left unscheduled that long): that time
 * does not count. */
#ifndef MM_WATCH_CLOCK_H
#define MM_WATCH_CLOCK_H

#define MM_WATCH_CLOCK_GAP_S 1.0

typedef struct {
  double last;    /* the previous look, s of the caller's clock */
  double stopped; /* the time between looks that did not count, s */
} mm_watch_clock;

/* Seconds of CLOCK_MONOTONIC. */
double mm_monotonic_now(void);

/* A watch from the time `start` (s of the caller's clock, such as
 * mm_monotonic_now(): when the watched call began). */
void mm_watch_clock_begin(mm_watch_clock *c, double start);

/* The time `now` (s of the same clock, later than the previous look) less
 * the stops seen since the start: the time the watch counts. */
double mm_watch_clock_at(mm_watch_clock *c, double now);

#endif

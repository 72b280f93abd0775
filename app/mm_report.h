/* Progress while running and the timing report at the end of a case. */
#ifndef MM_REPORT_H
#define MM_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "mm_model.h"
#include "mm_run.h"
#include "mm_timer.h"

/* How rank 0 shows progress. */
typedef enum {
  MM_PROGRESS_OFF,   /* nothing (--quiet, other ranks, MINIMODEL_PROGRESS=off) */
  MM_PROGRESS_LINES, /* one line every `every` steps: for logs and files */
  MM_PROGRESS_BAR    /* a bar redrawn in place with '\r': for terminals */
} mm_progress_mode;

typedef struct {
  mm_progress_mode mode;
  long every;       /* steps between lines (MM_PROGRESS_LINES) */
  long total;       /* run.steps */
  long first;       /* step the run started from */
  double last_draw; /* wall time of the last bar update (s) */
  int last_len;     /* characters of the last bar, to blank what a shorter one leaves */
  long last_step;   /* step of the last bar drawn */
  double points;    /* grid points per step (global) */
  double dt;        /* run.dt (s): the model time of a step */
  bool launched;    /* under a launcher (mm_settings.launched): its terminal is the one */
} mm_progress;

/* Whether an MPI launcher started this process (its rank variables are
 * set: mpirun, PMIx, Hydra, Slurm); false for a singleton. */
bool mm_under_launcher(void);

/* The process on whose stdout and stderr this one's output ends up: itself
 * when not launched; under a launcher, the first ancestor the launcher did
 * not start (the launcher or its daemon; wrappers between, such as time or
 * a shell, are passed over: they carry the rank variables). -1 when it
 * cannot be told (not Linux, another user's process). */
long mm_output_owner(bool launched);

/* The columns of the terminal this process's stdout ends up on (under a
 * launcher, `launched`, the launcher's: mm_output_owner); 0 where that is no
 * terminal or its size cannot be told. */
int mm_output_columns(bool launched);

/* Under a launcher (`launched`), whether its stdout and stderr are one
 * terminal. It forwards a rank's two streams through separate channels and
 * may pass them on in another order than written (a busy machine delayed
 * the bar by a second, and a message written after it came first, glued to
 * it); where they end on one terminal, rank 0 writes its messages to stdout,
 * after the bar and before the summary. False for a singleton, whose writes
 * reach the terminal in order. */
bool mm_output_one_terminal(bool launched);

/* The mode rank 0 uses when progress is wanted. MINIMODEL_PROGRESS=bar|lines|off
 * decides when set (auto or empty: as unset); otherwise a bar only when stdout
 * is a terminal. Under an MPI launcher (OpenMPI, MPICH/Hydra, PMIx, Slurm) a
 * rank's stdout is often a pseudo-terminal the launcher forwards to wherever
 * its own output goes, so isatty() says nothing: there the launcher's stdout
 * (mm_output_owner's, read from /proc on Linux) is looked at instead, and
 * lines are printed when it cannot be told. Another value is refused
 * before any case (mm_settings_read, exit 2). */
mm_progress_mode mm_progress_choose(const mm_settings *settings);

/* `on`: this rank shows progress at all (rank 0 and not --quiet). */
void mm_progress_init(mm_progress *p, const mm_config *cfg, bool on, long first_step);
void mm_progress_update(mm_progress *p, const mm_model *m, double elapsed_s);
/* Ends the bar's line, the bar first redrawn at `step` (the last step the
 * case completed; redraws are at most 10 a second, so the bar may show an
 * earlier one) when it shows another. */
void mm_progress_finish(mm_progress *p, long step, double elapsed_s);

/* v right-aligned in `width` characters (at most 63) of buf, with
 * `decimals` decimals where that fits, else fewer, else in e notation with
 * as many digits as fit: a column of the phase table keeps its width for
 * any value (a total of 100000 s or more, 10^7 calls or more). Returns the
 * characters written: `width`, more only where not even the e notation
 * fits (a width under 6, or 3 digits of exponent at 6). */
int mm_report_fit(char buf[64], double v, int width, int decimals);

/* The phase table's lines are at most this long, the terminating 0 included. */
#define MM_REPORT_LINE_MAX 160

/* One line of the phase table: a phase's figures over the run. */
typedef struct {
  const char *phase; /* its name (at most 12 characters are shown) */
  double total_s;    /* mean over the ranks of each rank's total (s) */
  double per_step_s; /* total_s over the steps (s) */
  double share;      /* total_s over the step's total_s (1: the whole step) */
  double min_rank_s; /* the fastest rank's total (s) */
  double max_rank_s; /* the slowest rank's total (s) */
  double calls;   /* times the phase ran; < 0: the line ends after the share (the untimed glue) */
  bool moved;     /* the phase has a floor of bytes and took time: gbps and x_floor are shown */
  double gbps;    /* the least bytes the phase must move, all ranks, over total_s (GB/s) */
  double x_floor; /* total_s over the time of those bytes at the given bandwidth */
} mm_report_row;

/* The forms of the phase table, each with the columns of the one before
 * and more: in a terminal, the widest that fits (a file or a pipe gets the
 * whole table). */
typedef enum {
  MM_REPORT_MINIMAL, /* phase, total s, share: 33 columns */
  MM_REPORT_COMPACT, /* and per step s: 46 columns */
  MM_REPORT_NARROW,  /* and calls, GB/s (and x floor): 62 columns (70) */
  MM_REPORT_WHOLE    /* and min rank, mean rank, max rank: 95 columns (103) */
} mm_report_form;

/* The table's head in buf, in `form`; with `with_floor` (--bandwidth), the
 * x floor column (MM_REPORT_NARROW and MM_REPORT_WHOLE). Returns its
 * width, the table's: a line is never wider, and each of its numbers ends
 * where its column's name does (any number under 10^99, a share under
 * 10^97, NaN and infinity). */
int mm_report_head(char buf[MM_REPORT_LINE_MAX], mm_report_form form, bool with_floor);

/* One phase's line in buf, under mm_report_head(buf, form, with_floor);
 * returns its length. */
int mm_report_line(char buf[MM_REPORT_LINE_MAX], const mm_report_row *row, mm_report_form form,
                   bool with_floor);

/* text (one line, no newline) in buf[size], broken at blanks into lines of
 * at most `columns` characters (0 or less: as it is), each line after the
 * first indented by the text's own indent and two blanks more (one after
 * an indent followed by '('). In a text of fields set apart by two blanks
 * or more, the breaks come between fields where one fits; in another, after
 * a ',' or ';' where that leaves the line three quarters full, else at the
 * last blank that fits. A word longer than a line is left whole. Returns
 * the length written (the text cut where buf is too small). */
int mm_report_wrap(char *buf, size_t size, const char *text, int columns);

/* Gather the phase timers across ranks (collective); on rank 0 print the table
 * and write <output.dir>/<run.name>.timing.json (keys: report.c). Fills the
 * summary figures. The table is the run's result and is printed even with
 * --quiet, which silences progress only; opt->bandwidth_gbps adds each
 * phase's ratio to its memory floor. */
MM_NODISCARD mm_err mm_report_write(const mm_model *m, const mm_timers *t,
                                    const mm_run_options *opt, mm_run_summary *sum);

#endif

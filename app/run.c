#include "mm_run.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mm_file_watch.h"
#include "mm_io.h"
#include "mm_model.h"
#include "mm_outputs.h"
#include "mm_report.h"
#include "mm_signal.h"
#include "mm_watch_clock.h"

/* A watchdog over the reading of an input file (initial.file,
 * initial.restart): a damaged NetCDF-4 file can make libhdf5 loop forever
 * (fuzz/regress/hangs/). When the read has not ended after the limit, the
 * rank says so and exits with status 2; mpirun then ends the other ranks.
 * The limit: MINIMODEL_READ_TIMEOUT seconds (0 = none), by default 600 s
 * plus 1 s per 20 MB of the file (docs/reliability.md).
 *
 * A stop signal (mm_signal.h) is otherwise seen at the end of a time step;
 * a read that loops, in the run or in its test read (io/probe.c), would
 * hold it until the limit. So the watchdog also looks for one every
 * MM_WATCH_POLL_S: when the read has not ended MM_WATCH_STOP_S after it,
 * the rank says so and exits with status 128 + N (within the second that
 * Open MPI leaves a rank between SIGTERM and SIGKILL). A signal that came
 * before the time limit is the reason to end, not the limit. The reads
 * come before the case writes its files (run_model, mm_run_check_inputs;
 * the check of the history a continued run appends to only reads it), so
 * nothing is lost; the case's lock, when taken, is released first. */
#define MM_WATCH_POLL_S 0.05
#define MM_WATCH_STOP_S 0.5
typedef struct {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool done, running;
  bool waiting; /* this rank waits for rank 0's read: a watch for a stop only */
  double seconds;
  const char *path;
  const char *run_name; /* the case's run.name */
  int rank;
  clockid_t clock; /* of the condition variable's timed waits */
  mm_output_lock
      *case_lock; /* the case's, released before the rank ends; NULL before it is taken */
} mm_read_watchdog;

/* Seconds on the clock of the condition variable's waits: monotonic where
 * it can be, so that a change of the system time neither fires nor delays
 * the watch. */
static double clock_now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *read_watchdog_main(void *arg) {
  mm_read_watchdog *w = arg;
  /* a stop of the process (Ctrl-Z, a suspended job) does not count */
  mm_watch_clock clock;
  const double t0 = clock_now(w->clock);
  mm_watch_clock_begin(&clock, t0);
  const double end = w->seconds > 0.0 ? t0 + w->seconds : INFINITY;
  double stop_by = INFINITY; /* MM_WATCH_STOP_S after a stop signal */
  int signo = 0;
  bool fire = false, stop = false;
  pthread_mutex_lock(&w->lock);
  while (!w->done) {
    const double now = clock_now(w->clock), t = mm_watch_clock_at(&clock, now);
    if (!signo && (signo = mm_signal_received()) != 0) stop_by = t + MM_WATCH_STOP_S;
    if (t >= end && !signo) {
      fire = true;
      break;
    }
    if (t >= stop_by || t >= end) {
      stop = true;
      break;
    }
    const double wake = now + fmin(fmin(end, stop_by) - t, MM_WATCH_POLL_S);
    struct timespec until = {.tv_sec = (time_t)wake};
    until.tv_nsec = (long)((wake - (double)until.tv_sec) * 1e9);
    pthread_cond_timedwait(&w->cond, &w->lock, &until);
  }
  pthread_mutex_unlock(&w->lock);
  if (stop) {
    fprintf(stderr,
            "minimodel: stopped by %s (rank %d) in case %s while %s %s: the read had not "
            "ended %g s after the signal; exit status %d\n",
            mm_signal_name(signo), w->rank, w->run_name,
            w->waiting ? "rank 0 was reading" : "reading", w->path, MM_WATCH_STOP_S,
            MM_ERR_SIGNAL + signo);
    fflush(stderr);
    mm_io_remove_mpi_lock(w->path);
    if (w->case_lock) mm_output_lock_destroy(w->case_lock);
    _exit(MM_ERR_SIGNAL + signo);
  }
  if (fire) {
    fprintf(stderr,
            "minimodel: error (rank %d): %s: still not read after %g s: a damaged file (libhdf5 "
            "can loop forever on one) or a stalled file system; MINIMODEL_READ_TIMEOUT sets the "
            "limit in seconds\n",
            w->rank, w->path, w->seconds);
    fflush(stderr);
    mm_io_remove_mpi_lock(w->path);
    if (w->case_lock) mm_output_lock_destroy(w->case_lock);
    _exit(MM_ERR_INPUT);
  }
  return NULL;
}

static void read_watchdog_start(mm_read_watchdog *w, const mm_config *cfg, const char *path,
                                int rank, mm_output_lock *lock, bool waiting) {
  memset(w, 0, sizeof *w);
  w->path = path;
  w->case_lock = lock;
  w->run_name = cfg->run_name;
  w->rank = rank;
  w->waiting = waiting;
  /* 0: no limit, still a watch for a stop (the reading rank's watch fires) */
  w->seconds = waiting ? 0.0 : mm_io_read_timeout(&cfg->env, path);
  pthread_mutex_init(&w->lock, NULL);
  pthread_condattr_t attr;
  w->clock = CLOCK_MONOTONIC;
  if (pthread_condattr_init(&attr) != 0) {
    w->clock = CLOCK_REALTIME;
    pthread_cond_init(&w->cond, NULL);
  } else {
    if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0) w->clock = CLOCK_REALTIME;
    pthread_cond_init(&w->cond, &attr);
    pthread_condattr_destroy(&attr);
  }
  const int rc = pthread_create(&w->thread, NULL, read_watchdog_main, w);
  w->running = rc == 0;
  if (!w->running) /* the read goes on, without a time limit or a watch for a stop */
    fprintf(stderr,
            "minimodel: warning (rank %d): no watchdog over the read of %s (a thread cannot be "
            "started: %s): a read that never ends is not ended\n",
            rank, path, strerror(rc));
}

static void read_watchdog_stop(mm_read_watchdog *w) {
  if (!w->running) return;
  pthread_mutex_lock(&w->lock);
  w->done = true;
  pthread_cond_signal(&w->cond);
  pthread_mutex_unlock(&w->lock);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->cond);
  pthread_mutex_destroy(&w->lock);
}

/* The watchdog as io/'s read watch (mm_io_read_watch): over the read of the
 * history that a continued run appends to. */
typedef struct {
  mm_read_watchdog dog;
  const mm_config *cfg;
  int rank;
  mm_output_lock *lock;
} mm_run_watch;

static void run_watch_start(void *ctx, const char *path, bool reads) {
  mm_run_watch *w = ctx;
  read_watchdog_start(&w->dog, w->cfg, path, w->rank, w->lock, !reads);
}

static void run_watch_stop(void *ctx) {
  read_watchdog_stop(&((mm_run_watch *)ctx)->dog);
}

mm_err mm_run_check_inputs(const mm_config *cfg, bool file, bool restart, MPI_Comm comm,
                           long *restart_step) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  mm_read_watchdog dog;
  mm_err err = MM_OK;
  if (file && cfg->initial_file[0]) {
    read_watchdog_start(&dog, cfg, cfg->initial_file, rank, NULL, false);
    err = mm_initial_check(comm, cfg, cfg->initial_file);
    read_watchdog_stop(&dog);
    MM_CHECK(err);
  }
  if (restart && cfg->initial_restart[0]) {
    long step = 0;
    read_watchdog_start(&dog, cfg, cfg->initial_restart, rank, NULL, false);
    err = mm_restart_check(comm, cfg, cfg->initial_restart, &step);
    read_watchdog_stop(&dog);
    MM_CHECK(err);
    MM_REQUIRE(step <= cfg->run_steps, MM_ERR_INPUT,
               "%s: restart at step %ld is beyond run.steps = %ld", cfg->initial_restart, step,
               cfg->run_steps);
    *restart_step = step;
  }
  return MM_OK;
}

char *mm_run_resolved_text(const mm_config *cfg) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return NULL;
  char again[2 * MM_STR_MAX + 16];
  mm_dir_file(again, sizeof again, cfg->output_dir, cfg->run_name, ".resolved.ini");
  fprintf(f,
          "; the resolved configuration of case %s (minimodel --set overrides, defaults "
          "and files applied);\n; `minimodel %s` runs the case again\n",
          cfg->run_name, again);
  mm_config_write(cfg, f);
  const bool bad = ferror(f) != 0;
  if (fclose(f) != 0 || bad) {
    free(text);
    return NULL;
  }
  return text;
}

/* <output.dir>/<run.name>.resolved.ini: every key of the case as the run
 * resolved it (files, defaults, --set), a record beside the output like
 * MOM6's MOM_parameter_doc; running it reproduces the case. Rank 0 writes it
 * to .tmp and renames it; the ranks agree. */
static MM_NODISCARD mm_err write_resolved(const mm_config *cfg, MPI_Comm comm) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  mm_err err = MM_OK;
  if (rank == 0) {
    char path[2 * MM_STR_MAX + 32], tmp[2 * MM_STR_MAX + 40];
    mm_dir_file(path, sizeof path, cfg->output_dir, cfg->run_name, ".resolved.ini");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    char *text = mm_run_resolved_text(cfg);
    FILE *f = text ? mm_output_tmp_open(tmp) : NULL;
    if (!text) {
      err = MM_ERROR(MM_ERR_RUN, "out of memory");
    } else if (!f) {
      err = MM_ERROR(MM_ERR_RUN, "%s: cannot create: %s", tmp, strerror(errno));
    } else {
      fputs(text, f);
      const bool bad = ferror(f) != 0;
      if (fclose(f) != 0 || bad)
        err = MM_ERROR(MM_ERR_RUN, "%s: write failed: %s", tmp, strerror(errno));
      else if (rename(tmp, path) != 0)
        err = MM_ERROR(MM_ERR_RUN, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
      if (err != MM_OK) remove(tmp);
    }
    free(text);
  }
  return mm_agree(comm, err);
}

/* Create output.dir (not its parents) on rank 0; agree on the outcome. */
static MM_NODISCARD mm_err make_output_dir(const mm_config *cfg, MPI_Comm comm) {
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  mm_err err = MM_OK;
  if (rank == 0) {
    struct stat st;
    char why[PATH_MAX + 64];
    const char *bad = mm_output_dir_problem(cfg->output_dir, why, sizeof why);
    if (bad)
      err = MM_ERROR(MM_ERR_RUN, "output.dir = %s: %s", cfg->output_dir, bad);
    else if (stat(cfg->output_dir, &st) != 0 && mkdir(cfg->output_dir, 0777) != 0) {
      const int e = errno;
      char parent[PATH_MAX];
      mm_output_dir_parent(cfg->output_dir, parent, sizeof parent);
      /* the hint where the parent is missing (a file system that makes no
       * folder, /proc, says ENOENT too) */
      const bool no_parent = e == ENOENT && stat(parent, &st) != 0;
      err =
          MM_ERROR(MM_ERR_RUN, "output.dir = %s: cannot create: %s%s", cfg->output_dir, strerror(e),
                   no_parent ? " (minimodel creates output.dir, not its parents)" : "");
    }
  }
  return mm_agree(comm, err);
}

static bool is_record_step(const mm_config *cfg, long step) {
  if (step == cfg->run_steps) return true;
  return cfg->output_interval > 0 && step % cfg->output_interval == 0;
}

/* The blow-up check (checked_diagnostics: NaN/Inf, and values outside the
 * physically possible range) runs on every record step and
 * restart step, and in any case every MM_CHECK_INTERVAL steps, so that a
 * blow-up is caught early and the crash file's state is recent also with
 * output.interval = 0 or a long interval (docs/reliability.md). Between
 * records it is a plain scan, about 1 % of the time of the steps. */
#define MM_CHECK_INTERVAL 10

/* Fault injection (mm_settings.h): with MINIMODEL_FAULT_OPEN = what, the
 * fault rank gets a copy of cfg whose file for `what` cannot be opened (a
 * directory or file that does not exist); every other rank gets cfg. */
static const mm_config *fault_open(const mm_config *cfg, const char *what, int rank,
                                   mm_config *copy) {
  if (!mm_fault_is(&cfg->env, cfg->env.fault.open, what, rank)) return cfg;
  *copy = *cfg;
  char *path = !strcmp(what, "initial") ? copy->initial_file : copy->output_dir;
  const char *missing = "/missing (injected fault)";
  if (strlen(path) + strlen(missing) < MM_STR_MAX) strcat(path, missing);
  return copy;
}

/* Fault injection (mm_settings.h): the nth restart write of the run
 * (MINIMODEL_FAULT_KILL_IN_RESTART = nth) gets a copy of cfg that makes the
 * fault rank die in the middle of it; with fault_open's fault too. */
static const mm_config *fault_restart(const mm_config *cfg, long nth, int rank, mm_config *copy) {
  const mm_config *c = fault_open(cfg, "restart", rank, copy);
  if (nth != cfg->env.fault.kill_in_restart) return c;
  if (c != copy) *copy = *cfg;
  copy->env.fault.kill_now = true;
  return copy;
}

/* Fault injection (mm_settings.h): a NaN in temp at the first wet cell
 * (k = 0) of this rank's block. */
static void fault_nan(mm_model *m) {
  const mm_grid *g = mm_model_grid(m);
  double *temp = mm_model_temp(m);
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++)
      if (g->kmt[mm_col(g, i, j)] > 0) {
        temp[mm_col(g, i, j) * g->nz] = NAN;
        return;
      }
}

/* "temp = 112 degC at i=.. j=.. k=.., outside the physically possible range
 * [-10, 110] degC (N values outside)": the first value of d outside the
 * range (model/mm_rsum.h). */
static void range_text(const mm_diag *d, char *buf, size_t len) {
  const bool salt = d->range_var == 1;
  const char *units = salt ? "g/kg" : "degC";
  snprintf(buf, len,
           "%s = %.6g %s at i=%d j=%d k=%d, outside the physically possible range [%g, %g] %s (%ld "
           "values outside)",
           salt ? "salt" : "temp", d->range_value, units, d->range_i, d->range_j, d->range_k,
           salt ? MM_SALT_MIN : MM_TEMP_MIN, salt ? MM_SALT_MAX : MM_TEMP_MAX, units,
           d->out_of_range);
}

/* A state read from initial.file or initial.restart must lie within the
 * physically possible range: a value outside it is an input error
 * (collective). */
static MM_NODISCARD mm_err check_initial_range(mm_model *m) {
  mm_diag d = {0};
  const mm_config *cfg = mm_model_config(m);
  MM_CHECK(mm_agree(mm_model_grid(m)->cart, mm_model_check(m, &d, false)));
  if (!d.out_of_range) return MM_OK;
  char what[400];
  range_text(&d, what, sizeof what);
  const bool restart = cfg->initial_restart[0] != 0;
  return MM_ERROR(MM_ERR_INPUT, "initial.%s = %s: %s", restart ? "restart" : "file",
                  restart ? cfg->initial_restart : cfg->initial_file, what);
}

/* Diagnostics with the blow-up check: on a non-finite value, or a finite one
 * outside the physically possible range (model/mm_rsum.h), save the last
 * good state and stop. With full = false (a check between records) only
 * the check runs, and the diagnostics only when it finds something. */
static MM_NODISCARD mm_err checked_diagnostics(mm_model *m, const mm_io_origin *origin,
                                               double *good_t, double *good_s, long *good_step,
                                               mm_timers *tm, mm_diag *d, bool full) {
  const mm_config *cfg = mm_model_config(m);
  const mm_grid *g = mm_model_grid(m);
  mm_timer_start(tm, MM_PHASE_DIAGNOSTICS);
  mm_err err = mm_agree(g->cart, mm_model_check(m, d, full));
  mm_timer_stop(tm, MM_PHASE_DIAGNOSTICS);
  MM_CHECK(err);
  if (d->nonfinite || d->out_of_range) {
    char what[400];
    if (d->nonfinite)
      snprintf(what, sizeof what, "%s = %s at i=%d j=%d k=%d (%ld non-finite values)",
               d->bad_var ? "salt" : "temp", "NaN/Inf", d->bad_i, d->bad_j, d->bad_k, d->nonfinite);
    else
      range_text(d, what, sizeof what);
    mm_err werr = MM_OK;
    if (*good_step >= 0) werr = mm_agree(g->cart, mm_model_fetch_good(m, good_t, good_s));
    if (werr == MM_OK && *good_step >= 0) {
      /* a watch that ends the rank in the crash file's write (or the
       * history's close after it) says what the case ended for */
      char during[MM_ERROR_MAX];
      snprintf(during, sizeof during,
               "the case was ending after a numerical blow-up at step %ld: %s (its last good "
               "state, step %ld, for the crash file)",
               mm_model_steps_done(m), what, *good_step);
      mm_file_watch_during(during);
      werr = mm_crash_write(g, cfg, origin, good_t, good_s, *good_step,
                            (double)*good_step * cfg->run_dt);
    }
    char saved[MM_ERROR_MAX] = "no good state could be saved";
    if (werr != MM_OK) {
      snprintf(saved, sizeof saved, "the crash file could not be written: %s", mm_error_message());
      mm_error_clear(); /* the blow-up is the error to report */
    } else if (*good_step >= 0) {
      char crash[2 * MM_STR_MAX + 16];
      mm_dir_file(crash, sizeof crash, cfg->output_dir, cfg->run_name, ".crash.nc");
      snprintf(saved, sizeof saved, "last good state (step %ld) written to %s", *good_step, crash);
    }
    return MM_ERROR(MM_ERR_RUN, "numerical blow-up at step %ld: %s; %s", mm_model_steps_done(m),
                    what, saved);
  }
  MM_CHECK(mm_agree(g->cart, mm_model_keep_good(m, good_t, good_s)));
  *good_step = mm_model_steps_done(m);
  return MM_OK;
}

/* The error that ends a run stopped by signal signo after step `step` (the
 * step after it abandoned; step itself, with output.restart_at_stop, the
 * last restart): exit status 128 + signo, and what this run has written. */
static MM_NODISCARD mm_err signal_stop(const mm_config *cfg, int signo, long step, long last_record,
                                       long last_restart) {
  char record[2 * MM_STR_MAX + 64] = "no history record";
  char restart[2 * MM_STR_MAX + 64] = "no restart file";
  char path[2 * MM_STR_MAX + 16];
  if (last_record >= 0) {
    mm_dir_file(path, sizeof path, cfg->output_dir, cfg->run_name, ".nc");
    snprintf(record, sizeof record, "history up to step %ld (%s)", last_record, path);
  }
  if (last_restart >= 0) {
    mm_dir_file(path, sizeof path, cfg->output_dir, cfg->run_name, ".restart.nc");
    snprintf(restart, sizeof restart, "restart of step %ld (%s)", last_restart, path);
  }
  return MM_ERROR((mm_err)(MM_ERR_SIGNAL + signo),
                  "stopped by %s after step %ld of %ld; written by this run: %s, %s",
                  mm_signal_name(signo), step, cfg->run_steps, record, restart);
}

static MM_NODISCARD mm_err run_model(mm_model *m, const mm_run_options *opt, mm_run_summary *sum) {
  const mm_config *cfg = mm_model_config(m);
  const mm_grid *g = mm_model_grid(m);
  const size_t n = g->ncol_h * (size_t)g->nz;
  mm_err err = MM_OK;
  const mm_io_origin origin = {opt->version, opt->command}; /* of the files written */

  mm_config fault_cfg; /* fault injection only (fault_open) */
  mm_read_watchdog dog;
  if (cfg->initial_file[0]) {
    const char *path = fault_open(cfg, "initial", g->rank, &fault_cfg)->initial_file;
    read_watchdog_start(&dog, cfg, path, g->rank, NULL, false);
    err = mm_initial_read(g, &cfg->env, path, mm_model_temp(m), mm_model_salt(m));
    read_watchdog_stop(&dog);
    MM_CHECK(err);
  }
  if (cfg->initial_restart[0]) {
    long step = 0;
    double time = 0.0;
    read_watchdog_start(&dog, cfg, cfg->initial_restart, g->rank, NULL, false);
    err = mm_restart_read(g, cfg, cfg->initial_restart, mm_model_temp(m), mm_model_salt(m), &step,
                          &time);
    read_watchdog_stop(&dog);
    MM_CHECK(err);
    MM_REQUIRE(step <= cfg->run_steps, MM_ERR_INPUT,
               "%s: restart at step %ld is beyond run.steps = %ld", cfg->initial_restart, step,
               cfg->run_steps);
    mm_model_set_step(m, step);
  }
  /* the state read from files goes to the device (solver.backend = cuda) */
  MM_CHECK(mm_agree(g->cart, mm_model_state_changed(m)));
  if (cfg->initial_file[0] || cfg->initial_restart[0]) MM_CHECK(check_initial_range(m));
  MM_CHECK(make_output_dir(cfg, g->cart));
  /* from here until the case ends no other run writes its files */
  mm_output_lock lock;
  MM_CHECK(mm_output_lock_create(cfg, g->cart, &lock));
  mm_file_watch_case(cfg, &lock); /* released by a watch that ends the rank */

  /* The copy of the last good state. Allocated by each rank alone: the ranks
   * agree before the next collective, or a rank that failed alone would
   * leave the others waiting in mm_history_create. */
  double *good_t = NULL, *good_s = NULL;
  long good_step = -1;
  if (mm_fault_is(&cfg->env, cfg->env.fault.alloc, "last_good", g->rank)) /* fault injection */
    err = MM_ERROR(MM_ERR_RUN,
                   "out of memory allocating the last good state (%zu bytes) "
                   "[injected fault]",
                   2 * n * sizeof *good_t);
  else if (!(good_t = calloc(n, sizeof *good_t)) || !(good_s = calloc(n, sizeof *good_s)))
    err = MM_ERROR(MM_ERR_RUN, "out of memory allocating the last good state (%zu bytes)",
                   2 * n * sizeof *good_t);
  err = mm_agree(g->cart, err);
  if (err != MM_OK) {
    free(good_t);
    free(good_s);
    mm_file_watch_case(NULL, NULL);
    mm_output_lock_destroy(&lock);
    return err;
  }
  long stride = cfg->timing_stride;
  if (stride <= 0) stride = cfg->run_steps > 10000 ? (cfg->run_steps + 9999) / 10000 : 1;
  mm_timers tm;
  mm_timers_init(&tm, stride);
  mm_progress prog;
  mm_progress_init(&prog, cfg, g->rank == 0 && !opt->quiet, mm_model_steps_done(m));
  mm_history *hist = NULL;
  mm_diag d = {0};

  /* a run continued from a restart appends to the history of the case */
  const mm_config *hcfg = fault_open(cfg, "history", g->rank, &fault_cfg);
  if (cfg->initial_restart[0]) {
    mm_run_watch watch_ctx = {.cfg = cfg, .rank = g->rank, .lock = &lock};
    const mm_io_read_watch watch = {run_watch_start, run_watch_stop, &watch_ctx};
    /* the restart's state by its diagnostics, for the history's record of
     * the restart step */
    mm_diag at = {0};
    err = mm_model_diagnostics(m, &at);
    if (err == MM_OK)
      err = mm_history_continue(g, hcfg, &origin, mm_model_steps_done(m), &at, &watch, &hist);
  } else {
    err = mm_history_create(g, hcfg, &origin, &hist);
  }
  /* the record of the case, once its history is taken: a continuation
   * refused (another history, another grid) leaves the one of the run that
   * wrote the history */
  if (err == MM_OK) err = write_resolved(cfg, g->cart);
  /* the timing file is written when the case ends well, the crash file when
   * it blows up: one left by an earlier run would be taken for this one's */
  mm_err removed = MM_OK; /* rank 0's; err is the ranks' (agreed) */
  static const char *const earlier[][2] = {{".timing.json", "timing file"},
                                           {".crash.nc", "crash file"}};
  for (int e = 0; e < 2 && err == MM_OK && removed == MM_OK && g->rank == 0; e++) {
    char path[2 * MM_STR_MAX + 32];
    mm_dir_file(path, sizeof path, cfg->output_dir, cfg->run_name, earlier[e][0]);
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && unlink(path) != 0)
      removed = MM_ERROR(MM_ERR_RUN, "%s: cannot remove the %s of an earlier run: %s", path,
                         earlier[e][1], strerror(errno));
  }
  if (err == MM_OK) err = mm_agree(g->cart, removed);
  if (err == MM_OK)
    err = checked_diagnostics(m, &origin, good_t, good_s, &good_step, NULL, &d, true);
  long last_record = -1, last_restart = -1; /* steps written by this run */
  /* the initial state as the first record of a history this run starts
   * (output.initial_record); with nothing to do, the state is the one record */
  if (err == MM_OK && (mm_model_steps_done(m) == cfg->run_steps ||
                       (cfg->initial_record && mm_history_started(hist)))) {
    err = mm_agree(g->cart, mm_model_fetch_state(m));
    if (err == MM_OK) err = mm_history_write(hist, g, mm_model_temp(m), mm_model_salt(m), &d);
    if (err == MM_OK) last_record = mm_model_steps_done(m);
  }
  const double t0 = MPI_Wtime();
  const long first_step = mm_model_steps_done(m);
  const long fault_nan_step = cfg->env.fault.nan_step;
  long restart_writes = 0; /* of this run, for fault injection */
  int signo = 0;
  bool stop = false;    /* a stop signal came: this step is the run's last */
  long stop_after = -1; /* the last step completed at a stop */
  while (err == MM_OK && !stop && mm_model_steps_done(m) < cfg->run_steps) {
    mm_timers_step_begin(&tm);
    err = mm_model_step(m, &tm);
    if (mm_model_steps_done(m) == cfg->env.fault.signal_step && mm_fault_here(&cfg->env, g->rank))
      raise(SIGTERM); /* fault injection: a signal at the end of this step */
    /* a step that failed on one rank (the solver) must stop every rank: the
     * others would wait for its halo; so must a signal received by any
     * rank (SIGTERM, SIGINT, SIGHUP). One reduction per step (mm_agree_with:
     * the worst code with its rank, and the largest signal number). */
    mm_timer_start(&tm, MM_PHASE_HALO); /* communication between ranks */
    err = mm_agree_with_signal(g->cart, err, &signo);
    mm_timer_stop(&tm, MM_PHASE_HALO);
    /* At a stop signal the step just computed is abandoned, nothing of it
     * written; with output.restart_at_stop it is completed as a restart
     * step (the blow-up check, its record where one falls, the restart
     * file) and is the last. */
    stop = err == MM_OK && signo;
    if (stop) { /* said by a watch that ends the rank in the writes that follow */
      char during[160];
      snprintf(during, sizeof during, "the case was stopping by %s after step %ld",
               mm_signal_name(signo),
               cfg->restart_at_stop ? mm_model_steps_done(m) : mm_model_steps_done(m) - 1);
      mm_file_watch_during(during);
    }
    if (stop && !cfg->restart_at_stop) {
      stop_after = mm_model_steps_done(m) - 1;
      mm_timers_step_end(&tm, mm_model_steps_done(m));
      break;
    }
    const long s = mm_model_steps_done(m);
    if (stop) stop_after = s;
    const bool record = is_record_step(cfg, s);
    const bool restart = stop || (cfg->restart_interval > 0 && s % cfg->restart_interval == 0);
    if (err == MM_OK && s == fault_nan_step) { /* fault injection */
      err = mm_model_fetch_state(m);
      if (err == MM_OK && mm_fault_here(&cfg->env, g->rank)) fault_nan(m);
      if (err == MM_OK) err = mm_model_state_changed(m);
      err = mm_agree(g->cart, err);
    }
    if (err == MM_OK && (record || restart || s % MM_CHECK_INTERVAL == 0))
      err = checked_diagnostics(m, &origin, good_t, good_s, &good_step, &tm, &d, record || restart);
    mm_timer_start(&tm, MM_PHASE_OUTPUT);
    if (err == MM_OK && (record || restart)) err = mm_agree(g->cart, mm_model_fetch_state(m));
    if (err == MM_OK && (record || restart)) {
      err = mm_output_lock_check(&lock, g->cart);
      if (err != MM_OK) mm_history_abandon(hist); /* another run's now, maybe */
    }
    if (err == MM_OK && record)
      err = mm_history_write(hist, g, mm_model_temp(m), mm_model_salt(m), &d);
    if (err == MM_OK && record) last_record = s;
    if (err == MM_OK && restart)
      err = mm_restart_write(g, fault_restart(cfg, ++restart_writes, g->rank, &fault_cfg), &origin,
                             mm_model_temp(m), mm_model_salt(m), s, mm_model_time(m));
    if (err == MM_OK && restart) last_restart = s;
    mm_timer_stop(&tm, MM_PHASE_OUTPUT);
    mm_timers_step_end(&tm, s);
    mm_progress_update(&prog, m, MPI_Wtime() - t0);
  }
  /* the last step completed: at a stop without a restart of its step, the
   * one before the abandoned step */
  mm_progress_finish(&prog, stop_after >= 0 ? stop_after : mm_model_steps_done(m),
                     MPI_Wtime() - t0);
  mm_err cerr = mm_history_close(hist);
  if (err == MM_OK) err = cerr;
  /* a write of the stop's step that failed (a full disk): the failure's
   * status, and that the case was stopping (it said the failure alone) */
  if (err != MM_OK && stop)
    err = mm_error_prefix(err, "while stopping by %s after step %ld: ", mm_signal_name(signo),
                          stop_after);
  const double wall = MPI_Wtime() - t0;
  if (err == MM_OK && signo) err = signal_stop(cfg, signo, stop_after, last_record, last_restart);

  if (err == MM_OK) {
    mm_dir_file(sum->history, sizeof sum->history, cfg->output_dir, cfg->run_name, ".nc");
    sum->steps = mm_model_steps_done(m) - first_step;
    sum->restart_written = last_restart >= 0;
    sum->wall_s = wall;
    sum->last = d;
    err = mm_report_write(m, &tm, opt, sum);
  }
  mm_timers_free(&tm);
  free(good_t);
  free(good_s);
  mm_file_watch_case(NULL, NULL);
  mm_output_lock_destroy(&lock);
  return err;
}

mm_err mm_run_check_model(const mm_config *cfg, MPI_Comm comm) {
  mm_model *m = NULL;
  const mm_err err = mm_agree(comm, mm_model_create(cfg, comm, &m));
  mm_model_destroy(m);
  return mm_config_name_origin(cfg, err);
}

mm_err mm_run_case(const mm_config *cfg, const mm_run_options *opt, MPI_Comm comm,
                   mm_run_summary *sum) {
  memset(sum, 0, sizeof *sum);
  int rank;
  MM_MPI(MPI_Comm_rank(comm, &rank));
  mm_model *m = NULL;
  if (opt->dry_run) {
    mm_grid g;
    mm_err err = mm_config_name_origin(cfg, mm_agree(comm, mm_grid_create(cfg, comm, &g)));
    if (err != MM_OK) mm_grid_destroy(&g);
    if (err == MM_OK && rank == 0) {
      mm_config_write(cfg, stdout);
      const long nxl = (g.nx + g.px - 1) / g.px, nyl = (g.ny + g.py - 1) / g.py;
      printf("\n# decomposition: %d rank%s = %d x %d (x by y); largest block %ld x %ld x %d\n",
             g.nranks, g.nranks == 1 ? "" : "s", g.px, g.py, nxl, nyl, g.nz);
      printf("# memory per rank: about %.1f MB (largest block)\n",
             mm_grid_memory_bytes(cfg, nxl, nyl, g.nz, mm_grid_threads()) / 1e6);
    }
    if (err == MM_OK) {
      mm_grid_destroy(&g);
      err = mm_run_check_model(cfg, comm);
      if (err == MM_OK && rank == 0) printf("# configuration valid\n");
    }
    return err;
  }
  mm_err err = mm_config_name_origin(cfg, mm_agree(comm, mm_model_create(cfg, comm, &m)));
  if (err == MM_OK) err = mm_config_name_origin(cfg, mm_agree(comm, run_model(m, opt, sum)));
  /* every rank is past the case's file operations: a failure among them
   * was agreed on (or had no effect), and its watch stops */
  mm_file_watch_settle();
  mm_model_destroy(m);
  return err;
}

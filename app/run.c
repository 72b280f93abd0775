#include "mm_run.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mm_io.h"
#include "mm_model.h"
#include "mm_report.h"

mm_err mm_agree(MPI_Comm comm, mm_err err) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  int mine = (int)err, worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, comm);
  if (worst == MM_OK) return MM_OK;
  /* the message of the lowest failing rank goes to every rank */
  int who = err != MM_OK ? rank : nranks, first = nranks;
  MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, comm);
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", mm_error_message());
  MPI_Bcast(msg, sizeof msg, MPI_CHAR, first, comm);
  if (rank != first || first != 0) {
    mm_error_clear();
    if (first != 0)
      mm_error_set((mm_err)worst, __FILE__, __LINE__, "rank %d: %s", first, msg);
    else
      mm_error_set((mm_err)worst, __FILE__, __LINE__, "%s", msg);
  }
  return (mm_err)worst;
}

/* Create output.dir (not its parents) on rank 0; agree on the outcome. */
static mm_err make_output_dir(const mm_config *cfg, MPI_Comm comm) {
  int rank;
  MPI_Comm_rank(comm, &rank);
  mm_err err = MM_OK;
  if (rank == 0) {
    struct stat st;
    if (stat(cfg->output_dir, &st) == 0) {
      if (!S_ISDIR(st.st_mode))
        err = MM_ERROR(MM_ERR_RUN, "output.dir = %s: exists and is not a directory",
                       cfg->output_dir);
    } else if (mkdir(cfg->output_dir, 0777) != 0) {
      err = MM_ERROR(MM_ERR_RUN, "output.dir = %s: cannot create: %s", cfg->output_dir,
                     strerror(errno));
    }
  }
  return mm_agree(comm, err);
}

static bool is_record_step(const mm_config *cfg, long step) {
  if (step == cfg->run_steps) return true;
  return cfg->output_interval > 0 && step % cfg->output_interval == 0;
}

/* Diagnostics with the blow-up check: on a non-finite value, save the last
 * good state and stop. */
static mm_err checked_diagnostics(mm_model *m, double *good_t, double *good_s, long *good_step,
                                  mm_timers *tm, mm_diag *d) {
  mm_timer_start(tm, MM_PHASE_DIAGNOSTICS);
  mm_model_diagnostics(m, d);
  mm_timer_stop(tm, MM_PHASE_DIAGNOSTICS);
  const size_t n = m->grid.ncol_h * (size_t)m->grid.nz;
  if (d->nonfinite) {
    mm_err werr = MM_OK;
    if (*good_step >= 0)
      werr = mm_crash_write(&m->grid, &m->cfg, good_t, good_s, *good_step,
                            (double)*good_step * m->cfg.run_dt);
    return MM_ERROR(MM_ERR_RUN,
                    "numerical blow-up at step %ld: %s = %s at i=%d j=%d k=%d (%ld non-finite "
                    "values); %s",
                    m->step, d->bad_var ? "salt" : "temp", "NaN/Inf", d->bad_i, d->bad_j,
                    d->bad_k, d->nonfinite,
                    werr == MM_OK && *good_step >= 0 ? "last good state written to the crash file"
                                                     : "no good state could be saved");
  }
  memcpy(good_t, m->temp, n * sizeof *good_t);
  memcpy(good_s, m->salt, n * sizeof *good_s);
  *good_step = m->step;
  return MM_OK;
}

static mm_err run_model(mm_model *m, const mm_run_options *opt, mm_run_summary *sum) {
  const mm_config *cfg = &m->cfg;
  mm_grid *g = &m->grid;
  const size_t n = g->ncol_h * (size_t)g->nz;
  mm_err err = MM_OK;

  if (cfg->initial_file[0]) MM_CHECK(mm_initial_read(g, cfg->initial_file, m->temp, m->salt));
  if (cfg->initial_restart[0]) {
    long step = 0;
    double time = 0.0;
    MM_CHECK(mm_restart_read(g, cfg, cfg->initial_restart, m->temp, m->salt, &step, &time));
    MM_REQUIRE(step <= cfg->run_steps, MM_ERR_INPUT,
               "%s: restart at step %ld is beyond run.steps = %ld", cfg->initial_restart, step,
               cfg->run_steps);
    m->step = step;
    m->time = (double)step * cfg->run_dt;
  }
  MM_CHECK(make_output_dir(cfg, g->cart));

  double *good_t = NULL, *good_s = NULL;
  long good_step = -1;
  MM_ALLOC(good_t, n);
  good_s = calloc(n, sizeof *good_s);
  if (!good_s) {
    free(good_t);
    return MM_ERROR(MM_ERR_RUN, "out of memory allocating the last good state");
  }
  long stride = cfg->timing_stride;
  if (stride <= 0) stride = cfg->run_steps > 10000 ? (cfg->run_steps + 9999) / 10000 : 1;
  mm_timers tm;
  mm_timers_init(&tm, stride);
  mm_progress prog;
  mm_progress_init(&prog, cfg, g->rank == 0 && !opt->quiet, m->step);
  mm_history *hist = NULL;
  mm_diag d = {0};

  err = mm_history_create(g, cfg, opt->version, &hist);
  if (err == MM_OK) err = checked_diagnostics(m, good_t, good_s, &good_step, NULL, &d);
  if (err == MM_OK && m->step == cfg->run_steps) {
    /* nothing to do: the state itself is the one record */
    err = mm_history_write(hist, g, m->temp, m->salt, &d);
  }
  const double t0 = MPI_Wtime();
  const long first_step = m->step;
  while (err == MM_OK && m->step < cfg->run_steps) {
    mm_timers_step_begin(&tm);
    err = mm_model_step(m, &tm);
    const long s = m->step;
    const bool record = is_record_step(cfg, s);
    const bool restart = cfg->restart_interval > 0 && s % cfg->restart_interval == 0;
    if (err == MM_OK && (record || restart))
      err = checked_diagnostics(m, good_t, good_s, &good_step, &tm, &d);
    mm_timer_start(&tm, MM_PHASE_OUTPUT);
    if (err == MM_OK && record) err = mm_history_write(hist, g, m->temp, m->salt, &d);
    if (err == MM_OK && restart) err = mm_restart_write(g, cfg, m->temp, m->salt, s, m->time);
    mm_timer_stop(&tm, MM_PHASE_OUTPUT);
    mm_timers_step_end(&tm, s);
    mm_progress_update(&prog, m, MPI_Wtime() - t0);
  }
  mm_progress_finish(&prog);
  mm_err cerr = mm_history_close(hist);
  if (err == MM_OK) err = cerr;
  const double wall = MPI_Wtime() - t0;

  if (err == MM_OK) {
    snprintf(sum->history, sizeof sum->history, "%s/%s.nc", cfg->output_dir, cfg->run_name);
    sum->steps = m->step - first_step;
    sum->wall_s = wall;
    sum->last = d;
    err = mm_report_write(m, &tm, opt->quiet, sum);
  }
  mm_timers_free(&tm);
  free(good_t);
  free(good_s);
  return err;
}

mm_err mm_run_case(const mm_config *cfg, const mm_run_options *opt, MPI_Comm comm,
                   mm_run_summary *sum) {
  memset(sum, 0, sizeof *sum);
  int rank;
  MPI_Comm_rank(comm, &rank);
  mm_model *m = NULL;
  if (opt->dry_run) {
    mm_grid g;
    mm_err err = mm_agree(comm, mm_grid_create(cfg, comm, &g));
    if (err != MM_OK) mm_grid_destroy(&g);
    if (err == MM_OK && rank == 0) {
      mm_config_write(cfg, stdout);
      const long nxl = (g.nx + g.px - 1) / g.px, nyl = (g.ny + g.py - 1) / g.py;
      printf("\n# decomposition: %d ranks = %d x %d (x by y); largest block %ld x %ld x %d\n",
             g.nranks, g.px, g.py, nxl, nyl, g.nz);
      printf("# memory per rank: about %.1f MB (largest block)\n",
             mm_model_bytes(nxl, nyl, g.nz) / 1e6);
    }
    if (err == MM_OK) {
      /* the model's own checks (stability, solver) without running */
      mm_grid_destroy(&g);
      err = mm_agree(comm, mm_model_create(cfg, comm, &m));
      mm_model_destroy(m);
      if (err == MM_OK && rank == 0) printf("# configuration valid\n");
    }
    return err;
  }
  mm_err err = mm_agree(comm, mm_model_create(cfg, comm, &m));
  if (err == MM_OK) err = mm_agree(comm, run_model(m, opt, sum));
  mm_model_destroy(m);
  return err;
}

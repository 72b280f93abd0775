/* phase-bench: one phase of the model's time step, timed alone and
 * repeatedly on a configuration, for work on a kernel (docs/performance.md).
 *
 *   mpirun -np R build/phase-bench [--phase horizontal|solve|step]
 *          [--repeats N] [--set SECTION.KEY=VALUE]... CONFIG.ini
 *
 * The model is created from CONFIG.ini and run 2 steps, so that the state is
 * a real one; then the phase runs N times over each rank's whole block
 * (horizontal: mm_horizontal_step, no halo exchange; solve:
 * mm_vertical_step, in place on T*, S*; step: mm_model_step), every rank
 * starting together. Prints the smallest and the median time of the slowest
 * rank, and that time per wet cell. The state it leaves is not a model
 * state: phase-bench writes no output.
 *
 * --help prints the usage on standard output.
 *
 * Exit status: 0, 2 for a usage or configuration error, 1 for a failure
 * while running (also: the result could not be written to standard
 * output). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_model_private.h"
#include "mm_physics.h"
#include "mm_settings.h"

#define MAX_SETS 32

static int compare_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define USAGE                                                                                      \
  "usage: phase-bench [--phase horizontal|solve|step] [--repeats N] "                              \
  "[--set SECTION.KEY=VALUE]... CONFIG.ini\n"

/* A usage error: msg (if any) and the usage line on stderr, exit status 2. */
static int usage(int rank, const char *msg) {
  if (rank == 0) {
    if (msg) fprintf(stderr, "phase-bench: %s\n", msg);
    fputs(USAGE, stderr);
  }
  return 2;
}

/* --help: the usage on stdout, exit status 0 (1 when it cannot be written). */
static int help(int rank) {
  if (rank != 0) return 0;
  fputs(USAGE "Times one phase of the time step on CONFIG.ini, N times (default 20) over each\n"
              "rank's block; --phase defaults to horizontal. docs/performance.md.\n",
        stdout);
  if (fflush(stdout) || ferror(stdout)) {
    fprintf(stderr, "phase-bench: cannot write the help to standard output\n");
    return 1;
  }
  return 0;
}

static int run(int argc, char **argv, int rank) {
  const char *phase = "horizontal", *config = NULL;
  long repeats = 20;
  mm_config_override sets[MAX_SETS];
  int nsets = 0;
  for (int a = 1; a < argc; a++) { /* --help anywhere but as an option's value */
    if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) return help(rank);
    if (!strcmp(argv[a], "--phase") || !strcmp(argv[a], "--repeats") || !strcmp(argv[a], "--set"))
      a++;
  }
  bool phase_given = false, repeats_given = false;
  for (int a = 1; a < argc; a++) {
    /* an option given twice is refused, as minimodel's and tdma-bench's
     * are (the last one was taken without a word) */
    if ((!strcmp(argv[a], "--phase") && phase_given) ||
        (!strcmp(argv[a], "--repeats") && repeats_given)) {
      char msg[160];
      snprintf(msg, sizeof msg, "%.100s given twice", argv[a]);
      return usage(rank, msg);
    }
    if (!strcmp(argv[a], "--phase") && a + 1 < argc) {
      phase = argv[++a];
      phase_given = true;
    } else if (!strcmp(argv[a], "--repeats") && a + 1 < argc) {
      repeats_given = true;
      char *end;
      repeats = strtol(argv[++a], &end, 10);
      if (*end || repeats < 1 || repeats > 100000) return usage(rank, "--repeats: 1 to 100000");
    } else if (!strcmp(argv[a], "--set") && a + 1 < argc) {
      if (nsets == MAX_SETS) return usage(rank, "too many --set");
      sets[nsets++].text = argv[++a];
    } else if (argv[a][0] == '-') {
      char msg[160];
      const int known =
          !strcmp(argv[a], "--phase") || !strcmp(argv[a], "--repeats") || !strcmp(argv[a], "--set");
      snprintf(msg, sizeof msg, known ? "%.100s needs a value" : "unknown option %.100s", argv[a]);
      return usage(rank, msg);
    } else if (config) {
      return usage(rank, "one configuration file only");
    } else {
      config = argv[a];
    }
  }
  const int which = !strcmp(phase, "horizontal") ? 0
                    : !strcmp(phase, "solve")    ? 1
                    : !strcmp(phase, "step")     ? 2
                                                 : -1;
  if (which < 0) return usage(rank, "--phase: horizontal, solve or step");
  if (!config) return usage(rank, "no configuration file");

  /* the environment's settings, as minimodel reads them (mm_settings.h):
   * OMP_NUM_THREADS beyond what a rank can run (100000 crashed the OpenMP
   * runtime), MINIMODEL_MEMORY_LIMIT (it was not read) */
  mm_settings env;
  mm_config cfg;
  mm_model *m = NULL;
  if (mm_settings_read(&env) != MM_OK || mm_config_load(&cfg, config, sets, nsets) != MM_OK) {
    if (rank == 0) fprintf(stderr, "phase-bench: %s\n", mm_error_message());
    return 2;
  }
  cfg.env = env;
  /* the state timed is the configuration's analytic one: an input file
   * named would not be read (it ran from the analytic state, exit 0, also
   * with a file that does not exist) */
  const char *const inputs[2] = {"initial.file", "initial.restart"};
  for (int k = 0; k < 2; k++) {
    const char *path = k ? cfg.initial_restart : cfg.initial_file;
    const char *origin = mm_config_origin(&cfg, inputs[k]);
    if (!path[0]) continue;
    if (rank == 0)
      fprintf(stderr,
              "phase-bench: %s: %s = %s: phase-bench times the configuration's own initial "
              "state and reads no input file; leave initial.file and initial.restart empty\n",
              origin[0] ? origin : config, inputs[k], path);
    return 2;
  }
  (void)mm_settings_start_threads(); /* before the model's first region, as minimodel */
  /* a failure's exit status is its error code: 1 running, 2 input */
  int status = MM_ERR_RUN;
  const char *why = "out of memory";
  mm_err err = MM_OK;
  double *t = malloc((size_t)repeats * sizeof *t);
  if (!t) goto done;
  why = NULL; /* from here: mm_error_message() */
  if ((err = mm_model_create(&cfg, MPI_COMM_WORLD, &m)) != MM_OK) goto done;
  if (m->dev) {
    why = "CPU solvers only (solver.backend = cpu)";
    err = MM_ERR_INPUT;
    goto done;
  }
  for (int s = 0; s < 2 && err == MM_OK; s++)
    err = mm_model_step(m, NULL);
  if (err != MM_OK) goto done;
  const mm_grid *g = &m->grid;
  for (long r = 0; r < repeats; r++) {
    if ((err = MM_MPI_ERR(MPI_Barrier(g->cart))) != MM_OK) goto done;
    const double t0 = MPI_Wtime();
    if (which == 0)
      mm_horizontal_step(m, 0, g->nxl, 0, g->nyl);
    else if (which == 1)
      err = mm_vertical_step(m);
    else
      err = mm_model_step(m, NULL);
    double dt = MPI_Wtime() - t0;
    if (err != MM_OK) goto done;
    err = MM_MPI_ERR(MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, g->cart));
    if (err != MM_OK) goto done;
    t[r] = dt;
  }
  qsort(t, (size_t)repeats, sizeof *t, compare_double);
  long wet = 0;
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++)
      wet += g->kmt[mm_col(g, i, j)];
  err = MM_MPI_ERR(MPI_Allreduce(MPI_IN_PLACE, &wet, 1, MPI_LONG, MPI_SUM, g->cart));
  if (err != MM_OK) goto done;
  status = 0;
  if (rank == 0) { /* the result is the point: a write that fails is a failure */
    /* the median: the mean of the middle two of an even number */
    const double median = 0.5 * (t[(repeats - 1) / 2] + t[repeats / 2]);
    printf("%s: %s, %d rank(s) x %d thread(s), %ld repeats: min %.3f ms, median %.3f ms, "
           "%.3f ns per wet cell (min)\n",
           config, phase, g->nranks, m->nthreads, repeats, 1e3 * t[0], 1e3 * median,
           wet ? 1e9 * t[0] / (double)wet : 0.0);
    if (fflush(stdout) != 0 || ferror(stdout)) {
      why = "cannot write the result to standard output";
      status = MM_ERR_RUN;
    }
  }
done:
  if (err != MM_OK) status = (int)err;
  if (status != 0 && rank == 0)
    fprintf(stderr, "phase-bench: %s\n", why ? why : mm_error_message());
  mm_model_destroy(m);
  free(t);
  return status;
}

int main(int argc, char **argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    fprintf(stderr, "phase-bench: MPI could not be started (MPI_Init)\n");
    return MM_ERR_RUN;
  }
  /* MPI errors come back as codes (as in minimodel's main), not as an abort */
  int rank = 0;
  if (MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
      MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) {
    fprintf(stderr, "phase-bench: MPI_COMM_WORLD is not usable\n");
    MPI_Abort(MPI_COMM_WORLD, MM_ERR_RUN); /* unchecked: does not return */
  }
  const int status = run(argc, argv, rank);
  int worst = status;
  if (MPI_Allreduce(&status, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
    if (rank == 0) fprintf(stderr, "phase-bench: MPI error in MPI_Allreduce of the exit status\n");
    worst = status != 0 ? status : MM_ERR_RUN;
  }
  (void)MPI_Finalize(); /* unchecked: ending anyway */
  return worst;
}

/* What the phase timers cost a time step (docs/performance.md, Timer overhead).
 *
 *   mpirun -np R timer_overhead CONFIG.ini [--set S.K=V]... [--steps N] [--pairs N]
 *
 * Three measurements, printed on rank 0:
 *  1. the cost of one mm_timer_start/mm_timer_stop pair and of one
 *     mm_timers_step_begin/mm_timers_step_end pair (with its per_step record),
 *     each the best of 5 tight loops of --pairs iterations;
 *  2. the pairs a step makes, counted by the timers themselves over --steps
 *     steps timed the way app/run.c times them, and that step's median time;
 *  3. the same steps without timers (mm_model_step(m, NULL)), interleaved with
 *     the timed ones, as a direct check; on a noisy machine it is noise-bound.
 * overhead = (pairs per step x pair cost + record cost) / median step.
 * The last line is machine-readable: "overhead_percent=X pair_ns=Y ...". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_config.h"
#include "mm_model_private.h"
#include "mm_timer.h"

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Best-of-5 seconds per start/stop pair. The phase alternates so that the
 * compiler cannot fold the loop. */
static double pair_cost(long pairs) {
  double best = 1e30;
  for (int rep = 0; rep < 5; rep++) {
    mm_timers t;
    mm_timers_init(&t, 1);
    const double t0 = MPI_Wtime();
    for (long i = 0; i < pairs; i++) {
      const mm_phase p = (mm_phase)(i % MM_PHASE_STEP);
      mm_timer_start(&t, p);
      mm_timer_stop(&t, p);
    }
    const double dt = (MPI_Wtime() - t0) / (double)pairs;
    if (dt < best) best = dt;
    mm_timers_free(&t);
  }
  return best;
}

/* Best-of-5 seconds per step_begin/step_end pair, recording every step. */
static double record_cost(long pairs) {
  double best = 1e30;
  for (int rep = 0; rep < 5; rep++) {
    mm_timers t;
    mm_timers_init(&t, 1);
    const double t0 = MPI_Wtime();
    for (long i = 0; i < pairs; i++) {
      mm_timers_step_begin(&t);
      mm_timers_step_end(&t, i + 1);
    }
    const double dt = (MPI_Wtime() - t0) / (double)pairs;
    if (dt < best) best = dt;
    mm_timers_free(&t);
  }
  return best;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *path = NULL;
  long steps = 20, pairs = 1000000;
  mm_config_override *ovr = calloc((size_t)argc, sizeof *ovr);
  int n_ovr = 0, bad = !ovr;
  for (int a = 1; a < argc && !bad; a++) {
    if (!strcmp(argv[a], "--set") && a + 1 < argc)
      ovr[n_ovr++].text = argv[++a];
    else if (!strcmp(argv[a], "--steps") && a + 1 < argc)
      steps = atol(argv[++a]);
    else if (!strcmp(argv[a], "--pairs") && a + 1 < argc)
      pairs = atol(argv[++a]);
    else if (argv[a][0] != '-' && !path)
      path = argv[a];
    else
      bad = 1;
  }
  if (bad || !path || steps < 2 || pairs < 1) {
    if (rank == 0)
      fprintf(stderr, "usage: timer_overhead CONFIG.ini [--set S.K=V]... [--steps N>=2] "
                      "[--pairs N]\n");
    MPI_Finalize();
    return 2;
  }

  mm_config cfg;
  mm_model *m = NULL;
  mm_err err = mm_config_load(&cfg, path, ovr, n_ovr);
  if (err == MM_OK) err = mm_model_create(&cfg, MPI_COMM_WORLD, &m);
  if (err != MM_OK) {
    fprintf(stderr, "timer_overhead: %s\n", mm_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  /* 1. the cost of a pair, on every rank at once as in a run */
  const double pair_s = pair_cost(pairs), rec_s = record_cost(pairs);

  /* 2. and 3. timed and untimed steps, interleaved so that drifts in the
   * machine's speed hit both alike; one untimed step first to warm up */
  err = mm_model_step(m, NULL);
  mm_timers tm;
  mm_timers_init(&tm, 1);
  double *with = malloc((size_t)steps * sizeof *with);
  double *without = malloc((size_t)steps * sizeof *without);
  if (!with || !without) MPI_Abort(MPI_COMM_WORLD, 1);
  for (long s = 0; s < steps && err == MM_OK; s++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    mm_timers_step_begin(&tm);
    err = mm_model_step(m, &tm);
    /* run.c's output phase, timed on every step */
    mm_timer_start(&tm, MM_PHASE_OUTPUT);
    mm_timer_stop(&tm, MM_PHASE_OUTPUT);
    mm_timers_step_end(&tm, m->step);
    with[s] = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (err == MM_OK) err = mm_model_step(m, NULL);
    without[s] = MPI_Wtime() - t0;
  }
  if (err != MM_OK) {
    fprintf(stderr, "timer_overhead: %s\n", mm_error_message());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  long calls = 0;
  for (int p = 0; p < MM_NPHASES; p++)
    if (p != MM_PHASE_STEP) calls += tm.calls[p];
  const double pairs_per_step = (double)calls / (double)steps;
  /* each rank's step time; the slowest rank's sets the pace */
  MPI_Allreduce(MPI_IN_PLACE, with, (int)steps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, without, (int)steps, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double step_with = median(with, (int)steps), step_without = median(without, (int)steps);
  const double per_step = pairs_per_step * pair_s + rec_s;
  const double pct = 100.0 * per_step / step_with;
  if (rank == 0) {
    int nranks;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    printf("%s on %d ranks, %ld timed + %ld untimed steps, %ld pairs per loop\n", cfg.run_name,
           nranks, steps, steps, pairs);
    printf("  timer start/stop pair:      %8.1f ns\n", 1e9 * pair_s);
    printf("  step begin/end + record:    %8.1f ns\n", 1e9 * rec_s);
    printf("  pairs per step:             %8.2f (+1 step record)\n", pairs_per_step);
    printf("  timer cost per step:        %8.3f us\n", 1e6 * per_step);
    printf("  median step, timed:         %8.3f ms\n", 1e3 * step_with);
    printf("  median step, untimed:       %8.3f ms (direct difference %+.2f%%, noise-bound)\n",
           1e3 * step_without, 100.0 * (step_with - step_without) / step_without);
    printf("  overhead:                   %8.4f %% of a step\n", pct);
    printf("overhead_percent=%.6g pair_ns=%.6g record_ns=%.6g pairs_per_step=%.6g "
           "step_ms=%.6g untimed_step_ms=%.6g\n",
           pct, 1e9 * pair_s, 1e9 * rec_s, pairs_per_step, 1e3 * step_with, 1e3 * step_without);
  }
  free(with);
  free(without);
  mm_timers_free(&tm);
  mm_model_destroy(m);
  free(ovr);
  MPI_Finalize();
  return 0;
}

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm_report.h"

mm_err mm_report_write(const mm_model *m, const mm_timers *t, bool quiet, mm_run_summary *sum) {
  (void)quiet;
  const mm_grid *g = &m->grid;
  const mm_config *cfg = &m->cfg;
  MPI_Comm comm = g->cart;
  double tmin[MM_NPHASES], tmax[MM_NPHASES], tsum[MM_NPHASES];
  MPI_Allreduce(t->total, tmin, MM_NPHASES, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(t->total, tmax, MM_NPHASES, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(t->total, tsum, MM_NPHASES, MPI_DOUBLE, MPI_SUM, comm);
  /* per-step records: the slowest rank of each step */
  const size_t ns = t->n_steps;
  double *step_s = NULL, *solve_s = NULL;
  if (ns) {
    step_s = malloc(ns * sizeof *step_s);
    solve_s = malloc(ns * sizeof *solve_s);
    MM_REQUIRE(step_s && solve_s, MM_ERR_RUN, "out of memory in the timing report");
    MPI_Reduce(t->step_s, step_s, (int)ns, MPI_DOUBLE, MPI_MAX, 0, comm);
    MPI_Reduce(t->solve_s, solve_s, (int)ns, MPI_DOUBLE, MPI_MAX, 0, comm);
  }
  /* wet columns, for column solves per second */
  long wet = 0, gwet = 0;
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++) wet += g->kmt[mm_col(g, i, j)] > 0;
  MPI_Allreduce(&wet, &gwet, 1, MPI_LONG, MPI_SUM, comm);

  const long steps = sum->steps;
  double mean[MM_NPHASES];
  for (int p = 0; p < MM_NPHASES; p++) mean[p] = tsum[p] / g->nranks;
  const double step_total = mean[MM_PHASE_STEP];
  const double points = (double)g->nx * g->ny * g->nz * (double)steps;
  sum->points_per_s = step_total > 0 ? points / step_total : 0.0;
  sum->solve_share = step_total > 0 ? mean[MM_PHASE_SOLVE] / step_total : 0.0;
  const double col_rate = mean[MM_PHASE_SOLVE] > 0 ? (double)gwet * steps / mean[MM_PHASE_SOLVE] : 0;
  const char *tdma = mm_tdma_backend_of(m->solver)->name;
  const char *backend = cfg->backend == MM_BACKEND_CUDA ? "cuda" : "cpu";

  mm_err err = MM_OK;
  if (g->rank == 0) {
    printf("\n%s: %ld steps of %d x %d x %d on %d ranks (%d x %d), %s/%s\n", cfg->run_name,
           steps, g->nx, g->ny, g->nz, g->nranks, g->px, g->py, backend, tdma);
    printf("  %-12s %10s %12s %7s %10s %10s %10s %7s\n", "phase", "total s", "per step s",
           "share", "min rank", "mean rank", "max rank", "calls");
    for (int p = 0; p < MM_NPHASES; p++)
      printf("  %-12s %10.4f %12.3e %6.1f%% %10.4f %10.4f %10.4f %7ld\n",
             mm_phase_name((mm_phase)p), mean[p], steps ? mean[p] / steps : 0.0,
             step_total > 0 ? 100.0 * mean[p] / step_total : 0.0, tmin[p], mean[p], tmax[p],
             t->calls[p]);
    printf("  %.4g grid-point updates/s, %.4g column solves/s, solve share %.1f%%\n",
           sum->points_per_s, col_rate, 100.0 * sum->solve_share);

    char path[2 * MM_STR_MAX + 32];
    snprintf(path, sizeof path, "%s/%s.timing.json", cfg->output_dir, cfg->run_name);
    FILE *f = fopen(path, "w");
    if (!f) {
      err = MM_ERROR(MM_ERR_RUN, "%s: cannot write the timing file", path);
    } else {
      fprintf(f, "{\n  \"ranks\": %d,\n  \"decomposition\": [%d, %d],\n", g->nranks, g->px, g->py);
      fprintf(f, "  \"grid\": [%d, %d, %d],\n  \"steps\": %ld,\n", g->nx, g->ny, g->nz, steps);
      fprintf(f, "  \"backend\": \"%s\",\n  \"tdma\": \"%s\",\n  \"tdma_requested\": \"%s\",\n",
              backend, tdma, cfg->tdma);
      fprintf(f, "  \"wall_s\": %.9g,\n  \"points_per_s\": %.9g,\n", sum->wall_s,
              sum->points_per_s);
      fprintf(f, "  \"column_solves_per_s\": %.9g,\n  \"solve_share\": %.9g,\n", col_rate,
              sum->solve_share);
      fprintf(f, "  \"phases\": {\n");
      for (int p = 0; p < MM_NPHASES; p++)
        fprintf(f,
                "    \"%s\": {\"total_s\": %.9g, \"mean_s\": %.9g, \"min_rank_s\": %.9g, "
                "\"max_rank_s\": %.9g, \"share\": %.9g, \"calls\": %ld}%s\n",
                mm_phase_name((mm_phase)p), mean[p], steps ? mean[p] / steps : 0.0, tmin[p],
                tmax[p], step_total > 0 ? mean[p] / step_total : 0.0, t->calls[p],
                p + 1 < MM_NPHASES ? "," : "");
      fprintf(f, "  },\n  \"per_step_stride\": %ld,\n  \"per_step\": [", t->stride);
      for (size_t i = 0; i < ns; i++)
        fprintf(f, "%s\n    {\"step\": %ld, \"step_s\": %.9g, \"solve_s\": %.9g}", i ? "," : "",
                t->step_id[i], step_s[i], solve_s[i]);
      fprintf(f, "\n  ]\n}\n");
      if (fclose(f) != 0) err = MM_ERROR(MM_ERR_RUN, "%s: write failed (disk full?)", path);
    }
  }
  free(step_s);
  free(solve_s);
  return err;
}

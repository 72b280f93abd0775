/* The timing report of a case: a table on rank 0 and a JSON file.
 *
 * <output.dir>/<run.name>.timing.json holds (keys scripts read are stable;
 * new keys may be added, none renamed):
 *   name, version (minimodel's, as --version prints it)
 *   ranks, decomposition [px, py], grid [nx, ny, nz], steps, backend, tdma
 *   phases: {NAME: {total_s, mean_s, min_rank_s, max_rank_s, share, calls}}
 *     for halo, horizontal, mixing, solve, diagnostics, output (the parts of a
 *     step) and step (the whole). total_s is the mean over ranks of each
 *     rank's total, mean_s that per step, min/max_rank_s the fastest and the
 *     slowest rank's total, share = total_s / step's total_s.
 *   per_step: [{step, step_s, solve_s}], every per_step_stride-th step, each
 *     figure the slowest rank's
 *   points_per_s: grid points (nx ny nz, land included) times steps over the
 *     step time; column_solves_per_s: wet columns times steps over the solve
 *     time; solve_share; phase_share_sum (the parts' shares added: about 1,
 *     less the untimed glue); step_median_s (median of per_step); wall_s.
 *   wet_cells; and per phase with a floor (mm_bandwidth.h) bytes (all ranks,
 *     the whole run) and gbps (bytes over the phase's total_s); with
 *     --bandwidth, bandwidth_gbps and bandwidth_source at the top and per
 *     phase x_floor (total_s over the time the bytes take at that bandwidth). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mm_report.h"

#include "mm_bandwidth.h"
#include "mm_outputs.h"

/* The phases a step is made of: every phase but MM_PHASE_STEP itself. */
static bool inside_step(int p) {
  return p != MM_PHASE_STEP;
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\')
      fprintf(f, "\\%c", *c);
    else if (*c < 0x20)
      fprintf(f, "\\u%04x", *c);
    else
      fputc(*c, f);
  }
  fputc('"', f);
}

/* A number for JSON, which has no NaN or infinity: those become null. */
static void json_number(FILE *f, double x) {
  if (isfinite(x))
    fprintf(f, "%.9g", x);
  else
    fputs("null", f);
}

/* A count held in a double (wet cells, bytes): every digit of a whole
 * number up to 2^53, where each is exact, rather than json_number's nine
 * significant ones (1524851328 is not 1.52485133e+09). */
static void json_count(FILE *f, double x) {
  if (isfinite(x) && x == floor(x) && fabs(x) <= 9007199254740992.0)
    fprintf(f, "%.0f", x);
  else
    json_number(f, x);
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of n values (n > 0); sorts a copy. 0 when n == 0 or out of memory. */
static double median(const double *v, size_t n) {
  if (n == 0) return 0.0;
  double *w = malloc(n * sizeof *w);
  if (!w) return 0.0;
  memcpy(w, v, n * sizeof *w);
  qsort(w, n, sizeof *w, cmp_double);
  const double med = n % 2 ? w[n / 2] : 0.5 * (w[n / 2 - 1] + w[n / 2]);
  free(w);
  return med;
}

static MM_NODISCARD mm_err write_json(const char *path, const mm_model *m, const mm_timers *t,
                                      const mm_run_options *opt, const double *bytes, double wet,
                                      const mm_run_summary *sum, const double *mean,
                                      const double *tmin, const double *tmax, const double *step_s,
                                      const double *solve_s, size_t ns, double col_rate,
                                      double share_sum, double step_median) {
  const mm_grid *g = mm_model_grid(m);
  const mm_config *cfg = mm_model_config(m);
  const double step_total = mean[MM_PHASE_STEP];
  FILE *f = mm_output_tmp_open(path);
  if (!f)
    return MM_ERROR(MM_ERR_RUN, "%s: cannot write the timing file: %s", path, strerror(errno));
  errno = 0; /* a write that fails inside the stream leaves its reason here */
  fputs("{\n  \"name\": ", f);
  json_string(f, cfg->run_name);
  fputs(",\n  \"version\": ", f);
  json_string(f, opt->version ? opt->version : "");
  fprintf(f, ",\n  \"ranks\": %d,\n  \"decomposition\": [%d, %d],\n", g->nranks, g->px, g->py);
  fprintf(f, "  \"grid\": [%d, %d, %d],\n  \"steps\": %ld,\n", g->nx, g->ny, g->nz, sum->steps);
  fputs("  \"backend\": ", f);
  json_string(f, mm_model_backend(m));
  fputs(",\n  \"tdma\": ", f);
  json_string(f, mm_model_tdma(m));
  fputs(",\n  \"tdma_requested\": ", f);
  json_string(f, cfg->tdma);
  fprintf(f, ",\n  \"kappa_in_solve\": %s", mm_model_kappa_in_solve(m) ? "true" : "false");
  if (mm_model_on_device(m)) { /* the device of rank 0, and how the halo crossed */
    fputs(",\n  \"device\": ", f);
    json_string(f, mm_model_device(m));
    fputs(",\n  \"halo_path\": ", f);
    json_string(f, mm_model_halo_path(m));
    fprintf(f, ",\n  \"graph_launches\": %ld", mm_model_graph_launches(m));
    int tile_k = 0, tile_x = 0, tile_faces = 0, tile_min_blocks = 0;
    const int tiles = mm_model_horizontal_tiles(m, &tile_k, &tile_x, &tile_faces, &tile_min_blocks);
    fprintf(f, ",\n  \"horizontal_tiles\": %s", tiles ? "true" : "false");
    if (tiles) /* the shape of rank 0's tiles, whether each face was computed once, and the
                * blocks per SM their CUDA kernel was compiled for */
      fprintf(f,
              ",\n  \"horizontal_tile_levels\": %d,\n  \"horizontal_tile_columns\": %d,\n"
              "  \"horizontal_tile_faces_once\": %s,\n  \"horizontal_tile_min_blocks\": %d",
              tile_k, tile_x, tile_faces ? "true" : "false", tile_min_blocks);
  }
  fputs(",\n  \"wall_s\": ", f);
  json_number(f, sum->wall_s);
  fputs(",\n  \"points_per_s\": ", f);
  json_number(f, sum->points_per_s);
  fputs(",\n  \"column_solves_per_s\": ", f);
  json_number(f, col_rate);
  fputs(",\n  \"solve_share\": ", f);
  json_number(f, sum->solve_share);
  fputs(",\n  \"phase_share_sum\": ", f);
  json_number(f, share_sum);
  fputs(",\n  \"step_median_s\": ", f);
  json_number(f, step_median);
  fputs(",\n  \"wet_cells\": ", f);
  json_count(f, wet);
  if (opt->bandwidth_gbps > 0) {
    fputs(",\n  \"bandwidth_gbps\": ", f);
    json_number(f, opt->bandwidth_gbps);
    fputs(",\n  \"bandwidth_source\": ", f);
    json_string(f, opt->bandwidth_source ? opt->bandwidth_source : "given");
  }
  fputs(",\n  \"phases\": {\n", f);
  for (int p = 0; p < MM_NPHASES; p++) {
    fprintf(f, "    \"%s\": {\"total_s\": ", mm_phase_name((mm_phase)p));
    json_number(f, mean[p]);
    fputs(", \"mean_s\": ", f);
    json_number(f, sum->steps ? mean[p] / (double)sum->steps : 0.0);
    fputs(", \"min_rank_s\": ", f);
    json_number(f, tmin[p]);
    fputs(", \"max_rank_s\": ", f);
    json_number(f, tmax[p]);
    fputs(", \"share\": ", f);
    json_number(f, step_total > 0 ? mean[p] / step_total : 0.0);
    fprintf(f, ", \"calls\": %ld", t->calls[p]);
    if (bytes[p] > 0) {
      fputs(", \"bytes\": ", f);
      json_count(f, bytes[p]);
      fputs(", \"gbps\": ", f);
      json_number(f, mean[p] > 0 ? bytes[p] / mean[p] / 1e9 : 0.0);
      if (opt->bandwidth_gbps > 0) {
        fputs(", \"x_floor\": ", f);
        json_number(f, mean[p] / (bytes[p] / (opt->bandwidth_gbps * 1e9)));
      }
    }
    fprintf(f, "}%s\n", p + 1 < MM_NPHASES ? "," : "");
  }
  fprintf(f, "  },\n  \"per_step_stride\": %ld,\n  \"per_step\": [", t->stride);
  for (size_t i = 0; i < ns; i++) {
    fprintf(f, "%s\n    {\"step\": %ld, \"step_s\": ", i ? "," : "", t->step_id[i]);
    json_number(f, step_s[i]);
    fputs(", \"solve_s\": ", f);
    json_number(f, solve_s[i]);
    fputc('}', f);
  }
  fputs(ns ? "\n  ]\n}\n" : "]\n}\n", f);
  /* the reason of the first failed write (EFBIG past a file-size limit,
   * ENOSPC, EIO), else of the flush at the close */
  int e = ferror(f) ? (errno ? errno : EIO) : 0;
  if (fclose(f) != 0 && !e) e = errno ? errno : EIO;
  if (e) return MM_ERROR(MM_ERR_RUN, "%s: write failed: %s", path, strerror(e));
  return MM_OK;
}

/* A line of the report (no newline in fmt), printed broken at blanks
 * into lines of at most `columns` characters (mm_report_wrap; 0: whole). */
static void say(int columns, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int columns, const char *fmt, ...) {
  char text[1024], wrapped[1280];
  va_list ap;
  va_start(ap, fmt);
  (void)vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  (void)mm_report_wrap(wrapped, sizeof wrapped, text, columns);
  printf("%s\n", wrapped);
}

mm_err mm_report_write(const mm_model *m, const mm_timers *t, const mm_run_options *opt,
                       mm_run_summary *sum) {
  const mm_grid *g = mm_model_grid(m);
  const mm_config *cfg = mm_model_config(m);
  MPI_Comm comm = g->cart;
  double tmin[MM_NPHASES], tmax[MM_NPHASES], tsum[MM_NPHASES];
  MM_MPI(MPI_Allreduce(t->total, tmin, MM_NPHASES, MPI_DOUBLE, MPI_MIN, comm));
  MM_MPI(MPI_Allreduce(t->total, tmax, MM_NPHASES, MPI_DOUBLE, MPI_MAX, comm));
  MM_MPI(MPI_Allreduce(t->total, tsum, MM_NPHASES, MPI_DOUBLE, MPI_SUM, comm));

  /* Per-step records: the slowest rank of each step. Every rank records the
   * same steps, unless one ran out of memory growing its list (mm_timer.c
   * keeps what fits): reduce over the records all ranks have. */
  long mine = (long)t->n_steps, common = 0;
  MM_MPI(MPI_Allreduce(&mine, &common, 1, MPI_LONG, MPI_MIN, comm));
  const size_t ns = (size_t)common;
  double *step_s = NULL, *solve_s = NULL;
  int have = 1, all_have = 1;
  if (ns) {
    step_s = malloc(ns * sizeof *step_s);
    solve_s = malloc(ns * sizeof *solve_s);
    have = step_s && solve_s;
  }
  MM_MPI(MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, comm));
  if (!all_have) {
    free(step_s);
    free(solve_s);
    return MM_ERROR(MM_ERR_RUN, "out of memory in the timing report");
  }
  if (ns) {
    mm_err rerr = MM_MPI_ERR(MPI_Reduce(t->step_s, step_s, (int)ns, MPI_DOUBLE, MPI_MAX, 0, comm));
    if (rerr == MM_OK)
      rerr = MM_MPI_ERR(MPI_Reduce(t->solve_s, solve_s, (int)ns, MPI_DOUBLE, MPI_MAX, 0, comm));
    if (rerr != MM_OK) {
      free(step_s);
      free(solve_s);
      return rerr;
    }
  }
  /* wet columns, for column solves per second, and wet cells, for the
   * bytes the phases move */
  long wet[2] = {0, 0}, gwet2[2] = {0, 0};
  for (int j = 0; j < g->nyl; j++)
    for (int i = 0; i < g->nxl; i++) {
      wet[0] += g->kmt[mm_col(g, i, j)] > 0;
      wet[1] += g->kmt[mm_col(g, i, j)];
    }
  const mm_err werr = MM_MPI_ERR(MPI_Allreduce(wet, gwet2, 2, MPI_LONG, MPI_SUM, comm));
  if (werr != MM_OK) {
    free(step_s);
    free(solve_s);
    return werr;
  }
  const long gwet = gwet2[0];
  const double cells = (double)gwet2[1];

  const long steps = sum->steps;
  double mean[MM_NPHASES];
  for (int p = 0; p < MM_NPHASES; p++)
    mean[p] = tsum[p] / g->nranks;
  const double step_total = mean[MM_PHASE_STEP];
  const double points = (double)g->nx * g->ny * g->nz * (double)steps;
  sum->points_per_s = step_total > 0 ? points / step_total : 0.0;
  sum->solve_share = step_total > 0 ? mean[MM_PHASE_SOLVE] / step_total : 0.0;
  const double col_rate =
      mean[MM_PHASE_SOLVE] > 0 ? (double)gwet * (double)steps / mean[MM_PHASE_SOLVE] : 0.0;
  /* The parts of a step should account for all of it; what they miss is the
   * untimed glue between them (buffer swaps, the last-good-state copy). */
  double parts = 0.0;
  for (int p = 0; p < MM_NPHASES; p++)
    if (inside_step(p)) parts += mean[p];
  const double share_sum = step_total > 0 ? parts / step_total : 0.0;
  /* bytes each phase moved at least over the run, all ranks (mm_bandwidth.h) */
  double bytes[MM_NPHASES];
  for (int p = 0; p < MM_NPHASES; p++) {
    const double per_call = p == MM_PHASE_DIAGNOSTICS;
    bytes[p] =
        mm_phase_bytes_per_cell((mm_phase)p, mm_model_on_device(m), mm_model_kappa_in_solve(m)) *
        cells * (per_call ? (double)t->calls[p] : (double)steps);
  }
  const double bw = opt->bandwidth_gbps * 1e9;

  mm_err err = MM_OK;
  if (g->rank == 0) {
    const double step_median = median(step_s, ns);
    const char *tdma = mm_model_tdma(m);
    const char *backend = mm_model_backend(m);
    /* in a terminal narrower than the whole table (its head's width, every
     * line as wide), the widest form that fits, and the other lines broken
     * at blanks, so that no line wraps (a file or a pipe: all whole) */
    const bool with_floor = bw > 0;
    char line[MM_REPORT_LINE_MAX];
    const int full_width = mm_report_head(line, MM_REPORT_WHOLE, with_floor);
    const int columns = mm_output_columns(cfg->env.launched);
    mm_report_form form = MM_REPORT_WHOLE;
    while (columns > 0 && form > MM_REPORT_MINIMAL &&
           mm_report_head(line, form, with_floor) > columns)
      form--;
    printf("\n");
    say(columns, "%s: %ld step%s of %d x %d x %d on %d rank%s (%d x %d), %s/%s", cfg->run_name,
        steps, steps == 1 ? "" : "s", g->nx, g->ny, g->nz, g->nranks, g->nranks == 1 ? "" : "s",
        g->px, g->py, backend, tdma);
    if (mm_model_on_device(m))
      say(columns, "  GPU step on %s; halo through %s", mm_model_device(m), mm_model_halo_path(m));
    (void)mm_report_head(line, form, with_floor);
    printf("%s\n", line);
    for (int p = 0; p < MM_NPHASES; p++) {
      if (p == MM_PHASE_STEP) {
        /* the remainder, so that the column of shares visibly adds up */
        const double other = step_total - parts;
        const mm_report_row glue = {.phase = "(untimed)",
                                    .total_s = other,
                                    .per_step_s = steps ? other / (double)steps : 0.0,
                                    .share = step_total > 0 ? other / step_total : 0.0,
                                    .calls = -1.0};
        (void)mm_report_line(line, &glue, form, with_floor);
        printf("%s\n", line);
      }
      const mm_report_row row = {.phase = mm_phase_name((mm_phase)p),
                                 .total_s = mean[p],
                                 .per_step_s = steps ? mean[p] / (double)steps : 0.0,
                                 .share = step_total > 0 ? mean[p] / step_total : 0.0,
                                 .min_rank_s = tmin[p],
                                 .max_rank_s = tmax[p],
                                 .calls = (double)t->calls[p],
                                 .moved = bytes[p] > 0 && mean[p] > 0,
                                 .gbps = mean[p] > 0 ? bytes[p] / mean[p] / 1e9 : 0.0,
                                 .x_floor =
                                     bw > 0 && bytes[p] > 0 ? mean[p] / (bytes[p] / bw) : 0.0};
      (void)mm_report_line(line, &row, form, with_floor);
      printf("%s\n", line);
    }
    if (form == MM_REPORT_WHOLE)
      printf("  (total: mean over ranks of each rank's total; min/max rank: the fastest and "
             "slowest rank's;\n   GB/s: the least bytes the phase must move, all ranks, over its "
             "time%s)\n",
             bw > 0 ? ";\n   x floor: its time over the time of those bytes at the bandwidth" : "");
    else {
      /* what the narrower forms leave out, and where it is */
      say(columns,
          "  (total: mean over ranks of each rank's total; %s%s%sthe fastest and slowest rank's: "
          "in the timing file, or in a terminal of %d columns%s%s)",
          form == MM_REPORT_MINIMAL ? "per step s, " : "",
          form < MM_REPORT_NARROW ? "calls, GB/s, " : "",
          form < MM_REPORT_NARROW && with_floor ? "x floor, " : "", full_width,
          form == MM_REPORT_NARROW ? "; GB/s: the least bytes the phase must move, all ranks, "
                                     "over its time"
                                   : "",
          form == MM_REPORT_NARROW && with_floor
              ? "; x floor: its time over the time of those bytes at the bandwidth"
              : "");
    }
    if (bw > 0)
      say(columns, "  memory bandwidth %.4g GB/s (%s)", opt->bandwidth_gbps,
          opt->bandwidth_source ? opt->bandwidth_source : "given");
    char median_text[64] = "";
    if (ns) snprintf(median_text, sizeof median_text, ", median step %.3e s", step_median);
    say(columns, "  %.4g grid-point updates/s, solve share %.1f%%%s", sum->points_per_s,
        100.0 * sum->solve_share, median_text);
    say(columns, "  %.4g column solves/s (over the solve phase's time alone)", col_rate);
    if (steps > 0 && (share_sum < 0.9 || share_sum > 1.1))
      say(columns, "  note: the phases add up to %.1f%% of the step", 100.0 * share_sum);

    /* written whole to .tmp, then renamed into place: a link at the name
     * is replaced, and what it names is not written */
    char path[2 * MM_STR_MAX + 32], tmp[2 * MM_STR_MAX + 40];
    mm_dir_file(path, sizeof path, cfg->output_dir, cfg->run_name, ".timing.json");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    err = write_json(tmp, m, t, opt, bytes, cells, sum, mean, tmin, tmax, step_s, solve_s, ns,
                     col_rate, share_sum, step_median);
    if (err == MM_OK && rename(tmp, path) != 0)
      err = MM_ERROR(MM_ERR_RUN, "%s: cannot write the timing file: %s", path, strerror(errno));
    if (err != MM_OK) unlink(tmp); /* unchecked: at worst a .tmp stays */
    fflush(stdout);
  }
  free(step_s);
  free(solve_s);
  return err;
}
